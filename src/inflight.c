/* inflight.c: the in-flight rule of a remote backend (see inflight.h). */
#include "config.h"

#include "inflight.h"

void
inflight_rule(const struct shm_flight_view *v, long max_in_flight,
    long workers_cap, long timeout_ms, struct inflight_rule *r)
{
	long	workers = v->workers;
	int64_t	slow_ms = v->latency_us / 1000 * INFLIGHT_SLOW_FACTOR;

	r->older_ms = 0;
	r->wait_ms = 0;
	if (max_in_flight > 0) {	/* the operator's: a hard cap */
		r->limit = max_in_flight;
		return;
	}
	if (workers_cap > 0 && (workers <= 0 || workers > workers_cap))
		workers = workers_cap;
	r->limit = workers / 2 > 1 ? workers / 2 : 1;
	if (v->failing)
		r->limit = 1;
	if (v->latency_us > 0) {	/* it has a normal: overdue calls */
		if (slow_ms < INFLIGHT_SLOW_MIN_MS)
			slow_ms = INFLIGHT_SLOW_MIN_MS;
		if (slow_ms > timeout_ms / 2)
			slow_ms = timeout_ms / 2;
		r->older_ms = slow_ms > 0 ? slow_ms : 0;
	} else if (!v->failing)		/* none yet: wait for one */
		r->wait_ms = timeout_ms / 10 < INFLIGHT_COLD_WAIT_MS ?
		    timeout_ms / 10 : INFLIGHT_COLD_WAIT_MS;
}
