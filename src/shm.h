/* shm.h: the host's shared memory (doc/design.md, section 12): the
 * file, its mapping, its worker slots and its mutex.
 *
 * One file-backed mapping (SERVICE_SHM_PATH) that every worker of the
 * host maps, for what they must count together and may lose.  This
 * header is the mapping itself; what is counted in it has a file (and
 * header) of its own, each on the struct shm this one hands out:
 *
 *	shm_flight.h	which backend each worker is calling (the
 *			in-flight limit), and how its calls went
 *	shm_probe.h	replicas' probes, one per period
 *	shm_streak.h	replicas' failures in a row
 *	shm_budget.h	key prefixes' argon2id runs per minute
 *	shm_queue.h	the write-lock queues
 *	shm_group.h	the group commit's records (shm_group.c)
 *	shm_admit.h	admission: GCRA state and quota units
 *	shm_counter.h	marks and counters
 *	shm_metrics.h	the metrics' cells, the last hour's ring and
 *			label names
 *
 * shm_file.h, private to those files, holds the layout.  Deleting the
 * file loses nothing that matters: every process notices
 * (shm_maintain) and maps a new one.
 *
 * The layout is fixed and versioned (SHM_VERSION, below): a header, one
 * robust process-shared mutex, the tables of the counters, then the
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

/* The layout's version: any change to shm_file.h's structs, to a
 * table's size, or to the group commit's record bytes changes it. */
#define SHM_VERSION	12
/* The group commit's record (the bytes store_sqlite_decision.c writes
 * into a slot's buffer for whichever worker leads to read) as of each
 * version: the size of its fixed part and of one answer.
 * store_sqlite_decision.c asserts at build time that its structs are
 * SHM_RECORD_HEAD and SHM_RECORD_ANSWER bytes, which name the pair of
 * SHM_VERSION: a record that changes size fails the build until a new
 * version gets its own pair, and a new version fails it until it has
 * one.  Add a pair for a new version; never edit one.  A change that
 * keeps the sizes (fields reordered or meaning otherwise) is not
 * caught: bump SHM_VERSION and add its pair all the same. */
#define SHM_RECORD_HEAD_11	176
#define SHM_RECORD_ANSWER_11	48
#define SHM_RECORD_HEAD_12	176
#define SHM_RECORD_ANSWER_12	48
#define SHM_RECORD_AT_(what, v)	SHM_RECORD_##what##_##v
#define SHM_RECORD_AT(what, v)	SHM_RECORD_AT_(what, v)
#define SHM_RECORD_HEAD		SHM_RECORD_AT(HEAD, SHM_VERSION)
#define SHM_RECORD_ANSWER	SHM_RECORD_AT(ANSWER, SHM_VERSION)
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

struct shm;	/* a process's handle on the mapping (opaque; owned by
		 * whoever attached it, freed by shm_detach) */

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
 * truncate, a full disk): a SIGBUS in the mapping of shm_host(), or in
 * one shm_attach() or shm_maintain() is making, gives it private zeroes
 * until the next shm_maintain maps a new file.  0, or -1 when the
 * handler cannot be set.  Set before shm_attach(). */
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

/* The process's mapping, for the modules that count in it: set once
 * at start by the worker; NULL where there is none (the console). */
void		 shm_set_host(struct shm *m);
struct shm	*shm_host(void);

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
