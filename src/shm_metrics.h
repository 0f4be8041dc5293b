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

/* The last hour, host-wide: a ring of SHM_MINUTES entries, one per
 * minute of the wall clock (epoch ms / 60000), entry minute %
 * SHM_MINUTES, each SHM_MINUTE_CELLS counters that every process adds
 * to with atomic adds (no lock).  An entry that holds another minute
 * (an hour ago, or an hour ahead after the clock was stepped back) is
 * emptied, under the lock, by the first process to count in the
 * minute: its minute is written last (release), so a holder killed
 * half way leaves it to be emptied again.  The processes of a host
 * share one clock, so two never take an entry for minutes an hour
 * apart at once; a process that read the clock just before an entry
 * was emptied adds one count to the new minute.  metrics.c says what
 * the cells count. */
#define SHM_MINUTES		60
#define SHM_MINUTE_CELLS	512

struct shm_minute {
	int64_t	 minute;	/* the minute counted; 0 none */
	uint64_t cell[SHM_MINUTE_CELLS];
};

/* The cells of minute, to add to atomically: its entry of the ring,
 * emptied first if it held another minute; NULL when there is no
 * mapping or the lock cannot be had. */
uint64_t	*shm_minute_cells(struct shm *m, int64_t minute);
/* Under the lock: entry i (< SHM_MINUTES) of the ring. */
const struct shm_minute *shm_minute_at(struct shm *m, size_t i);

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
