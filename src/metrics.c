/* metrics.c: the host's counters in the shared memory, and their sum
 * (see metrics.h). */
#include "config.h"

#include <string.h>

#include "clock.h"
#include "metrics.h"
#include "shm.h"
#include "shm_metrics.h"

_Static_assert(sizeof(struct metrics_cells) <=
    SHM_METRIC_CELLS * sizeof(uint64_t), "metrics cells fit a slot");
_Static_assert(sizeof(struct metrics_minute_cells) <=
    SHM_MINUTE_CELLS * sizeof(uint64_t), "a minute's cells fit its entry");

const char *const metrics_outcome_names[MO__MAX] = {
	[MO_OK] = "ok", [MO_TIMEOUT] = "timeout", [MO_CONNECT] = "connect",
	[MO_HTTP_5XX] = "http_5xx", [MO_HTTP_429] = "http_429",
	[MO_HTTP_OTHER] = "http_other", [MO_UNFIT] = "unfit",
	[MO_ERROR] = "error",
};

const char *const metrics_auth_names[MA__MAX] = {
	[MA_MISSING] = "missing", [MA_MALFORMED] = "malformed",
	[MA_UNKNOWN] = "unknown", [MA_REVOKED] = "revoked",
	[MA_EXPIRED] = "expired", [MA_WRONG_SECRET] = "wrong_secret",
	[MA_NOT_ADMIN] = "not_admin",
};

const char *const metrics_challenger_names[MC__MAX] = {
	[MC_OK] = "ok", [MC_FAILED] = "failed", [MC_SHED] = "shed",
};

const char *const metrics_refusal_names[MR__MAX] = {
	[MR_RATE] = "rate", [MR_QUOTA] = "quota",
};

const char *const metrics_unavailable_names[EU__MAX] = {
	[EU_OTHER] = "other", [EU_IN_FLIGHT] = "in_flight",
	[EU_COOLING] = "cooling", [EU_NO_REPLICA] = "no_replica",
	[EU_UNFIT] = "unfit", [EU_DATABASE] = "database",
	[EU_DISABLED] = "disabled",
};

const int metrics_status[METRICS_STATUSES] = {
	200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500,
	502, 503, 0
};

const double metrics_bounds[METRICS_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
};

static const struct metrics_route *route_labels;
static size_t	 nroute_labels;
static int	 enabled = 1;

void
metrics_set_routes(const struct metrics_route *labels, size_t n)
{
	route_labels = labels;
	nroute_labels = n < METRICS_NO_ROUTE ? n : METRICS_NO_ROUTE;
}

const struct metrics_route *
metrics_route_label(size_t i)
{
	static const struct metrics_route none = { "none", "none" };

	return i < nroute_labels ? &route_labels[i] : &none;
}

void
metrics_enable(int on)
{
	enabled = on;
}

int
metrics_enabled(void)
{
	return enabled;
}

/* Adds v to a cell of this process's slot: only its owner writes it, so
 * a load and a store, relaxed (a plain mov each), not a locked add. */
static void
add(uint64_t *cell, uint64_t v)
{
	__atomic_store_n(cell, __atomic_load_n(cell, __ATOMIC_RELAXED) + v,
	    __ATOMIC_RELAXED);
}

/* The cells to count in, or NULL: nothing is counted.  A process that
 * found no slot counts in the retired figures, under the lock, which
 * *locked says to release with done(). */
static struct metrics_cells *
cells(struct shm **locked)
{
	struct shm		*m = shm_host();
	struct shm_metrics	*sm;

	*locked = NULL;
	if (!enabled || m == NULL)
		return NULL;
	if ((sm = shm_metrics_self(m)) == NULL) {
		if (shm_lock(m) == -1)
			return NULL;
		*locked = m;
		sm = shm_metrics_retired(m);
	}
	return (struct metrics_cells *)(void *)sm->cell;
}

static void
done(struct shm *locked)
{
	if (locked != NULL)
		shm_unlock(locked);
}

/* The cells of this minute in the host's ring, or NULL: nothing is
 * counted there. */
static struct metrics_minute_cells *
minute_cells(void)
{
	uint64_t	*c;

	if (!enabled || (c = shm_minute_cells(shm_host(),
	    clock_now_ms() / 60000)) == NULL)
		return NULL;
	return (struct metrics_minute_cells *)(void *)c;
}

/* Counts one in a minute's cell: every process adds to it, so atomic
 * adds (relaxed: the reader sums under the lock and wants no order). */
static void
minute_add(struct metrics_minute *mm, int client, int server, int64_t us)
{
	__atomic_fetch_add(&mm->n, 1, __ATOMIC_RELAXED);
	if (client)
		__atomic_fetch_add(&mm->client, 1, __ATOMIC_RELAXED);
	if (server)
		__atomic_fetch_add(&mm->server, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mm->us, (uint64_t)(us > 0 ? us : 0),
	    __ATOMIC_RELAXED);
}

/* A histogram's cells: the bucket of us, and its sum. */
static void
observe(uint64_t *h, int64_t us)
{
	size_t	 b;

	if (us < 0)
		us = 0;
	for (b = 0; b < METRICS_BUCKETS &&
	    (double)us > metrics_bounds[b] * 1e6; b++)
		;
	add(&h[b], 1);
	add(&h[METRICS_HIST_SUM], (uint64_t)us);
}

/* The cell of name in table t: its index, or METRICS_LABELS - 1
 * ("other") when the table is full or the name too long. */
static size_t
label(enum shm_names t, const char *name)
{
	int	 i = shm_metric_name(shm_host(), t, name != NULL ? name : "");

	return i >= 0 ? (size_t)i : METRICS_LABELS - 1;
}

/* This process's cells, and in *i the cell of name in table t (looked
 * up first: it may take the lock), or NULL when nothing is counted.
 * done(*locked) after. */
static struct metrics_cells *
labelled(enum shm_names t, const char *name, size_t *i, struct shm **locked)
{
	if (!enabled || shm_host() == NULL)
		return NULL;
	*i = label(t, name);
	return cells(locked);
}

void
metrics_request(size_t route, int status, int64_t us)
{
	struct metrics_cells	*c;
	struct metrics_minute_cells *mc;
	struct shm		*locked;
	struct shm_metrics	*self;
	size_t			 s;

	if (route >= METRICS_ROUTES)
		route = METRICS_NO_ROUTE;
	if ((mc = minute_cells()) != NULL)
		minute_add(&mc->route[route], status >= 400 && status < 500,
		    status >= 500, us);
	if ((c = cells(&locked)) == NULL)
		return;
	for (s = 0; s < METRICS_STATUSES - 1 && metrics_status[s] != status;
	    s++)
		;
	add(&c->requests[route][s], 1);
	observe(c->request_us[route], us);
	if (locked == NULL && (self = shm_metrics_self(shm_host())) != NULL)
		__atomic_store_n(&self->answered_ms, clock_now_ms(),
		    __ATOMIC_RELAXED);
	done(locked);
}

void
metrics_backend(const char *backend, enum metrics_outcome o, int64_t us)
{
	struct metrics_cells	*c;
	struct metrics_minute_cells *mc;
	struct shm		*locked;
	size_t			 b;

	if ((c = labelled(SHM_NAMES_BACKEND, backend, &b, &locked)) == NULL)
		return;
	if ((mc = minute_cells()) != NULL)
		minute_add(&mc->backend[b], o == MO_HTTP_429 ||
		    o == MO_HTTP_OTHER, o != MO_OK && o != MO_HTTP_429 &&
		    o != MO_HTTP_OTHER, us);
	add(&c->backend[b][o < MO__MAX ? o : MO_ERROR], 1);
	observe(c->backend_us[b], us);
	done(locked);
}

void
metrics_cooldown(const char *backend)
{
	struct metrics_cells	*c;
	struct shm		*locked;
	size_t			 b;

	if ((c = labelled(SHM_NAMES_BACKEND, backend, &b, &locked)) == NULL)
		return;
	add(&c->cooldowns[b], 1);
	done(locked);
}

void
metrics_challenger(const char *backend, enum metrics_challenger o)
{
	struct metrics_cells	*c;
	struct shm		*locked;
	size_t			 b;

	if ((c = labelled(SHM_NAMES_BACKEND, backend, &b, &locked)) == NULL)
		return;
	add(&c->challenger[b][o < MC__MAX ? o : MC_FAILED], 1);
	done(locked);
}

void
metrics_decision(const char *schema, int abstained)
{
	struct metrics_cells	*c;
	struct shm		*locked;
	size_t			 s;

	if ((c = labelled(SHM_NAMES_SCHEMA, schema, &s, &locked)) == NULL)
		return;
	add(&c->decisions[s], 1);
	if (abstained)
		add(&c->abstentions[s], 1);
	done(locked);
}

void
metrics_outcome(const char *schema)
{
	struct metrics_cells	*c;
	struct shm		*locked;
	size_t			 s;

	if ((c = labelled(SHM_NAMES_SCHEMA, schema, &s, &locked)) == NULL)
		return;
	add(&c->outcomes[s], 1);
	done(locked);
}

void
metrics_refusal(enum metrics_refusal r)
{
	struct metrics_cells	*c;
	struct shm		*locked;

	if (r < MR__MAX && (c = cells(&locked)) != NULL) {
		add(&c->refusals[r], 1);
		done(locked);
	}
}

void
metrics_auth(enum metrics_auth r)
{
	struct metrics_cells	*c;
	struct shm		*locked;

	if (r < MA__MAX && (c = cells(&locked)) != NULL) {
		add(&c->auth[r], 1);
		done(locked);
	}
}

void
metrics_db_busy(void)
{
	struct metrics_cells	*c;
	struct shm		*locked;

	if ((c = cells(&locked)) != NULL) {
		add(&c->db_busy, 1);
		done(locked);
	}
}

void
metrics_unavailable(enum err_unavailable why)
{
	struct metrics_cells	*c;
	struct shm		*locked;

	if ((c = cells(&locked)) != NULL) {
		add(&c->unavailable[why < EU__MAX ? why : EU_OTHER], 1);
		done(locked);
	}
}

/* Adds the cells of from to those of to. */
static void
sum_into(uint64_t *to, const uint64_t *from)
{
	size_t	 i;

	for (i = 0; i < sizeof(struct metrics_cells) / sizeof(uint64_t); i++)
		to[i] += __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

int
metrics_collect(struct shm *m, int64_t now_ms, struct metrics_snapshot *s)
{
	const char		(*names)[SHM_METRIC_NAME_SIZE];
	const struct shm_minute	*mn;
	struct shm_worker	*w;
	struct shm_metrics	*sm;
	int64_t			 at;
	size_t			 i, n, c;

	memset(s, 0, sizeof(*s));
	if (m == NULL || shm_lock(m) == -1)
		return -1;
	w = shm_slots(m, &n);
	for (i = 0; i < n; i++) {
		sm = shm_metrics_at(m, i);
		sum_into((uint64_t *)(void *)&s->sum, sm->cell);
		at = __atomic_load_n(&sm->answered_ms, __ATOMIC_RELAXED);
		if (w[i].pid != 0 && at != 0 && now_ms - at <
		    METRICS_WORKER_WINDOW_MS && shm_owner_alive(&w[i]))
			s->workers++;
	}
	sum_into((uint64_t *)(void *)&s->sum, shm_metrics_retired(m)->cell);
	for (i = 0; i < SHM_MINUTES; i++) {
		mn = shm_minute_at(m, i);
		at = __atomic_load_n(&mn->minute, __ATOMIC_ACQUIRE);
		if (at > now_ms / 60000 - SHM_MINUTES &&
		    at <= now_ms / 60000)
			for (c = 0; c < sizeof(s->recent) / sizeof(uint64_t);
			    c++)
				((uint64_t *)(void *)&s->recent)[c] +=
				    __atomic_load_n(&mn->cell[c],
				    __ATOMIC_RELAXED);
	}
	s->processes = shm_workers(m);
	names = shm_metric_names(m, SHM_NAMES_BACKEND, &s->nbackends);
	for (i = 0; i < s->nbackends; i++) {
		memcpy(s->backend[i], names[i], SHM_METRIC_NAME_SIZE);
		s->backend[i][SHM_METRIC_NAME_SIZE - 1] = '\0';
	}
	names = shm_metric_names(m, SHM_NAMES_SCHEMA, &s->nschemas);
	for (i = 0; i < s->nschemas; i++) {
		memcpy(s->schema[i], names[i], SHM_METRIC_NAME_SIZE);
		s->schema[i][SHM_METRIC_NAME_SIZE - 1] = '\0';
	}
	shm_unlock(m);
	return 0;
}
