/* store_sqlite.c: the SQLite engine's connections, migrations, the
 * prepared statements and the transaction helpers every store_sqlite*.c
 * file uses; its table and the making of a connection are
 * store_sqlite_engine.c's.  The SQL is elsewhere: the tables in
 * schema.sql and sql/ (their steps in store_sqlite_schema.c), the
 * statements in store_sqlite_sql.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "settings.h"
#include "shm.h"
#include "shm_counter.h"
#include "shm_queue.h"
#include "store_sqlite.h"
#include "store_sqlite_vfs.h"
#include "xalloc.h"

#define SCHEMA_VERSION STORE_SCHEMA_VERSION

/* Set while store_maintain() tries again what failed and was logged. */
static int quiet;

static int
fail_db(sqlite3 *db, struct error *e, const char *what)
{
	int		 rc = db ? sqlite3_extended_errcode(db) : SQLITE_CANTOPEN;
	const char	*msg = db ? sqlite3_errmsg(db) : "cannot open";

	if (!quiet)
		log_warn("database: %s: %s (%d)", what, msg, rc);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		metrics_db_busy();
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_NOMEM:
	case SQLITE_PERM:
		error_set(e, ERR_UNAVAILABLE, NULL,
		    "the database is not available (%s); try again", msg);
		e->retry_after_ms = 1000;
		e->unavailable = EU_DATABASE;
		return -1;
	default:
		return error_set(e, ERR_INTERNAL, NULL, "database error");
	}
}

int
sqlite_fail(struct store *st, struct error *e, const char *what)
{
	/* A connection that cannot write or read its files any more (the
	 * file system turned read-only, the file was replaced) is opened
	 * anew before the next request: store_maintain(). */
	switch (sqlite3_extended_errcode(st->db) & 0xff) {
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
		st->stale = 1;
		break;
	case SQLITE_FULL:	/* readiness reports it for a while */
		shm_mark(shm_host(), st->in_tx == TX_CACHE ?
		    SHM_MARK_CACHE_FULL : SHM_MARK_DB_FULL, clock_now_ms());
		break;
	}
	return fail_db(st->db, e, what);
}

static int
exec(sqlite3 *db, const char *sql, struct error *e, const char *what)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail_db(db, e, what);
	return 0;
}

/* exec() for a file that several workers may be creating at once (a
 * deleted cache): turning a new file to WAL needs it to themselves, and
 * SQLite answers busy at once instead of calling the busy handler.
 * Every statement is idempotent, so the whole is run again. */
static int
exec_patiently(sqlite3 *db, const char *sql, struct error *e,
    const char *what)
{
	int64_t	give_up = clock_mono_us() + STORE_BUSY_TIMEOUT_MS * 1000;
	int	rc;

	while ((rc = sqlite3_exec(db, sql, NULL, NULL, NULL)) != SQLITE_OK &&
	    (rc & 0xff) == SQLITE_BUSY && clock_mono_us() < give_up)
		usleep(1000);
	return rc == SQLITE_OK ? 0 : fail_db(db, e, what);
}

static int
pragmas(sqlite3 *db, struct error *e)
{
	char sql[256];

	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	/* synchronous=NORMAL whatever SERVICE_DB_SYNC says: with full,
	 * store_commit() syncs after COMMIT (see sqlite_sync).
	 * journal_size_limit: a WAL that grew while a long reader held an
	 * old snapshot is cut back once a checkpoint has emptied it.  No
	 * mmap_size: the pages an evaluation rereads after the other
	 * worker's commit are mostly in the WAL, which SQLite never maps;
	 * measured again with 256 MiB, it saved one pread in
	 * eight, remapped the growing file (mmap and munmap once every two
	 * evaluations) and served 10-20% fewer requests (bench/RESULTS.md). */
	snprintf(sql, sizeof(sql),
	    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	    " PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=%d;",
	    STORE_WAL_LIMIT);
	return exec(db, sql, e, "pragmas");
}

/* The cache is attached with its own journal and no fsync: it may be
 * lost without harm. */
/* Columns a cache file made by an older version lacks: added where
 * missing (CREATE TABLE IF NOT EXISTS keeps an old table as it was). */
static const struct {
	const char	*probe;		/* fails without the column */
	const char	*add;
} cache_added[] = {
	{ "SELECT rate FROM cache.admission",
	  "ALTER TABLE cache.admission ADD COLUMN rate INTEGER NOT NULL"
	  " DEFAULT 0" },
	{ "SELECT at_ms FROM cache.admission",
	  "ALTER TABLE cache.admission ADD COLUMN at_ms INTEGER NOT NULL"
	  " DEFAULT 0" },
};

static int
has_column(sqlite3 *db, const char *probe)
{
	sqlite3_stmt	*stmt = NULL;
	int		 rc = sqlite3_prepare_v2(db, probe, -1, &stmt, NULL);

	sqlite3_finalize(stmt);
	return rc == SQLITE_OK;
}

static int
cache_columns(sqlite3 *db, struct error *e)
{
	size_t i;

	for (i = 0; i < sizeof(cache_added) / sizeof(cache_added[0]); i++)
		if (!has_column(db, cache_added[i].probe) &&
		    exec_patiently(db, cache_added[i].add, e,
		    "cache column") == -1 && !has_column(db,
		    cache_added[i].probe))	/* another process added it */
			return -1;
	return 0;
}

/* Creates path empty, mode 0666 less the umask (0600, or 0660 for
 * SERVICE_GROUP_WRITABLE=1), if it is not there: SQLite would make it
 * 0644 less the umask, which no group member can write, and gives its
 * -wal and -shm files the database file's mode.  A failure is SQLite's
 * to report when it opens the file. */
static void
precreate(const char *path)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) != -1)
		close(fd);
}

/* Opens the cache file, creating it if it was deleted.  A cache deleted
 * without its -wal and -shm leaves them behind, and SQLite would read
 * the old WAL into the new file: they are removed first.  All of it
 * under a lock on the directory, so that no process removes the WAL of
 * a file another one has just made.  An SQLite result code. */
static int
create_cache(const char *path, sqlite3 **db)
{
	char		 dir[4096], side[4096 + 8];
	const char	*slash = strrchr(path, '/');
	struct stat	 sb;
	int		 fd, rc;

	snprintf(dir, sizeof(dir), "%.*s", slash == NULL ? 1 : slash == path ?
	    1 : (int)(slash - path), slash == NULL ? "." : path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1)
		flock(fd, LOCK_EX);
	if (stat(path, &sb) == -1 && errno == ENOENT) {
		snprintf(side, sizeof(side), "%s-wal", path);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", path);
		unlink(side);
	}
	precreate(path);
	rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL);
	if (fd != -1)
		close(fd);		/* and the lock with it */
	return rc;
}

static int
attach_cache(sqlite3 *db, const struct settings *s, struct error *e)
{
	sqlite3		*created;
	sqlite3_stmt	*stmt;
	char		 sql[160];
	int		 rc, one = 1, queued;

	/* ATTACH opens with the main connection's flags, which lack
	 * SQLITE_OPEN_CREATE: a deleted cache is created (empty) first. */
	if (create_cache(s->cache_path, &created) != SQLITE_OK) {
		rc = fail_db(created, e, "create cache");
		sqlite3_close(created);
		return rc;
	}
	sqlite3_close(created);
	if (sqlite3_prepare_v2(db, store_sql[STMT_ATTACH_CACHE], -1, &stmt,
	    NULL) != SQLITE_OK)
		return fail_db(db, e, "attach cache");
	sqlite3_bind_text(stmt, 1, s->cache_path, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return fail_db(db, e, "attach cache");
	snprintf(sql, sizeof(sql), "PRAGMA cache.journal_mode=WAL;"
	    " PRAGMA cache.synchronous=OFF; PRAGMA cache.journal_size_limit=%d;",
	    STORE_WAL_LIMIT);
	/* Every worker of the host may be starting at once: they set the
	 * cache up one after another, in the cache's write-lock queue. */
	queued = shm_queue_enter(shm_host(), SHM_QUEUE_CACHE,
	    STORE_QUEUE_WAIT_MS) == 1;
	rc = exec_patiently(db, sql, e, "cache pragmas") == -1 ||
	    exec_patiently(db, cache_sql, e, "cache tables") == -1 ||
	    cache_columns(db, e) == -1 ? -1 : 0;
	if (queued)
		shm_queue_leave(shm_host(), SHM_QUEUE_CACHE);
	/* A connection closing last deletes its WAL by name: one still on
	 * a deleted cache would delete the new file's. */
	sqlite3_file_control(db, "cache", SQLITE_FCNTL_PERSIST_WAL, &one);
	return rc;
}

static sqlite3 *
open_db(const char *path, int flags, struct error *e)
{
	sqlite3 *db;

	/* Every connection of the process, the attached cache's too,
	 * writes a commit's WAL frames at once (store_sqlite_vfs.c). */
	store_sqlite_vfs_register();
	if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK || sqlite_rid_register(db) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "cannot open %s: %s",
		    path, db ? sqlite3_errmsg(db) : "out of memory");
		if (!quiet)
			log_warn("database: %s", e->message);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int
user_version(sqlite3 *db)
{
	sqlite3_stmt	*stmt;
	int		 v = -1;

	if (sqlite3_prepare_v2(db, store_sql[STMT_USER_VERSION], -1, &stmt,
	    NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

int
sqlite_migrate(sqlite3 *db, const char *path, int *found_out,
    struct error *e)
{
	char	sql[64];
	int	v, found;

	/* Step 10 computes rids; a copy being migrated (restore, the
	 * import) comes on a connection of its own. */
	if (sqlite_rid_register(db) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (exec(db, store_sql[STMT_INIT_BEGIN], e, "begin") == -1)
		return -1;
	if ((v = user_version(db)) < 0 || v > SCHEMA_VERSION) {
		error_set(e, ERR_INTERNAL, NULL, "%s: schema version %d is "
		    "newer than this program (%d)", path, v, SCHEMA_VERSION);
		sqlite3_exec(db, store_sql[STMT_ROLLBACK], NULL, NULL, NULL);
		return -1;
	}
	for (found = v; v < SCHEMA_VERSION; v++)
		if (exec(db, sqlite_schema_step(v), e, "migrate") == -1) {
			sqlite3_exec(db, store_sql[STMT_ROLLBACK], NULL, NULL,
			    NULL);
			return -1;
		}
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", SCHEMA_VERSION);
	/* A file that was there is taken only as evalgate makes it
	 * (store_sqlite_check.c); a new one is made here. */
	if (exec(db, sql, e, "user_version") == -1 ||
	    (found > 0 && sqlite_check_file(db, path, e) == -1) ||
	    exec(db, store_sql[STMT_COMMIT], e, "commit") == -1) {
		sqlite3_exec(db, store_sql[STMT_ROLLBACK], NULL, NULL, NULL);
		return -1;
	}
	if (found_out != NULL)
		*found_out = found;
	return 0;
}

int
store_schema_version(void)
{
	return SCHEMA_VERSION;
}

int
sq_init(const struct settings *s, struct error *e)
{
	sqlite3	*db;
	char	 dir[sizeof(s->db_path)], *slash;
	int	 rc = -1, found = -1, queued = 0;

	snprintf(dir, sizeof(dir), "%s", s->db_path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0777) == -1 && errno != EEXIST)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "cannot create %s: %s", dir, strerror(errno));
	}
	precreate(s->db_path);
	if ((db = open_db(s->db_path, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, e)) == NULL)
		return -1;
	/* An existing file of this version is checked before anything is
	 * written to it, its journal mode included; an older one once
	 * migrated, which a refusal rolls back (sqlite_migrate). */
	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	if (user_version(db) == SCHEMA_VERSION &&
	    sqlite_check_file(db, s->db_path, e) == -1)
		goto out;
	/* A new file gets incremental auto-vacuum, which only counts
	 * before its first table and before it turns to WAL; an existing
	 * one keeps its mode (evalgate-admin compact changes it). */
	if (exec(db, store_sql[STMT_AUTO_VACUUM], e, "auto_vacuum") == -1 ||
	    pragmas(db, e) == -1)
		goto out;
	/* A migration is a write like any other: it waits its turn in the
	 * host's queue (doc/design.md, section 9.3), so that the workers
	 * serving meanwhile queue behind it, not against it. */
	if ((queued = shm_queue_enter(shm_host(), SHM_QUEUE_DB,
	    STORE_QUEUE_WAIT_MS)) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: waited %d ms in the "
		    "write-lock queue: its holder is stuck", s->db_path,
		    STORE_QUEUE_WAIT_MS);
		goto out;
	}
	rc = sqlite_migrate(db, s->db_path, &found, e);
	if (queued == 1)
		shm_queue_leave(shm_host(), SHM_QUEUE_DB);
	if (rc == 0)
		rc = attach_cache(db, s, e);
out:
	sqlite3_close(db);
	return rc == 0 ? found : -1;
}

/* Waits for a lock in short steps.  SQLite's own handler sleeps up to
 * 100 ms at a time, far longer than our transactions last, which turns
 * two workers meeting at a lock into a latency spike.
 *
 * A writer that held the host's queue meets SQLite's lock only when a
 * process outside the queue holds it (an operator's sqlite3, readiness's
 * probe for a moment).  Its wait counts from when it joined the queue:
 * writers queued behind a lock held from outside give up together, at
 * the busy limit, not one busy limit after another; each still waits
 * STORE_BUSY_GRACE_MS at SQLite's lock. */
static int
busy(void *arg, int count)
{
	struct store	*st = arg;
	int64_t		 now = clock_mono_us(), since;

	if (count == 0)
		st->busy_since_us = now;
	since = st->queued_since_us != 0 &&
	    st->queued_since_us < st->busy_since_us ? st->queued_since_us :
	    st->busy_since_us;
	if (now - since > st->busy_limit_ms * 1000 &&
	    now - st->busy_since_us > STORE_BUSY_GRACE_MS * 1000)
		return 0;
	/* The holder usually needs microseconds: yield first, then sleep. */
	if (count < 10)
		sched_yield();
	else
		usleep(count < 40 ? 50 : 500);
	return 1;
}

static const char *const ckpt_files[2] = { "main", "cache" };

/* Replaces SQLite's autocheckpoint, which once the WAL holds 1000
 * frames tries again after every commit: while the other worker reads,
 * each try copies a few frames and pays two fsyncs, and under steady
 * load the WAL may still never start over.  Here a checkpoint is due
 * once per STORE_CKPT_FRAMES new frames, and runs after the answer has
 * gone (store_idle). */
static int
wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store	*st = arg;
	int		 i = strcmp(name, ckpt_files[0]) != 0;

	(void)db;
	if (i == 0)
		st->wrote_main = 1;
	if (frames < st->ckpt[i].seen)		/* the WAL was restarted */
		st->ckpt[i].next = 0;
	st->ckpt[i].seen = frames;
	if (frames >= STORE_CKPT_FRAMES && frames >= st->ckpt[i].next) {
		st->ckpt[i].due = 1;
		st->ckpt[i].next = frames + STORE_CKPT_FRAMES;
	}
	return SQLITE_OK;
}

/* Notes that a statement moved the catalog's generation: the triggers
 * of every catalog table update its row (schema.sql). */
static void
update_hook(void *arg, int op, const char *db, const char *table,
    sqlite3_int64 rowid)
{
	struct store *st = arg;

	(void)op;
	(void)rowid;
	if (strcmp(table, "catalog_generation") == 0 &&
	    strcmp(db, "main") == 0)
		st->wrote_catalog = 1;
}

void
sq_idle(struct store *st)
{
	struct error	e = { 0 };
	size_t		i;

	if (st->db == NULL)
		return;
	for (i = 0; i < 2; i++)
		if (st->ckpt[i].due) {
			/* First a passive pass, outside the queue: it copies
			 * what the WAL holds and pays both syncs while the
			 * other workers go on writing.  (Another worker's
			 * checkpoint under way makes it return at once.) */
			sqlite3_wal_checkpoint_v2(st->db, ckpt_files[i],
			    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
			/* Then the restart: copies the few frames written
			 * meanwhile and has the next writer start the WAL
			 * over, so that it stays near STORE_WAL_LIMIT.  It
			 * waits for the readers of older snapshots, holding
			 * off writers meanwhile: readers last a request, but
			 * an export or a backup may last minutes, so the
			 * wait is short.  Given up, it has still copied what
			 * it could; the next try is due STORE_CKPT_FRAMES
			 * on. */
			st->busy_limit_ms = STORE_CKPT_WAIT_MS;
			if (sqlite_queue_enter(st, i == 0 ? TX_DATABASE :
			    TX_CACHE, &e) == 0) {
				sqlite3_wal_checkpoint_v2(st->db,
				    ckpt_files[i], SQLITE_CHECKPOINT_RESTART,
				    NULL, NULL);
				sqlite_queue_leave(st, i == 0 ? TX_DATABASE :
				    TX_CACHE);
			}
			error_clear(&e);
			st->busy_limit_ms = STORE_BUSY_TIMEOUT_MS;
			st->ckpt[i].due = 0;
		}
	if (!st->cache_only)
		store_retain(st, st->settings, &st->retain);
}

/* Closes the connection and forgets its statements. */
static void
disconnect(struct store *st)
{
	size_t i;

	for (i = 0; i < STMT__MAX; i++) {
		sqlite3_finalize(st->stmts[i]);
		st->stmts[i] = NULL;
	}
	kept_free(st->kept);
	st->kept = NULL;
	st->kept_run = 0;
	st->main_file = NULL;
	sqlite_queue_leave(st, TX_DATABASE);
	sqlite_queue_leave(st, TX_CACHE);
	sqlite3_close(st->db);
	st->db = NULL;
	st->in_tx = TX_NONE;
	st->stale = 0;
}

int
sqlite_connect(struct store *st, struct error *e)
{
	const struct settings	*s = st->settings;
	struct statvfs		 fs;
	struct stat		 sb;
	int			 v;

	/* A cache-only connection (store_sqlite_open_cache) has an empty
	 * database in memory as its main, and the cache attached. */
	if ((st->db = st->cache_only ? open_db(":memory:",
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, e) :
	    open_db(s->db_path, SQLITE_OPEN_READWRITE, e)) == NULL)
		goto fail;
	if (pragmas(st->db, e) == -1 || attach_cache(st->db, s, e) == -1)
		goto fail;
	if (stat(s->cache_path, &sb) == -1)
		memset(&sb, 0, sizeof(sb));
	st->cache_file = sb.st_ino;
	st->cache_dev = sb.st_dev;
	sqlite3_busy_handler(st->db, busy, st);
	sqlite3_wal_hook(st->db, wal_hook, st);
	sqlite3_update_hook(st->db, update_hook, st);
	memset(st->ckpt, 0, sizeof(st->ckpt));
	st->main_file = NULL;
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER,
	    &st->main_file) != SQLITE_OK)
		st->main_file = NULL;
	if (st->cache_only)
		return 0;
	if ((v = user_version(st->db)) != SCHEMA_VERSION) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: " STORE_SCHEMA_WHY,
		    s->db_path, v, SCHEMA_VERSION);
		goto fail;
	}
	/* SQLite opens a file it may not write read-only, silently: say
	 * it once, as every write will be refused. */
	v = sqlite3_db_readonly(st->db, "main") == 1;
	if (v && !st->said_ro)
		log_warn("database: %s is read-only: every write will be "
		    "refused (503) until it is writable", s->db_path);
	st->said_ro = v;
	return 0;
fail:
	/* A read-only file system is the likeliest cause of a failure to
	 * open: name it, for the log and the 503. */
	st->ro_fs = statvfs(s->db_path, &fs) == 0 && (fs.f_flag & ST_RDONLY);
	if (st->ro_fs) {
		v = (int)strlen(e->message);
		snprintf(e->message + v, sizeof(e->message) - (size_t)v,
		    " (its file system is read-only)");
	}
	if (st->db != NULL)
		disconnect(st);
	return -1;
}

/* Whether the cache file at its path is not the one attached. */
static int
cache_moved(const struct store *st)
{
	struct stat sb;

	if (stat(st->settings->cache_path, &sb) == -1)
		return errno == ENOENT;
	return sb.st_ino != st->cache_file || sb.st_dev != st->cache_dev;
}

void
sq_maintain(struct store *st)
{
	struct error	 e = { 0 };
	int64_t		 now = clock_mono_us();
	int		 rc;

	/* The cache deleted or replaced (an operator may, at any time):
	 * every worker moves to the new file, or the host's rate windows,
	 * memo and cool-downs split between the old and the new. */
	if (st->db != NULL && !st->stale && cache_moved(st)) {
		log_info("cache: %s was deleted or replaced: reopened",
		    st->settings->cache_path);
		st->stale = 1;
		st->retry_at_us = 0;
	}
	/* A connection SQLite could open only read-only stays so: reopen
	 * it too, in case the file became writable. */
	if ((st->db != NULL && !st->stale && !st->said_ro) ||
	    now < st->retry_at_us)
		return;
	st->retry_at_us = now + STORE_RETRY_MS * 1000;
	if (st->db != NULL)
		disconnect(st);
	quiet = st->why[0] != '\0';	/* already said */
	rc = sqlite_connect(st, &e);
	quiet = 0;
	if (rc == 0) {
		if (st->why[0] != '\0')
			log_info("database: connected again");
		st->why[0] = '\0';
	} else {
		/* The failure is logged when it changes, not every second. */
		if (strcmp(st->why, e.message) != 0)
			log_warn("database: unavailable, trying again every"
			    " %d ms: %s", STORE_RETRY_MS, e.message);
		snprintf(st->why, sizeof(st->why), "%s", e.message);
	}
	error_clear(&e);
}

void
sq_close(struct store *st)
{
	if (st == NULL)
		return;
	disconnect(st);
	buf_free(&st->rec);
	buf_free(&st->answers);
	free(st);
}

/* Whether a decision could be written to the file at path now: it
 * opens writable, answers a query (and, version not NULL, says its
 * schema version), and gives its write lock within
 * STORE_READY_WAIT_MS (then the transaction is rolled back: nothing is
 * written).  A lock held longer than that is not ready; the wait is
 * short so that readiness never queues behind writers. */
static int
writable(const char *path, int *version)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*stmt = NULL;
	int		 ok;

	ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) ==
	    SQLITE_OK && sqlite3_db_readonly(db, "main") == 0 &&
	    sqlite3_prepare_v2(db, store_sql[STMT_READY], -1, &stmt, NULL) ==
	    SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW;
	sqlite3_finalize(stmt);
	if (ok && version != NULL)
		*version = user_version(db);
	if (ok) {
		sqlite3_busy_timeout(db, STORE_READY_WAIT_MS);
		ok = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) ==
		    SQLITE_OK;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return ok;
}

void
sq_ready(struct store *st, int *db_ok, int *cache_ok, int *schema)
{
	const struct settings	*s = st->settings;
	struct shm		*m = shm_host();
	int64_t			 since = clock_now_ms() - STORE_READY_FULL_MS;

	/* A full disk gives the lock and fails the commit: what the
	 * host's last writes met counts too. */
	*schema = -1;
	*db_ok = st->cache_only || (writable(s->db_path, schema) &&
	    *schema == SCHEMA_VERSION &&
	    shm_marked(m, SHM_MARK_DB_FULL) < since);
	*cache_ok = writable(s->cache_path, NULL) &&
	    shm_marked(m, SHM_MARK_CACHE_FULL) < since;
}

static void	read_open(struct store *st);

sqlite3_stmt *
sqlite_stmt(struct store *st, enum stmt id, struct error *e)
{
	if (st->db == NULL) {
		/* The cause is in the log; the client learns no path. */
		error_set(e, ERR_UNAVAILABLE, NULL, "the database is not "
		    "available%s; try again", st->ro_fs ?
		    " (its file system is read-only)" : "");
		e->retry_after_ms = STORE_RETRY_MS;
		e->unavailable = EU_DATABASE;
		return NULL;
	}
	if ((unsigned)id >= STMT__MAX || store_sql[id] == NULL) {
		error_set(e, ERR_INTERNAL, NULL, "no statement %d", (int)id);
		return NULL;
	}
	if (st->read_lazy)		/* a row not kept: read it there */
		read_open(st);
	if (st->stmts[id] != NULL) {
		sqlite3_reset(st->stmts[id]);
		sqlite3_clear_bindings(st->stmts[id]);
		return st->stmts[id];
	}
	if (sqlite3_prepare_v3(st->db, store_sql[id], -1,
	    SQLITE_PREPARE_PERSISTENT, &st->stmts[id], NULL) != SQLITE_OK) {
		sqlite_fail(st, e, "prepare");
		return NULL;
	}
	return st->stmts[id];
}

int
sqlite_exec_stmt(struct store *st, sqlite3_stmt *stmt, struct error *e,
    const char *what)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return sqlite_fail(st, e, what);
	return 0;
}

void
sqlite_bind_text(sqlite3_stmt *stmt, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(stmt, i);
	else
		sqlite3_bind_text(stmt, i, v, -1, SQLITE_TRANSIENT);
}

void
sqlite_col_text(sqlite3_stmt *stmt, int i, char *buf, size_t size)
{
	const unsigned char *t = sqlite3_column_text(stmt, i);

	snprintf(buf, size, "%s", t ? (const char *)t : "");
}

int
sqlite_lookup(struct store *st, sqlite3_stmt *stmt, struct error *e,
    const char *what, void (*read)(sqlite3_stmt *, void *), void *out)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_ROW) {
		if (read != NULL)
			read(stmt, out);
		sqlite3_reset(stmt);
		return 1;
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, what);
}

void
sqlite_bind_optional(sqlite3_stmt *stmt, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(stmt, i, v);
	else
		sqlite3_bind_null(stmt, i);
}

static int
run(struct store *st, enum stmt id, struct error *e, const char *what)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, id, e);

	return stmt == NULL ? -1 : sqlite_exec_stmt(st, stmt, e, what);
}

/* The catalog's generation, as the first read of a snapshot: -1 when it
 * cannot be read (no row is then given from what is kept). */
static int64_t
generation(struct store *st)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt;
	int64_t		 n = -1;

	if (st->kept == NULL)
		st->kept = kept_new();
	if ((stmt = sqlite_stmt(st, STMT_GENERATION, &e)) == NULL) {
		error_clear(&e);
		return -1;
	}
	if (sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	return n;
}

/*
 * Runs of commits.  Reading the generation costs a read transaction:
 * locks on the shared memory, whose cost grows with the processes that
 * have the file open, and pages read again after every other worker's
 * commit.  Yet almost every commit is a decision, which leaves the
 * catalog alone.  So the host counts the commits it makes that leave the
 * catalog alone and follow one another: the wal-index numbers every
 * commit to the database, by any process, and a write transaction reads
 * that number once it holds the write lock (store_sqlite_vfs_commits).
 * After its commit, while it still heads the host's write-lock queue, a
 * commit numbered right after the run's last that moved no generation
 * extends the run (SHM_COUNTER_CATALOG_RUN: its id, its last commit);
 * any other commit of this host starts a new run after itself.  A
 * commit the host did not count (a database shell's, one made outside a
 * transaction, one whose writer died before noting it) leaves the run
 * behind the wal-index, and the next counted commit starts a new one.
 *
 * The rows kept were read in a run when, as the read began, the run
 * ended at the wal-index's last commit.  While the run is the same and
 * still ends there, every commit since left the catalog alone, and the
 * rows are used without a read.  Any doubt reads: no mapping, a header
 * being written, a run that moved, or rows read more than
 * STORE_KEPT_TRUST_MS ago (a wal-index rebuilt after a crash numbers its
 * commits from 0 again).
 */

/* After a commit of the database, before the write-lock queue is left
 * (so that the next writer of the host finds the run as this one left
 * it). */
static void
note_commit(struct store *st)
{
	struct shm	*m = shm_host();
	uint64_t	 last, id;
	uint32_t	 mine = st->write_from + 1;

	if (!st->wrote_main || !st->write_counted ||
	    shm_counter(m, SHM_COUNTER_CATALOG_RUN, &last) == -1)
		return;
	if (!st->wrote_catalog && last >> 32 != 0 &&
	    (uint32_t)last == st->write_from &&
	    shm_counter_swap(m, SHM_COUNTER_CATALOG_RUN, last,
	    (last >> 32) << 32 | mine))
		return;
	while ((id = (uint32_t)shm_counter_next(m,
	    SHM_COUNTER_CATALOG_RUNS)) == 0)
		;
	shm_counter_set(m, SHM_COUNTER_CATALOG_RUN, id << 32 | mine);
}

/* The run the database's last commit ends, or 0. */
static uint32_t
current_run(struct store *st)
{
	uint64_t w;
	uint32_t last;

	if (store_sqlite_vfs_commits(st->main_file, &last) == -1 ||
	    shm_counter(shm_host(), SHM_COUNTER_CATALOG_RUN, &w) == -1 ||
	    (uint32_t)w != last)
		return 0;
	return (uint32_t)(w >> 32);
}

/* Whether the rows kept may be used without a read (see above). */
static int
kept_current(struct store *st)
{
	return st->kept_run != 0 && kept_generation(st->kept) >= 0 &&
	    clock_mono_us() / 1000 - st->kept_read_ms < STORE_KEPT_TRUST_MS &&
	    current_run(st) == st->kept_run;
}

/* Opens the read snapshot, its first statement the generation. */
static void
read_open(struct store *st)
{
	struct error	 e = { 0 };
	uint32_t	 in_run = current_run(st);
	int64_t		 n;

	st->read_lazy = 0;
	if (run(st, STMT_BEGIN, &e, "begin read") == -1) {
		st->in_read = 0;
		kept_end(st->kept);
		error_clear(&e);
		return;
	}
	st->in_read = 1;
	kept_begin(st->kept, n = generation(st));
	st->kept_run = n >= 0 ? in_run : 0;
	st->kept_read_ms = clock_mono_us() / 1000;
}

void
sq_read_begin(struct store *st)
{
	if (st == NULL || st->in_tx || st->in_read)
		return;
	if (kept_current(st)) {	/* none kept: generation -1 */
		st->in_read = 1;
		st->read_lazy = 1;
		kept_begin(st->kept, kept_generation(st->kept));
		return;
	}
	read_open(st);
}

void
sq_read_end(struct store *st)
{
	struct error e = { 0 };

	if (st == NULL || !st->in_read)
		return;
	st->in_read = 0;
	st->read_lazy = 0;
	kept_end(st->kept);
	if (!sqlite3_get_autocommit(st->db))
		run(st, STMT_COMMIT, &e, "end read");
	error_clear(&e);
}

/* BEGIN IMMEDIATE would take the write lock of both files, so that a
 * decision waited for the other worker's rate window and the reverse.
 * Instead the first statement is an empty write to the one file the
 * transaction writes: its lock is taken there, waiting in busy(), before
 * anything is read, which is all IMMEDIATE does, for that file alone. */
int
sqlite_queue_enter(struct store *st, int file, struct error *e)
{
	int64_t	wait = st->busy_limit_ms < STORE_BUSY_TIMEOUT_MS ?
	    st->busy_limit_ms : STORE_QUEUE_WAIT_MS;
	int	rc;

	if (st->queued[file])
		return 0;
	st->queued_since_us = clock_mono_us();
	rc = shm_queue_enter(shm_host(), file == TX_DATABASE ? SHM_QUEUE_DB :
	    SHM_QUEUE_CACHE, wait);
	if (rc == -1) {
		st->queued_since_us = 0;
		if (wait == STORE_QUEUE_WAIT_MS)
			log_warn("database: waited %d ms in the write-lock "
			    "queue of the %s: its holder is stuck",
			    STORE_QUEUE_WAIT_MS, file == TX_DATABASE ?
			    "database" : "cache");
		error_set(e, ERR_UNAVAILABLE, NULL, "the database is not "
		    "available (busy); try again");
		e->retry_after_ms = STORE_RETRY_MS;
		e->unavailable = EU_DATABASE;
		return -1;
	}
	st->queued[file] = rc == 1;
	if (rc != 1)
		st->queued_since_us = 0;
#ifdef EVALGATE_TEST_HOOKS
	/* Tests kill workers that hold the queue: hold it a while. */
	if (rc == 1 && st->settings->test_queue_hold_ms > 0)
		usleep((useconds_t)st->settings->test_queue_hold_ms * 1000);
#endif
	return 0;
}

void
sqlite_queue_leave(struct store *st, int file)
{
	if (!st->queued[file])
		return;
	st->queued[file] = 0;
	st->queued_since_us = 0;
	shm_queue_leave(shm_host(), file == TX_DATABASE ? SHM_QUEUE_DB :
	    SHM_QUEUE_CACHE);
}

/* A write transaction waits in the host's queue of its file, then
 * takes SQLite's lock, which nobody else in the queue then holds. */
static int
begin_locked(struct store *st, int file, struct error *e)
{
	sq_read_end(st);
	if (sqlite_queue_enter(st, file, e) == -1)
		return -1;
	if (run(st, STMT_BEGIN, e, "begin") == -1) {
		sqlite_queue_leave(st, file);
		return -1;
	}
	st->in_tx = file;
	if (run(st, file == TX_DATABASE ? STMT_LOCK_MAIN : STMT_LOCK_CACHE, e,
	    "lock") == -1) {
		sq_rollback(st);
		return -1;
	}
	/* The lock held, the number is the last commit's (note_commit). */
	st->write_counted = file == TX_DATABASE &&
	    store_sqlite_vfs_commits(st->main_file, &st->write_from) == 0;
	st->wrote_catalog = 0;
	st->wrote_main = 0;
	return 0;
}

int
sq_begin(struct store *st, struct error *e)
{
	return begin_locked(st, TX_DATABASE, e);
}

int
sq_begin_counters(struct store *st, struct error *e)
{
	return begin_locked(st, TX_CACHE, e);
}

/* SERVICE_DB_SYNC=full, after a database transaction: its commit is
 * made durable here, once the write lock is released, rather than
 * inside COMMIT as synchronous=FULL would, holding the lock through the
 * disk write so that each worker's decision waits for the other's fsync.
 * WAL frames are written in order, a checkpoint syncs the WAL before it
 * copies from it, and the caller answers only after this returns: what
 * is acknowledged survives power loss, as with FULL. */
int
sqlite_sync(struct store *st, struct error *e)
{
	sqlite3_file	*f = NULL;
	int64_t		 t0 = clock_mono_us();

	/* The WAL; without one (it could not be set up), the commit went
	 * to the database file itself. */
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
	    &f) != SQLITE_OK || f == NULL || f->pMethods == NULL)
		sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER,
		    &f);
	if (f != NULL && f->pMethods != NULL &&
	    f->pMethods->xSync(f, SQLITE_SYNC_NORMAL) == SQLITE_OK) {
		st->sync_us += (clock_mono_us() - t0 - st->sync_us) / 8;
		return 0;
	}
	log_warn("database: %s: cannot sync a commit to disk",
	    st->settings->db_path);
	error_set(e, ERR_UNAVAILABLE, NULL,
	    "the database could not write the change to disk; try again");
	e->retry_after_ms = STORE_RETRY_MS;
	e->unavailable = EU_DATABASE;
	return -1;
}

int
sqlite_commit_unsynced(struct store *st, int *sync, struct error *e)
{
	*sync = st->in_tx == TX_DATABASE && st->sync_full;
	if (run(st, STMT_COMMIT, e, "commit") == -1) {
		sq_rollback(st);
		return -1;
	}
	if (st->in_tx == TX_DATABASE)
		note_commit(st);
	/* The next in line writes while this one syncs. */
	sqlite_queue_leave(st, st->in_tx);
	st->in_tx = TX_NONE;
	return 0;
}

int
sq_commit(struct store *st, struct error *e)
{
	int sync;

	if (sqlite_commit_unsynced(st, &sync, e) == -1)
		return -1;
	return sync ? sqlite_sync(st, e) : 0;
}

void
sq_rollback(struct store *st)
{
	struct error e = { 0 };

	if (st->in_tx == TX_NONE)
		return;
	if (!sqlite3_get_autocommit(st->db))
		run(st, STMT_ROLLBACK, &e, "rollback");
	sqlite_queue_leave(st, st->in_tx);
	st->in_tx = TX_NONE;
	error_clear(&e);
}

int
sq_audit(struct store *st, const char *actor, const char *action,
    const char *target, json_object *details, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_AUDIT, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, clock_now_ms());
	sqlite_bind_text(stmt, 2, actor);
	sqlite_bind_text(stmt, 3, action);
	sqlite_bind_text(stmt, 4, target);
	sqlite_bind_text(stmt, 5, details ? json_object_to_json_string_ext(
	    details, JSON_C_TO_STRING_PLAIN) : NULL);
	return sqlite_exec_stmt(st, stmt, e, "audit");
}

int
sq_audit_last(struct store *st, const char *action, const char *target,
    int64_t *at_ms, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_AUDIT_LAST, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite_bind_text(stmt, 1, action);
	sqlite_bind_text(stmt, 2, target);
	*at_ms = 0;
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		*at_ms = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    sqlite_fail(st, e, "audit");
}
