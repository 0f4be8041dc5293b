/* routes.c: the route table and route_find() (see routes.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "uri.h"

/* Administration (doc/admin-api.md) that runs one operation: the input
 * is the request body (an object; empty is {}) for POST and PATCH,
 * nothing for GET and DELETE, with the fields of the path added. */
#define ADMIN(m, p, o, st, ...) { .method = m, .pattern = "/admin/v1" p, \
	.fn = handle_admin, .need = NEED_ADMIN, .charge = CHARGE_ROUTER, \
	.admin = { .op = o, .segs = { __VA_ARGS__ }, .status = st } }
/* The same, with a query parameter q filling a field (GET, DELETE). */
#define ADMINQ(m, p, o, st, q, ...) { .method = m, \
	.pattern = "/admin/v1" p, .fn = handle_admin, .need = NEED_ADMIN, \
	.charge = CHARGE_ROUTER, .admin = { .op = o, .segs = { __VA_ARGS__ }, \
	.status = st, .query = q } }
/* The console: not charged (an operator's page views are not an
 * application's calls), internal like every /admin/ path. */
#define CONSOLE(m, p, f, n) { .method = m, .pattern = CONSOLE_PREFIX p, \
	.fn = f, .need = n, .charge = CHARGE_NONE, .internal = 1 }
#define NOSEG	{ .field = NULL }
#define TEXT(f)	{ .field = f, .kind = SEG_TEXT }
#define INT(f)	{ .field = f, .kind = SEG_INT }

const struct route routes[ROUTE__MAX] = {
	[ROUTE_HEALTH] = { .method = "GET", .pattern = "/health",
	    .fn = handle_health, .need = NEED_NONE, .charge = CHARGE_NONE },
	[ROUTE_READY] = { .method = "GET", .pattern = "/health/ready",
	    .fn = handle_ready, .need = NEED_NONE, .charge = CHARGE_NONE },
	[ROUTE_MODELS] = { .method = "GET", .pattern = "/v1/models",
	    .fn = handle_models, .need = NEED_KEY, .charge = CHARGE_ROUTER },
	[ROUTE_SYSTEMONE] = { .method = "POST", .pattern = "/v1/systemone",
	    .fn = handle_systemone, .need = NEED_KEY,
	    .charge = CHARGE_HANDLER },
	[ROUTE_DECISION_GET] = { .method = "GET",
	    .pattern = "/v1/decisions/{}", .fn = handle_decision_get,
	    .need = NEED_KEY, .charge = CHARGE_ROUTER },
	[ROUTE_DECISION_OUTCOME] = { .method = "POST",
	    .pattern = "/v1/decisions/{}/outcome",
	    .fn = handle_decision_outcome, .need = NEED_KEY,
	    .charge = CHARGE_ROUTER },

	[ROUTE_ADMIN_APP_CREATE] = ADMIN("POST", "/applications",
	    OP_APP_CREATE, 201, NOSEG),
	[ROUTE_ADMIN_APP_LIST] = ADMIN("GET", "/applications",
	    OP_APP_LIST, 200, NOSEG),
	[ROUTE_ADMIN_APP_UPDATE] = ADMIN("PATCH", "/applications/{}",
	    OP_APP_UPDATE, 200, TEXT("name")),
	[ROUTE_ADMIN_KEY_ISSUE] = ADMIN("POST", "/applications/{}/keys",
	    OP_KEY_ISSUE, 201, TEXT("application")),
	[ROUTE_ADMIN_KEY_LIST] = ADMIN("GET", "/applications/{}/keys",
	    OP_KEY_LIST, 200, TEXT("application")),
	[ROUTE_ADMIN_KEY_REVOKE] = ADMIN("DELETE", "/keys/{}",
	    OP_KEY_REVOKE, 200, TEXT("prefix")),
	[ROUTE_ADMIN_BACKEND_ADD] = ADMIN("POST", "/backends",
	    OP_BACKEND_ADD, 201, NOSEG),
	[ROUTE_ADMIN_BACKEND_LIST] = ADMIN("GET", "/backends",
	    OP_BACKEND_LIST, 200, NOSEG),
	[ROUTE_ADMIN_BACKEND_UPDATE] = ADMIN("PATCH", "/backends/{}",
	    OP_BACKEND_UPDATE, 200, TEXT("name")),
	[ROUTE_ADMIN_SCHEMA_PUBLISH] = ADMIN("POST", "/schemas/{}/versions",
	    OP_SCHEMA_PUBLISH, 201, TEXT("id")),
	[ROUTE_ADMIN_SCHEMA_LIST] = ADMIN("GET", "/schemas",
	    OP_SCHEMA_LIST, 200, NOSEG),
	[ROUTE_ADMIN_SCHEMA_VERSIONS] = ADMIN("GET", "/schemas/{}/versions",
	    OP_SCHEMA_LIST, 200, TEXT("id")),
	[ROUTE_ADMIN_SCHEMA_SHOW] = ADMIN("GET", "/schemas/{}/versions/{}",
	    OP_SCHEMA_SHOW, 200, TEXT("id"), INT("version")),
	[ROUTE_ADMIN_GRANT] = ADMIN("POST", "/grants",
	    OP_GRANT, 201, NOSEG),
	[ROUTE_ADMIN_UNGRANT] = ADMIN("DELETE", "/grants/{}/{}",
	    OP_UNGRANT, 200, TEXT("application"), TEXT("schema")),
	[ROUTE_ADMIN_UNGRANT_VERSION] = ADMIN("DELETE", "/grants/{}/{}/{}",
	    OP_UNGRANT, 200, TEXT("application"), TEXT("schema"),
	    INT("version")),
	[ROUTE_ADMIN_TEMPLATE_PUBLISH] = ADMIN("POST", "/templates/{}/versions",
	    OP_TEMPLATE_PUBLISH, 201, TEXT("id")),
	[ROUTE_ADMIN_TEMPLATE_LIST] = ADMIN("GET", "/templates",
	    OP_TEMPLATE_LIST, 200, NOSEG),
	[ROUTE_ADMIN_TEMPLATE_RENDER] = ADMIN("POST", "/templates/{}/render",
	    OP_TEMPLATE_RENDER, 200, TEXT("id")),
	[ROUTE_ADMIN_PRUNE] = ADMIN("POST", "/decisions/prune",
	    OP_DECISIONS_PRUNE, 200, NOSEG),

	/* Administration with handlers of their own. */
	[ROUTE_ADMIN_DECISIONS] = { .method = "GET",
	    .pattern = "/admin/v1/applications/{}/decisions",
	    .fn = handle_admin_decisions, .need = NEED_ADMIN,
	    .charge = CHARGE_ROUTER },
	[ROUTE_ADMIN_EXPORT] = { .method = "GET",
	    .pattern = "/admin/v1/applications/{}/decisions/export",
	    .fn = handle_admin_export, .need = NEED_ADMIN,
	    .charge = CHARGE_ROUTER },
	[ROUTE_ADMIN_CALIBRATION] = { .method = "GET",
	    .pattern = "/admin/v1/schemas/{}/calibration",
	    .fn = handle_admin_calibration, .need = NEED_ADMIN,
	    .charge = CHARGE_ROUTER },

	/* Prometheus scrapes without a key (unless the settings ask for
	 * an administrator's) and is not rate limited. */
	[ROUTE_METRICS] = { .method = "GET", .pattern = "/metrics",
	    .fn = handle_metrics, .need = NEED_METRICS,
	    .charge = CHARGE_NONE, .internal = 1 },

	/* Challengers (README, "Challengers"): the version in the body,
	 * or in the query of GET and DELETE; the latest without. */
	[ROUTE_ADMIN_CHALLENGER_ADD] = ADMIN("POST", "/schemas/{}/challengers",
	    OP_CHALLENGER_ADD, 201, TEXT("id")),
	[ROUTE_ADMIN_CHALLENGER_LIST] = ADMINQ("GET",
	    "/schemas/{}/challengers", OP_CHALLENGER_LIST, 200,
	    INT("version"), TEXT("id")),
	[ROUTE_ADMIN_CHALLENGER_REMOVE] = ADMINQ("DELETE",
	    "/schemas/{}/challengers/{}", OP_CHALLENGER_REMOVE, 200,
	    INT("version"), TEXT("id"), TEXT("backend")),

	/* The comparison with the challengers (doc/design.md, section
	 * 15.1): a report in the format asked for, read-only; promotion
	 * publishes the next version. */
	[ROUTE_ADMIN_COMPARE] = { .method = "GET",
	    .pattern = "/admin/v1/schemas/{}/compare",
	    .fn = handle_admin_compare, .need = NEED_ADMIN,
	    .charge = CHARGE_ROUTER },
	[ROUTE_ADMIN_PROMOTE] = ADMIN("POST", "/schemas/{}/promote",
	    OP_PROMOTE, 201, TEXT("id")),

	/* The operator's console (doc/design.md, section 23): HTML under
	 * CONSOLE_PREFIX, its session checked by the router; its pages
	 * and actions are tables of handler_console.c. */
	[ROUTE_CONSOLE_LOGIN_FORM] = CONSOLE("GET", "/login",
	    handle_console_login_form, NEED_NONE),
	[ROUTE_CONSOLE_LOGIN] = CONSOLE("POST", "/login",
	    handle_console_login, NEED_NONE),
	[ROUTE_CONSOLE_LOGOUT] = CONSOLE("POST", "/logout",
	    handle_console_logout, NEED_SESSION),
	[ROUTE_CONSOLE_ASSET] = CONSOLE("GET", "/static/{}",
	    handle_console_asset, NEED_NONE),
	[ROUTE_CONSOLE_ACTION] = CONSOLE("POST", "/do/{}",
	    handle_console_action, NEED_SESSION),
	[ROUTE_CONSOLE_HOME] = CONSOLE("GET", "/", handle_console_page,
	    NEED_SESSION),
	[ROUTE_CONSOLE_PAGE] = CONSOLE("GET", "/{}", handle_console_page,
	    NEED_SESSION),
	[ROUTE_CONSOLE_ITEM] = CONSOLE("GET", "/{}/{}", handle_console_page,
	    NEED_SESSION),
};

#undef CONSOLE
#undef ADMINQ
#undef ADMIN
#undef NOSEG
#undef TEXT
#undef INT

int
route_find(const char *method, const char *path, int on_admin_listener,
    const struct route **found, char *params[HTTP_MAX_PARAMS],
    struct error *e)
{
	struct uri_seg	 segs[HTTP_MAX_PARAMS];
	size_t		 i, nsegs = 0;
	int		 path_known = 0;

	*found = NULL;
	for (i = 0; i < HTTP_MAX_PARAMS; i++)
		params[i] = NULL;
	/* Administration exists only on the internal listener. */
	if (strncmp(path, "/admin/", 7) == 0 && !on_admin_listener)
		return error_set(e, ERR_NOT_FOUND, NULL, "no such route: %s",
		    path);
	for (i = 0; i < ROUTE__MAX && *found == NULL; i++) {
		if ((routes[i].internal && !on_admin_listener) ||
		    !uri_match(routes[i].pattern, path, segs, HTTP_MAX_PARAMS,
		    &nsegs))
			continue;
		path_known = 1;
		if (strcmp(routes[i].method, method) == 0 ||
		    (strcmp(method, "HEAD") == 0 &&
		    strcmp(routes[i].method, "GET") == 0))
			*found = &routes[i];
	}
	if (*found == NULL && path_known)
		return error_set(e, ERR_METHOD_NOT_ALLOWED, NULL,
		    "method %s not allowed on %s", method, path);
	if (*found == NULL)
		return error_set(e, ERR_NOT_FOUND, NULL, "no such route: %s",
		    path);
	for (i = 0; i < nsegs; i++)
		if ((params[i] = uri_decode(segs[i].p, segs[i].len, 0)) ==
		    NULL)
			goto nomem;
	return 0;
nomem:
	while (i-- > 0) {
		free(params[i]);
		params[i] = NULL;
	}
	*found = NULL;
	return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
}
