/* store_sqlite_retention.c: what keeps the database bounded
 * (doc/design.md, section 11.1): pruning decisions in small steps, each its
 * own short write transaction, so that no evaluation waits long behind
 * it and an interrupted prune can simply be run again; the statements
 * of the workers' automatic retention (its policy is
 * store_retention.c's): clearing old kept states; giving the freed pages
 * back (incremental vacuum); and the
 * offline compaction that turns an old file to incremental
 * auto-vacuum. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "settings.h"
#include "store_sqlite.h"

/* SQLite's unix VFS: every connection holds a read lock on this byte of
 * the WAL index (the -shm file) for as long as it is open. */

int
sq_prune_step(struct store *st, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	static const enum stmt del[] = { STMT_PRUNE_OUTCOMES,
	    STMT_PRUNE_CHALLENGERS, STMT_PRUNE_DECISION };
	char		 ids[STORE_PRUNE_BATCH][UUID7_LEN + 1];
	char		 last_id[UUID7_LEN + 1];
	sqlite3_stmt	*stmt;
	int64_t		 t, last_ms = q->cursor_ms;
	int		 rc, seen = 0, n = 0, has_outcome;
	size_t		 i, j;

	snprintf(last_id, sizeof(last_id), "%s", q->cursor_id);
	if (sq_begin(st, e) == -1)
		return -1;
	if ((stmt = sqlite_stmt(st, STMT_PRUNE_PICK, e)) == NULL)
		goto fail;
	sqlite3_bind_int64(stmt, 1, q->before_ms);
	sqlite3_bind_int64(stmt, 2, q->app_id);
	sqlite3_bind_int64(stmt, 3, q->cursor_ms);
	sqlite3_bind_text(stmt, 4, q->cursor_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 5, STORE_PRUNE_BATCH);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite_col_text(stmt, 0, last_id, sizeof(last_id));
		t = last_ms = sqlite3_column_int64(stmt, 1);
		has_outcome = sqlite3_column_int(stmt, 2);
		seen++;
		if (!has_outcome || t < q->outcome_before_ms)
			memcpy(ids[n++], last_id, sizeof(last_id));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		sqlite_fail(st, e, "pick decisions to prune");
		goto fail;
	}
	/* Outcomes and answers first: they refer to the decision. */
	for (i = 0; i < (size_t)n; i++)
		for (j = 0; j < sizeof(del) / sizeof(del[0]); j++) {
			if ((stmt = sqlite_stmt(st, del[j], e)) == NULL)
				goto fail;
			sqlite3_bind_text(stmt, 1, ids[i], -1, SQLITE_STATIC);
			if (sqlite_exec_stmt(st, stmt, e, "prune") == -1)
				goto fail;
		}
	if (sq_commit(st, e) == -1)
		return -1;
	q->cursor_ms = last_ms;
	snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", last_id);
	*deleted += n;
	return seen == STORE_PRUNE_BATCH;
fail:
	sq_rollback(st);
	return -1;
}

/* One step of incremental vacuum: 1 pages were freed, 0 none was left
 * to free, -1 failed. */
static int
vacuum_step(struct store *st, struct error *e)
{
	sqlite3_stmt	*stmt;
	int64_t		 free_pages = 0;

	sq_read_end(st);
	if ((stmt = sqlite_stmt(st, STMT_FREELIST, e)) == NULL)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		free_pages = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (free_pages == 0)
		return 0;
	if (sqlite_queue_enter(st, TX_DATABASE, e) == -1)
		return -1;
	free_pages = (stmt = sqlite_stmt(st, STMT_VACUUM_STEP, e)) == NULL ||
	    sqlite_exec_stmt(st, stmt, e, "incremental vacuum") == -1 ? -1 : 1;
	sqlite_queue_leave(st, TX_DATABASE);
	return (int)free_pages;
}

int
sq_vacuum(struct store *st, int max_steps, struct error *e)
{
	int i, rc = 1;

	for (i = 0; i < max_steps && rc == 1; i++)
		if ((rc = vacuum_step(st, e)) == -1)
			return -1;
	/* The file is cut to its new size when a checkpoint has copied
	 * the whole WAL back; it waits for readers only briefly. */
	st->busy_limit_ms = STORE_CKPT_WAIT_MS;
	if (sqlite_queue_enter(st, TX_DATABASE, e) == 0) {
		sqlite3_wal_checkpoint_v2(st->db, "main",
		    SQLITE_CHECKPOINT_RESTART, NULL, NULL);
		sqlite_queue_leave(st, TX_DATABASE);
	}
	error_clear(e);
	st->busy_limit_ms = STORE_BUSY_TIMEOUT_MS;
	return 0;
}

/* Automatic retention's statements (store_engine.h: STORE_HOOKS); its
 * policy is store_retention.c's. */
int
sq_retain_begin(struct store *st)
{
	/* Never long behind a writer: given up, it is tried next time. */
	st->busy_limit_ms = STORE_RETAIN_WAIT_MS;
	return 0;
}

void
sq_retain_end(struct store *st)
{
	st->busy_limit_ms = STORE_BUSY_TIMEOUT_MS;
}

/* The state kept by the oldest decisions created before before_ms, a
 * batch of them, in a transaction of its own. */
int
sq_retain_states(struct store *st, int64_t before_ms, struct error *e)
{
	sqlite3_stmt *stmt;

	if (sq_begin(st, e) == -1)
		return -1;
	if ((stmt = sqlite_stmt(st, STMT_STATE_CLEAR, e)) == NULL)
		goto fail;
	sqlite3_bind_int64(stmt, 1, before_ms);
	sqlite3_bind_int(stmt, 2, STORE_PRUNE_BATCH);
	if (sqlite_exec_stmt(st, stmt, e, "clear states") == -1)
		goto fail;
	return sq_commit(st, e);
fail:
	sq_rollback(st);
	return -1;
}

int
sq_retain_next_app(struct store *st, int64_t after_id, int64_t default_days,
    int64_t *app_id, int64_t *days, struct error *e)
{
	sqlite3_stmt *stmt;

	if ((stmt = sqlite_stmt(st, STMT_RETAIN_NEXT_APP, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, after_id);
	sqlite3_bind_int64(stmt, 2, default_days);
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		sqlite3_reset(stmt);
		return 0;
	}
	*app_id = sqlite3_column_int64(stmt, 0);
	*days = sqlite3_column_int64(stmt, 1);
	sqlite3_reset(stmt);
	return 1;
}

int
sq_retain_prune(struct store *st, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	return sq_prune_step(st, q, deleted, e);
}

void
sq_retain_freed(struct store *st, struct error *e)
{
	(void)vacuum_step(st, e);
}

int
store_compact(const struct settings *s, struct error *e)
{
	sqlite3	*db = NULL;
	long	 pid;
	int	 rc = -1;

	if (store_in_use(s->db_path, &pid))
		return error_set(e, ERR_CONFLICT, NULL, "%s is open by a "
		    "running gateway (or another evalgate-admin, pid %ld): "
		    "stop the web server first", s->db_path, pid);
	if (access(s->db_path, F_OK) == -1)
		return error_set(e, ERR_NOT_FOUND, NULL, "%s: %s", s->db_path,
		    strerror(errno));
	if (sqlite3_open_v2(s->db_path, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		error_set(e, ERR_UNAVAILABLE, NULL, "cannot open %s: %s",
		    s->db_path, db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	if (sqlite3_exec(db, store_sql[STMT_AUTO_VACUUM], NULL, NULL, NULL) !=
	    SQLITE_OK ||
	    sqlite3_exec(db, store_sql[STMT_VACUUM], NULL, NULL, NULL) !=
	    SQLITE_OK) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: VACUUM: %s (it needs "
		    "as much free disk again as the file)", s->db_path,
		    sqlite3_errmsg(db));
		goto out;
	}
	rc = 0;
out:
	sqlite3_close(db);
	return rc;
}
