/* handler_metrics.c: GET /metrics on the internal listener: the host's
 * figures (metrics.c) in the Prometheus text format 0.0.4 (expo.c).
 * Every family of doc/evalgate.fcgi.8 (METRICS) is written, with every
 * series that has counted something; the fixed label sets of a family
 * that has counted nothing yet are written at 0 so that rate() and the
 * dashboard see them from the first scrape. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "expo.h"
#include "handlers.h"
#include "metrics.h"
#include "shm.h"
#include "shm_metrics.h"
#include "version.h"

#define METRICS_TEXT_MAX	(4 << 20)	/* bytes of the answer */

/* A counter family over a list of label values: one sample each. */
static void
by_label(struct expo *x, const char *name, const char *help,
    const char *label, const char *const *values, const uint64_t *v,
    size_t n, int all)
{
	struct expo_label	 l = { label, NULL };
	size_t			 i;

	expo_family(x, name, "counter", help);
	for (i = 0; i < n; i++) {
		if (!all && v[i] == 0)
			continue;
		l.value = values[i];
		expo_sample(x, name, &l, 1, v[i]);
	}
}

/* The label value of backend or schema cell i of n names: the name, or
 * "other" for the last cell. */
static const char *
name_of(char names[][SHM_METRIC_NAME_SIZE], size_t n, size_t i)
{
	return i == METRICS_LABELS - 1 ? "other" : i < n ? names[i] : "";
}

static void
requests(struct expo *x, const struct metrics_snapshot *s)
{
	const struct metrics_route	*rt;
	struct expo_label		 l[3];
	char				 status[16];
	uint64_t			 n;
	size_t				 r, st;

	expo_family(x, "evalgate_requests_total", "counter",
	    "Requests answered, by route pattern, method and status.");
	for (r = 0; r < METRICS_ROUTES; r++)
		for (st = 0; st < METRICS_STATUSES; st++) {
			if ((n = s->sum.requests[r][st]) == 0)
				continue;
			rt = metrics_route_label(r);
			if (metrics_status[st] != 0)
				snprintf(status, sizeof(status), "%d",
				    metrics_status[st]);
			else
				snprintf(status, sizeof(status), "other");
			l[0] = (struct expo_label){ "route", rt->pattern };
			l[1] = (struct expo_label){ "method", rt->method };
			l[2] = (struct expo_label){ "status", status };
			expo_sample(x, "evalgate_requests_total", l, 3, n);
		}
	expo_family(x, "evalgate_request_duration_seconds", "histogram",
	    "Time from the request's start to its answer, by route.");
	for (r = 0; r < METRICS_ROUTES; r++) {
		for (st = n = 0; st <= METRICS_BUCKETS; st++)
			n += s->sum.request_us[r][st];
		if (n == 0)
			continue;
		rt = metrics_route_label(r);
		l[0] = (struct expo_label){ "route", rt->pattern };
		l[1] = (struct expo_label){ "method", rt->method };
		expo_histogram(x, "evalgate_request_duration_seconds", l, 2,
		    metrics_bounds, METRICS_BUCKETS, s->sum.request_us[r],
		    (double)s->sum.request_us[r][METRICS_HIST_SUM] / 1e6);
	}
}

static void
backends(struct expo *x, struct metrics_snapshot *s)
{
	struct expo_label	 l[2];
	uint64_t		 n;
	size_t			 b, o;

	expo_family(x, "evalgate_backend_requests_total", "counter",
	    "Attempts to a backend (one replica, or a built-in backend), "
	    "by outcome.");
	for (b = 0; b < METRICS_LABELS; b++)
		for (o = 0; o < MO__MAX; o++) {
			if ((n = s->sum.backend[b][o]) == 0)
				continue;
			l[0] = (struct expo_label){ "backend",
			    name_of(s->backend, s->nbackends, b) };
			l[1] = (struct expo_label){ "outcome",
			    metrics_outcome_names[o] };
			expo_sample(x, "evalgate_backend_requests_total", l, 2,
			    n);
		}
	expo_family(x, "evalgate_backend_duration_seconds", "histogram",
	    "Time of one attempt to a backend, whatever its outcome.");
	for (b = 0; b < METRICS_LABELS; b++) {
		for (o = n = 0; o <= METRICS_BUCKETS; o++)
			n += s->sum.backend_us[b][o];
		if (n == 0)
			continue;
		l[0] = (struct expo_label){ "backend",
		    name_of(s->backend, s->nbackends, b) };
		expo_histogram(x, "evalgate_backend_duration_seconds", l, 1,
		    metrics_bounds, METRICS_BUCKETS, s->sum.backend_us[b],
		    (double)s->sum.backend_us[b][METRICS_HIST_SUM] / 1e6);
	}
	expo_family(x, "evalgate_replica_cooldowns_total", "counter",
	    "Replicas of a backend sent to rest for a cool-down.");
	for (b = 0; b < METRICS_LABELS; b++)
		if ((n = s->sum.cooldowns[b]) != 0) {
			l[0] = (struct expo_label){ "backend",
			    name_of(s->backend, s->nbackends, b) };
			expo_sample(x, "evalgate_replica_cooldowns_total", l,
			    1, n);
		}
	expo_family(x, "evalgate_challenger_calls_total", "counter",
	    "Calls to a challenger after the client was answered, by "
	    "outcome (shed: not made), apart from the client's calls.");
	for (b = 0; b < METRICS_LABELS; b++)
		for (o = 0; o < MC__MAX; o++) {
			if ((n = s->sum.challenger[b][o]) == 0)
				continue;
			l[0] = (struct expo_label){ "backend",
			    name_of(s->backend, s->nbackends, b) };
			l[1] = (struct expo_label){ "outcome",
			    metrics_challenger_names[o] };
			expo_sample(x, "evalgate_challenger_calls_total", l, 2,
			    n);
		}
}

/* A counter family by schema. */
static void
by_schema(struct expo *x, struct metrics_snapshot *s, const char *name,
    const char *help, const uint64_t *v)
{
	struct expo_label	 l = { "schema", NULL };
	size_t			 i;

	expo_family(x, name, "counter", help);
	for (i = 0; i < METRICS_LABELS; i++)
		if (v[i] != 0) {
			l.value = name_of(s->schema, s->nschemas, i);
			expo_sample(x, name, &l, 1, v[i]);
		}
}

static void
render(struct expo *x, struct metrics_snapshot *s)
{
	struct expo_label	 version = { "version", EVALGATE_VERSION };

	requests(x, s);
	backends(x, s);
	by_label(x, "evalgate_admission_refusals_total", "Calls refused by "
	    "the rate limit or the daily quota (429).", "reason",
	    metrics_refusal_names, s->sum.refusals, MR__MAX, 1);
	by_schema(x, s, "evalgate_decisions_total",
	    "Decisions recorded (evaluations answered).", s->sum.decisions);
	by_schema(x, s, "evalgate_outcomes_total",
	    "Outcome reports recorded.", s->sum.outcomes);
	by_schema(x, s, "evalgate_abstentions_total", "Decisions in which "
	    "at least one answer abstained.", s->sum.abstentions);
	by_label(x, "evalgate_auth_failures_total", "Keys refused (401), "
	    "and keys of non-administrators on /admin/v1 (403).", "reason",
	    metrics_auth_names, s->sum.auth, MA__MAX, 1);
	expo_family(x, "evalgate_db_busy_total", "counter",
	    "Requests the database refused as busy or locked (503).");
	expo_sample(x, "evalgate_db_busy_total", NULL, 0, s->sum.db_busy);
	by_label(x, "evalgate_unavailable_total", "Answers 503, by why.",
	    "reason", metrics_unavailable_names, s->sum.unavailable, EU__MAX,
	    1);
	expo_family(x, "evalgate_workers", "gauge",
	    "Workers that answered a request in the last minute.");
	expo_sample(x, "evalgate_workers", NULL, 0, (uint64_t)s->workers);
	expo_family(x, "evalgate_worker_processes", "gauge",
	    "Worker processes running on the host, as they count themselves "
	    "(the pool the web server runs; half of it is a backend's "
	    "default in-flight limit).");
	expo_sample(x, "evalgate_worker_processes", NULL, 0,
	    (uint64_t)s->processes);
	expo_family(x, "evalgate_build_info", "gauge",
	    "Always 1; the version of the worker.");
	expo_sample(x, "evalgate_build_info", &version, 1, 1);
}

int
handle_metrics(struct req *r, struct error *e)
{
	struct metrics_snapshot	*s;
	struct expo		 x;
	struct buf		 b;
	int			 rc = -1;

	if (!metrics_enabled())
		return error_set(e, ERR_NOT_FOUND, NULL,
		    "metrics are off (SERVICE_METRICS=0)");
	if ((s = malloc(sizeof(*s))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (metrics_collect(shm_host(), clock_now_ms(), s) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "the host's shared memory "
		    "is not available; the metrics live there");
		goto out;
	}
	buf_init(&b, METRICS_TEXT_MAX);
	expo_init(&x, &b);
	render(&x, s);
	if (!expo_ok(&x))
		error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	else {
		http_raw(r, 200, EXPO_CONTENT_TYPE, b.p != NULL ? b.p : "",
		    b.len);
		rc = 0;
	}
	buf_free(&b);
out:
	free(s);
	return rc;
}
