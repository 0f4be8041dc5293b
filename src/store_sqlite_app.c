/* store_sqlite_app.c: applications, API keys, and the authentication
 * cache, in SQLite. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "store_sqlite.h"

static void
read_app(sqlite3_stmt *stmt, struct app *a)
{
	memset(a, 0, sizeof(*a));
	a->id = sqlite3_column_int64(stmt, 0);
	sqlite_col_text(stmt, 1, a->name, sizeof(a->name));
	a->log_state = sqlite3_column_int(stmt, 2);
	a->is_admin = sqlite3_column_int(stmt, 3);
	a->rate_per_minute = sqlite3_column_int64(stmt, 4);
	a->daily_quota = sqlite3_column_int64(stmt, 5);
	a->created_at = sqlite3_column_int64(stmt, 6);
	a->retention_days = sqlite3_column_type(stmt, 7) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(stmt, 7);
}

static void
read_app_v(sqlite3_stmt *stmt, void *out)
{
	read_app(stmt, out);
}

int
sq_app_insert(struct store *st, struct app *a, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_APP_INSERT, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, a->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 2, a->log_state);
	sqlite3_bind_int(stmt, 3, a->is_admin);
	sqlite_bind_optional(stmt, 4, a->rate_per_minute);
	sqlite_bind_optional(stmt, 5, a->daily_quota);
	sqlite3_bind_int64(stmt, 6, a->created_at);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc == SQLITE_CONSTRAINT || (rc & 0xff) == SQLITE_CONSTRAINT)
		return error_set(e, ERR_CONFLICT, "name",
		    "an application named '%s' exists", a->name);
	if (rc != SQLITE_DONE)
		return sqlite_fail(st, e, "insert application");
	a->id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int
sq_app_update(struct store *st, const struct app *a, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_APP_UPDATE, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, a->id);
	sqlite3_bind_int(stmt, 2, a->log_state);
	sqlite_bind_optional(stmt, 3, a->rate_per_minute);
	sqlite_bind_optional(stmt, 4, a->daily_quota);
	if (a->retention_days >= 0)
		sqlite3_bind_int64(stmt, 5, a->retention_days);
	else
		sqlite3_bind_null(stmt, 5);
	return sqlite_exec_stmt(st, stmt, e, "update application");
}

int
sq_app_by_name(struct store *st, const char *name, struct app *a,
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_APP_BY_NAME, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	rc = sqlite_lookup(st, stmt, e, "application", read_app_v, a);
	return store_bad_row(rc, rc == 1 ? bound_app(a, e) : 0, e);
}

int
sq_app_by_id(struct store *st, int64_t id, struct app *a,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	char		 key[24];
	int		 rc;

	snprintf(key, sizeof(key), "%lld", (long long)id);
	if (kept_get(st->kept, KEPT_APP, key, a))
		return 1;
	if ((stmt = sqlite_stmt(st, STMT_APP_BY_ID, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite_lookup(st, stmt, e, "application", read_app_v, a);
	if ((rc = store_bad_row(rc, rc == 1 ? bound_app(a, e) : 0, e)) == 1)
		kept_put(st->kept, KEPT_APP, key, a);
	return rc;
}

int
sq_app_each(struct store *st, void (*fn)(const struct app *, void *),
    void *arg, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_APP_ALL, e);
	struct app	 a;
	int		 rc;

	if (stmt == NULL)
		return -1;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		read_app(stmt, &a);
		if (store_bad_row(1, bound_app(&a, e), e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
		fn(&a, arg);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "applications");
}

static void
read_key(sqlite3_stmt *stmt, void *out)
{
	struct key_row *k = out;

	memset(k, 0, sizeof(*k));
	sqlite_col_text(stmt, 0, k->prefix, sizeof(k->prefix));
	k->app_id = sqlite3_column_int64(stmt, 1);
	sqlite_col_text(stmt, 2, k->hash, sizeof(k->hash));
	k->created_at = sqlite3_column_int64(stmt, 3);
	k->expires_at = sqlite3_column_int64(stmt, 4);
	k->revoked_at = sqlite3_column_int64(stmt, 5);
	if (sqlite3_column_bytes(stmt, 6) == (int)sizeof(k->check)) {
		memcpy(k->check, sqlite3_column_blob(stmt, 6), sizeof(k->check));
		k->has_check = 1;
	}
}

int
sq_key_insert(struct store *st, const struct key_row *k, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_KEY_INSERT, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, k->prefix, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, k->app_id);
	sqlite3_bind_text(stmt, 3, k->hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, k->created_at);
	sqlite_bind_optional(stmt, 5, k->expires_at);
	if (k->has_check)
		sqlite3_bind_blob(stmt, 6, k->check, sizeof(k->check),
		    SQLITE_STATIC);
	return sqlite_exec_stmt(st, stmt, e, "insert key");
}

int
sq_key_set_check(struct store *st, const char *prefix,
    const unsigned char check[32], struct error *e)
{
	sqlite3_stmt *stmt;

	if (sq_begin(st, e) == -1)
		return -1;
	if ((stmt = sqlite_stmt(st, STMT_KEY_SET_CHECK, e)) == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, prefix, -1, SQLITE_STATIC);
	sqlite3_bind_blob(stmt, 2, check, 32, SQLITE_STATIC);
	if (sqlite_exec_stmt(st, stmt, e, "key check") == 0 &&
	    sq_commit(st, e) == 0)
		return 0;
fail:
	sq_rollback(st);
	return -1;
}

int
sq_key_by_prefix(struct store *st, const char *prefix, struct key_row *k,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if (kept_get(st->kept, KEPT_KEY, prefix, k))
		return 1;
	if ((stmt = sqlite_stmt(st, STMT_KEY_BY_PREFIX, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, prefix, -1, SQLITE_STATIC);
	rc = sqlite_lookup(st, stmt, e, "key", read_key, k);
	if ((rc = store_bad_row(rc, rc == 1 ? bound_key(k, e) : 0, e)) == 1)
		kept_put(st->kept, KEPT_KEY, prefix, k);
	return rc;
}

int
sq_key_revoke(struct store *st, const char *prefix, int64_t now,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_KEY_REVOKE, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, prefix, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, now);
	if (sqlite_exec_stmt(st, stmt, e, "revoke key") == -1)
		return -1;
	return sqlite3_changes(st->db) > 0;
}

int
sq_key_each(struct store *st, int64_t app_id,
    void (*fn)(const struct key_row *, const char *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_KEY_ALL, e);
	struct key_row	 k;
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		read_key(stmt, &k);
		fn(&k, (const char *)sqlite3_column_text(stmt, 7), arg);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "keys");
}

int
sq_memo_has(struct store *st, const unsigned char mac[32],
    const char *prefix)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_MEMO_HAS, &e);
	int		 hit;

	error_clear(&e);
	if (stmt == NULL)
		return 0;
	sqlite3_bind_blob(stmt, 1, mac, 32, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, prefix, -1, SQLITE_STATIC);
	hit = sqlite3_step(stmt) == SQLITE_ROW;
	sqlite3_reset(stmt);
	return hit;
}

void
sq_memo_put(struct store *st, const unsigned char mac[32],
    const char *prefix, int64_t now_ms)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt;

	sq_read_end(st);	/* a write must not upgrade a stale snapshot */
	if (sqlite_queue_enter(st, TX_CACHE, &e) == 0 &&
	    (stmt = sqlite_stmt(st, STMT_MEMO_PUT, &e)) != NULL) {
		sqlite3_bind_blob(stmt, 1, mac, 32, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, prefix, -1, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 3, now_ms);
		sqlite_exec_stmt(st, stmt, &e, "key memo");
	}
	sqlite_queue_leave(st, TX_CACHE);
	error_clear(&e);
}
