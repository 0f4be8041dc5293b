/* router.c: one request through its route (routes.c): the body limit,
 * the lookup, the authentication the route needs, the rate limit where
 * the router charges it, then the handler. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "http.h"
#include "router.h"
#include "routes.h"
#include "settings.h"
#include "store.h"

static int
dispatch(struct req *r, struct error *e)
{
	const struct route	*found;
	struct ratelimit	 rl;
	const char		*cl;

	if (r->out_of_memory)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	/* The body limit is decided before anything is read. */
	cl = FCGX_GetParam("CONTENT_LENGTH", r->fcgi->envp);
	if (cl != NULL && strtoll(cl, NULL, 10) > r->settings->max_body_bytes)
		return req_read_body(r, e);
	if (route_find(r->method, r->path, r->on_admin_listener, &found,
	    r->params, e) == -1)
		return -1;
	r->admin = &found->admin;
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
