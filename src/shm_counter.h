/* shm_counter.h: single values the host's workers share in the
 * shared memory (shm.h): marks (when something last happened, under
 * the lock) and counters (atomics, without it). */
#ifndef EVALGATE_SHM_COUNTER_H
#define EVALGATE_SHM_COUNTER_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

/* Marks: when something last happened on the host (a write that found
 * the disk full), for readiness to say so from any worker. */
enum shm_mark { SHM_MARK_DB_FULL, SHM_MARK_CACHE_FULL, SHM_MARK__MAX };
void		 shm_mark(struct shm *m, enum shm_mark k, int64_t at_ms);
/* When k was last marked; 0 never (or no mapping). */
int64_t		 shm_marked(struct shm *m, enum shm_mark k);

/* Counters that any process reads and moves without the lock (atomics),
 * read on every request: whoever changes something that workers keep a
 * copy of or look up in a file moves one, so that a worker reads the
 * file again only when one moved (store_sqlite.c and
 * store_sqlite_cache.c say what each holds).  A new file starts
 * COOLDOWNS at 1, CATALOG_RUNS at a random value and the others at 0. */
enum shm_counter {
	SHM_COUNTER_CATALOG_RUN,	/* the database's run of commits that
					 * left the catalog alone: id << 32 |
					 * the number of its last commit */
	SHM_COUNTER_CATALOG_RUNS,	/* gives the runs their ids */
	SHM_COUNTER_COOLDOWNS,		/* moved by each cool-down written */
	SHM_COUNTER_COOLDOWNS_NONE,	/* COOLDOWNS when the cache was last
					 * found to hold none */
	SHM_COUNTER__MAX
};
/* 0 and *v, or -1: no mapping. */
int		 shm_counter(struct shm *m, enum shm_counter k, uint64_t *v);
void		 shm_counter_set(struct shm *m, enum shm_counter k,
		    uint64_t v);
/* Adds 1 and returns the new value; 0 with no mapping. */
uint64_t	 shm_counter_next(struct shm *m, enum shm_counter k);
/* Sets k to want if it still holds expect: whether it did. */
int		 shm_counter_swap(struct shm *m, enum shm_counter k,
		    uint64_t expect, uint64_t want);

#endif
