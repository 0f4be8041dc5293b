/* store_columns.h: the columns a catalog row is read from, in the order
 * both engines' readers take them (store_sqlite_app.c and
 * store_sqlite_catalog.c, store_pg_app.c and store_pg_catalog.c).  The
 * two schemas have the same tables and columns (sql/pg/schema.sql), so
 * one list serves both statement tables. */
#ifndef EVALGATE_STORE_COLUMNS_H
#define EVALGATE_STORE_COLUMNS_H

#define APP_COLS "id, name, log_state, is_admin, rate_per_minute," \
	" daily_quota, created_at, retention_days"
#define KEY_COLS "prefix, app_id, hash, created_at, expires_at, revoked_at," \
	" secret_check"
#define BACKEND_COLS "id, name, kind, model, auth_env, description," \
	" release_date, enabled, timeout_ms, max_in_flight, options"
#define VERSION_COLS "v.schema_id, s.slug, v.version, v.questions," \
	" v.fingerprint, v.backend_id, v.temperature, v.abstain_threshold," \
	" v.created_at FROM schema_versions v JOIN schemas s" \
	" ON s.id = v.schema_id"
#define TEMPLATE_COLS "v.template_id, t.slug, v.version, v.body," \
	" v.variables, v.escape_html, v.created_at FROM template_versions v" \
	" JOIN templates t ON t.id = v.template_id"

#endif
