/* store_cache.c: replica cool-downs in the cache file, shared by every
 * worker.  Like the key memo, these never fail the request: a cache that
 * does not answer reads as "no cool-down" and a lost write is harmless. */
#include "config.h"

#include "log.h"
#include "store_sqlite.h"

int64_t
sq_cooldown_until(struct store *st, const char *url)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt = store_stmt(st, STMT_COOLDOWN_GET, &e);
	int64_t		 until = 0;
	int		 rc;

	if (stmt != NULL) {
		sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC);
		if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
			until = sqlite3_column_int64(stmt, 0);
		else if (rc != SQLITE_DONE)
			store_fail(st, &e, "cool-down");
		sqlite3_reset(stmt);
	}
	if (stmt == NULL)
		log_warn("cool-down: %s", e.message);
	error_clear(&e);	/* logged: the replica is tried */
	return until;
}

/* until_ms <= 0 removes the row: the replica is well again. */
void
sq_cooldown_set(struct store *st, const char *url, int64_t until_ms)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt;

	if (store_queue_enter(st, TX_CACHE, &e) == 0 &&
	    (stmt = store_stmt(st, until_ms > 0 ? STMT_COOLDOWN_PUT :
	    STMT_COOLDOWN_DEL, &e)) != NULL) {
		sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC);
		if (until_ms > 0)
			sqlite3_bind_int64(stmt, 2, until_ms);
		store_exec_stmt(st, stmt, &e, "cool-down");
	}
	store_queue_leave(st, TX_CACHE);
	error_clear(&e);
}
