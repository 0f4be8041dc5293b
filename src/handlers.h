/* handlers.h: every route handler.  A handler answers with http_json()
 * and returns 0, or returns -1 with e set and the router writes the
 * error.  r->app is the authenticated application where the route needs
 * a key. */
#ifndef EVALGATE_HANDLERS_H
#define EVALGATE_HANDLERS_H

#include "error.h"
#include "http.h"
#include "ops.h"

typedef int (*handler_fn)(struct req *r, struct error *e);

int	handle_health(struct req *r, struct error *e);
int	handle_ready(struct req *r, struct error *e);
int	handle_models(struct req *r, struct error *e);
int	handle_systemone(struct req *r, struct error *e);
/* A decision of the caller's application, and its outcomes. */
int	handle_decision_get(struct req *r, struct error *e);
int	handle_decision_outcome(struct req *r, struct error *e);

/* The /admin/v1 routes that run one operation of ops.c.  Their rows in
 * routes.c carry what handle_admin() runs, and the router hands it over
 * in r->admin: the operation, the input fields the path's {} segments
 * fill, in path order (each as it is, or a positive integer spelled with
 * digits only: anything else is a 404), and the status of a success.
 * The input is otherwise the request body (an object; empty is {}) for
 * POST and PATCH, and nothing for GET and DELETE. */
enum route_seg_kind { SEG_TEXT, SEG_INT };

struct route_seg {
	const char		*field;		/* NULL: no more segments */
	enum route_seg_kind	 kind;
};

struct admin_call {
	enum op			 op;
	struct route_seg	 segs[HTTP_MAX_PARAMS];
	int			 status;	/* 0: not such a route */
	struct route_seg	 query;		/* a query parameter of GET or
						 * DELETE that fills the field
						 * of its name (an integer:
						 * anything else is a 400);
						 * NULL field: none */
};

int	handle_admin(struct req *r, struct error *e);
/* An application's decisions: a page, and every one as JSON lines. */
int	handle_admin_decisions(struct req *r, struct error *e);
int	handle_admin_export(struct req *r, struct error *e);
/* A schema version's calibration report (handler_calibration.c). */
int	handle_admin_calibration(struct req *r, struct error *e);
/* A schema version's comparison with its challengers (the same file). */
int	handle_admin_compare(struct req *r, struct error *e);
/* GET /metrics, on the internal listener only (handler_metrics.c). */
int	handle_metrics(struct req *r, struct error *e);

/* The operator's console (handler_console*.c, doc/design.md, section
 * 23), its paths under CONSOLE_PREFIX. */
#define CONSOLE_PREFIX	"/admin/console"
/* The gate of the routes that need a session (NEED_SESSION), run by the
 * router: 0 with r->app the session's application, or -1 with e set
 * (and a page's request answered already: 303 to the login form).  A
 * POST must carry the session's CSRF token in its form (read here). */
int	console_session(struct req *r, struct error *e);
int	handle_console_login_form(struct req *r, struct error *e);
int	handle_console_login(struct req *r, struct error *e);
int	handle_console_logout(struct req *r, struct error *e);
int	handle_console_asset(struct req *r, struct error *e);
int	handle_console_page(struct req *r, struct error *e);
int	handle_console_action(struct req *r, struct error *e);

#endif
