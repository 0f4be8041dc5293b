/* shm_flight.h: the evaluations in flight to each backend, counted
 * host-wide in the shared memory (shm.h) for the in-flight limit, and
 * how each backend's calls have gone (inflight.c reads the view).
 * Each function takes the lock itself, and with no mapping (m NULL)
 * allows what it is asked, as a host without the file would: these
 * limits protect the host, they are not a contract. */
#ifndef EVALGATE_SHM_FLIGHT_H
#define EVALGATE_SHM_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

#define SHM_FLIGHTS	64	/* backends whose calls in flight are
				 * counted (more are walked) */

/* In flight: what the host knows of backend_id's calls, read without
 * the lock (a view a moment old is good enough for a policy).  All 0
 * with no mapping, or for a backend not called since the file was
 * made. */
struct shm_flight_view {
	long	 workers;	/* shm_workers() */
	int64_t	 in_flight;	/* its calls in flight on the host */
	int64_t	 latency_us;	/* how long its answered calls took, the
				 * recent weighing most (a moving average
				 * of 1/8); 0: none answered yet */
	int	 failing;	/* its last call failed, and none answered
				 * since */
};
void		 shm_inflight_view(struct shm *m, int64_t backend_id,
		    struct shm_flight_view *v);
/* This process is calling backend_id (> 0) at now_ms (monotonic) if
 * fewer than limit live processes are calling it since before now_ms -
 * older_ms (older_ms 0: every call counts): 1 taken (recorded in its
 * slot), 0 full.  A process killed in the call is not counted once it
 * is gone. */
int		 shm_inflight_take(struct shm *m, int64_t backend_id,
		    long limit, int64_t older_ms, int64_t now_ms);
/* The call taken is over, after us microseconds: how it went. */
enum shm_call {
	SHM_CALL_ANSWERED,	/* an answer that fits: the latency counts */
	SHM_CALL_FAILED,	/* no replica answered (transport, server) */
	SHM_CALL_OTHER		/* anything else: nothing learnt */
};
void		 shm_inflight_give(struct shm *m, enum shm_call how,
		    int64_t us);

#endif
