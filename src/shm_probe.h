/* shm_probe.h: replicas' probes, one per period host-wide, remembered
 * in the host's shared memory (shm.h) by a hash of the replica's key.
 * Each function takes the lock itself, and with no mapping (m NULL)
 * allows what it is asked, as a host without the file would: these
 * limits protect the host, they are not a contract. */
#ifndef EVALGATE_SHM_PROBE_H
#define EVALGATE_SHM_PROBE_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

#define SHM_PROBES	64	/* replicas whose probe is remembered */

/* One probe per period: 1 if no probe of key was let through in the
 * period_ms before now_ms (this one is recorded), else 0. */
int		 shm_probe_claim(struct shm *m, const char *key, int64_t now_ms,
		    int64_t period_ms);

#endif
