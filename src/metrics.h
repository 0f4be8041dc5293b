/* metrics.h: what the host counts for GET /metrics (doc/design.md,
 * section 18.1; doc/evalgate.fcgi.8, METRICS).
 *
 * Every process counts in its own slot of the host's shared memory
 * (shm_metrics.h): relaxed atomic stores to cells only it writes, no lock, no
 * database write on the request path.  A reader sums every slot and the
 * retired figures under the lock (metrics_collect()), so a worker's
 * counts outlive it (recycled, killed -9) until the shared-memory file
 * is deleted, which resets them.  Without the mapping nothing is
 * counted.
 *
 * Label values come from the route table (method, pattern), from fixed
 * lists (status, outcome, reason; a 503's reason is error.h's) and from
 * the catalog (backend and schema names), never from what a client
 * sends.  Backend and schema names get a cell host-wide in order of
 * first use, SHM_METRIC_NAMES of each; past that a name is counted
 * under the label value "other". */
#ifndef EVALGATE_METRICS_H
#define EVALGATE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "shm_metrics.h"

#define METRICS_ROUTES		48	/* route rows, the last "none" */
#define METRICS_NO_ROUTE	(METRICS_ROUTES - 1)
#define METRICS_STATUSES	16	/* metrics_status[], then "other" */
#define METRICS_BUCKETS		12	/* finite bounds; +Inf beyond */
#define METRICS_LABELS		(SHM_METRIC_NAMES + 1)	/* + "other" */
#define METRICS_WORKER_WINDOW_MS 60000	/* evalgate_workers: answered in */

/* How one attempt to a backend replica (or a built-in backend) went. */
enum metrics_outcome {
	MO_OK,
	MO_TIMEOUT,		/* no answer in time */
	MO_CONNECT,		/* resolve, connect, TLS, connection lost */
	MO_HTTP_5XX,		/* 5xx and 529 */
	MO_HTTP_429,
	MO_HTTP_OTHER,		/* 3xx, 4xx but 429, other statuses */
	MO_UNFIT,		/* an answer that does not fit the questions */
	MO_ERROR,		/* ours: out of memory, a malformed URL */
	MO__MAX
};

/* Why a key was refused (401), or an application was not an
 * administrator (403). */
enum metrics_auth {
	MA_MISSING,		/* no Authorization: Bearer */
	MA_MALFORMED,		/* not svc_PREFIX_SECRET */
	MA_UNKNOWN,		/* no key has the prefix */
	MA_REVOKED,
	MA_EXPIRED,
	MA_WRONG_SECRET,
	MA_NOT_ADMIN,
	MA__MAX
};

enum metrics_refusal { MR_RATE, MR_QUOTA, MR__MAX };

/* How a challenger's call went (README, "Challengers"): answered,
 * failed, or shed (not made: no room in flight, every replica resting,
 * the worker stopping). */
enum metrics_challenger { MC_OK, MC_FAILED, MC_SHED, MC__MAX };

/* The cells of a slot (struct shm_metrics cell[]).  Histograms: one
 * count per bucket (not cumulative; the last past every bound), then
 * the sum of the values in microseconds. */
struct metrics_cells {
	uint64_t requests[METRICS_ROUTES][METRICS_STATUSES];
	uint64_t request_us[METRICS_ROUTES][METRICS_BUCKETS + 2];
	uint64_t backend[METRICS_LABELS][MO__MAX];
	uint64_t backend_us[METRICS_LABELS][METRICS_BUCKETS + 2];
	uint64_t cooldowns[METRICS_LABELS];
	uint64_t decisions[METRICS_LABELS];
	uint64_t outcomes[METRICS_LABELS];
	uint64_t abstentions[METRICS_LABELS];
	uint64_t refusals[MR__MAX];
	uint64_t auth[MA__MAX];
	uint64_t db_busy;
	uint64_t unavailable[EU__MAX];
	uint64_t challenger[METRICS_LABELS][MC__MAX];
};
#define METRICS_HIST_SUM	(METRICS_BUCKETS + 1)	/* index of the sum */

/* The last hour (the console's overview; /metrics shows only the
 * totals above, Prometheus computing rates itself): per minute, in the
 * host-wide ring of shm_metrics.h, counted by metrics_request() and
 * metrics_backend() beside the totals.  A route's requests, those
 * answered 4xx and 5xx, and their time; a backend's calls, those it
 * refused (MO_HTTP_429, MO_HTTP_OTHER: in client), those that failed
 * otherwise (server), and their time. */
struct metrics_minute {
	uint64_t n;
	uint64_t client;	/* 4xx; a backend's refusals */
	uint64_t server;	/* 5xx; a backend's other failures */
	uint64_t us;		/* the sum of their times */
};
struct metrics_minute_cells {
	struct metrics_minute route[METRICS_ROUTES];
	struct metrics_minute backend[METRICS_LABELS];
};

/* The label values of the fixed lists, in enum order. */
extern const char *const metrics_outcome_names[MO__MAX];
extern const char *const metrics_auth_names[MA__MAX];
extern const char *const metrics_refusal_names[MR__MAX];
extern const char *const metrics_unavailable_names[EU__MAX];
extern const char *const metrics_challenger_names[MC__MAX];
/* The statuses counted by their own label; index METRICS_STATUSES - 1
 * is "other" (0 here). */
extern const int metrics_status[METRICS_STATUSES];
/* The histograms' bucket bounds, in seconds, increasing. */
extern const double metrics_bounds[METRICS_BUCKETS];

/* The route table's labels, set once at start by the worker (the
 * support layer does not know the routes): labels[i] for route row i,
 * n at most METRICS_NO_ROUTE. */
struct metrics_route {
	const char	*method;
	const char	*pattern;
};
void	metrics_set_routes(const struct metrics_route *labels, size_t n);
const struct metrics_route *metrics_route_label(size_t i);

/* Counting on (the default) or off (SERVICE_METRICS=0). */
void	metrics_enable(int on);
int	metrics_enabled(void);

/* The counters.  Each is a few relaxed stores to this process's slot of
 * shm_host(); nothing without a mapping or when counting is off. */
void	metrics_request(size_t route, int status, int64_t us);
void	metrics_backend(const char *backend, enum metrics_outcome o,
	    int64_t us);
void	metrics_cooldown(const char *backend);
/* A challenger's call, apart from the client's (metrics_backend). */
void	metrics_challenger(const char *backend, enum metrics_challenger o);
void	metrics_decision(const char *schema, int abstained);
void	metrics_outcome(const char *schema);
void	metrics_refusal(enum metrics_refusal r);
void	metrics_auth(enum metrics_auth r);
void	metrics_db_busy(void);
/* A 503 answered, by its reason (http_error() counts every one). */
void	metrics_unavailable(enum err_unavailable why);

/* The host's figures: every slot and the retired ones summed, the
 * names of the backend and schema cells, the workers that answered in
 * the last METRICS_WORKER_WINDOW_MS, and the worker processes that
 * have a slot. */
struct metrics_snapshot {
	struct metrics_cells	 sum;
	struct metrics_minute_cells recent;	/* the last hour's minutes,
						 * this one included */
	char			 backend[METRICS_LABELS][SHM_METRIC_NAME_SIZE];
	size_t			 nbackends;	/* names set; "other" apart */
	char			 schema[METRICS_LABELS][SHM_METRIC_NAME_SIZE];
	size_t			 nschemas;
	long			 workers;
	long			 processes;	/* shm_workers() */
};
/* Fills s from m at now_ms (recent: the minutes of the last
 * SHM_MINUTES, that of now_ms the last): 0, or -1 when there is no
 * mapping or its lock cannot be had. */
int	metrics_collect(struct shm *m, int64_t now_ms,
	    struct metrics_snapshot *s);

#endif
