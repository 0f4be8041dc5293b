/* store_sqlite_cache.c: replica cool-downs in the cache file, shared by every
 * worker.  Like the key memo, these never fail the request: a cache that
 * does not answer reads as "no cool-down" and a lost write is harmless.
 *
 * A replica that fails is rare, and looking for its cool-down is a read
 * transaction on every remote call.  So each cool-down written moves
 * SHM_COUNTER_COOLDOWNS after its commit, and a lookup that finds the
 * cache holding none sets SHM_COUNTER_COOLDOWNS_NONE to the count it
 * read before it looked: while the two are equal, nothing is looked
 * up.  A writer that dies between its commit and the count leaves its
 * cool-down unseen until the next: the replica is asked, fails again
 * and rests.  A cool-down that ended more than STORE_COOLDOWN_FORGET_MS
 * ago, its replica not asked since (its backend gone, say), is none. */
#include "config.h"

#include "clock.h"
#include "log.h"
#include "shm.h"
#include "shm_counter.h"
#include "store_sqlite.h"

int64_t
sq_cooldown_until(struct store *st, const char *url)
{
	struct error	 e = { 0 };
	struct shm	*m = shm_host();
	sqlite3_stmt	*stmt;
	uint64_t	 written, none;
	int64_t		 until = 0;
	int		 counted, rc;

	counted = shm_counter(m, SHM_COUNTER_COOLDOWNS, &written) == 0 &&
	    shm_counter(m, SHM_COUNTER_COOLDOWNS_NONE, &none) == 0;
	if (counted && written == none)
		return 0;
	if ((stmt = sqlite_stmt(st, STMT_COOLDOWN_GET, &e)) != NULL) {
		sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 2,
		    clock_now_ms() - STORE_COOLDOWN_FORGET_MS);
		if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
			until = sqlite3_column_int64(stmt, 0);
			if (counted && sqlite3_column_int(stmt, 1) == 0)
				shm_counter_set(m, SHM_COUNTER_COOLDOWNS_NONE,
				    written);
		} else
			sqlite_fail(st, &e, "cool-down");
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

	if (sqlite_queue_enter(st, TX_CACHE, &e) == 0 &&
	    (stmt = sqlite_stmt(st, until_ms > 0 ? STMT_COOLDOWN_PUT :
	    STMT_COOLDOWN_DEL, &e)) != NULL) {
		sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC);
		if (until_ms > 0)
			sqlite3_bind_int64(stmt, 2, until_ms);
		sqlite_exec_stmt(st, stmt, &e, "cool-down");
	}
	if (until_ms > 0)	/* committed: lookups look again */
		shm_counter_next(shm_host(), SHM_COUNTER_COOLDOWNS);
	sqlite_queue_leave(st, TX_CACHE);
	error_clear(&e);
}
