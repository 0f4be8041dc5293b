/* shm_probe.c: replicas' probes in the host's shared memory (see
 * shm_probe.h): a small table, the least recent entry giving way. */
#include "config.h"

#include "shm.h"
#include "shm_file.h"
#include "shm_probe.h"

int
shm_probe_claim(struct shm *m, const char *key, int64_t now_ms,
    int64_t period_ms)
{
	struct shm_probe	*p, *oldest;
	uint64_t		 h = shm_key_hash(key);
	int			 ok = 1;

	if (m == NULL || shm_lock(m) == -1)
		return 1;
	oldest = &m->f->probes[0];
	for (p = m->f->probes; p < m->f->probes + SHM_PROBES; p++) {
		if (p->key == h)
			break;
		if (p->key == 0 || p->at_ms < oldest->at_ms)
			oldest = p;	/* a free entry is the oldest */
	}
	if (p == m->f->probes + SHM_PROBES) {
		p = oldest;
		p->at_ms = INT64_MIN;
		p->key = h;
	}
	if (p->at_ms != INT64_MIN && now_ms - p->at_ms < period_ms)
		ok = 0;
	else
		p->at_ms = now_ms;
	shm_unlock(m);
	return ok;
}
