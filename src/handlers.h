/* handlers.h: every route handler.  A handler answers with http_json()
 * and returns 0, or returns -1 with e set and the router writes the
 * error.  r->app is the authenticated application where the route needs
 * a key. */
#ifndef EVALGATE_HANDLERS_H
#define EVALGATE_HANDLERS_H

#include "error.h"
#include "http.h"

typedef int (*handler_fn)(struct req *r, struct error *e);

int	handle_health(struct req *r, struct error *e);
int	handle_ready(struct req *r, struct error *e);
int	handle_models(struct req *r, struct error *e);
int	handle_systemone(struct req *r, struct error *e);
/* A decision of the caller's application, and its outcomes. */
int	handle_decision_get(struct req *r, struct error *e);
int	handle_decision_outcome(struct req *r, struct error *e);

/* The /admin/v1 routes that run one operation of ops.c: the router
 * gives handle_admin() one of these in r->route_arg, and its table in
 * handler_admin.c says how the operation's input is built. */
enum admin_call {
	ADMIN_APP_CREATE,
	ADMIN_APP_LIST,
	ADMIN_APP_UPDATE,
	ADMIN_KEY_ISSUE,
	ADMIN_KEY_LIST,
	ADMIN_KEY_REVOKE,
	ADMIN_BACKEND_ADD,
	ADMIN_BACKEND_LIST,
	ADMIN_BACKEND_UPDATE,
	ADMIN_SCHEMA_PUBLISH,
	ADMIN_SCHEMA_LIST,
	ADMIN_SCHEMA_VERSIONS,
	ADMIN_SCHEMA_SHOW,
	ADMIN_GRANT,
	ADMIN_UNGRANT,
	ADMIN_UNGRANT_VERSION,
	ADMIN_TEMPLATE_PUBLISH,
	ADMIN_TEMPLATE_LIST,
	ADMIN_TEMPLATE_RENDER,
	ADMIN__MAX
};
int	handle_admin(struct req *r, struct error *e);
/* An application's decisions: a page, and every one as JSON lines. */
int	handle_admin_decisions(struct req *r, struct error *e);
int	handle_admin_export(struct req *r, struct error *e);
/* A schema version's calibration report (handler_calibration.c). */
int	handle_admin_calibration(struct req *r, struct error *e);

#endif
