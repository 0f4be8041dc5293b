/* store_quota.c: the rate window and the day's running quota (cache),
 * and the day's quota counter (database). */
#include "store_internal.h"

static const char SQL_TAT[] =
	"SELECT tat_ms FROM cache.rate_windows WHERE app_id = ?1";
static const char SQL_USED[] =
	"SELECT max(coalesce((SELECT used FROM cache.quota_today"
	" WHERE app_id = ?1 AND day = ?2), 0),"
	" coalesce((SELECT used FROM quota_days"
	" WHERE app_id = ?1 AND day = ?2), 0))";
static const char SQL_TAT_SET[] =
	"INSERT INTO cache.rate_windows (app_id, tat_ms) VALUES (?1, ?2)"
	" ON CONFLICT (app_id) DO UPDATE SET tat_ms = excluded.tat_ms";
static const char SQL_RUNNING_SET[] =
	"INSERT INTO cache.quota_today (app_id, day, used) VALUES (?1, ?2, ?3)"
	" ON CONFLICT (app_id) DO UPDATE SET day = excluded.day,"
	" used = excluded.used";
static const char SQL_USED_ADD[] =
	"INSERT INTO quota_days (app_id, day, used) VALUES (?1, ?2, ?3)"
	" ON CONFLICT (app_id, day) DO UPDATE SET used = used + excluded.used";

/* The single integer a query returns, or 0 without a row. */
static int
one(struct store *st, sqlite3_stmt *stmt, int64_t *out, struct error *e)
{
	int rc = sqlite3_step(stmt);

	*out = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
	sqlite3_reset(stmt);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    store_fail(st, e, "admission");
}

int
store_admission_read(struct store *st, int64_t app_id, const char *day,
    int64_t *tat_ms, int64_t *used, struct error *e)
{
	sqlite3_stmt *stmt;

	if ((stmt = store_stmt(st, SQL_TAT, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	if (one(st, stmt, tat_ms, e) == -1 ||
	    (stmt = store_stmt(st, SQL_USED, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	return one(st, stmt, used, e);
}

int
store_admission_write(struct store *st, int64_t app_id, const char *day,
    int64_t tat_ms, int64_t used, int write_used, struct error *e)
{
	sqlite3_stmt *stmt;

	if ((stmt = store_stmt(st, SQL_TAT_SET, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_int64(stmt, 2, tat_ms);
	if (store_exec_stmt(st, stmt, e, "rate window") == -1)
		return -1;
	if (!write_used)
		return 0;
	if ((stmt = store_stmt(st, SQL_RUNNING_SET, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 3, used);
	return store_exec_stmt(st, stmt, e, "quota");
}

int
store_quota_add(struct store *st, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	sqlite3_stmt *stmt;

	if (units <= 0)
		return 0;
	if ((stmt = store_stmt(st, SQL_USED_ADD, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, day, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 3, units);
	return store_exec_stmt(st, stmt, e, "quota");
}

int
store_quota_charge(struct store *st, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	if (units <= 0)
		return 0;
	if (store_begin(st, e) == -1)
		return -1;
	if (store_quota_add(st, app_id, day, units, e) == -1 ||
	    store_commit(st, e) == -1) {
		store_rollback(st);
		return -1;
	}
	return 0;
}
