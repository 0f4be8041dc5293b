/* router.c: method and path to handler, with the authentication each
 * route needs.  Patterns are literal segments and "{}" for one segment,
 * which the handler finds decoded in r->params. */
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "handlers.h"
#include "http.h"
#include "router.h"
#include "settings.h"
#include "store.h"

enum need { NEED_NONE, NEED_KEY, NEED_ADMIN };

/* Who charges the rate limit: nobody (no key), the router (cost 0), or
 * the handler itself, once it knows the call's quota cost. */
enum charged_by { CHARGE_NONE, CHARGE_ROUTER, CHARGE_HANDLER };

enum route {
	ROUTE_HEALTH,
	ROUTE_READY,
	ROUTE_MODELS,
	ROUTE_SYSTEMONE,
	ROUTE_DECISION_GET,
	ROUTE_DECISION_OUTCOME,
	ROUTE_ADMIN_APP_CREATE,
	ROUTE_ADMIN_APP_LIST,
	ROUTE_ADMIN_APP_UPDATE,
	ROUTE_ADMIN_KEY_ISSUE,
	ROUTE_ADMIN_KEY_LIST,
	ROUTE_ADMIN_KEY_REVOKE,
	ROUTE_ADMIN_BACKEND_ADD,
	ROUTE_ADMIN_BACKEND_LIST,
	ROUTE_ADMIN_BACKEND_UPDATE,
	ROUTE_ADMIN_SCHEMA_PUBLISH,
	ROUTE_ADMIN_SCHEMA_LIST,
	ROUTE_ADMIN_SCHEMA_VERSIONS,
	ROUTE_ADMIN_SCHEMA_SHOW,
	ROUTE_ADMIN_GRANT,
	ROUTE_ADMIN_UNGRANT,
	ROUTE_ADMIN_UNGRANT_VERSION,
	ROUTE_ADMIN_TEMPLATE_PUBLISH,
	ROUTE_ADMIN_TEMPLATE_LIST,
	ROUTE_ADMIN_TEMPLATE_RENDER,
	ROUTE_ADMIN_DECISIONS,
	ROUTE_ADMIN_EXPORT,
	ROUTE_ADMIN_CALIBRATION,
	ROUTE__MAX
};

static const struct route_def {
	const char	*method;
	const char	*pattern;
	handler_fn	 fn;
	enum need	 need;
	enum charged_by	 charge;
	int		 arg;		/* given to fn in r->route_arg */
} routes[ROUTE__MAX] = {
	[ROUTE_HEALTH] = { "GET", "/health", handle_health, NEED_NONE,
	    CHARGE_NONE },
	[ROUTE_READY] = { "GET", "/health/ready", handle_ready, NEED_NONE,
	    CHARGE_NONE },
	[ROUTE_MODELS] = { "GET", "/v1/models", handle_models, NEED_KEY,
	    CHARGE_ROUTER },
	[ROUTE_SYSTEMONE] = { "POST", "/v1/systemone", handle_systemone,
	    NEED_KEY, CHARGE_HANDLER },
	[ROUTE_DECISION_GET] = { "GET", "/v1/decisions/{}",
	    handle_decision_get, NEED_KEY, CHARGE_ROUTER },
	[ROUTE_DECISION_OUTCOME] = { "POST", "/v1/decisions/{}/outcome",
	    handle_decision_outcome, NEED_KEY, CHARGE_ROUTER },
	/* Administration (doc/admin-api.md); handle_admin runs the
	 * operation its argument names. */
#define ADMIN(m, p, call) { m, "/admin/v1" p, handle_admin, NEED_ADMIN, \
	    CHARGE_ROUTER, call }
	[ROUTE_ADMIN_APP_CREATE] = ADMIN("POST", "/applications",
	    ADMIN_APP_CREATE),
	[ROUTE_ADMIN_APP_LIST] = ADMIN("GET", "/applications", ADMIN_APP_LIST),
	[ROUTE_ADMIN_APP_UPDATE] = ADMIN("PATCH", "/applications/{}",
	    ADMIN_APP_UPDATE),
	[ROUTE_ADMIN_KEY_ISSUE] = ADMIN("POST", "/applications/{}/keys",
	    ADMIN_KEY_ISSUE),
	[ROUTE_ADMIN_KEY_LIST] = ADMIN("GET", "/applications/{}/keys",
	    ADMIN_KEY_LIST),
	[ROUTE_ADMIN_KEY_REVOKE] = ADMIN("DELETE", "/keys/{}",
	    ADMIN_KEY_REVOKE),
	[ROUTE_ADMIN_BACKEND_ADD] = ADMIN("POST", "/backends",
	    ADMIN_BACKEND_ADD),
	[ROUTE_ADMIN_BACKEND_LIST] = ADMIN("GET", "/backends",
	    ADMIN_BACKEND_LIST),
	[ROUTE_ADMIN_BACKEND_UPDATE] = ADMIN("PATCH", "/backends/{}",
	    ADMIN_BACKEND_UPDATE),
	[ROUTE_ADMIN_SCHEMA_PUBLISH] = ADMIN("POST", "/schemas/{}/versions",
	    ADMIN_SCHEMA_PUBLISH),
	[ROUTE_ADMIN_SCHEMA_LIST] = ADMIN("GET", "/schemas", ADMIN_SCHEMA_LIST),
	[ROUTE_ADMIN_SCHEMA_VERSIONS] = ADMIN("GET", "/schemas/{}/versions",
	    ADMIN_SCHEMA_VERSIONS),
	[ROUTE_ADMIN_SCHEMA_SHOW] = ADMIN("GET", "/schemas/{}/versions/{}",
	    ADMIN_SCHEMA_SHOW),
	[ROUTE_ADMIN_GRANT] = ADMIN("POST", "/grants", ADMIN_GRANT),
	[ROUTE_ADMIN_UNGRANT] = ADMIN("DELETE", "/grants/{}/{}",
	    ADMIN_UNGRANT),
	[ROUTE_ADMIN_UNGRANT_VERSION] = ADMIN("DELETE", "/grants/{}/{}/{}",
	    ADMIN_UNGRANT_VERSION),
	[ROUTE_ADMIN_TEMPLATE_PUBLISH] = ADMIN("POST", "/templates/{}/versions",
	    ADMIN_TEMPLATE_PUBLISH),
	[ROUTE_ADMIN_TEMPLATE_LIST] = ADMIN("GET", "/templates",
	    ADMIN_TEMPLATE_LIST),
	[ROUTE_ADMIN_TEMPLATE_RENDER] = ADMIN("POST", "/templates/{}/render",
	    ADMIN_TEMPLATE_RENDER),
#undef ADMIN
	[ROUTE_ADMIN_DECISIONS] = { "GET",
	    "/admin/v1/applications/{}/decisions", handle_admin_decisions,
	    NEED_ADMIN, CHARGE_ROUTER },
	[ROUTE_ADMIN_EXPORT] = { "GET",
	    "/admin/v1/applications/{}/decisions/export", handle_admin_export,
	    NEED_ADMIN, CHARGE_ROUTER },
	[ROUTE_ADMIN_CALIBRATION] = { "GET",
	    "/admin/v1/schemas/{}/calibration", handle_admin_calibration,
	    NEED_ADMIN, CHARGE_ROUTER },
};

/* Percent-decodes one path segment of length n into a new string. */
static char *
decode(const char *s, size_t n)
{
	char *out = malloc(n + 1);

	if (out != NULL)
		http_unescape(s, n, 0, out, n + 1);
	return out;
}

/* 1 if path matches pattern, with the {} segments stored in r->params. */
static int
match(struct req *r, const char *pattern, const char *path)
{
	size_t	np = 0, i;
	size_t	plen, slen;

	for (i = 0; i < HTTP_MAX_PARAMS; i++) {
		free(r->params[i]);
		r->params[i] = NULL;
	}
	while (*pattern == '/' && *path == '/') {
		pattern++;
		path++;
		plen = strcspn(pattern, "/");
		slen = strcspn(path, "/");
		if (plen == 2 && strncmp(pattern, "{}", 2) == 0) {
			if (slen == 0 || np == HTTP_MAX_PARAMS)
				return 0;
			r->params[np++] = decode(path, slen);
		} else if (plen != slen || strncmp(pattern, path, plen) != 0)
			return 0;
		pattern += plen;
		path += slen;
	}
	return *pattern == '\0' && *path == '\0';
}

static int
dispatch(struct req *r, struct error *e)
{
	const struct route_def	*found = NULL;
	struct ratelimit	 rl;
	const char		*cl;
	int			 path_known = 0;
	size_t			 i;

	/* The body limit is decided before anything is read. */
	cl = FCGX_GetParam("CONTENT_LENGTH", r->fcgi->envp);
	if (cl != NULL && strtoll(cl, NULL, 10) > r->settings->max_body_bytes)
		return req_read_body(r, e);
	/* Administration exists only on the internal listener. */
	if (strncmp(r->path, "/admin/", 7) == 0 && !r->on_admin_listener)
		return error_set(e, ERR_NOT_FOUND, NULL, "no such route: %s",
		    r->path);
	for (i = 0; i < ROUTE__MAX && found == NULL; i++) {
		if (!match(r, routes[i].pattern, r->path))
			continue;
		path_known = 1;
		if (strcmp(routes[i].method, r->method) == 0)
			found = &routes[i];
	}
	if (found == NULL && path_known)
		return error_set(e, ERR_METHOD_NOT_ALLOWED, NULL,
		    "method %s not allowed on %s", r->method, r->path);
	if (found == NULL)
		return error_set(e, ERR_NOT_FOUND, NULL, "no such route: %s",
		    r->path);
	/* The lookups up to the first write share one snapshot. */
	store_read_begin(r->store);
	if (found->need != NEED_NONE &&
	    auth_check(r->store, r->authorization, &r->app, e) == -1)
		return -1;
	if (found->need == NEED_ADMIN && !r->app.is_admin)
		return error_set(e, ERR_FORBIDDEN, NULL,
		    "this key's application is not an administrator");
	if (found->charge == CHARGE_ROUTER) {
		if (admission_charge(r->store, r->settings, &r->app, 0, NULL,
		    &rl, e) == -1)
			return -1;
		http_ratelimit(r, &rl);
	}
	r->route_arg = found->arg;
	return found->fn(r, e);
}

void
router_dispatch(struct req *r)
{
	struct error e = { 0 };

	if (dispatch(r, &e) == -1 || !r->responded) {
		if (e.code == ERR_NONE)
			error_set(&e, ERR_INTERNAL, NULL, "no answer");
		http_error(r, &e);
	}
	store_read_end(r->store);
	error_clear(&e);
}
