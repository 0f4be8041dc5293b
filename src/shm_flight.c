/* shm_flight.c: the evaluations in flight to each backend, in the
 * host's shared memory (see shm_flight.h): a table of counts kept as
 * calls are taken and given, put right by a walk over the slots. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "shm.h"
#include "shm_file.h"
#include "shm_flight.h"

#define SHM_RECOUNT_MS	100		/* a full backend's owners asked */

/* Under the lock: backend_id's entry, one taken for it if add (a free
 * one, else the least recently used idle one); NULL when it has none
 * (or none can be had). */
static struct shm_flight *
flight(struct shm_file *f, int64_t backend_id, int add)
{
	struct shm_flight	*spare = NULL, *e;

	for (e = f->flights; e < f->flights + SHM_FLIGHTS; e++) {
		if (e->backend_id == backend_id)
			return e;
		if (e->n <= 0 && (spare == NULL || (spare->backend_id != 0 &&
		    (e->backend_id == 0 || e->used_ms < spare->used_ms))))
			spare = e;
	}
	if (!add || spare == NULL)
		return NULL;
	spare->backend_id = 0;		/* cut short here: still free */
	spare->n = 0;
	spare->latency_us = 0;
	spare->failing = 0;
	spare->reaped_ms = 0;
	spare->older = 0;
	spare->young_ms = INT64_MIN;	/* no walk yet */
	spare->backend_id = backend_id;
	return spare;
}

void
shm_inflight_view(struct shm *m, int64_t backend_id,
    struct shm_flight_view *v)
{
	struct shm_flight	*e;

	memset(v, 0, sizeof(*v));
	if (m == NULL || m->f == NULL)
		return;
	v->workers = shm_workers(m);
	for (e = m->f->flights; e < m->f->flights + SHM_FLIGHTS; e++)
		if (__atomic_load_n(&e->backend_id, __ATOMIC_RELAXED) ==
		    backend_id) {
			v->in_flight = __atomic_load_n(&e->n,
			    __ATOMIC_RELAXED);
			v->latency_us = __atomic_load_n(&e->latency_us,
			    __ATOMIC_RELAXED);
			v->failing = __atomic_load_n(&e->failing,
			    __ATOMIC_RELAXED) != 0;
			break;
		}
}

/* Under the lock: the live processes other than us calling backend_id
 * (*all), and those of them calling since before since_ms (returned),
 * with when the earliest of the others began (*young_ms, INT64_MAX when
 * there is none).  With reap, an owner counted is first asked whether
 * its pid still runs (one system call; the periodic reap, reap_due(),
 * also tells a pid the kernel gave to another process since). */
static size_t
walk(struct shm *m, int64_t backend_id, int64_t since_ms, int reap,
    size_t *all, int64_t *young_ms)
{
	struct shm_worker	*w;
	size_t			 i, n, old = 0;

	*all = 0;
	*young_ms = INT64_MAX;
	w = shm_slots(m, &n);
	for (i = 0; i < n; i++) {
		if (w[i].pid == 0 || w[i].backend_id != backend_id ||
		    &w[i] == m->self)
			continue;
		if (reap && kill(w[i].pid, 0) == -1 && errno == ESRCH) {
			vacate(m->f, &w[i]);
			continue;
		}
		(*all)++;
		if (w[i].since_ms <= since_ms)
			old++;
		else if (w[i].since_ms < *young_ms)
			*young_ms = w[i].since_ms;
	}
	return old;
}

int
shm_inflight_take(struct shm *m, int64_t backend_id, long limit,
    int64_t older_ms, int64_t now_ms)
{
	struct shm_flight	*f;
	size_t			 busy, all;
	int64_t			 young;
	int			 pass;

	if (m == NULL || shm_lock(m) == -1)
		return 1;
	if (m->self == NULL) {		/* no slot: nothing to count in */
		shm_unlock(m);
		return 1;
	}
	f = flight(m->f, backend_id, 1);
	busy = f != NULL ? (size_t)f->n : (size_t)limit;
	/* Full by the count: the last walk's count of calls over the age,
	 * while it stands (struct shm_flight), so that a backend with
	 * more calls in flight than the limit, all young, is walked about
	 * once per age rather than at every call. */
	if (busy >= (size_t)limit && f != NULL && older_ms > 0 &&
	    f->older < limit && now_ms - older_ms < f->young_ms)
		busy = (size_t)f->older;
	/* Else (or not counted): walk the slots, counting the calls
	 * older than older_ms; when still full, walk again asking whether
	 * each owner lives, at most every SHM_RECOUNT_MS for a backend (a
	 * flood of calls refused is not a flood of system calls under the
	 * lock). */
	for (pass = 0; pass < 2 && busy >= (size_t)limit; pass++) {
		if (pass == 1 && f != NULL && now_ms - f->reaped_ms <
		    SHM_RECOUNT_MS && now_ms >= f->reaped_ms)
			break;
		if (pass == 1 && f != NULL)
			f->reaped_ms = now_ms;
		busy = walk(m, backend_id, now_ms - older_ms, pass, &all,
		    &young);
		if (f != NULL) {
			f->n = (int64_t)all;
			f->older = (int64_t)busy;
			f->young_ms = young;
		}
	}
	if (busy < (size_t)limit) {	/* read without the lock too */
		m->self->since_ms = now_ms;
		__atomic_store_n(&m->self->backend_id, backend_id,
		    __ATOMIC_RELAXED);
		if (f != NULL) {
			f->n++;
			f->used_ms = now_ms;
			if (f->young_ms > now_ms)	/* ours is young */
				f->young_ms = now_ms;
		}
	}
	shm_unlock(m);
	return busy < (size_t)limit;
}

void
shm_inflight_give(struct shm *m, enum shm_call how, int64_t us)
{
	struct shm_flight	*f;

	if (m == NULL || m->self == NULL || shm_lock(m) == -1)
		return;
	if (m->self->backend_id != 0 &&
	    (f = flight(m->f, m->self->backend_id, 0)) != NULL) {
		if (f->n > 0)
			f->n--;
		if (how == SHM_CALL_ANSWERED) {
			if (us < 1)
				us = 1;
			f->latency_us = f->latency_us == 0 ? us :
			    f->latency_us + (us - f->latency_us) / 8;
			f->failing = 0;
		} else if (how == SHM_CALL_FAILED)
			f->failing = 1;
	}
	__atomic_store_n(&m->self->backend_id, 0, __ATOMIC_RELAXED);
	shm_unlock(m);
}
