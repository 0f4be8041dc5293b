/* shm_budget.h: argon2id budgets, the runs per minute of each key
 * prefix, counted host-wide in the shared memory (shm.h) by a hash of
 * the prefix.
 * Each function takes the lock itself, and with no mapping (m NULL)
 * allows what it is asked, as a host without the file would: these
 * limits protect the host, they are not a contract. */
#ifndef EVALGATE_SHM_BUDGET_H
#define EVALGATE_SHM_BUDGET_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

#define SHM_BUDGETS	128	/* key prefixes whose argon2id runs count */

/* A budget of runs per minute: 1 if key has run fewer than limit times
 * in the minute since its count began (this run is counted), else 0. */
int		 shm_budget_take(struct shm *m, const char *key, int64_t now_ms,
		    long limit);

#endif
