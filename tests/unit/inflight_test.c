/* inflight_test: the in-flight rule of a remote backend (src/inflight.c),
 * case by case: the operator's hard cap, a backend without a normal
 * (every call counts, a call over the limit waits a while), one with a
 * normal (only calls overdue against it count), one whose last call
 * failed (one at a time), and the pool counted or capped. */
#include "config.h"

#include "inflight.h"
#include "tap.h"

static struct inflight_rule
rule(long workers, int64_t latency_us, int failing, long max_in_flight,
    long cap, long timeout_ms)
{
	struct shm_flight_view	v = { 0 };
	struct inflight_rule	r;

	v.workers = workers;
	v.latency_us = latency_us;
	v.failing = failing;
	inflight_rule(&v, max_in_flight, cap, timeout_ms, &r);
	return r;
}

int
main(void)
{
	struct inflight_rule r;

	r = rule(8, 300000, 0, 3, 0, 30000);
	ok(r.limit == 3 && r.older_ms == 0 && r.wait_ms == 0,
	    "max_in_flight 3: a hard cap, every call counts, no wait");
	r = rule(8, 0, 1, 3, 0, 30000);
	ok(r.limit == 3 && r.older_ms == 0 && r.wait_ms == 0,
	    "the hard cap holds whatever the backend's state");

	r = rule(8, 0, 0, 0, 0, 30000);
	ok(r.limit == 4 && r.older_ms == 0 && r.wait_ms == 1000,
	    "no answer yet, 8 workers: 4, every call counts, a call over it "
	    "waits up to 1 s (a tenth of 30 s, at most 1 s)");
	r = rule(4, 0, 0, 0, 0, 3000);
	ok(r.limit == 2 && r.wait_ms == 300,
	    "a 3 s timeout: the wait is 300 ms");
	r = rule(1, 0, 0, 0, 0, 30000);
	ok(r.limit == 1, "one worker: a limit of 1, never 0");
	r = rule(0, 0, 0, 0, 0, 30000);
	ok(r.limit == 1, "no worker counted (no shared memory): 1");

	r = rule(1024, 300000, 0, 0, 0, 30000);
	ok(r.limit == 512 && r.older_ms == 1200 && r.wait_ms == 0,
	    "answers in 300 ms, 1024 workers: 512 calls over 1.2 s old "
	    "refuse the next, at once");
	r = rule(16, 2000, 0, 0, 0, 30000);
	ok(r.older_ms == 1000, "answers in 2 ms: overdue after 1 s at "
	    "the least");
	r = rule(16, 20000000, 0, 0, 0, 30000);
	ok(r.older_ms == 15000, "answers in 20 s: overdue after 15 s, half "
	    "the timeout, at the most");

	r = rule(16, 300000, 1, 0, 0, 30000);
	ok(r.limit == 1 && r.older_ms == 1200 && r.wait_ms == 0,
	    "its last call failed: one overdue call at a time, no wait");
	r = rule(16, 0, 1, 0, 0, 30000);
	ok(r.limit == 1 && r.older_ms == 0 && r.wait_ms == 0,
	    "failed, never answered: one call at a time, no wait");

	r = rule(40, 0, 0, 0, 4, 30000);
	ok(r.limit == 2, "SERVICE_WORKERS 4 caps 40 workers counted: 2");
	r = rule(3, 0, 0, 0, 8, 30000);
	ok(r.limit == 1, "a cap above the workers counted changes nothing");
	r = rule(0, 0, 0, 0, 8, 30000);
	ok(r.limit == 4, "no worker counted: the cap is the pool");
	return tap_done();
}
