/* admission_test: GCRA and the daily quota, and giving a call back,
 * computed by hand. */
#include "config.h"

#include "admission.h"
#include "tap.h"

/* How many calls a burst at one instant admits. */
static int64_t
burst(int64_t now, int64_t rate)
{
	struct admit	a = { 0 };
	int64_t		n = 0;

	a.now_ms = now;
	a.rate = rate;
	a.quota = 1;
	for (;;) {
		admission_decide(&a);
		if (!a.rate_ok)
			return n;
		n++;
		a.tat_ms = a.new_tat_ms;
	}
}

static struct admit
step(int64_t now, int64_t rate, int64_t quota, int64_t cost, int64_t tat,
    int64_t used)
{
	struct admit a = { 0 };

	a.now_ms = now;
	a.rate = rate;
	a.quota = quota;
	a.cost = cost;
	a.tat_ms = tat;
	a.used = used;
	admission_decide(&a);
	return a;
}

/* Gives back a call admitted at at under rate, whose charge left the
 * arrival time charged, from the state (tat under tat_rate, used units)
 * at now. */
static struct undo
undo(int64_t now, int64_t at, int64_t rate, int64_t charged, int64_t units,
    int64_t tat, int64_t tat_rate, int64_t used)
{
	struct undo u = { 0 };

	u.now_ms = now;
	u.at_ms = at;
	u.rate = rate;
	u.charged_tat_ms = charged;
	u.units = units;
	u.tat_ms = tat;
	u.tat_rate = tat_rate;
	u.used = used;
	admission_undo(&u);
	return u;
}

/* admission_undo(): what a call answered 503 gives back. */
static void
refunds(int64_t noon)
{
	struct undo	u, v;
	struct admit	a;
	int64_t		tat = 0;
	int		i;

	/* 3/min: one call every 20 s.  Three at noon leave noon + 60 s,
	 * the first one's charge noon + 20 s. */
	u = undo(noon, noon, 3, noon + 20000, 4, noon + 60000, 3, 12);
	ok(u.new_tat_ms == noon + 40000 && u.new_used == 8,
	    "the first of 3 calls at 3/min given back at once: one interval "
	    "(noon + 40 s) and its 4 units (8 left): %lld",
	    (long long)(u.new_tat_ms - noon));
	u = undo(noon, noon, 3, noon + 60000, 4, noon + 60000, 3, 12);
	ok(u.new_tat_ms == noon + 40000, "so is the last: each call is one "
	    "interval, whichever it was");
	for (i = 0; i < 3; i++) {
		a = step(noon, 3, 1000, 1, tat, 0);
		tat = a.new_tat_ms;
	}
	u = undo(noon, noon, 3, noon + 20000, 1, tat, 3, 3);
	a = step(noon, 3, 1000, 1, u.new_tat_ms, u.new_used);
	ok(a.rate_ok && a.rate_remaining == 0 && a.new_used == 3,
	    "after 3 calls and one given back, one more fits, and no more");
	a = step(noon, 3, 1000, 1, a.new_tat_ms, a.new_used);
	ok(!a.rate_ok, "the next is refused");

	/* Given back later: the part of its interval not yet drained. */
	u = undo(noon + 5000, noon, 3, noon + 20000, 4, noon + 20000, 3, 4);
	ok(u.new_tat_ms == noon + 5000 && u.new_used == 0,
	    "alone, given back 5 s later: 15 s, the queue is empty at now");
	u = undo(noon + 25000, noon, 3, noon + 20000, 4, noon + 20000, 3, 4);
	ok(u.new_tat_ms == noon + 20000 && u.new_used == 0,
	    "drained before it was given back: the arrival time stays (it "
	    "is past), the units go");
	/* A call at noon + 25 s found the queue empty and stands at
	 * noon + 45 s: the first call's interval was long drained. */
	u = undo(noon + 30000, noon, 3, noon + 20000, 4, noon + 45000, 3, 8);
	ok(u.new_tat_ms == noon + 45000 && u.new_used == 4,
	    "a later call that found the queue empty keeps its interval");
	/* One at noon + 10 s queued behind it: noon + 40 s. */
	u = undo(noon + 12000, noon, 3, noon + 20000, 4, noon + 40000, 3, 8);
	ok(u.new_tat_ms == noon + 32000,
	    "a later call queued behind it moves up by the 8 s left of its "
	    "interval: %lld", (long long)(u.new_tat_ms - noon));

	/* Two given back at once, in either order: the same state. */
	u = undo(noon + 1000, noon, 3, noon + 20000, 4, noon + 40000, 3, 8);
	u = undo(noon + 1000, noon, 3, noon + 40000, 4, u.new_tat_ms, 3,
	    u.new_used);
	v = undo(noon + 1000, noon, 3, noon + 40000, 4, noon + 40000, 3, 8);
	v = undo(noon + 1000, noon, 3, noon + 20000, 4, v.new_tat_ms, 3,
	    v.new_used);
	ok(u.new_tat_ms == noon + 1000 && v.new_tat_ms == noon + 1000 &&
	    u.new_used == 0 && v.new_used == 0,
	    "two calls given back 1 s later, in either order: the queue is "
	    "empty, the units 0");

	/* Rates that do not divide a minute: 7/min, 8572 ms a call. */
	u = undo(noon, noon, 7, noon + 2 * 8572, 1, noon + 7 * 8572, 7, 7);
	ok(u.new_tat_ms == noon + 6 * 8572, "7/min: one interval of "
	    "ceil(60000 / 7) ms");

	/* The rate raised from 3 to 600 (100 ms) after 3 calls at noon: a
	 * fourth rescaled the queue to noon + 300 ms and stands at 400. */
	u = undo(noon, noon, 3, noon + 60000, 4, noon + 400, 600, 16);
	ok(u.new_tat_ms == noon + 300 && u.new_used == 12,
	    "raised to 600/min since: one interval of the new rate, 100 ms");
	/* The first of those calls, given back 1 s later: in the new
	 * rate's terms its interval ended at noon + 100 ms. */
	u = undo(noon + 1000, noon, 3, noon + 20000, 4, noon + 1100, 600, 16);
	ok(u.new_tat_ms == noon + 1100,
	    "and drained in the new rate's terms: nothing moves");
	/* Two calls at 600/min at noon, then lowered to 3: a third at noon
	 * rescaled the queue to noon + 40 s and stands at 60 s; the second
	 * call's 100 ms are 20 s in the new terms. */
	u = undo(noon, noon, 600, noon + 200, 4, noon + 60000, 3, 12);
	ok(u.new_tat_ms == noon + 40000,
	    "lowered to 3/min since: one interval of the new rate, 20 s");
	/* The third at noon + 20 s instead: given back then, when the
	 * queue was rescaled is unknown (its base could have been as late
	 * as now), none of the call's interval is surely left. */
	u = undo(noon + 20000, noon, 600, noon + 200, 4, noon + 60000, 3, 12);
	ok(u.new_tat_ms == noon + 60000,
	    "lowered, given back 20 s later: kept, never more than it holds");
	u = undo(noon, noon, 3, noon + 20000, 4, noon + 60000, 0, 12);
	ok(u.new_tat_ms == noon + 40000,
	    "an arrival time of unknown rate is taken as the call's");

	u = undo(noon, noon, 3, noon + 20000, 4, noon + 20000, 3, 2);
	ok(u.new_used == 0, "the units never go below 0");
	u = undo(noon, noon, 3, noon + 20000, 0, noon + 20000, 3, 7);
	ok(u.new_used == 7 && u.new_tat_ms == noon,
	    "units of another day: the arrival time only");
}

int
main(void)
{
	/* 2026-11-21T12:00:00Z: 12 hours to the next UTC day. */
	const int64_t	noon = 1795262400000LL;
	struct admit	a;
	int64_t		tat = 0;
	int		i, admitted = 0;

	a = step(noon, 10, 100, 1, 0, 0);
	ok(a.rate_ok && a.quota_ok, "first call admitted");
	ok(a.new_tat_ms == noon + 6000, "10/min: arrival time moves 6 s");
	ok(a.rate_remaining == 9, "9 calls remain this minute");
	ok(a.quota_remaining == 99, "99 units remain today");
	ok(a.quota_reset_s == 12 * 3600, "quota resets in 12 h: %lld",
	    (long long)a.quota_reset_s);

	for (i = 0; i < 25; i++) {
		a = step(noon, 10, 1000, 1, tat, 0);
		if (a.rate_ok) {
			admitted++;
			tat = a.new_tat_ms;
		}
	}
	ok(admitted == 10, "a burst admits exactly the rate: %d", admitted);
	a = step(noon, 10, 1000, 1, tat, 0);
	ok(!a.rate_ok && a.rate_retry_ms == 6000,
	    "the 11th waits exactly 6 s: %lld", (long long)a.rate_retry_ms);
	ok(a.new_tat_ms == tat, "a refused call moves nothing");
	a = step(noon + 5999, 10, 1000, 1, tat, 0);
	ok(!a.rate_ok && a.rate_retry_ms == 1, "1 ms early: still refused");
	a = step(noon + 6000, 10, 1000, 1, tat, 0);
	ok(a.rate_ok, "at 6 s one more fits");
	a = step(noon + 120000, 10, 1000, 1, tat, 0);
	ok(a.rate_ok && a.rate_remaining == 9,
	    "after a quiet minute the allowance is whole again");

	a = step(noon, 600, 10, 3, 0, 8);
	ok(!a.quota_ok, "8 used + 3 > 10: refused");
	ok(a.quota_retry_ms == 12 * 3600 * 1000LL,
	    "retry at the next UTC day");
	ok(a.new_used == 8, "refused call adds nothing");
	a = step(noon, 600, 10, 2, 0, 8);
	ok(a.quota_ok && a.new_used == 10 && a.quota_remaining == 0,
	    "8 + 2 = 10 fits exactly");
	a = step(noon, 600, 10, 11, 0, 0);
	ok(!a.quota_ok, "a call costing more than the quota never fits");
	a = step(noon + 12 * 3600 * 1000LL - 1, 600, 10, 1, 0, 10);
	ok(!a.quota_ok && a.quota_retry_ms == 1,
	    "1 ms before midnight: retry in 1 ms");

	a = step(noon, 1, 10, 1, noon + 60000, 10);
	ok(!a.rate_ok && !a.quota_ok, "both refuse");
	ok(a.rate_retry_ms == 60000 && a.quota_retry_ms == 43200000,
	    "each with its own time");
	a = step(noon, 100000, 10, 1, 0, 0);
	ok(a.rate_ok && a.new_tat_ms == noon + 1,
	    "rates over 60000/min advance by at least 1 ms");

	/* Rates that do not divide a minute: the burst is still exact. */
	ok(burst(noon, 7) == 7, "7/min: a burst admits 7");
	ok(burst(noon, 700) == 700, "700/min: a burst admits 700, not 705: "
	    "%lld", (long long)burst(noon, 700));
	ok(burst(noon, 100000) == 100000, "100000/min: a burst admits "
	    "100000: %lld", (long long)burst(noon, 100000));
	a = step(noon, 7, 10, 1, noon + 7 * 8572, 0);
	ok(!a.rate_ok && a.rate_retry_ms == 8572,
	    "7/min refills one call every ceil(60000 / 7) ms: %lld",
	    (long long)a.rate_retry_ms);
	a = step(noon, 20, 10, 1, 0, 0);
	ok(a.rate_remaining == 19 && a.rate_reset_s == 3,
	    "20/min after one call: 19 left, whole again in 3 s");
	a = step(noon, 20, 10, 1, noon + 57000, 0);
	ok(a.rate_ok && a.rate_remaining == 0 && a.rate_reset_s == 60,
	    "the 20th call: none left, whole again in 60 s");

	a = step(noon, 600, 10, 0, 0, 12);
	ok(a.quota_ok && a.new_used == 12 && a.quota_remaining == 0,
	    "a call costing 0 fits even over a lowered quota");

	/* A change of rate: the calls made carry over, not the share. */
	a.now_ms = noon;
	a.rate = 600;
	a.quota = 1000;
	a.cost = 0;
	a.tat_ms = noon + 60000;	/* 3 calls at 3/min: full */
	a.tat_rate = 3;
	a.tat_at_ms = noon;
	admission_decide(&a);
	ok(a.rate_ok && a.new_tat_ms == noon + 400 &&
	    a.rate_remaining == 596, "3 calls at 3/min, then 600/min: the "
	    "next is the 4th of 600 (596 left)");
	a.tat_ms = noon + 300;		/* 3 calls at 600/min */
	a.tat_rate = 600;
	a.tat_at_ms = noon;
	a.rate = 3;
	admission_decide(&a);
	ok(!a.rate_ok && a.rate_retry_ms == 20000, "3 calls at 600/min, then "
	    "3/min: the minute is used up, one interval to wait");
	ok(a.new_tat_ms == noon + 300, "and the refusal writes nothing");
	a.now_ms = noon + 20000;
	admission_decide(&a);
	ok(a.rate_ok && a.rate_remaining == 0, "20 s later: one call, none "
	    "left after it");
	a.now_ms = noon;
	a.tat_ms = noon + 60000;
	a.tat_rate = 0;
	a.tat_at_ms = 0;
	a.rate = 600;
	admission_decide(&a);
	ok(!a.rate_ok, "an arrival time of unknown rate is taken as this "
	    "rate's");

	refunds(noon);
	return tap_done();
}
