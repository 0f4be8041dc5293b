/* shm_queue.h: the write-lock queues of the store's files, robust
 * mutexes in the host's shared memory (shm.h). */
#ifndef EVALGATE_SHM_QUEUE_H
#define EVALGATE_SHM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

/* The write-lock queues (doc/design.md, section 9.3): every process
 * that writes a file of the store waits here for its turn, asleep, and
 * is woken when the one before it is done, so that SQLite itself never
 * sees hundreds of writers polling for its lock.  One queue per file
 * (the database, the cache): a writer of one never waits behind the
 * other.  Each is a robust process-shared mutex of its own: a holder
 * killed in its transaction hands it on to the next (EOWNERDEAD; SQLite
 * rolls the cut transaction back itself).  The kernel wakes waiters in
 * the order they came (FIFO among equal priorities); a process arriving
 * just as the lock is given may still take it first.
 *
 * shm_queue_enter waits up to wait_ms: 1 taken (give it back with
 * shm_queue_leave), 0 there is no queue (no mapping, its mutex is
 * unusable and the file is unlinked for the next shm_maintain, or the
 * file was cut short while it waited): write anyway, SQLite's own lock
 * still serialises, -1 waited wait_ms. */
enum shm_queue { SHM_QUEUE_DB, SHM_QUEUE_CACHE, SHM_QUEUE__MAX };
int		 shm_queue_enter(struct shm *m, enum shm_queue q,
		    int64_t wait_ms);
void		 shm_queue_leave(struct shm *m, enum shm_queue q);

#endif
