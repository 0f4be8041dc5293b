/* shm_group.h: group commit in the host's shared memory (shm.h): each
 * worker slot's record, the lead, and the hand-overs (shm_group.c). */
#ifndef EVALGATE_SHM_GROUP_H
#define EVALGATE_SHM_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct shm;	/* shm.h: the mapping (the caller's) */

/* Group commit (doc/design.md, section 9.4): the decisions that several
 * workers have
 * ready at once are written in one transaction, by one of them, the
 * leader, which shares their pages, BEGIN, COMMIT and sync.  Each
 * worker writes its record (the bytes shm_group_take() hands a leader;
 * store_sqlite_decision.c says what they are, and SHM_VERSION changes
 * with them) into its slot's buffer and submits it; the first to find
 * no leader leads, the others sleep until their record is done.  The
 * leader takes the records ready while its transaction is open, tells
 * each owner how it went once the commit is durable, and hands the
 * lead to an owner still waiting.  A leader killed with records taken
 * leaves them to the next, which first looks whether each was
 * committed; an owner finds a leader gone within SHM_GROUP_CHECK_MS.
 * Nothing is acknowledged before its commit (and sync) returned. */
#define SHM_RECORD_SIZE		(16 * 1024)	/* a slot's record, in all */
#define SHM_GROUP_MAX		64	/* records one transaction takes */
#define SHM_GROUP_CHECK_MS	100	/* a sleeping owner looks whether
					 * the leader is alive */
enum shm_group {
	SHM_GROUP_ALONE,	/* write it yourself (no mapping or slot, too
				 * large, or the leader's transaction
				 * failed: its error is the owner's to get) */
	SHM_GROUP_LEAD,		/* write it, and lead */
	SHM_GROUP_DONE,		/* a leader committed it */
	SHM_GROUP_FAILED	/* e says why (waited too long; the commit
				 * could not be made durable) */
};
/* This process's record buffer, *size bytes; NULL: none (write alone). */
void		*shm_group_buffer(struct shm *m, size_t *size);
/* Submits the len bytes written to the buffer and waits until it is
 * done, it fails, or this process is to lead; a record still waiting
 * for a leader after wait_ms is withdrawn (FAILED, 503).  With LEAD or
 * ALONE, *written says the record may have been committed by a leader
 * that died: look before writing it. */
enum shm_group	 shm_group_submit(struct shm *m, size_t len, int64_t wait_ms,
		    int *written, struct error *e);
/* Leader, in its transaction: the next record waiting, at most
 * SHM_GROUP_MAX of them: a handle >= 0 with its bytes (*data, *len, in
 * the mapping, to be read until shm_group_finish) and *written as
 * above; -1 none. */
int		 shm_group_take(struct shm *m, const void **data, size_t *len,
		    int *written);
/* Leader, before a COMMIT it will sync: whether another worker serving
 * a request, and waiting neither on a backend nor in a write-lock
 * queue, has its decision still to submit.  If so, sleeps until a
 * record is submitted or the monotonic clock (clock_mono_us) passes
 * until_us, and returns 1: take again.  Those decisions then share the
 * sync rather than each waiting for one of its own; 0 at once when
 * there is nobody to wait for. */
int		 shm_group_await(struct shm *m, int64_t until_us);
/* Whether this process is serving a request (on 1) or waits for the
 * next (0): what shm_group_await looks at. */
void		 shm_serving(struct shm *m, int on);
/* Leader: gives up the lead, to an owner waiting if there is one, so
 * that the next transaction begins while this one syncs. */
void		 shm_group_leave(struct shm *m);
/* Leader: tells the owner of record h how it went (DONE, ALONE, or
 * FAILED with e) and wakes it; DONE only once the commit is durable. */
void		 shm_group_finish(struct shm *m, int h, enum shm_group how,
		    const struct error *e);

#endif
