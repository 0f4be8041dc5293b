/* store_pg_sql.c: the statements of the PostgreSQL engine's core and
 * catalog, by name (enum pg_stmt in store_pg.h), in one table: what the
 * engine asks of PostgreSQL for connections, transactions, the schema's
 * version, the audit log, applications, keys, backends, schemas,
 * grants and templates.  Decisions, admission and retention have their
 * own table (store_pg_sql_data.c).  The tables themselves are in
 * sql/pg/.
 *
 * Each statement is the SQLite engine's (store_sqlite_sql.c) in
 * PostgreSQL's words: every value a parameter ($1, $2, ...), cast where
 * PostgreSQL could not infer its type; text compared and sorted byte by
 * byte, as SQLite does (the schema's COLLATE "C"). */
#include "config.h"

#include "store_columns.h"
#include "store_pg.h"


const char *const pg_core_sql[PG_STMT__MAX] = {
	/* Transactions, set-up and the audit log (store_pg.c). */
	[PG_BEGIN] = "BEGIN",
	[PG_COMMIT] = "COMMIT",
	[PG_ROLLBACK] = "ROLLBACK",
	[PG_SYNC_ON] = "SET synchronous_commit = on",
	[PG_SYNC_OFF] = "SET synchronous_commit = off",
	/* $1: "<PG_READY_WAIT_MS>ms", for the transaction only. */
	[PG_LOCK_TIMEOUT] = "SELECT set_config('lock_timeout', $1, true)",
	[PG_READY_READ] = "SELECT v FROM schema_version",
	/* Takes the row lock every catalog change takes; rolled back. */
	[PG_READY_WRITE] = "UPDATE catalog_generation SET n = n",
	/* Two inits at once: one waits for the other (any constant would
	 * do; this one is "evalgate" on a phone keypad). */
	[PG_INIT_LOCK] = "SELECT pg_advisory_xact_lock(38254283)",
	[PG_HAS_SCHEMA] = "SELECT to_regclass('schema_version') IS NOT NULL",
	[PG_VERSION] = "SELECT v FROM schema_version",
	[PG_VERSION_SET] = "UPDATE schema_version SET v = $1::integer",
	[PG_GENERATION] = "SELECT n FROM catalog_generation",
	[PG_AUDIT] =
	    "INSERT INTO audit_log (at_ms, actor, action, target, details)"
	    " VALUES ($1, $2, $3, $4, $5)",
	[PG_AUDIT_LAST] = "SELECT coalesce(max(at_ms), 0) FROM audit_log"
	    " WHERE action = $1 AND ($2::text IS NULL OR target = $2)",

	/* Applications and keys (store_pg_app.c). */
	[PG_APP_INSERT] =
	    "INSERT INTO applications (name, log_state, is_admin,"
	    " rate_per_minute, daily_quota, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
	[PG_APP_UPDATE] =
	    "UPDATE applications SET log_state = $2, rate_per_minute = $3,"
	    " daily_quota = $4, retention_days = $5 WHERE id = $1",
	[PG_APP_BY_NAME] =
	    "SELECT " APP_COLS " FROM applications WHERE name = $1",
	[PG_APP_BY_ID] =
	    "SELECT " APP_COLS " FROM applications WHERE id = $1",
	[PG_APP_ALL] = "SELECT " APP_COLS " FROM applications ORDER BY name",
	[PG_KEY_INSERT] =
	    "INSERT INTO api_keys (" KEY_COLS ")"
	    " VALUES ($1, $2, $3, $4, $5, NULL, $6)",
	[PG_KEY_SET_CHECK] =
	    "UPDATE api_keys SET secret_check = $2"
	    " WHERE prefix = $1 AND secret_check IS NULL",
	[PG_KEY_BY_PREFIX] =
	    "SELECT " KEY_COLS " FROM api_keys WHERE prefix = $1",
	[PG_KEY_REVOKE] =
	    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2)"
	    " WHERE prefix = $1",
	[PG_KEY_ALL] =
	    "SELECT k.prefix, k.app_id, k.hash, k.created_at, k.expires_at,"
	    " k.revoked_at, k.secret_check, a.name FROM api_keys k"
	    " JOIN applications a ON a.id = k.app_id"
	    " WHERE $1::bigint = 0 OR k.app_id = $1"
	    " ORDER BY a.name, k.created_at, k.prefix",

	/* The catalog (store_pg_catalog.c): backends, schemas, grants,
	 * templates. */
	[PG_BACKEND_INSERT] =
	    "INSERT INTO backends (name, kind, model, auth_env, description,"
	    " release_date, enabled, timeout_ms, created_at, max_in_flight,"
	    " options)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
	    " RETURNING id",
	[PG_BACKEND_UPDATE] =
	    "UPDATE backends SET model = $2, auth_env = $3, description = $4,"
	    " release_date = $5, enabled = $6, timeout_ms = $7,"
	    " max_in_flight = $8, options = $9 WHERE id = $1",
	[PG_REPLICAS_DELETE] =
	    "DELETE FROM backend_replicas WHERE backend_id = $1",
	[PG_REPLICA_INSERT] =
	    "INSERT INTO backend_replicas (backend_id, position, url)"
	    " VALUES ($1, $2, $3)",
	[PG_REPLICAS] =
	    "SELECT url FROM backend_replicas WHERE backend_id = $1"
	    " ORDER BY position",
	[PG_BACKEND_ENABLE] =
	    "UPDATE backends SET enabled = $2 WHERE name = $1",
	[PG_BACKEND_BY_NAME] =
	    "SELECT " BACKEND_COLS " FROM backends WHERE name = $1",
	[PG_BACKEND_BY_ID] =
	    "SELECT " BACKEND_COLS " FROM backends WHERE id = $1",
	[PG_BACKEND_ALL] =
	    "SELECT " BACKEND_COLS " FROM backends"
	    " WHERE $1::integer = 0 OR enabled = 1 ORDER BY name",
	/* A versioned kind (store_pg_catalog.c): its parent row for slug
	 * $1 (a duplicate is ignored), that row's id, and its next
	 * version. */
	[PG_SCHEMA_CREATE] =
	    "INSERT INTO schemas (slug, created_at) VALUES ($1, $2)"
	    " ON CONFLICT (slug) DO NOTHING",
	/* Locked: two publishes of one slug at once number their versions
	 * one after the other, as SQLite's one writer does. */
	[PG_SCHEMA_ID] = "SELECT id FROM schemas WHERE slug = $1 FOR UPDATE",
	[PG_SCHEMA_NEXT] =
	    "SELECT coalesce(max(version), 0) + 1 FROM schema_versions"
	    " WHERE schema_id = $1",
	[PG_VERSION_INSERT] =
	    "INSERT INTO schema_versions (schema_id, version, questions,"
	    " fingerprint, backend_id, temperature, abstain_threshold,"
	    " published, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8)",
	[PG_VERSION_GET] =
	    "SELECT " VERSION_COLS " WHERE s.slug = $1 AND v.published = 1"
	    " AND ($2::bigint = 0 OR v.version = $2)"
	    " ORDER BY v.version DESC LIMIT 1",
	[PG_VERSION_MATCH] =
	    "SELECT " VERSION_COLS
	    " WHERE v.fingerprint = $2 AND v.published = 1"
	    " AND EXISTS (SELECT 1 FROM grants g WHERE g.app_id = $1"
	    " AND g.schema_id = v.schema_id"
	    " AND (g.version = 0 OR g.version = v.version))"
	    " ORDER BY v.version DESC, v.created_at DESC, v.schema_id DESC"
	    " LIMIT 1",
	[PG_VERSION_MATCHED] =
	    "SELECT count(*) FROM schema_versions"
	    " WHERE fingerprint = $1 AND published = 1",
	[PG_VERSION_ALL] =
	    "SELECT " VERSION_COLS " WHERE ($1::text = '' OR s.slug = $1)"
	    " ORDER BY v.schema_id, v.version",
	[PG_GRANT] =
	    "INSERT INTO grants (app_id, schema_id, version, created_at)"
	    " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
	[PG_UNGRANT] =
	    "DELETE FROM grants WHERE app_id = $1 AND schema_id = $2"
	    " AND ($3::bigint = 0 OR version = $3)",
	[PG_GRANT_ALLOWS] =
	    "SELECT 1 FROM grants WHERE app_id = $1 AND schema_id = $2"
	    " AND (version = 0 OR version = $3) LIMIT 1",
	[PG_GRANT_LIST] =
	    "SELECT a.name, g.version, g.created_at FROM grants g"
	    " JOIN applications a ON a.id = g.app_id WHERE g.schema_id = $1"
	    " ORDER BY a.name, g.version",
	[PG_TEMPLATE_CREATE] =
	    "INSERT INTO templates (slug, created_at) VALUES ($1, $2)"
	    " ON CONFLICT (slug) DO NOTHING",
	[PG_TEMPLATE_ID] =
	    "SELECT id FROM templates WHERE slug = $1 FOR UPDATE",
	[PG_TEMPLATE_NEXT] =
	    "SELECT coalesce(max(version), 0) + 1 FROM template_versions"
	    " WHERE template_id = $1",
	[PG_TEMPLATE_INSERT] =
	    "INSERT INTO template_versions (template_id, version, body,"
	    " variables, escape_html, published, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, 1, $6)",
	[PG_TEMPLATE_GET] =
	    "SELECT " TEMPLATE_COLS " WHERE t.slug = $1 AND v.published = 1"
	    " AND ($2::bigint = 0 OR v.version = $2)"
	    " ORDER BY v.version DESC LIMIT 1",
	[PG_TEMPLATE_ALL] =
	    "SELECT " TEMPLATE_COLS " WHERE v.published = 1"
	    " ORDER BY v.template_id, v.version",
};

const char *
pg_text(enum pg_stmt id)
{
	if ((unsigned)id >= PG_STMT__MAX)
		return NULL;
	return pg_core_sql[id] != NULL ? pg_core_sql[id] : pg_data_sql[id];
}
