/* store_sqlite_quota.c: the admission row of an application (cache, for a
 * host without the shared memory) and the day's quota counter
 * (database). */
#include "config.h"

#include "store_sqlite.h"

/* The arrival time, and the day's units: the larger of the cache's
 * running total and the database's counter (store.h). */
int
sq_admission_read(struct store *st, int64_t app_id, const char *day,
    int64_t *tat_ms, int64_t *tat_rate, int64_t *tat_at_ms, int64_t *used,
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_ADMISSION, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		*tat_ms = sqlite3_column_int64(stmt, 0);
		*tat_rate = sqlite3_column_int64(stmt, 1);
		*tat_at_ms = sqlite3_column_int64(stmt, 2);
		*used = sqlite3_column_int64(stmt, 3);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW ? 0 : sqlite_fail(st, e, "admission");
}

int
sq_admission_write(struct store *st, int64_t app_id, const char *day,
    int64_t tat_ms, int64_t rate, int64_t at_ms, int64_t used,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_ADMISSION_SET, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_int64(stmt, 2, tat_ms);
	sqlite3_bind_text(stmt, 3, day, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, used);
	sqlite3_bind_int64(stmt, 5, rate);
	sqlite3_bind_int64(stmt, 6, at_ms);
	return sqlite_exec_stmt(st, stmt, e, "admission");
}

int
sqlite_quota_add(struct store *st, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	sqlite3_stmt *stmt;

	if (units <= 0)
		return 0;
	if ((stmt = sqlite_stmt(st, STMT_USED_ADD, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 3, units);
	return sqlite_exec_stmt(st, stmt, e, "quota");
}

int
sq_quota_charge(struct store *st, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	if (units <= 0)
		return 0;
	if (sq_begin(st, e) == -1)
		return -1;
	if (sqlite_quota_add(st, app_id, day, units, e) == -1 ||
	    sq_commit(st, e) == -1) {
		sq_rollback(st);
		return -1;
	}
	return 0;
}

int
sq_quota_used(struct store *st, int64_t app_id, const char *day,
    int64_t *used, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_USED_GET, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	*used = 0;
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		*used = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    sqlite_fail(st, e, "quota");
}
