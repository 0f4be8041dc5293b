/* shm_counter.c: marks and counters in the host's shared memory (see
 * shm_counter.h). */
#include "config.h"

#include "shm.h"
#include "shm_counter.h"
#include "shm_file.h"

void
shm_mark(struct shm *m, enum shm_mark k, int64_t at_ms)
{
	if (m == NULL || k >= SHM_MARK__MAX || shm_lock(m) == -1)
		return;
	m->f->marks[k] = at_ms;
	shm_unlock(m);
}

int64_t
shm_marked(struct shm *m, enum shm_mark k)
{
	int64_t at;

	if (m == NULL || k >= SHM_MARK__MAX || shm_lock(m) == -1)
		return 0;
	at = m->f->marks[k];
	shm_unlock(m);
	return at;
}

int
shm_counter(struct shm *m, enum shm_counter k, uint64_t *v)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return -1;
	*v = __atomic_load_n(&m->f->counters[k], __ATOMIC_SEQ_CST);
	return 0;
}

void
shm_counter_set(struct shm *m, enum shm_counter k, uint64_t v)
{
	if (m != NULL && m->f != NULL && k < SHM_COUNTER__MAX)
		__atomic_store_n(&m->f->counters[k], v, __ATOMIC_SEQ_CST);
}

uint64_t
shm_counter_next(struct shm *m, enum shm_counter k)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return 0;
	return __atomic_add_fetch(&m->f->counters[k], 1, __ATOMIC_SEQ_CST);
}

int
shm_counter_swap(struct shm *m, enum shm_counter k, uint64_t expect,
    uint64_t want)
{
	if (m == NULL || m->f == NULL || k >= SHM_COUNTER__MAX)
		return 0;
	return __atomic_compare_exchange_n(&m->f->counters[k], &expect, want,
	    0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
