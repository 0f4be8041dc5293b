/* shm_streak.h: replicas' failures in a row, counted host-wide in the
 * shared memory (shm.h) by a hash of the replica's key. */
#ifndef EVALGATE_SHM_STREAK_H
#define EVALGATE_SHM_STREAK_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

#define SHM_STREAKS	64	/* replicas whose failures in a row count */

/* Failures in a row: key's count after one more failure (failed) or a
 * success (!failed: 0); a count whose last failure is period_ms or more
 * before now_ms starts again from 0.  The least recent count gives way
 * to a new key.  -1 with no mapping (or its lock unusable): there is no
 * count.  A success where no failure is counted, the common case, takes
 * no lock; one that races a failure of another process may leave that
 * failure counted. */
long		 shm_streak_add(struct shm *m, const char *key, int failed,
		    int64_t now_ms, int64_t period_ms);

#endif
