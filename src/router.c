/* router.c: one request through its route (routes.c): the body limit,
 * the lookup, the authentication the route needs, the rate limit where
 * the router charges it, then the handler; after the answer, the
 * request's metrics and its access-log line. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "clock.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "router.h"
#include "routes.h"
#include "settings.h"
#include "store.h"

/* What a route needs of this request's caller. */
static enum route_need
need_of(const struct req *r, const struct route *rt)
{
	if (rt->need != NEED_METRICS)
		return rt->need;
	return r->settings->metrics_key_required ? NEED_ADMIN : NEED_NONE;
}

static int
dispatch(struct req *r, const struct route **found, struct error *e)
{
	struct ratelimit	 rl;
	struct charge		 c;
	const char		*cl;
	enum route_need		 need;
	int			 rc;

	*found = NULL;
	if (r->out_of_memory)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	/* The body limit is decided before anything is read. */
	cl = FCGX_GetParam("CONTENT_LENGTH", r->fcgi->envp);
	if (cl != NULL && strtoll(cl, NULL, 10) > r->settings->max_body_bytes)
		return req_read_body(r, e);
	if (route_find(r->method, r->path, r->on_admin_listener, found,
	    r->params, e) == -1)
		return -1;
	r->admin = &(*found)->admin;
	need = need_of(r, *found);
	/* The lookups up to the first write share one snapshot. */
	store_read_begin(r->store);
	if (need == NEED_SESSION)
		return console_session(r, e) == -1 ? -1 : (*found)->fn(r, e);
	if (need != NEED_NONE &&
	    auth_check(r->store, r->authorization, &r->app, e) == -1)
		return -1;
	if (need == NEED_ADMIN && !r->app.is_admin) {
		metrics_auth(MA_NOT_ADMIN);
		return error_set(e, ERR_FORBIDDEN, NULL,
		    "this key's application is not an administrator");
	}
	memset(&c, 0, sizeof(c));
	if ((*found)->charge == CHARGE_ROUTER) {
		if (admission_charge(r->store, r->settings, &r->app, 0, &c,
		    &rl, e) == -1)
			return -1;
		http_ratelimit(r, &rl);
	}
	/* No 503 is charged (README, "Rate limits and quotas"); a call
	 * the router did not charge has nothing to give back. */
	if ((rc = (*found)->fn(r, e)) == -1 && !r->responded &&
	    error_status(e->code) == 503)
		admission_refund(r->store, r->app.id, &c);
	return rc;
}

/* One logfmt line: what the request was and how it went, never its
 * state, key or prompt (nothing of the body or the headers). */
static void
access_line(const struct req *r, const struct metrics_route *label,
    int64_t us)
{
	char	 line[1024] = "", n[32];
	int64_t	 ms = (us + 500) / 1000;

	log_kv(line, sizeof(line), "request_id", r->request_id);
	log_kv(line, sizeof(line), "method", label->method);
	log_kv(line, sizeof(line), "route", label->pattern);
	snprintf(n, sizeof(n), "%d", r->status);
	log_kv(line, sizeof(line), "status", n);
	if (r->app.id != 0)
		log_kv(line, sizeof(line), "app", r->app.name);
	if (r->note.schema[0] != '\0') {
		log_kv(line, sizeof(line), "schema", r->note.schema);
		snprintf(n, sizeof(n), "%" PRId64, r->note.schema_version);
		log_kv(line, sizeof(line), "schema_version", n);
	}
	if (r->note.backend[0] != '\0')
		log_kv(line, sizeof(line), "backend", r->note.backend);
	if (r->note.decision[0] != '\0')
		log_kv(line, sizeof(line), "decision", r->note.decision);
	snprintf(n, sizeof(n), "%" PRId64, r->note.backend_ms >= 0 &&
	    ms > r->note.backend_ms ? ms - r->note.backend_ms :
	    r->note.backend_ms >= 0 ? 0 : ms);
	log_kv(line, sizeof(line), "gateway_ms", n);
	if (r->note.backend_ms >= 0) {
		snprintf(n, sizeof(n), "%" PRId64, r->note.backend_ms);
		log_kv(line, sizeof(line), "backend_ms", n);
	}
	log_access(line);
}

/* The request's metrics (refusals are counted here, whoever charged),
 * and its access-log line. */
static void
account(struct req *r, const struct route *found, const struct error *e)
{
	size_t	 route = found != NULL ? (size_t)(found - routes) :
	    METRICS_NO_ROUTE;
	int64_t	 us = clock_mono_us() - r->start_us;

	if (e->code == ERR_RATE_LIMITED)
		metrics_refusal(MR_RATE);
	else if (e->code == ERR_QUOTA_EXCEEDED)
		metrics_refusal(MR_QUOTA);
	metrics_request(route, r->status, us);
	if (r->settings->access_log)
		access_line(r, metrics_route_label(route), us);
}

void
router_dispatch(struct req *r)
{
	const struct route	*found = NULL;
	struct error		 e = { 0 };

	if (dispatch(r, &found, &e) == -1 || !r->responded) {
		if (e.code == ERR_NONE)
			error_set(&e, ERR_INTERNAL, NULL, "no answer");
		http_error(r, &e, NULL);
	}
	store_read_end(r->store);
	account(r, found, &e);
	error_clear(&e);
}
