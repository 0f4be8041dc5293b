/* shm_metrics.h: the metrics' cells, one table per worker slot and one
 * of retired figures, and the tables of label names, in the host's
 * shared memory (shm.h); metrics.c says what the cells count. */
#ifndef EVALGATE_SHM_METRICS_H
#define EVALGATE_SHM_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct shm;	/* shm.h: the mapping (the caller's) */

/* Metrics (metrics.c): cells of counters, each slot's written by its
 * owner alone with relaxed atomic stores (no lock), summed under the
 * lock by whoever reads them.  Label names (backends, schemas) are
 * given a cell index host-wide, in tables that only grow. */
#define SHM_METRIC_CELLS	2560	/* counters a slot holds */
#define SHM_METRIC_NAMES	32	/* names a table holds */
#define SHM_METRIC_NAME_SIZE	128	/* bytes of a name, with its NUL */
enum shm_names { SHM_NAMES_BACKEND, SHM_NAMES_SCHEMA, SHM_NAMES__MAX };

struct shm_metrics {
	int64_t	 answered_ms;	/* epoch ms of the owner's last answer */
	uint64_t cell[SHM_METRIC_CELLS];
};

/* This process's cells, written without the lock (relaxed
 * atomics); NULL when it has no slot or no mapping.  A slot taken by a
 * new owner first has its figures folded into the retired ones. */
struct shm_metrics *shm_metrics_self(struct shm *m);
/* Under the lock: the retired figures (of slots taken again, and of
 * processes that found no slot, which count here under the lock). */
struct shm_metrics *shm_metrics_retired(struct shm *m);
/* Under the lock: the metrics of worker slot i (< n of shm_slots). */
struct shm_metrics *shm_metrics_at(struct shm *m, size_t i);
/* The index of name in table t, added if new: from 0, or -1 when the
 * table is full (or there is no mapping).  Reads without the lock;
 * adds under it. */
int		 shm_metric_name(struct shm *m, enum shm_names t,
		    const char *name);
/* Under the lock: the names of table t, *n of them. */
const char	(*shm_metric_names(struct shm *m, enum shm_names t,
		    size_t *n))[SHM_METRIC_NAME_SIZE];

#endif
