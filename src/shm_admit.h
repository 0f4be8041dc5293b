/* shm_admit.h: admission's state, each application's GCRA state and
 * the day's quota units, kept host-wide in the shared memory (shm.h);
 * admission.c decides with it. */
#ifndef EVALGATE_SHM_ADMIT_H
#define EVALGATE_SHM_ADMIT_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

/* Admission (doc/design.md, section 13): each application's GCRA
 * state and the day's running total of its quota units, exact across
 * the host's workers, as nginx's limit_req keeps its zone.  The table
 * holds SHM_ADMITS applications, SHM_ADMIT_WAYS to a bucket; a new one
 * takes the place of the one in its bucket whose rate window is emptiest
 * (a window already drained is forgotten without harm; forgetting a
 * busy one, with more than SHM_ADMITS applications calling at once,
 * gives it a fresh minute).  The running total is rebuilt from the
 * database's counter of the day, which the decisions charge, whenever an
 * application is not in the table for the day: after the file was
 * deleted, a new day, or its entry given to another. */
#define SHM_ADMITS	4096
#define SHM_ADMIT_WAYS	8
struct shm_admission {
	int64_t	tat_ms;		/* GCRA theoretical arrival time; 0 none */
	int64_t	tat_rate;	/* the rate per minute it was computed
				 * under; 0 unknown */
	int64_t	tat_at_ms;	/* when it was written; 0 unknown */
	int64_t	used;		/* units admitted on the day */
};
/* Under the lock, runs fn on app_id's state for UTC day day (days since
 * the epoch), for fn to decide and update in place (arithmetic only: it
 * must not block).  An application without state for the day is given
 * used = db_used if db_used >= 0 (its rate state is kept across days);
 * with db_used -1, fn is not run and 0 returned: the caller reads the
 * database's counter of the day and asks again.  1 run; -1 no mapping
 * (or its lock unusable): the caller keeps admission elsewhere.  fn's
 * updates are written field by field: a process killed in it loses or
 * keeps the one call it was admitting, nothing else. */
int		 shm_admission(struct shm *m, int64_t app_id, int64_t day,
		    int64_t db_used, void (*fn)(struct shm_admission *,
		    void *), void *arg);

#endif
