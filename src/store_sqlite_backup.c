/* store_sqlite_backup.c: backup and restore of the database, for the
 * console.
 *
 * A backup is SQLite's online backup API over one read snapshot: in WAL
 * mode a reader never blocks a writer, so the workers go on answering
 * while it copies, and the copy is the database as it was when the
 * snapshot began.  Never a file copy: the live file without its WAL is
 * not the database.  A restore checks the backup, copies it beside the
 * database, migrates the copy forward and renames it into place, in a
 * stopped install only: a process with the database open holds a lock
 * SQLite takes for as long as a connection lives (store_in_use).
 *
 * The cache is neither backed up nor restored: it may be deleted at any
 * time, and a restore removes it, since it describes the database that
 * was there before. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings.h"
#include "store_sqlite.h"

#define BACKUP_STEP_PAGES 1024	/* pages copied per backup step */

/* SQLite's unix locks (os_unix.c): a connection in WAL mode holds a
 * read lock on the -shm file's "DMS" byte for as long as it is open
 * (readers and writers take the bytes before it); one in rollback mode
 * holds the database file's lock bytes inside a transaction. */
#define SHM_LOCK_OFFSET	120	/* WALINDEX_LOCK_OFFSET */
#define SHM_LOCK_BYTES	9	/* 8 WAL locks and the DMS byte */
#define DB_LOCK_OFFSET	0x40000000	/* PENDING_BYTE */
#define DB_LOCK_BYTES	512	/* PENDING, RESERVED, the SHARED range */

/* Sets e from db's last error, naming the file: 503-like (the console
 * prints the message).  Returns -1. */
static int
failed(sqlite3 *db, struct error *e, const char *path, const char *what)
{
	return error_set(e, ERR_UNAVAILABLE, NULL, "%s: %s: %s", path, what,
	    db != NULL ? sqlite3_errmsg(db) : "out of memory");
}

static sqlite3 *
open_file(const char *path, int flags, struct error *e)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		failed(db, e, path, "cannot open");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	return db;
}

/* The one integer statement id answers on db: 0, or -1 with e set. */
static int
integer(sqlite3 *db, enum stmt id, int64_t *v, struct error *e,
    const char *path)
{
	sqlite3_stmt	*stmt = NULL;
	int		 rc;

	if (sqlite3_prepare_v2(db, store_sql[id], -1, &stmt, NULL) !=
	    SQLITE_OK)
		return failed(db, e, path, "not an evalgate database");
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW)
		return failed(db, e, path, "cannot read");
	return 0;
}

static int
run(sqlite3 *db, enum stmt id, struct error *e, const char *path,
    const char *what)
{
	if (sqlite3_exec(db, store_sql[id], NULL, NULL, NULL) != SQLITE_OK)
		return failed(db, e, path, what);
	return 0;
}

/* Whether another process holds a lock on [start, start + len) of the
 * file at path: 1 (its pid in *pid), 0, or 0 if the file is missing. */
static int
locked(const char *path, off_t start, off_t len, long *pid)
{
	struct flock	fl;
	int		fd, held;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	/* F_GETLK takes nothing: it only asks who would conflict. */
	held = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	if (held)
		*pid = (long)fl.l_pid;
	close(fd);
	return held;
}

int
store_in_use(const char *path, long *pid)
{
	char shm[4096 + 8];

	snprintf(shm, sizeof(shm), "%s-shm", path);
	*pid = 0;
	return locked(shm, SHM_LOCK_OFFSET, SHM_LOCK_BYTES, pid) ||
	    locked(path, DB_LOCK_OFFSET, DB_LOCK_BYTES, pid);
}

/* Removes the file at path and its -wal, -shm and -journal. */
static void
remove_files(const char *path)
{
	static const char *const sides[] = { "", "-wal", "-shm", "-journal" };
	char	name[4096 + 64];
	size_t	i;

	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", path, sides[i]);
		unlink(name);
	}
}

static int64_t
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* Copies every page of from's main database into to's, in steps of
 * BACKUP_STEP_PAGES; from's read transaction, if it has one, is the
 * snapshot copied.  0 or -1 with e set. */
static int
copy(sqlite3 *from, sqlite3 *to, const char *to_path, int64_t *pages,
    struct error *e)
{
	sqlite3_backup	*b;
	int		 rc;

	if ((b = sqlite3_backup_init(to, "main", from, "main")) == NULL)
		return failed(to, e, to_path, "cannot start the copy");
	while ((rc = sqlite3_backup_step(b, BACKUP_STEP_PAGES)) ==
	    SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		if (rc != SQLITE_OK)
			sqlite3_sleep(5);
	*pages = sqlite3_backup_pagecount(b);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE)
		return error_set(e, ERR_UNAVAILABLE, NULL, "%s: copy failed: "
		    "%s", to_path, sqlite3_errstr(rc));
	return 0;
}

int
store_backup(const struct settings *s, const char *to,
    struct store_copy *c, struct error *e)
{
	sqlite3		*src = NULL, *dst = NULL;
	int64_t		 v;
	int		 rc = -1;

	memset(c, 0, sizeof(*c));
	if (access(s->db_path, F_OK) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL, "%s: %s (run "
		    "evalgate-admin init)", s->db_path, strerror(errno));
	if ((src = open_file(s->db_path, SQLITE_OPEN_READWRITE, e)) == NULL ||
	    (dst = open_file(to, SQLITE_OPEN_READWRITE, e)) == NULL)
		goto out;
	/* The snapshot: a read transaction held until the copy is done.
	 * Without it each step would see the writes of the last and start
	 * over, and under load never end. */
	if (run(src, STMT_BEGIN, e, s->db_path, "begin") == -1 ||
	    integer(src, STMT_DECISION_COUNT, &c->decisions, e,
	    s->db_path) == -1 ||
	    integer(src, STMT_USER_VERSION, &v, e, s->db_path) == -1)
		goto out;
	c->version = (int)v;
	if (copy(src, dst, to, &c->pages, e) == -1)
		goto out;
	sqlite3_exec(src, store_sql[STMT_COMMIT], NULL, NULL, NULL);
	sqlite3_close(dst);
	/* The copy's header says WAL, as the database's does: one file is
	 * easier to keep, so it is turned to a rollback journal. */
	if ((dst = open_file(to, SQLITE_OPEN_READWRITE, e)) == NULL ||
	    run(dst, STMT_JOURNAL_DELETE, e, to, "journal mode") == -1)
		goto out;
	rc = 0;
out:
	sqlite3_close(src);
	sqlite3_close(dst);
	c->bytes = file_size(to);
	return rc;
}

int
store_backup_check(const char *path, struct store_copy *c,
    struct error *e)
{
	sqlite3		*db;
	sqlite3_stmt	*stmt = NULL;
	const char	*first;
	int64_t		 v, tables;
	int		 rc = -1, want;

	memset(c, 0, sizeof(*c));
	if ((db = open_file(path, SQLITE_OPEN_READONLY, e)) == NULL)
		return -1;
	if (sqlite3_prepare_v2(db, store_sql[STMT_INTEGRITY], -1, &stmt,
	    NULL) != SQLITE_OK || sqlite3_step(stmt) != SQLITE_ROW) {
		failed(db, e, path, "not a sound SQLite database");
		goto out;
	}
	first = (const char *)sqlite3_column_text(stmt, 0);
	if (first == NULL || strcmp(first, "ok") != 0) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: corrupt: "
		    "integrity_check says: %.200s", path, first ? first : "?");
		goto out;
	}
	want = store_schema_version();
	if (integer(db, STMT_USER_VERSION, &v, e, path) == -1 ||
	    integer(db, STMT_EVALGATE_TABLES, &tables, e, path) == -1)
		goto out;
	if (v < 1 || tables != 6) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: not an evalgate "
		    "database", path);
		goto out;
	}
	if (v > want) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: schema version %lld "
		    "is newer than this program's (%d)", path, (long long)v,
		    want);
		goto out;
	}
	c->version = (int)v;
	if (integer(db, STMT_DECISION_COUNT, &c->decisions, e, path) == -1)
		goto out;
	c->bytes = file_size(path);
	rc = 0;
out:
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return rc;
}

/* fsync of the directory holding path, so that a rename lasts. */
static void
sync_dir(const char *path)
{
	char		 dir[4096];
	const char	*slash = strrchr(path, '/');
	int		 fd;

	snprintf(dir, sizeof(dir), "%.*s", slash == NULL ? 1 : slash == path ?
	    1 : (int)(slash - path), slash == NULL ? "." : path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		fsync(fd);
		close(fd);
	}
}

static int
refuse_in_use(const char *path, struct error *e)
{
	long pid;

	if (!store_in_use(path, &pid))
		return 0;
	return error_set(e, ERR_CONFLICT, NULL, "%s is in use by process %ld "
	    "(a running gateway?): stop the web server before restoring",
	    path, pid);
}

int
store_restore(const struct settings *s, const char *from,
    struct store_copy *c, struct error *e)
{
	sqlite3		*src = NULL, *dst = NULL;
	char		 tmp[sizeof(s->db_path) + 32], dir[sizeof(s->db_path)];
	char		*slash;
	int64_t		 v, pages;
	mode_t		 mask;
	int		 fd, rc = -1;

	if (store_backup_check(from, c, e) == -1 ||
	    refuse_in_use(s->db_path, e) == -1)
		return -1;
	snprintf(dir, sizeof(dir), "%s", s->db_path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0777) == -1 && errno != EEXIST)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "cannot create %s: %s", dir, strerror(errno));
	}
	snprintf(tmp, sizeof(tmp), "%s.restore-XXXXXX", s->db_path);
	if ((fd = mkstemp(tmp)) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL, "%s: %s", tmp,
		    strerror(errno));
	/* mkstemp() makes it 0600; the database is 0666 less the umask,
	 * as store_init() creates it (0660 for SERVICE_GROUP_WRITABLE). */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	close(fd);
	if ((src = open_file(from, SQLITE_OPEN_READONLY, e)) == NULL ||
	    (dst = open_file(tmp, SQLITE_OPEN_READWRITE, e)) == NULL ||
	    copy(src, dst, tmp, &pages, e) == -1)
		goto out;
	sqlite3_close(src);
	src = NULL;
	sqlite3_close(dst);
	/* Reopened: the header the copy brought decides its journal. */
	if ((dst = open_file(tmp, SQLITE_OPEN_READWRITE, e)) == NULL ||
	    run(dst, STMT_JOURNAL_WAL, e, tmp, "journal mode") == -1 ||
	    sqlite_migrate(dst, from, NULL, e) == -1 ||
	    integer(dst, STMT_USER_VERSION, &v, e, tmp) == -1)
		goto out;
	c->migrated = (int)v;
	c->pages = pages;
	sqlite3_close(dst);		/* checkpoints and removes its WAL */
	dst = NULL;
	/* Checked again, as late as can be: a gateway started meanwhile
	 * keeps the database it has. */
	if (refuse_in_use(s->db_path, e) == -1)
		goto out;
	/* A WAL left by a stopped gateway belongs to the old file, and
	 * SQLite would read it into the new one. */
	remove_files(s->db_path);
	if (rename(tmp, s->db_path) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "rename %s to %s: %s",
		    tmp, s->db_path, strerror(errno));
		goto out;
	}
	sync_dir(s->db_path);
	remove_files(s->cache_path);
	/* The day's running totals there count the old database's calls:
	 * the workers rebuild them from the restored counters. */
	unlink(s->shm_path);
	c->bytes = file_size(s->db_path);
	rc = 0;
out:
	sqlite3_close(src);
	sqlite3_close(dst);
	remove_files(tmp);	/* what is left of it, if anything */
	return rc;
}
