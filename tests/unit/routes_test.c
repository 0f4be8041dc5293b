/* routes_test.c: TAP tests of the route table and route_find()
 * (src/routes.c): every row is found by its own method and path on the
 * internal listener; no /admin/ path and no administrator route is ever
 * found from a public one; 404 and 405 as the router answers them; the
 * {} segments decoded; the rows of handle_admin() consistent. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "routes.h"
#include "tap.h"
#include "uri.h"

/* The pattern with each {} replaced by seg, into buf. */
static void
fill(const char *pattern, const char *seg, char *buf, size_t size)
{
	size_t	o = 0, slen = strlen(seg);

	while (*pattern != '\0' && o + slen + 1 < size) {
		if (strncmp(pattern, "{}", 2) == 0) {
			memcpy(buf + o, seg, slen);
			o += slen;
			pattern += 2;
		} else
			buf[o++] = *pattern++;
	}
	buf[o] = '\0';
}

static void
free_params(char **params)
{
	size_t i;

	for (i = 0; i < HTTP_MAX_PARAMS; i++) {
		free(params[i]);
		params[i] = NULL;
	}
}

/* Looks up method and path; the error code, ERR_NONE when found. */
static enum err_code
find(const char *method, const char *path, int admin,
    const struct route **found, char **params, char *msg, size_t size)
{
	struct error	e = { 0 };
	enum err_code	code;

	if (route_find(method, path, admin, found, params, &e) == 0) {
		error_clear(&e);
		return ERR_NONE;
	}
	code = e.code;
	if (msg != NULL)
		snprintf(msg, size, "%s", e.message);
	error_clear(&e);
	return code;
}

static void
test_every_row(void)
{
	const struct route	*found;
	char			*params[HTTP_MAX_PARAMS];
	char			 path[256];
	size_t			 i, k, nb;
	int			 admin_path, internal, all_null;
	enum err_code		 code;

	for (i = 0; i < ROUTE__MAX; i++) {
		const struct route *rt = &routes[i];

		admin_path = strncmp(rt->pattern, "/admin/", 7) == 0;
		internal = admin_path || rt->internal;
		ok(rt->method != NULL && rt->pattern != NULL && rt->fn != NULL,
		    "row %zu is filled", i);
		/* The console's routes are the administrators' too: a
		 * session of an administrator's key, or its login form. */
		ok(admin_path == (rt->need == NEED_ADMIN ||
		    strncmp(rt->pattern, CONSOLE_PREFIX "/",
		    sizeof(CONSOLE_PREFIX)) == 0),
		    "%s: under /admin/ exactly when it needs an administrator",
		    rt->pattern);
		ok((rt->need == NEED_SESSION) <= (strncmp(rt->pattern,
		    CONSOLE_PREFIX "/", sizeof(CONSOLE_PREFIX)) == 0 &&
		    rt->internal),
		    "%s: a console session only on the console's internal "
		    "routes", rt->pattern);
		nb = uri_pattern_params(rt->pattern);
		ok(nb <= HTTP_MAX_PARAMS, "%s: at most %d {} segments",
		    rt->pattern, HTTP_MAX_PARAMS);

		fill(rt->pattern, "s%20x", path, sizeof(path));
		code = find(rt->method, path, 1, &found, params, NULL, 0);
		ok(code == ERR_NONE && found == rt,
		    "%s %s: found on the internal listener", rt->method, path);
		for (k = 0; k < HTTP_MAX_PARAMS; k++)
			if (!ok(k < nb ? params[k] != NULL &&
			    strcmp(params[k], "s x") == 0 : params[k] == NULL,
			    "%s: param %zu %s", rt->pattern, k,
			    k < nb ? "decoded" : "NULL"))
				break;
		free_params(params);

		code = find(rt->method, path, 0, &found, params, NULL, 0);
		for (all_null = 1, k = 0; k < HTTP_MAX_PARAMS; k++)
			all_null &= params[k] == NULL;
		if (internal)
			ok(code == ERR_NOT_FOUND && found == NULL && all_null,
			    "%s %s: 404 from a public listener", rt->method,
			    path);
		else
			ok(code == ERR_NONE && found == rt,
			    "%s %s: found from a public listener", rt->method,
			    path);
		free_params(params);

		code = find("BREW", path, 0, &found, params, NULL, 0);
		ok(code == (internal ? ERR_NOT_FOUND :
		    ERR_METHOD_NOT_ALLOWED) && found == NULL,
		    "%s with another method: %s from a public listener",
		    path, internal ? "404" : "405");
		code = find("BREW", path, 1, &found, params, NULL, 0);
		ok(code == ERR_METHOD_NOT_ALLOWED && found == NULL,
		    "%s with another method: 405 on the internal listener",
		    path);
		code = find("HEAD", path, 1, &found, params, NULL, 0);
		free_params(params);
		if (strcmp(rt->method, "GET") == 0)
			ok(code == ERR_NONE && found == rt,
			    "HEAD %s: the GET route (RFC 9110)", path);
		else
			ok(code == ERR_METHOD_NOT_ALLOWED || (code == ERR_NONE &&
			    strcmp(found->method, "GET") == 0),
			    "HEAD %s: its GET route, or 405 without one",
			    path);

		if (rt->fn == handle_admin) {
			for (k = 0; k < HTTP_MAX_PARAMS &&
			    rt->admin.segs[k].field != NULL; k++)
				;
			ok(k == nb, "%s: one input field per {} segment",
			    rt->pattern);
			ok(rt->admin.status == 200 || rt->admin.status == 201,
			    "%s: a success is 200 or 201", rt->pattern);
			ok(rt->admin.op >= 0 && rt->admin.op < OP__MAX,
			    "%s: an operation", rt->pattern);
		} else
			ok(rt->admin.segs[0].field == NULL &&
			    rt->admin.status == 0, "%s: no operation fields "
			    "but for handle_admin", rt->pattern);
	}
}

static void
test_answers(void)
{
	const struct route	*found;
	char			*params[HTTP_MAX_PARAMS];
	char			 msg[512];

	ok(find("GET", "/metrics", 0, &found, params, msg, sizeof(msg)) ==
	    ERR_NOT_FOUND && found == NULL, "/metrics: 404 from a public "
	    "listener");
	is_str(msg, "no such route: /metrics", "its message: as any unknown "
	    "path's");
	ok(find("GET", "/metrics", 1, &found, params, msg, sizeof(msg)) ==
	    ERR_NONE && found == &routes[ROUTE_METRICS] &&
	    found->need == NEED_METRICS && found->charge == CHARGE_NONE,
	    "/metrics: found on the internal listener, no key by default, "
	    "not rate limited");
	ok(find("GET", "/nope", 0, &found, params, msg, sizeof(msg)) ==
	    ERR_NOT_FOUND, "an unknown path: 404");
	is_str(msg, "no such route: /nope", "its message");
	ok(find("DELETE", "/v1/models", 0, &found, params, msg,
	    sizeof(msg)) == ERR_METHOD_NOT_ALLOWED, "a known path: 405");
	is_str(msg, "method DELETE not allowed on /v1/models", "its message");
	ok(find("POST", "/admin/v1/applications", 0, &found, params, msg,
	    sizeof(msg)) == ERR_NOT_FOUND, "administration, public: 404");
	is_str(msg, "no such route: /admin/v1/applications", "its message");
	ok(find("GET", "/admin/anything", 0, &found, params, NULL, 0) ==
	    ERR_NOT_FOUND, "anything under /admin/, public: 404");
	ok(find("GET", "/admin/anything", 1, &found, params, NULL, 0) ==
	    ERR_NOT_FOUND, "an unknown /admin/ path, internal: 404");
	ok(find("GET", "/admin/v1/applications", 1, &found, params, NULL,
	    0) == ERR_NONE && found == &routes[ROUTE_ADMIN_APP_LIST],
	    "GET /admin/v1/applications, internal: the list");
	ok(find("POST", "/admin/v1/schemas/t/versions", 1, &found, params,
	    NULL, 0) == ERR_NONE &&
	    found == &routes[ROUTE_ADMIN_SCHEMA_PUBLISH],
	    "one path, two methods: POST publishes");
	free_params(params);
	ok(find("GET", "/admin/v1/schemas/t/versions", 1, &found, params,
	    NULL, 0) == ERR_NONE &&
	    found == &routes[ROUTE_ADMIN_SCHEMA_VERSIONS],
	    "one path, two methods: GET lists");
	free_params(params);
	ok(find("GET", "/admin/v1/schemas/t/versions/abc", 1, &found, params,
	    NULL, 0) == ERR_NONE && found == &routes[ROUTE_ADMIN_SCHEMA_SHOW],
	    "a version that is no number is still the route (handle_admin "
	    "answers 404, after authentication)");
	free_params(params);
	ok(find("GET", "/v1/decisions/a%2Fb%20c", 0, &found, params, NULL,
	    0) == ERR_NONE && found == &routes[ROUTE_DECISION_GET] &&
	    params[0] != NULL && strcmp(params[0], "a/b c") == 0 &&
	    params[1] == NULL, "a segment decoded, '/' included");
	free_params(params);
	ok(find("GET", "/v1/decisions/a+b", 0, &found, params, NULL, 0) ==
	    ERR_NONE && strcmp(params[0], "a+b") == 0,
	    "'+' in a path is a '+'");
	free_params(params);
	ok(find("POST", "/v1/decisions//outcome", 0, &found, params, NULL,
	    0) == ERR_NOT_FOUND, "an empty segment: 404");
	ok(find("GET", "/%61dmin/v1/applications", 0, &found, params, NULL,
	    0) == ERR_NOT_FOUND, "an encoded /admin/: 404");
	ok(find("GET", "//admin/v1/applications", 0, &found, params, NULL,
	    0) == ERR_NOT_FOUND, "a doubled '/': 404");
	ok(find("get", "/health", 0, &found, params, NULL, 0) ==
	    ERR_METHOD_NOT_ALLOWED, "methods are case-sensitive");
	ok(find("", "", 0, &found, params, NULL, 0) == ERR_NOT_FOUND,
	    "nothing: 404");
}

int
main(void)
{
	test_every_row();
	test_answers();
	return tap_done();
}
