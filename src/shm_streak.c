/* shm_streak.c: replicas' failures in a row in the host's shared
 * memory (see shm_streak.h): a small table, the least recent entry
 * giving way. */
#include "config.h"

#include "shm.h"
#include "shm_file.h"
#include "shm_streak.h"

/* Whether no entry counts a failure of the key hashed h: read without
 * the lock. */
static int
streak_quiet(struct shm_file *f, uint64_t h)
{
	struct shm_streak	*s;

	for (s = f->streaks; s < f->streaks + SHM_STREAKS; s++)
		if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) == h &&
		    __atomic_load_n(&s->n, __ATOMIC_RELAXED) > 0)
			return 0;
	return 1;
}

long
shm_streak_add(struct shm *m, const char *key, int failed, int64_t now_ms,
    int64_t period_ms)
{
	struct shm_streak	*s, *oldest;
	uint64_t		 h = shm_key_hash(key);
	int64_t			 n = 0;

	if (m == NULL || m->f == NULL)
		return -1;
	if (!failed && streak_quiet(m->f, h))
		return 0;
	if (shm_lock(m) == -1)
		return -1;
	oldest = &m->f->streaks[0];
	for (s = m->f->streaks; s < m->f->streaks + SHM_STREAKS; s++) {
		if (s->key == h)
			break;
		if (s->key == 0 || s->at_ms < oldest->at_ms)
			oldest = s;	/* a free entry is the oldest */
	}
	if (s == m->f->streaks + SHM_STREAKS && failed) {
		s = oldest;		/* cut short here: a count of 0 */
		__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->key, h, __ATOMIC_RELAXED);
	}
	if (s < m->f->streaks + SHM_STREAKS) {
		if (!failed || now_ms - s->at_ms >= period_ms ||
		    now_ms < s->at_ms)
			n = 0;		/* a success, or a new streak */
		else
			n = s->n;
		if (failed) {
			n++;
			s->at_ms = now_ms;
		}
		__atomic_store_n(&s->n, n, __ATOMIC_RELAXED);
	}
	shm_unlock(m);
	return (long)n;
}
