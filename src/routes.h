/* routes.h: the route table, one row per route, and its lookup.
 *
 * A row says everything about a route: method, path pattern, handler,
 * the authentication it needs, who charges the rate limit and, for the
 * /admin/v1 routes that run one operation of ops.c through
 * handle_admin(), the operation, the input fields its {} segments fill
 * and the status of a success.  route_find() reads nothing but its
 * arguments, so that the unit test and the fuzzer can call it without a
 * request (tests/unit/routes_test.c, fuzz/fuzz_route.c). */
#ifndef EVALGATE_ROUTES_H
#define EVALGATE_ROUTES_H

#include "error.h"
#include "handlers.h"
#include "http.h"

enum route_id {
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
	ROUTE_ADMIN_PRUNE,
	ROUTE_METRICS,
	ROUTE_ADMIN_CHALLENGER_ADD,
	ROUTE_ADMIN_CHALLENGER_LIST,
	ROUTE_ADMIN_CHALLENGER_REMOVE,
	ROUTE_ADMIN_COMPARE,
	ROUTE_ADMIN_PROMOTE,
	ROUTE_CONSOLE_LOGIN_FORM,
	ROUTE_CONSOLE_LOGIN,
	ROUTE_CONSOLE_LOGOUT,
	ROUTE_CONSOLE_ASSET,
	ROUTE_CONSOLE_ACTION,
	ROUTE_CONSOLE_HOME,
	ROUTE_CONSOLE_PAGE,
	ROUTE_CONSOLE_ITEM,
	ROUTE__MAX
};

/* What the route needs from the caller: nothing, an API key, the key
 * of an administrator application, or that key only when the settings
 * say so (SERVICE_METRICS_KEY_REQUIRED=1), or a session of the web
 * console (console_session(): its cookie, and a POST's CSRF token). */
enum route_need { NEED_NONE, NEED_KEY, NEED_ADMIN, NEED_METRICS,
	NEED_SESSION };

/* Who charges the rate limit: nobody (no key), the router (cost 0), or
 * the handler itself, once it knows the call's quota cost. */
enum route_charge { CHARGE_NONE, CHARGE_ROUTER, CHARGE_HANDLER };

struct route {
	const char		*method;
	const char		*pattern;	/* see uri_match() */
	handler_fn		 fn;
	enum route_need		 need;
	enum route_charge	 charge;
	int			 internal;	/* only on the internal
						 * listener (/admin/ paths
						 * always are) */
	struct admin_call	 admin;		/* handle_admin()'s */
};

extern const struct route routes[ROUTE__MAX];

/* The route of method and path for a request that came in on the
 * internal listener or not: /admin/ paths and internal routes exist
 * only there.  0 with
 * *found set to its row (in routes[]) and params[] to its {} segments,
 * decoded, as new strings the caller frees (NULL past the last; HEAD
 * finds the GET route, answered without a body), or -1
 * with e set and params[] all NULL: 404 not_found, 405
 * method_not_allowed when another method has the path, 503
 * service_unavailable when out of memory. */
int	route_find(const char *method, const char *path,
	    int on_admin_listener, const struct route **found,
	    char *params[HTTP_MAX_PARAMS], struct error *e);

#endif
