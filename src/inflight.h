/* inflight.h: how many evaluations a remote backend may have in flight
 * on the host, decided from what the host knows of its calls (pure).
 *
 * The limit exists so that a backend that hangs cannot hold every
 * worker; it must never refuse a healthy backend while workers are
 * free.  So, unless the operator set max_in_flight (a hard cap: every
 * call in flight counts, a call over it is refused at once), it bites
 * only on a backend slower than its normal:
 *
 * - a call counts toward the limit only once it has been in flight
 *   INFLIGHT_SLOW_FACTOR times as long as the backend's recent answers
 *   took (INFLIGHT_SLOW_MIN_MS at least, half the timeout at most): a
 *   burst of calls answered at the usual pace never counts at all;
 * - the limit is half of the host's workers (counted by the workers
 *   themselves, capped by SERVICE_WORKERS where it is set), at least 1;
 * - a backend that has answered nothing yet has no normal: every call
 *   in flight counts, and a call over the limit waits for room (or for
 *   the first answer, which gives it a normal) up to a tenth of the
 *   timeout, INFLIGHT_COLD_WAIT_MS at most, so that the first burst a
 *   new host sends is served, not refused;
 * - a backend whose last call failed (no replica answered) is asked by
 *   one overdue call at a time until one answers, as a circuit
 *   breaker's half-open state, and nobody waits for it.
 *
 * This is the bulkhead of a latency-aware limiter (after TCP Vegas and
 * Netflix's concurrency-limits): the threshold moves with the
 * backend's own latency rather than with a configured pool size. */
#ifndef EVALGATE_INFLIGHT_H
#define EVALGATE_INFLIGHT_H

#include <stdint.h>

#include "shm_flight.h"

#define INFLIGHT_SLOW_FACTOR	4	/* overdue: this many times the
					 * backend's recent latency */
#define INFLIGHT_SLOW_MIN_MS	1000	/* and at least this long: a
					 * backend several times slower
					 * than its normal is let adapt */
#define INFLIGHT_COLD_WAIT_MS	1000	/* a backend without a normal:
					 * the longest wait for room */

struct inflight_rule {
	long	 limit;		/* calls counted that refuse the next */
	int64_t	 older_ms;	/* only calls in flight longer than this
				 * count; 0: every one */
	int64_t	 wait_ms;	/* how long a call over the limit may wait
				 * for room; 0: refused at once */
};

/* The rule for a backend whose calls the host sees as v, with the
 * operator's max_in_flight (0: none), SERVICE_WORKERS (0: unset) and
 * the backend's timeout per replica attempt. */
void	inflight_rule(const struct shm_flight_view *v, long max_in_flight,
	    long workers_cap, long timeout_ms, struct inflight_rule *r);

#endif
