/* shm_queue.c: the write-lock queues in the host's shared memory (see
 * shm_queue.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "shm.h"
#include "shm_file.h"
#include "shm_queue.h"

#define SHM_QUEUE_SLICE_MS 100		/* a waiter looks at its file */

/* Says in our slot whether we wait in or hold a queue: a leader does
 * not await the decision of a worker that waits behind it
 * (shm_group_await). */
static void
queued(struct shm *m, int on)
{
	if (m->self != NULL)
		__atomic_store_n(&m->self->queued, (uint32_t)on,
		    __ATOMIC_RELAXED);
}

int
shm_queue_enter(struct shm *m, enum shm_queue q, int64_t wait_ms)
{
	pthread_mutex_t	*mx;
	struct timespec	 until;
	struct stat	 sb;
	int64_t		 end = clock_mono_us() / 1000 + wait_ms, left;
	int		 rc;

	if (m == NULL || m->f == NULL || m->lost || q >= SHM_QUEUE__MAX)
		return 0;
	mx = &m->f->queues[q];
	queued(m, 1);
	/* In slices: a file cut short under the queue takes its waiters'
	 * wake-ups with it (a holder that faults unlocks private zeroes),
	 * so between slices a waiter looks whether its file is still
	 * whole, and if not writes without the queue, as with none. */
	for (;;) {
		left = end - clock_mono_us() / 1000;
		until = shm_deadline(left < SHM_QUEUE_SLICE_MS ? left :
		    SHM_QUEUE_SLICE_MS);
		rc = pthread_mutex_timedlock(mx, &until);
		if (rc == EOWNERDEAD)	/* its holder died in its transaction */
			rc = pthread_mutex_consistent(mx);
		if (rc != ETIMEDOUT || left <= SHM_QUEUE_SLICE_MS)
			break;
		if (m->lost || fstat(m->fd, &sb) == -1 ||
		    (size_t)sb.st_size != m->size) {
			queued(m, 0);
			return 0;
		}
	}
	if (rc == 0)
		return 1;
	queued(m, 0);
	if (rc == ETIMEDOUT)
		return -1;
	if (rc != EDEADLK)	/* unusable: the next process remakes it */
		shm_discard(m->path, m->dev, m->ino);
	return 0;
}

void
shm_queue_leave(struct shm *m, enum shm_queue q)
{
	if (m != NULL && m->f != NULL && q < SHM_QUEUE__MAX) {
		pthread_mutex_unlock(&m->f->queues[q]);
		queued(m, 0);
	}
}
