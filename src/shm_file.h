/* shm_file.h: the layout of the host's shared memory, a process's
 * handle on it, and the helpers that several of its concerns need (the
 * key hash, vacate(), metrics_of()): private to the shm files of src/
 * (shm.c, which maps it, and the file of each concern, which counts in
 * it: shm.h lists them).  Everyone else includes the header of the
 * concern it uses. */
#ifndef EVALGATE_SHM_FILE_H
#define EVALGATE_SHM_FILE_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "shm.h"
#include "shm_admit.h"
#include "shm_budget.h"
#include "shm_counter.h"
#include "shm_flight.h"
#include "shm_group.h"
#include "shm_metrics.h"
#include "shm_probe.h"
#include "shm_queue.h"
#include "shm_streak.h"

#define SHM_MAGIC	0x65677368u	/* "egsh" */

/* The file's layout.  A file is set up under a name of its own and
 * linked at its path only then (shm.c, make_file()), so one found at
 * the path without magic, or cut short, is damaged: it is unlinked and
 * made anew, never set up again in place. */
struct shm_probe {
	uint64_t	 key;		/* hash of the replica; 0 free */
	int64_t	 	 at_ms;		/* the last probe let through */
};

/* Evaluations in flight to a backend, counted as they are taken and
 * given so that a call needs no walk over every slot, and how its calls
 * have gone (what shm_inflight_view() shows).  A process killed in
 * between leaves its count behind: the walk over the slots, the dead
 * freed, puts it right whenever the backend looks full.  An entry is
 * kept while idle, for its latency; a full table gives the least
 * recently used idle one to a new backend. */
struct shm_flight {
	int64_t		 backend_id;	/* 0 free */
	int64_t		 n;
	int64_t		 latency_us;	/* see struct shm_flight_view */
	int64_t		 failing;
	int64_t		 used_ms;	/* the last call taken */
	int64_t		 reaped_ms;	/* its owners last asked */
	/* The last walk's count of calls over its age (older), and when
	 * the oldest of those under it began (young_ms; INT64_MAX: none):
	 * until that one is over the age asked, no more can be, for a
	 * call taken since is younger still, and the count stands (a
	 * call given since only makes it high) without a walk. */
	int64_t		 older;
	int64_t		 young_ms;
};

struct shm_budget {
	uint64_t	 key;		/* hash of the key prefix; 0 free */
	int64_t		 since_ms;	/* the minute counted began */
	int64_t		 runs;		/* in it */
};

/* A replica's failures in a row (shm_streak_add); key and n are also
 * read without the lock (atomics). */
struct shm_streak {
	uint64_t	 key;		/* hash of the replica; 0 free */
	int64_t		 n;		/* failures in a row */
	int64_t		 at_ms;		/* the last of them */
};

/* A table of metric label names: entries below n are set and never
 * change; a new one is written, then n raised (release), under the
 * lock, so that readers without it see whole names. */
struct shm_name_table {
	uint32_t		 n;
	char			 name[SHM_METRIC_NAMES][SHM_METRIC_NAME_SIZE];
};

struct shm_admit {
	int64_t			 app_id;	/* 0 free; written last */
	int64_t			 day;		/* of a.used */
	struct shm_admission	 a;
};

struct shm_file {
	uint32_t		 magic;
	uint32_t		 version;	/* SHM_VERSION */
	uint64_t		 nslots;
	uint64_t		 dev;		/* the file it was made as: a */
	uint64_t		 ino;		/* copy (a restore, rsync) is
						 * not that file, and its
						 * pids and leads are not
						 * this host's: made anew */
	uint32_t		 high;		/* slots ever taken: every look
						 * over the slots stops here,
						 * so that the pages of slots
						 * never used are never touched
						 * (written under the lock, read
						 * with acquire) */
	uint32_t		 workers;	/* worker slots taken (atomic;
						 * written under the lock) */
	int64_t			 reaped_ms;	/* the slots last looked over
						 * for owners gone (atomic) */
	pthread_mutex_t		 lock;		/* robust, process-shared */
	struct shm_probe	 probes[SHM_PROBES];
	struct shm_budget	 budgets[SHM_BUDGETS];
	struct shm_streak	 streaks[SHM_STREAKS];
	struct shm_flight	 flights[SHM_FLIGHTS];
	int64_t			 marks[SHM_MARK__MAX];	/* epoch ms */
	uint64_t		 counters[SHM_COUNTER__MAX];	/* atomics */
	struct shm_name_table	 names[SHM_NAMES__MAX];
	/* The last hour's figures (shm_metrics.h). */
	struct shm_minute	 minutes[SHM_MINUTES];
	/* The write-lock queues: robust, process-shared. */
	pthread_mutex_t		 queues[SHM_QUEUE__MAX];
	struct shm_admit	 admits[SHM_ADMITS];
	uint64_t		 group_leader;	/* shm_group.c: the token of
						 * the process leading; 0 */
	uint32_t		 group_submits;	/* shm_group.c: counts the
						 * records submitted while a
						 * leader awaits one; the word
						 * it sleeps on */
	uint32_t		 group_awaiting;	/* 1 while it does */
	struct shm_worker	 slots[];	/* nslots of them */
	/* then the metrics table: nslots + 1 struct shm_metrics, the
	 * last the retired figures (see metrics_of()); then each slot's
	 * record state, a uint32_t each, side by side so that a leader's
	 * look over all of them reads a few cache lines rather than a page
	 * a slot; then, from a page boundary, one struct shm_record of
	 * SHM_RECORD_SIZE bytes per slot (shm_group.c) */
};

/* A slot's record for group commit (shm_group.c), written by whoever
 * its state (the word its owner sleeps on, in the array of states) says
 * holds it, before the state that hands it on (release). */
struct shm_record {
	uint32_t		 len;		/* bytes of data */
	uint64_t		 taker;		/* the leader that took it */
	int32_t			 err_code;	/* FAILED: why */
	int64_t			 err_retry_ms;
	char			 err_message[512];
	unsigned char		 data[];	/* up to SHM_RECORD_SIZE in
						 * all */
};

/* Where the metrics table, the records' states and the records begin,
 * and the bytes of a file of nslots. */
#define METRICS_OFFSET(nslots)	((sizeof(struct shm_file) + \
	(nslots) * sizeof(struct shm_worker) + 63) & ~(size_t)63)
#define STATES_OFFSET(nslots)	((METRICS_OFFSET(nslots) + \
	((nslots) + 1) * sizeof(struct shm_metrics) + 63) & ~(size_t)63)
#define RECORDS_OFFSET(nslots)	((STATES_OFFSET(nslots) + \
	(nslots) * sizeof(uint32_t) + 4095) & ~(size_t)4095)
#define FILE_SIZE(nslots)	(RECORDS_OFFSET(nslots) + \
	(nslots) * (size_t)SHM_RECORD_SIZE)
#define SHM_SLOTS_MAX		SHM_SLOTS(100000)	/* SERVICE_WORKERS'
							 * bound */

struct shm {
	char			 path[4096];
	mode_t			 mode;
	size_t			 want;		/* slots for a new file */
	int			 join;		/* shm_join: never make one */
	int			 fd;		/* owned */
	dev_t			 dev;		/* of the file mapped */
	ino_t			 ino;
	struct shm_file		*f;		/* owned: the mapping */
	size_t			 size;		/* bytes mapped */
	size_t			 nslots;	/* its slots, as checked when it
						 * was mapped: every offset in
						 * it is computed from this,
						 * never from the file's header
						 * (which anyone may scribble
						 * on) */
	volatile sig_atomic_t	 lost;		/* the file shrank under us:
						 * the mapping is private zeroes
						 * now (shm_guard), to be
						 * mapped anew */
	struct shm_worker	*self;		/* in f; NULL: no slot */
	uint64_t		 started;	/* this process's start time */
	int			 cpu;		/* shm_spread(): the CPU it
						 * keeps to; -1: any */
	size_t			 cursor;	/* shm_group.c: the slot its
						 * next look for records starts
						 * at */
	int			 taken;		/* shm_group.c: records taken
						 * while leading */
};

/* The start time of process pid (field 22 of /proc/PID/stat, in clock
 * ticks since boot), or 0 when it cannot be read. */
uint64_t	 shm_proc_started(pid_t pid);

/* shm.c: unlinks the file at path if it is still the file dev, ino:
 * never one another process has made in its place since. */
void		 shm_discard(const char *path, dev_t dev, ino_t ino);
/* shm.c: the realtime clock ms from now, as pthread_mutex_timedlock
 * takes it. */
struct timespec	 shm_deadline(int64_t ms);

/* FNV-1a of s, never 0 (0 marks a free entry). */
static inline uint64_t
shm_key_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

/* Under the lock: slot w is empty, its owner (a worker's counted) gone. */
static inline void
vacate(struct shm_file *f, struct shm_worker *w)
{
	w->backend_id = 0;
	w->serving = 0;
	w->queued = 0;
	if (w->worker)
		__atomic_sub_fetch(&f->workers, 1, __ATOMIC_RELAXED);
	w->worker = 0;
	w->pid = 0;
}

/* Slot i's metrics; i == nslots: the retired figures. */
static inline struct shm_metrics *
metrics_of(const struct shm *m, size_t i)
{
	return (struct shm_metrics *)(void *)((char *)m->f +
	    METRICS_OFFSET(m->nslots)) + i;
}

#endif
