/* admission.c: GCRA rate limit and daily quota (see admission.h). */
#include "config.h"

#include <string.h>

#include "admission.h"
#include "clock.h"
#include "json_util.h"
#include "log.h"
#include "settings.h"
#include "shm.h"
#include "shm_admit.h"
#include "store.h"

#define MINUTE_MS 60000
#define DAY_MS 86400000

/* The emission interval of a rate, rounded up so that the sustained
 * rate is never above the limit. */
static int64_t
interval_of(int64_t rate)
{
	return (MINUTE_MS + rate - 1) / rate;
}

void
admission_decide(struct admit *a)
{
	/* The tolerance lets exactly `rate` calls through at once whatever
	 * the rounding of the interval. */
	int64_t	interval = interval_of(a->rate);
	int64_t	tolerance = (a->rate - 1) * interval;
	int64_t	tat = a->tat_ms, base, ahead;

	/* An arrival time computed under another rate is a backlog of
	 * calls made when it was written: the same calls count under this
	 * rate, so that backlog is scaled to this interval, and drains at
	 * this rate since (a raised limit is never stricter than the old
	 * one, a lowered one lets no more through). */
	if (a->tat_rate > 0 && a->tat_rate != a->rate) {
		base = a->tat_at_ms > 0 && a->tat_at_ms <= tat ?
		    a->tat_at_ms : a->now_ms;
		if (tat > base)
			tat = base + (tat - base) * interval /
			    interval_of(a->tat_rate);
	}
	if (tat < a->now_ms)
		tat = a->now_ms;

	/* GCRA: a call fits while the theoretical arrival time is no more
	 * than the tolerance ahead of now. */
	a->rate_ok = tat - a->now_ms <= tolerance;
	a->new_tat_ms = a->rate_ok ? tat + interval : a->tat_ms;
	a->rate_retry_ms = a->rate_ok ? 0 : tat - tolerance - a->now_ms;
	ahead = (a->rate_ok ? a->new_tat_ms : tat) - a->now_ms;
	a->rate_remaining = ahead > tolerance ? 0 :
	    (tolerance - ahead) / interval + 1;
	a->rate_reset_s = (ahead + 999) / 1000;

	/* A call that costs nothing never exceeds the quota, even one
	 * lowered below what was used today. */
	a->quota_ok = a->cost == 0 || a->used + a->cost <= a->quota;
	a->new_used = a->quota_ok ? a->used + a->cost : a->used;
	a->quota_retry_ms = a->quota_ok ? 0 : clock_ms_to_next_day(a->now_ms);
	a->quota_remaining = a->quota - a->new_used > 0 ?
	    a->quota - a->new_used : 0;
	a->quota_reset_s = (clock_ms_to_next_day(a->now_ms) + 999) / 1000;
}

/* Takes out of the state, as it is now, what is left of one admitted
 * call.
 *
 * The arrival time is a queue of intervals that drains at one ms a ms.
 * The call's charge put its interval I in it, ending at charged_tat_ms.
 * Each call admitted after it was put behind it; or, if it found the
 * queue empty (an arrival time at or before its now), at its own now,
 * but then the call's interval had drained whole.  What the call still
 * holds is the part of its interval not drained yet, min(I,
 * charged_tat_ms - now), none once that is past.  Taking that part out
 * moves the later calls up by as much, never more than the call's
 * absence would have (without it, a later call would have been put no
 * later than the start of the call's interval or its own now, whichever
 * is later), and less only by what of the interval drained while the
 * call was in flight.  Calls given back together each take out their
 * own part, in any order, to the same state.  An arrival time at or
 * before now is drained and stays as it is; none is moved before now.
 *
 * Under another rate since: the first call admitted under it rescaled
 * the queue to the new interval (admission_decide()), to base + (tat -
 * base) * new / old, base being when the state was last written, at or
 * after the call's admission and before now.  The end of the call's
 * interval went through the same line; base unknown, it is taken where
 * at_ms or now_ms as base puts it earlier (the line is linear in base),
 * so that no more is given back than the call holds, and at most one
 * interval of the new rate.  (Two changes while one call is in flight
 * keep that bound only roughly.) */
void
admission_undo(struct undo *u)
{
	int64_t	ic = interval_of(u->rate), is = ic, end = u->charged_tat_ms;
	int64_t	at_base, now_base, back;

	if (u->tat_rate > 0 && u->tat_rate != u->rate) {
		is = interval_of(u->tat_rate);
		at_base = u->at_ms + (end - u->at_ms) * is / ic;
		now_base = u->now_ms + (end - u->now_ms) * is / ic;
		end = at_base < now_base ? at_base : now_base;
	}
	back = end - u->now_ms;
	if (back > is)
		back = is;
	u->new_tat_ms = u->tat_ms;
	if (back > 0 && u->tat_ms > u->now_ms)
		u->new_tat_ms = u->tat_ms - back > u->now_ms ?
		    u->tat_ms - back : u->now_ms;
	u->new_used = u->used > u->units ? u->used - u->units : 0;
}

static int
refuse(const struct admit *a, struct error *e)
{
	int quota_later = !a->quota_ok &&
	    (a->rate_ok || a->quota_retry_ms >= a->rate_retry_ms);

	if (quota_later)
		error_set(e, ERR_QUOTA_EXCEEDED, NULL,
		    "daily quota of %lld units exceeded (this call costs "
		    "%lld, %lld used today)", (long long)a->quota,
		    (long long)a->cost, (long long)a->used);
	else
		error_set(e, ERR_RATE_LIMITED, NULL,
		    "rate limit of %lld calls per minute exceeded",
		    (long long)a->rate);
	e->retry_after_ms = a->quota_retry_ms > a->rate_retry_ms ?
	    a->quota_retry_ms : a->rate_retry_ms;
	if (e->retry_after_ms < 1)
		e->retry_after_ms = 1;
	error_detail(e, "retry_after_ms", ju_int(e->retry_after_ms));
	return -1;
}

/* Decides a, under the shared memory's lock, on the host's state s of
 * the application, and charges s for an admitted call: the units
 * first, so that a process killed between the two has at worst counted
 * the units of the one call it was admitting. */
static void
decide_shared(struct shm_admission *s, void *arg)
{
	struct admit *a = arg;

	a->tat_ms = s->tat_ms;
	a->tat_rate = s->tat_rate;
	a->tat_at_ms = s->tat_at_ms;
	a->used = s->used;
	admission_decide(a);
	if (!a->rate_ok || !a->quota_ok)
		return;
	s->used = a->new_used;
	s->tat_rate = a->rate;
	s->tat_at_ms = a->now_ms;
	s->tat_ms = a->new_tat_ms;
}

/* In the host's shared memory (doc/design.md, sections 12 and 13): 1
 * decided, 0 there is none (admission is then kept in the store), -1
 * with e set (the database's counter could not be read). */
static int
charge_shared(struct store *st, int64_t app_id, const char *day,
    struct admit *a, struct error *e)
{
	struct shm	*m = shm_host();
	int64_t		 n = a->now_ms / DAY_MS, used = 0;
	int		 rc;

	if ((rc = shm_admission(m, app_id, n, -1, decide_shared, a)) != 0)
		return rc == 1;
	/* Not there for today: rebuilt from the database's counter. */
	if (store_quota_used(st, app_id, day, &used, e) == -1)
		return -1;
	return shm_admission(m, app_id, n, used, decide_shared, a) == 1;
}

/* In the store, read, decided and written in one short transaction:
 * SQLite's cache file on a host without the shared memory, or the
 * database that several hosts share (PostgreSQL, where the row is
 * locked from the read to the commit). */
static int
charge_store(struct store *st, int64_t app_id, const char *day,
    struct admit *a, struct error *e)
{
	if (store_begin_counters(st, e) == -1)
		return -1;
	if (store_admission_read(st, app_id, day, &a->tat_ms, &a->tat_rate,
	    &a->tat_at_ms, &a->used, e) == -1)
		goto fail;
	admission_decide(a);
	if (!a->rate_ok || !a->quota_ok) {
		store_rollback(st);
		return 0;
	}
	if (store_admission_write(st, app_id, day, a->new_tat_ms, a->rate,
	    a->now_ms, a->new_used, e) == -1 || store_commit(st, e) == -1)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

int
admission_charge(struct store *st, const struct settings *settings,
    const struct app *app, int64_t cost, struct charge *c,
    struct ratelimit *rl, struct error *e)
{
	struct admit	 a = { 0 };
	char		 day[11];
	int		 rc, shared;

	a.now_ms = clock_now_ms();
	a.rate = app->rate_per_minute > 0 ? app->rate_per_minute :
	    settings->default_rate_per_minute;
	a.quota = app->daily_quota > 0 ? app->daily_quota :
	    settings->default_daily_quota;
	a.cost = cost;
	clock_utc_day(a.now_ms, day);

	rc = store_host_admission(st) ?
	    charge_shared(st, app->id, day, &a, e) : 0;
	shared = rc == 1;
	if (rc == 0)
		rc = charge_store(st, app->id, day, &a, e);
	if (rc == -1)
		return -1;
	if (!a.rate_ok || !a.quota_ok)
		return refuse(&a, e);
	if (c != NULL) {
		memcpy(c->day, day, sizeof(c->day));
		c->units = cost;
		c->at_ms = a.now_ms;
		c->rate = a.rate;
		c->tat_ms = a.new_tat_ms;
		c->shared = shared;
	}
	rl->rate = a.rate;
	rl->quota = a.quota;
	rl->rate_remaining = a.rate_remaining;
	rl->rate_reset_s = a.rate_reset_s;
	rl->quota_remaining = a.quota_remaining;
	rl->quota_reset_s = a.quota_reset_s;
	return 0;
}

void
admission_settle(struct store *st, int64_t app_id, struct charge *c)
{
	struct error e = { 0 };

	if (store_quota_charge(st, app_id, c->day, c->units, &e) == -1)
		log_warn("quota: %lld units of application %lld not written "
		    "to the database: %s", (long long)c->units,
		    (long long)app_id, e.message);
	c->units = 0;
	c->at_ms = 0;
	error_clear(&e);
}

/* Under the shared memory's lock, on the application's state of the
 * day the call was charged on. */
static void
undo_shared(struct shm_admission *s, void *arg)
{
	struct undo *u = arg;

	u->tat_ms = s->tat_ms;
	u->tat_rate = s->tat_rate;
	u->used = s->used;
	admission_undo(u);
	s->used = u->new_used;
	s->tat_ms = u->new_tat_ms;
}

/* In the store, one short transaction like charge_store()'s, on the
 * row of today: the row keeps one day, so units of a day already over
 * are not given back (that day's quota is over, and writing its day
 * would lose today's running total), but the arrival time is.  The
 * units read are the larger of the running total and the database's
 * counter, which does not hold the call's units: what is read after
 * they are taken out is never below that counter. */
static int
refund_store(struct store *st, int64_t app_id, const struct charge *c,
    struct undo *u, struct error *e)
{
	char	today[11];
	int64_t	at_ms;

	clock_utc_day(u->now_ms, today);
	if (strcmp(today, c->day) != 0)
		u->units = 0;
	if (store_begin_counters(st, e) == -1)
		return -1;
	if (store_admission_read(st, app_id, today, &u->tat_ms, &u->tat_rate,
	    &at_ms, &u->used, e) == -1)
		goto fail;
	admission_undo(u);
	if (store_admission_write(st, app_id, today, u->new_tat_ms,
	    u->tat_rate, at_ms, u->new_used, e) == -1 ||
	    store_commit(st, e) == -1)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

void
admission_refund(struct store *st, int64_t app_id, struct charge *c)
{
	struct undo	u = { 0 };
	struct error	e = { 0 };
	int		rc = 0;

	if (c->at_ms == 0)
		return;
	u.now_ms = clock_now_ms();
	u.at_ms = c->at_ms;
	u.rate = c->rate;
	u.charged_tat_ms = c->tat_ms;
	u.units = c->units;
	/* The shared memory's entry of the day it was charged on, if it
	 * still has one: without it (the file deleted, the entry given to
	 * another application or to a new day) the state was rebuilt from
	 * the database's counter, which the call never charged, and its
	 * arrival time is gone or holds the call no more. */
	if (!c->shared)
		rc = refund_store(st, app_id, c, &u, &e);
	else if ((rc = shm_admission(shm_host(), app_id,
	    c->at_ms / DAY_MS, -1, undo_shared, &u)) == -1)
		error_set(&e, ERR_UNAVAILABLE, NULL,
		    "the shared memory is not usable");
	if (rc == -1)
		log_warn("admission: the call of application %lld answered "
		    "503 still counts against its limits: %s",
		    (long long)app_id, e.message);
	c->units = 0;
	c->at_ms = 0;
	error_clear(&e);
}
