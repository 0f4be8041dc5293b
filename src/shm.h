/* shm.h: the host's shared memory (doc/design.md, section 12).
 *
 * One file-backed mapping (SERVICE_SHM_PATH) that every worker of the
 * host maps, for what they must count together and may lose: which
 * backend each worker is calling (the in-flight limit), replicas'
 * failures in a row and probes, key budgets, admission, the write-lock
 * queues, the group commit's records and metrics.  Deleting the file loses nothing that
 * matters: every process notices (shm_maintain) and maps a new one.
 *
 * The layout is fixed and versioned: a header, one robust
 * process-shared mutex, the tables of the counters below, then the
 * slots (SHM_SLOTS_DEFAULT, or more for a pool said to be larger), then
 * the metrics table: one
 * struct shm_metrics per worker slot and one more, "retired", into which
 * a slot's figures are folded when the slot is taken again (metrics.c
 * says what the cells count).  A file of
 * another version or size is not reused: it is unlinked and a new one
 * made, so processes of two versions never share a layout (the worker
 * that replaces one of another version logs both versions).  A slot is
 * owned by a process (pid and start time, against pid reuse) and freed
 * when its owner is gone.  Everything in the mapping but the metrics'
 * cells, the counters and the group commit's records (shm_group.c, by
 * their states) is read and written under shm_lock(); an owner
 * killed while holding it leaves an update half done, so every update
 * is written to be harmless when cut short (one field, or fields that
 * are only read together with it).
 *
 * The file is sparse and every look over the slots stops at the
 * highest slot ever taken: a host running few workers touches the
 * pages of few slots, whatever the file holds, so the pool's size need
 * not be told (the workers count themselves, shm_workers()). */
#ifndef EVALGATE_SHM_H
#define EVALGATE_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define SHM_VERSION	11
#define SHM_PROBES	64	/* replicas whose probe is remembered */
#define SHM_FLIGHTS	64	/* backends whose calls in flight are
				 * counted (more are walked) */
#define SHM_BUDGETS	128	/* key prefixes whose argon2id runs count */
#define SHM_STREAKS	64	/* replicas whose failures in a row count */
/* Slots for a pool of workers: the pool, the internal listener's, the
 * console, and processes being replaced while their successors start.
 * A new file holds SHM_SLOTS_DEFAULT, or SHM_SLOTS(workers) for a pool
 * said (SERVICE_WORKERS) to be larger. */
#define SHM_SLOTS(workers)	(2 * (size_t)(workers) + 16)
#define SHM_SLOTS_DEFAULT	SHM_SLOTS(4096)	/* 8208 */

struct shm_worker {
	pid_t	 pid;		/* owner; 0: free */
	uint32_t serving;	/* 1 while the owner serves a request (set
				 * by the owner alone, relaxed) */
	uint64_t started;	/* the owner's start time (/proc), in ticks */
	int64_t	 backend_id;	/* evaluation in flight to it; 0 none */
	int64_t	 since_ms;	/* when that call began (monotonic) */
	uint32_t worker;	/* 1: a worker (shm_attach), 0: the console */
	uint32_t queued;	/* 1 while the owner waits in or holds a
				 * write-lock queue (the owner's, relaxed) */
	int32_t	 cpu;		/* the CPU the owner keeps to (shm_spread);
				 * -1: any */
};

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

struct shm;	/* a process's handle on the mapping (opaque) */

/* Maps the file at path, creating it (with mode) or replacing one of
 * another layout, and takes a slot for this process, a worker's.  A new
 * file has SHM_SLOTS(workers) slots, SHM_SLOTS_DEFAULT for workers 0.
 * NULL with e set (503) when it cannot: callers then go on without what
 * the mapping counts. */
struct shm	*shm_attach(const char *path, int workers, mode_t mode,
		    struct error *e);
/* The same for the console: maps the file only if the workers made it
 * (never creates or replaces one, which would then be the console
 * user's), so that its writes wait in the host's queues.  NULL with e
 * set when there is none: the console writes without them. */
struct shm	*shm_join(const char *path, struct error *e);
/* SERVICE_CPU_AFFINITY: keeps this process to one of the CPUs it may
 * run on, the one that the fewest live slots of the host name, and
 * names it in its slot (and in the slot it takes in a file made anew).
 * The CPU, or -1 when it cannot (no mapping or slot, or the kernel
 * refused): the process then runs where the kernel puts it. */
int		 shm_spread(struct shm *m);
/* Keeps a worker alive when the file it maps is cut short under it (a
 * truncate, a full disk): a SIGBUS in the mapping of shm_host() gives
 * it private zeroes until the next shm_maintain maps a new file.  0, or
 * -1 when the handler cannot be set. */
int		 shm_guard(void);
/* Frees this process's slot and unmaps.  NULL is fine. */
void		 shm_detach(struct shm *m);
/* Between requests (holding no lock or queue of the mapping): maps the
 * file anew if it was unlinked or replaced
 * (another inode at the path), as the cache is, or cut short, grown or
 * scribbled on in place (its size or header not what it was: that file
 * is unlinked, for everyone to map a new one), and, once every
 * SHM_REAP_MS on the host, frees the slots whose owner is gone.  0, or
 * -1 when the new one cannot be mapped (the old mapping stays in
 * use). */
#define SHM_REAP_MS	10000
int		 shm_maintain(struct shm *m);

/* Takes the mapping's mutex; a holder that died is recovered from
 * (EOWNERDEAD: the mutex is made consistent).  0, or -1 when the mutex
 * is unusable (the file is then unlinked, for the next shm_maintain). */
int		 shm_lock(struct shm *m);
void		 shm_unlock(struct shm *m);

/* The worker processes with a slot (the console's is not one): the
 * pool the web server runs, as the workers count themselves.  A worker
 * killed is counted until its slot is found free (shm_maintain looks
 * every SHM_REAP_MS).  0 with no mapping. */
long		 shm_workers(struct shm *m);

/* The counters the host shares.  Each takes the lock itself, and with
 * no mapping (m NULL) allows what it is asked, as a host without the
 * file would: these limits protect the host, they are not a contract.
 *
 * In flight: what the host knows of backend_id's calls, read without
 * the lock (a view a moment old is good enough for a policy).  All 0
 * with no mapping, or for a backend not called since the file was
 * made. */
struct shm_flight_view {
	long	 workers;	/* shm_workers() */
	int64_t	 in_flight;	/* its calls in flight on the host */
	int64_t	 latency_us;	/* how long its answered calls took, the
				 * recent weighing most (a moving average
				 * of 1/8); 0: none answered yet */
	int	 failing;	/* its last call failed, and none answered
				 * since */
};
void		 shm_inflight_view(struct shm *m, int64_t backend_id,
		    struct shm_flight_view *v);
/* This process is calling backend_id (> 0) at now_ms (monotonic) if
 * fewer than limit live processes are calling it since before now_ms -
 * older_ms (older_ms 0: every call counts): 1 taken (recorded in its
 * slot), 0 full.  A process killed in the call is not counted once it
 * is gone. */
int		 shm_inflight_take(struct shm *m, int64_t backend_id,
		    long limit, int64_t older_ms, int64_t now_ms);
/* The call taken is over, after us microseconds: how it went. */
enum shm_call {
	SHM_CALL_ANSWERED,	/* an answer that fits: the latency counts */
	SHM_CALL_FAILED,	/* no replica answered (transport, server) */
	SHM_CALL_OTHER		/* anything else: nothing learnt */
};
void		 shm_inflight_give(struct shm *m, enum shm_call how,
		    int64_t us);
/* One probe per period: 1 if no probe of key was let through in the
 * period_ms before now_ms (this one is recorded), else 0. */
int		 shm_probe_claim(struct shm *m, const char *key, int64_t now_ms,
		    int64_t period_ms);
/* A budget of runs per minute: 1 if key has run fewer than limit times
 * in the minute since its count began (this run is counted), else 0. */
int		 shm_budget_take(struct shm *m, const char *key, int64_t now_ms,
		    long limit);
/* Failures in a row: key's count after one more failure (failed) or a
 * success (!failed: 0); a count whose last failure is period_ms or more
 * before now_ms starts again from 0.  The least recent count gives way
 * to a new key.  -1 with no mapping (or its lock unusable): there is no
 * count.  A success where no failure is counted, the common case, takes
 * no lock; one that races a failure of another process may leave that
 * failure counted. */
long		 shm_streak_add(struct shm *m, const char *key, int failed,
		    int64_t now_ms, int64_t period_ms);

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

/* Marks: when something last happened on the host (a write that found
 * the disk full), for readiness to say so from any worker. */
enum shm_mark { SHM_MARK_DB_FULL, SHM_MARK_CACHE_FULL, SHM_MARK__MAX };
void		 shm_mark(struct shm *m, enum shm_mark k, int64_t at_ms);
/* When k was last marked; 0 never (or no mapping). */
int64_t		 shm_marked(struct shm *m, enum shm_mark k);

/* Counters that any process reads and moves without the lock (atomics),
 * read on every request: whoever changes something that workers keep a
 * copy of or look up in a file moves one, so that a worker reads the
 * file again only when one moved (store_sqlite.c and
 * store_sqlite_cache.c say what each holds).  A new file starts
 * COOLDOWNS at 1, CATALOG_RUNS at a random value and the others at 0. */
enum shm_counter {
	SHM_COUNTER_CATALOG_RUN,	/* the database's run of commits that
					 * left the catalog alone: id << 32 |
					 * the number of its last commit */
	SHM_COUNTER_CATALOG_RUNS,	/* gives the runs their ids */
	SHM_COUNTER_COOLDOWNS,		/* moved by each cool-down written */
	SHM_COUNTER_COOLDOWNS_NONE,	/* COOLDOWNS when the cache was last
					 * found to hold none */
	SHM_COUNTER__MAX
};
/* 0 and *v, or -1: no mapping. */
int		 shm_counter(struct shm *m, enum shm_counter k, uint64_t *v);
void		 shm_counter_set(struct shm *m, enum shm_counter k,
		    uint64_t v);
/* Adds 1 and returns the new value; 0 with no mapping. */
uint64_t	 shm_counter_next(struct shm *m, enum shm_counter k);
/* Sets k to want if it still holds expect: whether it did. */
int		 shm_counter_swap(struct shm *m, enum shm_counter k,
		    uint64_t expect, uint64_t want);

/* The process's mapping, for the modules that count in it: set once
 * at start by the worker; NULL where there is none (the console). */
void		 shm_set_host(struct shm *m);
struct shm	*shm_host(void);

/* Metrics.  This process's cells, written without the lock (relaxed
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

/* Under the lock: this process's slot, and the slots ever taken (n of
 * them; those past n are free and untouched). */
struct shm_worker *shm_self(struct shm *m);
struct shm_worker *shm_slots(struct shm *m, size_t *n);
/* Under the lock: frees the slots whose owner is gone; how many. */
size_t		 shm_reap(struct shm *m);
/* Whether the owner of w is the process that took it (not gone, not a
 * new process with its pid). */
int		 shm_owner_alive(const struct shm_worker *w);

#endif
