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

#endif
