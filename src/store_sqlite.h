/* store_sqlite.h: what the SQLite engine's files (store_sqlite*.c)
 * share, and nobody else: the connection, the statements by name, the
 * helpers around them.  The helpers' names begin with sqlite_ (store_
 * is store.h's), the engine's operations with sq_ (STORE_IMPL). */
#ifndef EVALGATE_STORE_SQLITE_H
#define EVALGATE_STORE_SQLITE_H

#include <sys/types.h>

#include <sqlite3.h>

#include "buf.h"
#include "kept.h"
#include "store_engine.h"

/* The .sql files, compiled in (Makefile.am: src/sql_files.c). */
extern const char schema_sql[];		/* schema.sql: every table */
extern const char cache_sql[];		/* sql/cache.sql */
extern const char migrate_2_sql[];	/* sql/migrate-2.sql */
extern const char migrate_3_sql[];	/* sql/migrate-3.sql */
extern const char migrate_4_sql[];	/* sql/migrate-4.sql */
extern const char migrate_5_sql[];	/* sql/migrate-5.sql */
extern const char migrate_6_sql[];	/* sql/migrate-6.sql */
extern const char migrate_7_sql[];	/* sql/migrate-7.sql */
extern const char migrate_8_sql[];	/* sql/migrate-8.sql */
extern const char migrate_9_sql[];	/* sql/migrate-9.sql */
extern const char migrate_10_sql[];	/* sql/migrate-10.sql */

#define STORE_BUSY_TIMEOUT_MS 5000	/* waiting for a lock; then 503 */
#define STORE_QUEUE_WAIT_MS 30000	/* waiting in the host's write-lock
					 * queue: only a stuck holder takes
					 * that long (then 503) */
#define STORE_WAL_LIMIT	(4 << 20)	/* bytes a WAL is cut back to */
#define STORE_RETRY_MS	1000		/* between attempts to reconnect */
#define STORE_CKPT_FRAMES 1000		/* WAL frames between checkpoints */
#define STORE_CKPT_WAIT_MS 50		/* a checkpoint waits for readers */
#define STORE_READY_WAIT_MS 250		/* readiness waits for a write lock */
#define STORE_BUSY_GRACE_MS 250		/* busy(): waiting after the queue */
#define STORE_AWAIT_MAX_US 1000		/* a leader awaiting decisions for
					 * its sync (store_sqlite_decision.c)
					 * waits no longer than this */
#define STORE_READY_FULL_MS 1000	/* a full disk met is not ready */
#define STORE_VACUUM_PAGES 128		/* pages one vacuum step frees, as
					 * STMT_VACUUM_STEP says */
#define STORE_RECORD_MAX (64 << 20)	/* a decision as a record, at most */
#define STORE_RECORD_KEEP (16 << 10)	/* the record's memory kept between
					 * decisions, at most (a larger one is
					 * written alone, shm_group.h) */
#define STORE_RETAIN_WAIT_MS 50		/* it waits for a lock, then gives up */
#define STORE_COOLDOWN_FORGET_MS (5 * 60 * 1000)	/* a cool-down that
					 * ended so long ago is none
					 * (store_sqlite_cache.c) */
#define STORE_KEPT_TRUST_MS 5000	/* catalog rows kept are used without
					 * a read at most so long after it
					 * (store_read_begin) */


/* Every statement the store runs, by name; the texts are the table
 * store_sql[] in store_sqlite_sql.c, and a connection keeps each one prepared
 * from its first use (sqlite_stmt). */
enum stmt {
	/* Transactions and the audit log (store_sqlite.c). */
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_LOCK_MAIN,
	STMT_LOCK_CACHE,
	STMT_AUDIT,
	STMT_AUDIT_LAST,
	/* Applications, keys, the key memo and failures (store_sqlite_app.c). */
	STMT_APP_INSERT,
	STMT_APP_UPDATE,
	STMT_APP_BY_NAME,
	STMT_APP_BY_ID,
	STMT_APP_ALL,
	STMT_KEY_INSERT,
	STMT_KEY_BY_PREFIX,
	STMT_KEY_REVOKE,
	STMT_KEY_SET_CHECK,
	STMT_KEY_ALL,
	STMT_MEMO_HAS,
	STMT_MEMO_PUT,
	/* Replica cool-downs (store_sqlite_cache.c). */
	STMT_COOLDOWN_GET,
	STMT_COOLDOWN_PUT,
	STMT_COOLDOWN_DEL,
	/* Admission and the day's quota (store_sqlite_quota.c). */
	STMT_ADMISSION,
	STMT_ADMISSION_SET,
	STMT_USED_ADD,
	STMT_USED_GET,
	/* The catalog (store_sqlite_catalog.c): backends, schemas, grants,
	 * templates. */
	STMT_BACKEND_INSERT,
	STMT_REPLICA_INSERT,
	STMT_REPLICAS,
	STMT_BACKEND_ENABLE,
	STMT_BACKEND_UPDATE,
	STMT_REPLICAS_DELETE,
	STMT_BACKEND_BY_NAME,
	STMT_BACKEND_BY_ID,
	STMT_BACKEND_ALL,
	STMT_SCHEMA_CREATE,
	STMT_SCHEMA_ID,
	STMT_SCHEMA_NEXT,
	STMT_VERSION_INSERT,
	STMT_VERSION_GET,
	STMT_VERSION_MATCH,
	STMT_VERSION_MATCHED,
	STMT_VERSION_ALL,
	STMT_GRANT,
	STMT_UNGRANT,
	STMT_GRANT_ALLOWS,
	STMT_GRANT_LIST,
	STMT_TEMPLATE_CREATE,
	STMT_TEMPLATE_ID,
	STMT_TEMPLATE_NEXT,
	STMT_TEMPLATE_INSERT,
	STMT_TEMPLATE_GET,
	STMT_TEMPLATE_ALL,
	/* The catalog's generation (kept.h). */
	STMT_GENERATION,
	/* Decisions, answers, outcomes (store_sqlite_decision*.c), calibration
	 * (store_sqlite_report.c). */
	STMT_DECISION_INSERT,
	STMT_DECISION_GET,
	STMT_ANSWERS_GET,
	STMT_OUTCOMES_GET,
	STMT_OUTCOME_VALUE,
	STMT_OUTCOME_INSERT,
	STMT_DECISION_PAGE,
	STMT_CALIBRATION_ROWS,
	/* Retention (store_sqlite_retention.c). */
	STMT_PRUNE_PICK,
	STMT_PRUNE_OUTCOMES,
	STMT_PRUNE_DECISION,
	STMT_STATE_CLEAR,
	STMT_RETAIN_NEXT_APP,
	STMT_VACUUM_STEP,
	STMT_FREELIST,
	/* Setting up (store_sqlite.c), on connections of their own too: run
	 * directly from their text, never kept. */
	STMT_ATTACH_CACHE,
	STMT_USER_VERSION,
	STMT_INIT_BEGIN,
	STMT_READY,
	/* Backup and restore (store_sqlite_backup.c), on connections of their
	 * own, run directly from their text. */
	STMT_INTEGRITY,
	STMT_EVALGATE_TABLES,
	STMT_DECISION_COUNT,
	STMT_JOURNAL_DELETE,
	STMT_JOURNAL_WAL,
	STMT_AUTO_VACUUM,
	STMT_VACUUM,
	/* Challengers and their answers (store_sqlite_challenger.c), and
	 * a prune's deletion of the answers (store_sqlite_retention.c). */
	STMT_CHALLENGER_SET,
	STMT_CHALLENGER_REMOVE,
	STMT_CHALLENGER_ALL,
	STMT_CHALLENGER_ANSWER_INSERT,
	STMT_CHALLENGER_ANSWERS,
	STMT_PRUNE_CHALLENGERS,
	/* A replay's walk (store_sqlite_challenger.c). */
	STMT_REPLAY_PAGE,
	/* The comparison (store_sqlite_report.c). */
	STMT_COMPARE_ROWS,
	STMT__MAX
};
extern const char *const store_sql[STMT__MAX];	/* static texts */

/* A connection of the SQLite engine (store_engine.h: each engine has
 * its own struct store). */
struct store {
	const struct store_engine *engine;	/* first: &store_sqlite_engine */
	const struct settings *settings;	/* borrowed, process-wide */
	int		 cache_only;	/* the cache alone, for another engine:
					 * store_sqlite_open_cache() */
	sqlite3		*db;		/* owned; cache attached as "cache";
					 * NULL while it cannot be opened */
	int		 stale;		/* reopen before the next request */
	ino_t		 cache_file;	/* the cache file attached */
	dev_t		 cache_dev;
	int		 ro_fs;		/* its file system is read-only */
	int		 said_ro;	/* logged that it opened read-only */
	int64_t		 retry_at_us;	/* no reconnecting before */
	char		 why[512];	/* why it is not open, or "" */
	sqlite3_stmt	*stmts[STMT__MAX];	/* owned: sqlite_stmt() */
	enum { TX_NONE, TX_DATABASE, TX_CACHE } in_tx;	/* the file a
					 * write transaction writes */
	int		 sync_full;	/* SERVICE_DB_SYNC=full */
	int64_t		 sync_us;	/* sqlite_sync(): how long a sync
					 * takes, smoothed */
	int		 in_read;	/* store_read_begin() */
	int		 read_lazy;	/* it trusted the rows kept: the
					 * snapshot opens at the first
					 * statement */
	sqlite3_file	*main_file;	/* borrowed: the database's, for
					 * store_sqlite_vfs_commits() */
	uint32_t	 kept_run;	/* the run of commits (shm_counter.h) the rows
					 * kept were read in; 0 none */
	int64_t		 kept_read_ms;	/* when (monotonic) */
	uint32_t	 write_from;	/* the database's commits when this
					 * write transaction took its lock */
	int		 write_counted;	/* write_from is known */
	int		 wrote_catalog;	/* it moved the catalog's generation */
	int		 wrote_main;	/* the WAL hook saw it commit */
	int64_t		 busy_since_us;	/* busy(): first wait */
	int64_t		 busy_limit_ms;	/* busy(): then give up */
	int		 queued[3];	/* holds the host's write-lock queue of
					 * the file (by in_tx: TX_DATABASE,
					 * TX_CACHE) */
	int64_t		 queued_since_us;	/* began waiting in it; 0 */
	struct kept	*kept;		/* owned: kept.c */
	/* Checkpoints, per file (0 main, 1 cache): the WAL hook notes one
	 * is due, store_idle() runs it once the answer has gone. */
	struct {
		int	 due;		/* a checkpoint to run */
		int	 next;		/* WAL frames at which one is due */
		int	 seen;		/* WAL frames at the last commit */
	} ckpt[2];
	struct buf	 rec;		/* the decision being written, as a
					 * record (store_sqlite_decision.c) */
	struct buf	 answers;	/* the answers' text of a record being
					 * written (store_answers.c) */
	struct store_retain retain;	/* store_retention.c: every
					 * STORE_RETAIN_REQUESTS requests or
					 * STORE_RETAIN_MS */
};

/* Waits in the host's write-lock queue of file (TX_DATABASE or
 * TX_CACHE) before a write (doc/design.md, section 9.3): as long as
 * busy() would wait for SQLite's lock when that is short (checkpoints,
 * automatic retention), else up to STORE_QUEUE_WAIT_MS.  Nothing is
 * taken twice.  0 (in line, or no queue on this host), or -1 with e
 * set (503).  sqlite_queue_leave() gives it back; commit and rollback
 * do for a transaction. */
int		 sqlite_queue_enter(struct store *st, int file,
		    struct error *e);
void		 sqlite_queue_leave(struct store *st, int file);
/* store_commit() in two: COMMIT, which gives the queue back, then with
 * SERVICE_DB_SYNC=full (*sync set) sqlite_sync(), which makes it durable
 * before the caller answers.  Each 0, or -1 with e set (rolled back). */
int		 sqlite_commit_unsynced(struct store *st, int *sync,
		    struct error *e);
int		 sqlite_sync(struct store *st, struct error *e);

/* Statement id, prepared on first use and kept until the connection
 * closes; reset and unbound on return.  NULL with e set on failure. */
sqlite3_stmt	*sqlite_stmt(struct store *st, enum stmt id, struct error *e);
/* Maps the connection's last error onto e (503 for busy/full/read-only,
 * 500 otherwise) and logs it.  Returns -1. */
int		 sqlite_fail(struct store *st, struct error *e,
		    const char *what);
/* Runs a statement that returns no rows (after binding).  0 or -1. */
int		 sqlite_exec_stmt(struct store *st, sqlite3_stmt *stmt,
		    struct error *e, const char *what);
/* Binds text, or NULL for a NULL pointer. */
void		 sqlite_bind_text(sqlite3_stmt *stmt, int i, const char *v);
/* Copies column text into a fixed buffer ("" for NULL). */
void		 sqlite_col_text(sqlite3_stmt *stmt, int i, char *buf,
		    size_t size);
/* Steps a one-row lookup: 1 with the row given to read() (NULL: only
 * whether there is one), 0, or -1. */
int		 sqlite_lookup(struct store *st, sqlite3_stmt *stmt,
		    struct error *e, const char *what,
		    void (*read)(sqlite3_stmt *, void *), void *out);
/* Binds v if it is positive, else NULL (the "use the default" value). */
void		 sqlite_bind_optional(sqlite3_stmt *stmt, int i, int64_t v);
/* Parses JSON text the store kept into *out (a new reference); NULL or
 * unparsable text is corruption: ERR_INTERNAL naming what.  0 or -1. */
int		 stored_json(const char *text, json_object **out,
		    const char *what, struct error *e);
/* Opens st's connection: 0, or -1 with e set and st unconnected. */
int		 sqlite_connect(struct store *st, struct error *e);
/* The SQLite engine's implementation of each operation of
 * store_engine.h is sq_<name>; store_sqlite_engine.c's table
 * store_sqlite_engine names them. */
#define STORE_IMPL(name)	sq_##name
STORE_DECLARE_ALL

/* Defines decision_rid() on db (store_sqlite_rid.c says what it gives):
 * 0, or -1 when SQLite refused it (out of memory). */
int		 sqlite_rid_register(sqlite3 *db);

/* The SQL of step v of the schema (store_sqlite_schema.c): step v
 * takes a database from user_version v to v + 1; step 0 is schema.sql,
 * step N sql/migrate-N.sql.  NULL past the last, STORE_SCHEMA_VERSION
 * steps in all.  Static. */
const char	*sqlite_schema_step(int v);
/* Takes the database open on db (of the file at path, for messages)
 * to this program's schema version in one transaction: store_init()'s
 * migration, and a restore's.  A database that had a version is then
 * checked (sqlite_check_file) before the commit: refused, it is rolled
 * back.  0 or -1 with e set; *found (if not NULL) is then the version
 * the transaction found (0: a new database). */
int		 sqlite_migrate(sqlite3 *db, const char *path, int *found,
		    struct error *e);
/* Whether the database open on db (the file at path, for messages)
 * holds only what evalgate makes: the objects of this program's schema
 * and stored values within their bounds (bounds.h).  Reads only.  0, or
 * -1 with e set: "PATH: refused: " and what was found, naming the
 * object, or the table, row and column. */
int		 sqlite_check_file(sqlite3 *db, const char *path,
		    struct error *e);
/* Adds units (if any) to the database's quota counter of an application
 * on a UTC day, inside the caller's transaction.  0 or -1. */
int		 sqlite_quota_add(struct store *st, int64_t app_id,
		    const char *day, int64_t units, struct error *e);

#endif
