/* admission.h: the per-minute rate limit and the daily quota.
 *
 * Rate: GCRA (the generic cell rate algorithm) per application, its
 * theoretical arrival time kept in the host's shared memory (shm_admit.h)
 * with the rate it was computed under.  It needs two integers per application, lets a full
 * minute's allowance through at once, then
 * refills one call every ceil(60000 / rate) ms, and tells exactly when
 * the next call fits (for Retry-After).  A sliding log would keep a row
 * per call, and a sliding-window counter only estimates the previous
 * window's share, so neither is exact at that price.  When the rate of
 * an application changes, the calls already made count under the new
 * rate (the backlog is scaled to its interval): a raised limit is never
 * stricter than the old one, a lowered one never lets more through.
 * Quota: cost units per UTC day.  Both are read, decided and written
 * under the shared memory's lock, so workers never overshoot, a refused
 * call changes nothing, and admission writes no file: an evaluation
 * makes one write transaction, its decision's.  The database's counter
 * of the day, which must survive a restart, is charged with the
 * decision, or by admission_settle() for a call that ends without one;
 * the running total of an application the shared memory does not hold
 * for the day (the file deleted, a new day) starts from it.  A host
 * without the shared memory keeps both in one short transaction on the
 * cache file instead, counting the larger of the two totals.
 *
 * No 503 is charged (README, "Rate limits and quotas"): a call admitted
 * and then answered 503 is given back what it was charged, by
 * admission_refund(), so that a client retrying a 503 never turns it
 * into a 429.
 *
 * Admission only decides and counts: the caller writes what an admitted
 * call is told (http_ratelimit() for the RateLimit headers). */
#ifndef EVALGATE_ADMISSION_H
#define EVALGATE_ADMISSION_H

#include <stdint.h>

#include "error.h"
#include "model.h"

struct app;
struct settings;
struct store;

/* The decision for one call, pure, for the unit tests. */
struct admit {
	/* in */
	int64_t	now_ms;
	int64_t	rate;		/* calls per minute */
	int64_t	quota;		/* cost units per UTC day */
	int64_t	cost;		/* this call's quota cost */
	int64_t	tat_ms;		/* stored theoretical arrival time */
	int64_t	tat_rate;	/* the rate it was computed under; 0:
				 * unknown (taken as this one) */
	int64_t	tat_at_ms;	/* when it was written; 0: unknown */
	int64_t	used;		/* stored units used today */
	/* out */
	int	rate_ok, quota_ok;
	int64_t	new_tat_ms, new_used;
	int64_t	rate_retry_ms, quota_retry_ms;	/* when refused */
	int64_t	rate_remaining, rate_reset_s;	/* when admitted */
	int64_t	quota_remaining, quota_reset_s;
};
void	admission_decide(struct admit *a);

/* Giving one admitted call back, pure, for the unit tests: what it
 * charged, and the application's state as it is now (which calls
 * admitted after it may have moved, under another rate). */
struct undo {
	/* in */
	int64_t	now_ms;
	int64_t	at_ms;		/* when the call was admitted */
	int64_t	rate;		/* the rate it was charged under */
	int64_t	charged_tat_ms;	/* the arrival time its charge left */
	int64_t	units;		/* its units, if the state is of the day
				 * it was charged on; else 0 */
	int64_t	tat_ms;		/* stored theoretical arrival time */
	int64_t	tat_rate;	/* the rate it was computed under; 0:
				 * unknown (taken as the call's) */
	int64_t	used;		/* stored units used on that day */
	/* out */
	int64_t	new_tat_ms, new_used;
};
void	admission_undo(struct undo *u);

/* What an admitted call charged: the quota units it still owes the
 * database's counter, and what admission_refund() needs to give it all
 * back. */
struct charge {
	char	day[11];	/* UTC "YYYY-MM-DD" of the admission */
	int64_t	units;		/* owed to the database's counter; 0 once
				 * charged there or refunded */
	int64_t	at_ms;		/* when it was admitted; 0: nothing to
				 * refund (none, or already refunded) */
	int64_t	rate;		/* the rate it was charged under */
	int64_t	tat_ms;		/* the arrival time its charge left */
	int	shared;		/* charged in the shared memory (else in
				 * the store) */
};


/* Charges app (borrowed; its own rate and quota, else the settings'
 * defaults) for one call of the given quota cost (0 for routes other
 * than POST /v1/systemone).  c may be NULL when the call is never to
 * be settled or refunded.
 * 0, filling c and rl, or -1 with e set (429 rate_limited or
 * quota_exceeded with the later retry time; 503 if the database is
 * busy: nothing was charged). */
int	admission_charge(struct store *st, const struct settings *settings,
	    const struct app *app, int64_t cost, struct charge *c,
	    struct ratelimit *rl, struct error *e);
/* Writes what c still owes to the database's counter of application
 * app_id, for a call that ends without a decision (which would have
 * carried it) and keeps its charge: it is then refunded no more.  A
 * failure is logged: the running total in the cache still counts the
 * units. */
void	admission_settle(struct store *st, int64_t app_id, struct charge *c);
/* Gives application app_id back what c charged, for a call answered 503
 * after its admission: the arrival time moves back by what is left of
 * the call's interval (admission_undo()), and the running total of the
 * day it was charged on goes down by the units c still owes (those the
 * database's counter has not been charged; they are then owed no
 * more).  Where it was charged: the shared memory, or one short
 * transaction on the store.  Best-effort: a failure is logged and
 * changes nothing else.  Does nothing for a c already refunded or
 * never filled (zeroed). */
void	admission_refund(struct store *st, int64_t app_id, struct charge *c);

#endif
