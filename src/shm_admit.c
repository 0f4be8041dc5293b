/* shm_admit.c: admission's table in the host's shared memory (see
 * shm_admit.h): set-associative, SHM_ADMIT_WAYS entries a bucket. */
#include "config.h"

#include <string.h>

#include "shm.h"
#include "shm_admit.h"
#include "shm_file.h"

/* The entry of app_id in its bucket, or NULL with *spare the one a new
 * entry should take: a free one, else the one whose rate window is
 * emptiest (the earliest arrival time). */
static struct shm_admit *
admit_find(struct shm_file *f, int64_t app_id, struct shm_admit **spare)
{
	struct shm_admit	*b, *e;
	uint64_t		 h = (uint64_t)app_id * 0x9e3779b97f4a7c15ULL;

	b = &f->admits[(h >> 32) % (SHM_ADMITS / SHM_ADMIT_WAYS) *
	    SHM_ADMIT_WAYS];
	*spare = b;
	for (e = b; e < b + SHM_ADMIT_WAYS; e++) {
		if (e->app_id == app_id)
			return e;
		if ((*spare)->app_id != 0 && (e->app_id == 0 ||
		    e->a.tat_ms < (*spare)->a.tat_ms))
			*spare = e;
	}
	return NULL;
}

int
shm_admission(struct shm *m, int64_t app_id, int64_t day, int64_t db_used,
    void (*fn)(struct shm_admission *, void *), void *arg)
{
	struct shm_admit	*e, *spare;

	if (m == NULL || shm_lock(m) == -1)
		return -1;
	if ((e = admit_find(m->f, app_id, &spare)) == NULL ||
	    e->day != day) {
		if (db_used < 0) {
			shm_unlock(m);
			return 0;
		}
		if (e == NULL) {	/* taken over: its last fields first */
			e = spare;
			e->app_id = 0;
			memset(&e->a, 0, sizeof(e->a));
		}
		e->a.used = db_used;
		e->day = day;
		e->app_id = app_id;
	}
	fn(&e->a, arg);
	shm_unlock(m);
	return 1;
}
