/* store_vfs_test.c: TAP tests of the VFS layer that writes a commit's
 * WAL frames at once (src/store_sqlite_vfs.c), with real files and real
 * processes.  What a commit wrote must be in the file when the commit
 * returns: a process that reads through SQLite's own unix VFS sees it
 * at once, and a writer that dies without closing loses nothing it
 * committed.  Transactions larger than a batch, rolled back, and
 * around a checkpoint that restarts the WAL are written whole. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store_sqlite_vfs.h"
#include "tap.h"

static char	path[256];

static sqlite3 *
open_with(const char *vfs)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, vfs) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL;"
	    " PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;",
	    NULL, NULL, NULL) != SQLITE_OK) {
		printf("# open %s: %s\n", path, db ? sqlite3_errmsg(db) : "?");
		exit(1);
	}
	return db;
}

static int
exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
	return rc;
}

/* Rows and total bytes of t, and PRAGMA integrity_check, as another
 * process reading through SQLite's unix VFS sees them: "rows bytes ok". */
static void
seen_elsewhere(char *out, size_t size)
{
	int	 fd[2];
	pid_t	 pid;
	ssize_t	 n;

	if (pipe(fd) == -1 || (pid = fork()) == -1)
		exit(1);
	if (pid == 0) {
		sqlite3		*db = NULL;
		sqlite3_stmt	*st = NULL;
		char		 line[128] = "?";

		close(fd[0]);
		if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
		    "unix") == SQLITE_OK && sqlite3_prepare_v2(db,
		    "SELECT count(*), coalesce(sum(length(v)), 0),"
		    " (SELECT integrity_check FROM pragma_integrity_check)"
		    " FROM t", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			snprintf(line, sizeof(line), "%lld %lld %s",
			    sqlite3_column_int64(st, 0),
			    sqlite3_column_int64(st, 1),
			    (const char *)sqlite3_column_text(st, 2));
		(void)write(fd[1], line, strlen(line));
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
}

/* Inserts n rows of size random bytes each, in one statement. */
static int
insert(sqlite3 *db, int n, int size)
{
	char sql[200];

	snprintf(sql, sizeof(sql), "WITH RECURSIVE s(i) AS (SELECT 1 UNION"
	    " ALL SELECT i + 1 FROM s WHERE i < %d) INSERT INTO t (v)"
	    " SELECT randomblob(%d) FROM s", n, size);
	return exec(db, sql);
}

static void
expect(long long rows, long long bytes, const char *what)
{
	char got[128], want[128];

	seen_elsewhere(got, sizeof(got));
	snprintf(want, sizeof(want), "%lld %lld ok", rows, bytes);
	is_str(got, want, what);
}

int
main(void)
{
	char		 dir[] = "/tmp/evalgate-vfs-XXXXXX";
	sqlite3		*db;
	sqlite3_vfs	*v;
	struct stat	 sb;
	long long	 rows = 0, bytes = 0;
	pid_t		 pid;
	int		 i, status;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/t.db", dir);

	ok(store_sqlite_vfs_register() == 0, "the layer registers");
	ok(store_sqlite_vfs_register() == 0, "a second time is nothing");
	v = sqlite3_vfs_find(NULL);
	ok(v != NULL && strcmp(v->zName, "evalgate") == 0,
	    "it is the default VFS");

	db = open_with(NULL);
	ok(exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)") ==
	    SQLITE_OK, "a table is created through it");
	expect(0, 0, "another process sees the new table");

	/* Small commits, each seen elsewhere the moment it returns. */
	for (i = 1; i <= 20; i++) {
		insert(db, 1, 100 * i);
		rows++;
		bytes += 100 * i;
	}
	expect(rows, bytes, "twenty small commits are in the file");

	/* One commit of about 300 KiB: several batches. */
	ok(insert(db, 150, 2000) == SQLITE_OK, "a large commit");
	rows += 150;
	bytes += 150 * 2000;
	expect(rows, bytes, "a commit larger than a batch is whole");

	/* A transaction that spills pages to the WAL before it is rolled
	 * back, then a commit over the same frames. */
	exec(db, "PRAGMA cache_size=5");
	exec(db, "BEGIN");
	insert(db, 60, 3000);
	ok(exec(db, "ROLLBACK") == SQLITE_OK, "a spilled transaction rolls"
	    " back");
	exec(db, "PRAGMA cache_size=-2000");
	insert(db, 2, 500);
	rows += 2;
	bytes += 1000;
	expect(rows, bytes, "a rollback leaves nothing and the next commit"
	    " is whole");

	/* The WAL starts over after a restarting checkpoint. */
	ok(exec(db, "PRAGMA wal_checkpoint(RESTART)") == SQLITE_OK,
	    "a restarting checkpoint");
	insert(db, 3, 700);
	rows += 3;
	bytes += 2100;
	expect(rows, bytes, "commits after the WAL started over are whole");
	ok(stat(path, &sb) == 0, "the database file is there");

	/* A writer that dies without closing: what it committed stays. */
	if ((pid = fork()) == 0) {
		sqlite3 *w = open_with(NULL);

		insert(w, 4, 900);
		insert(w, 1, 50);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	rows += 5;
	bytes += 4 * 900 + 50;
	expect(rows, bytes, "a writer that exits without closing loses"
	    " nothing committed");

	/* And the writer here goes on after it. */
	insert(db, 1, 10);
	rows++;
	bytes += 10;
	expect(rows, bytes, "the first connection writes after it");
	ok(sqlite3_close(db) == SQLITE_OK, "the connection closes");
	expect(rows, bytes, "closed, the file holds everything");

	unlink(path);
	snprintf(path, sizeof(path), "%s/t.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.db-shm", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
