/* store_sqlite_sql.c: every SQL statement the SQLite engine runs, by
 * name (enum stmt in store_sqlite.h), in one table: the one place to read what the
 * store asks of SQLite, and the one a second engine would replace.  The
 * tables themselves are in schema.sql and sql/.
 *
 * Every value comes in as a bound parameter (?1, ?2, ...); no text is
 * ever pasted into a statement.  Only the pragmas, which take a number
 * the store formats itself, are built in store_sqlite.c. */
#include "config.h"

#include "store_columns.h"
#include "store_sqlite.h"


const char *const store_sql[STMT__MAX] = {
	/* Transactions and the audit log (store_sqlite.c). */
	[STMT_BEGIN] = "BEGIN",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	/* An empty write, to take one file's write lock (store_begin), on
	 * a table no foreign key names: with foreign_keys on, a DELETE from
	 * a child table opens a temporary table first, even when no row
	 * can match. */
	[STMT_LOCK_MAIN] = "DELETE FROM main.catalog_generation WHERE 0",
	[STMT_LOCK_CACHE] = "DELETE FROM cache.admission WHERE 0",
	[STMT_AUDIT] =
	    "INSERT INTO audit_log (at_ms, actor, action, target, details)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_AUDIT_LAST] = "SELECT coalesce(max(at_ms), 0) FROM audit_log"
	    " WHERE action = ?1 AND (?2 IS NULL OR target = ?2)",

	/* Applications, keys, the key memo and failures (store_sqlite_app.c). */
	[STMT_APP_INSERT] =
	    "INSERT INTO applications (name, log_state, is_admin,"
	    " rate_per_minute, daily_quota, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[STMT_APP_UPDATE] =
	    "UPDATE applications SET log_state = ?2, rate_per_minute = ?3,"
	    " daily_quota = ?4, retention_days = ?5 WHERE id = ?1",
	[STMT_APP_BY_NAME] =
	    "SELECT " APP_COLS " FROM applications WHERE name = ?1",
	[STMT_APP_BY_ID] =
	    "SELECT " APP_COLS " FROM applications WHERE id = ?1",
	[STMT_APP_ALL] = "SELECT " APP_COLS " FROM applications ORDER BY name",
	[STMT_KEY_INSERT] =
	    "INSERT INTO api_keys (" KEY_COLS ")"
	    " VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6)",
	[STMT_KEY_SET_CHECK] =
	    "UPDATE api_keys SET secret_check = ?2"
	    " WHERE prefix = ?1 AND secret_check IS NULL",
	[STMT_KEY_BY_PREFIX] =
	    "SELECT " KEY_COLS " FROM api_keys WHERE prefix = ?1",
	[STMT_KEY_REVOKE] =
	    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?2)"
	    " WHERE prefix = ?1",
	[STMT_KEY_ALL] =
	    "SELECT k.prefix, k.app_id, k.hash, k.created_at, k.expires_at,"
	    " k.revoked_at, k.secret_check, a.name FROM api_keys k"
	    " JOIN applications a ON a.id = k.app_id"
	    " WHERE ?1 = 0 OR k.app_id = ?1"
	    " ORDER BY a.name, k.created_at, k.prefix",
	[STMT_MEMO_HAS] =
	    "SELECT 1 FROM cache.key_memo WHERE mac = ?1 AND prefix = ?2",
	[STMT_MEMO_PUT] =
	    "INSERT OR REPLACE INTO cache.key_memo (mac, prefix, at_ms)"
	    " VALUES (?1, ?2, ?3)",
	/* The replica's cool-down (NULL: none), and whether any is kept,
	 * of those that ended after ?2. */
	[STMT_COOLDOWN_GET] =
	    "SELECT (SELECT until_ms FROM cache.cooldowns"
	    " WHERE url = ?1 AND until_ms > ?2),"
	    " EXISTS (SELECT 1 FROM cache.cooldowns WHERE until_ms > ?2)",
	[STMT_COOLDOWN_PUT] =
	    "INSERT INTO cache.cooldowns (url, until_ms) VALUES (?1, ?2)"
	    " ON CONFLICT (url) DO UPDATE SET until_ms = excluded.until_ms",
	[STMT_COOLDOWN_DEL] = "DELETE FROM cache.cooldowns WHERE url = ?1",

	/* Admission and the day's quota (store_sqlite_quota.c). */
	/* The arrival time, and the day's units: the larger of the cache's
	 * running total and the database's counter (store.h). */
	[STMT_ADMISSION] =
	    "SELECT coalesce((SELECT tat_ms FROM cache.admission"
	    " WHERE app_id = ?1), 0),"
	    " coalesce((SELECT rate FROM cache.admission WHERE app_id = ?1),"
	    " 0),"
	    " coalesce((SELECT at_ms FROM cache.admission WHERE app_id = ?1),"
	    " 0),"
	    " max(coalesce((SELECT used FROM cache.admission"
	    " WHERE app_id = ?1 AND day = ?2), 0),"
	    " coalesce((SELECT used FROM quota_days"
	    " WHERE app_id = ?1 AND day = ?2), 0))",
	[STMT_ADMISSION_SET] =
	    "INSERT INTO cache.admission"
	    " (app_id, tat_ms, day, used, rate, at_ms)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (app_id) DO UPDATE"
	    " SET tat_ms = excluded.tat_ms, day = excluded.day,"
	    " used = excluded.used, rate = excluded.rate,"
	    " at_ms = excluded.at_ms",
	[STMT_USED_ADD] =
	    "INSERT INTO quota_days (app_id, day, used) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT (app_id, day)"
	    " DO UPDATE SET used = used + excluded.used",
	[STMT_USED_GET] =
	    "SELECT used FROM quota_days WHERE app_id = ?1 AND day = ?2",

	/* The catalog (store_sqlite_catalog.c): backends, schemas, grants,
	 * templates. */
	[STMT_BACKEND_INSERT] =
	    "INSERT INTO backends (name, kind, model, auth_env, description,"
	    " release_date, enabled, timeout_ms, created_at, max_in_flight,"
	    " options)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[STMT_BACKEND_UPDATE] =
	    "UPDATE backends SET model = ?2, auth_env = ?3, description = ?4,"
	    " release_date = ?5, enabled = ?6, timeout_ms = ?7,"
	    " max_in_flight = ?8, options = ?9 WHERE id = ?1",
	[STMT_REPLICAS_DELETE] =
	    "DELETE FROM backend_replicas WHERE backend_id = ?1",
	[STMT_REPLICA_INSERT] =
	    "INSERT INTO backend_replicas (backend_id, position, url)"
	    " VALUES (?1, ?2, ?3)",
	[STMT_REPLICAS] =
	    "SELECT url FROM backend_replicas WHERE backend_id = ?1"
	    " ORDER BY position",
	[STMT_BACKEND_ENABLE] =
	    "UPDATE backends SET enabled = ?2 WHERE name = ?1",
	[STMT_BACKEND_BY_NAME] =
	    "SELECT " BACKEND_COLS " FROM backends WHERE name = ?1",
	[STMT_BACKEND_BY_ID] =
	    "SELECT " BACKEND_COLS " FROM backends WHERE id = ?1",
	[STMT_BACKEND_ALL] =
	    "SELECT " BACKEND_COLS " FROM backends"
	    " WHERE ?1 = 0 OR enabled = 1 ORDER BY name",
	/* A versioned kind (store_sqlite_catalog.c): its parent row for slug ?1
	 * (a duplicate is ignored), that row's id, and its next version. */
	[STMT_SCHEMA_CREATE] =
	    "INSERT OR IGNORE INTO schemas (slug, created_at) VALUES (?1, ?2)",
	[STMT_SCHEMA_ID] = "SELECT id FROM schemas WHERE slug = ?1",
	[STMT_SCHEMA_NEXT] =
	    "SELECT coalesce(max(version), 0) + 1 FROM schema_versions"
	    " WHERE schema_id = ?1",
	[STMT_VERSION_INSERT] =
	    "INSERT INTO schema_versions (schema_id, version, questions,"
	    " fingerprint, backend_id, temperature, abstain_threshold,"
	    " published, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8)",
	[STMT_VERSION_GET] =
	    "SELECT " VERSION_COLS " WHERE s.slug = ?1 AND v.published = 1"
	    " AND (?2 = 0 OR v.version = ?2) ORDER BY v.version DESC LIMIT 1",
	[STMT_VERSION_MATCH] =
	    "SELECT " VERSION_COLS
	    " WHERE v.fingerprint = ?2 AND v.published = 1"
	    " AND EXISTS (SELECT 1 FROM grants g WHERE g.app_id = ?1"
	    " AND g.schema_id = v.schema_id"
	    " AND (g.version = 0 OR g.version = v.version))"
	    " ORDER BY v.version DESC, v.created_at DESC, v.schema_id DESC"
	    " LIMIT 1",
	[STMT_VERSION_MATCHED] =
	    "SELECT count(*) FROM schema_versions"
	    " WHERE fingerprint = ?1 AND published = 1",
	[STMT_VERSION_ALL] =
	    "SELECT " VERSION_COLS " WHERE (?1 = '' OR s.slug = ?1)"
	    " ORDER BY v.schema_id, v.version",
	[STMT_GRANT] =
	    "INSERT OR IGNORE INTO grants (app_id, schema_id, version,"
	    " created_at) VALUES (?1, ?2, ?3, ?4)",
	[STMT_UNGRANT] =
	    "DELETE FROM grants WHERE app_id = ?1 AND schema_id = ?2"
	    " AND (?3 = 0 OR version = ?3)",
	[STMT_GRANT_ALLOWS] =
	    "SELECT 1 FROM grants WHERE app_id = ?1 AND schema_id = ?2"
	    " AND (version = 0 OR version = ?3) LIMIT 1",
	[STMT_GRANT_LIST] =
	    "SELECT a.name, g.version, g.created_at FROM grants g"
	    " JOIN applications a ON a.id = g.app_id WHERE g.schema_id = ?1"
	    " ORDER BY a.name, g.version",
	[STMT_TEMPLATE_CREATE] =
	    "INSERT OR IGNORE INTO templates (slug, created_at)"
	    " VALUES (?1, ?2)",
	[STMT_TEMPLATE_ID] = "SELECT id FROM templates WHERE slug = ?1",
	[STMT_TEMPLATE_NEXT] =
	    "SELECT coalesce(max(version), 0) + 1 FROM template_versions"
	    " WHERE template_id = ?1",
	[STMT_TEMPLATE_INSERT] =
	    "INSERT INTO template_versions (template_id, version, body,"
	    " variables, escape_html, published, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)",
	[STMT_TEMPLATE_GET] =
	    "SELECT " TEMPLATE_COLS " WHERE t.slug = ?1 AND v.published = 1"
	    " AND (?2 = 0 OR v.version = ?2) ORDER BY v.version DESC LIMIT 1",
	[STMT_TEMPLATE_ALL] =
	    "SELECT " TEMPLATE_COLS " WHERE v.published = 1"
	    " ORDER BY v.template_id, v.version",

	/* The catalog's generation (store_sqlite.c, for kept.c). */
	[STMT_GENERATION] = "SELECT n FROM catalog_generation",

	/* Decisions, answers, outcomes (store_sqlite_decision*.c), calibration
	 * (store_sqlite_report.c). */
	/* A decision found from its id ?1 among the 16 rows of its key's
	 * range (store_sqlite_rid.c), as table t. */
#define DECISION_BY_ID(t, id) " " t ".rid BETWEEN decision_rid(" id ")" \
	    " AND decision_rid(" id ") + 15 AND " t ".id = " id
	/* A decision and its answers (?15), in the next free slot of its
	 * key's range; none when that id is there already. */
	[STMT_DECISION_INSERT] =
	    "INSERT INTO decisions (rid, id, app_id, created_at_ms, model,"
	    " backend, schema_id, schema_version, template_id,"
	    " template_version, state, input_tokens, output_tokens,"
	    " latency_gateway_ms, latency_backend_ms, answers)"
	    " SELECT decision_rid(?1, coalesce(top - decision_rid(?1) + 1,"
	    " 0)), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14, ?15 FROM (SELECT max(rid) AS top, sum(id = ?1) AS seen"
	    " FROM decisions WHERE rid BETWEEN decision_rid(?1)"
	    " AND decision_rid(?1) + 15) WHERE coalesce(seen, 0) = 0",
	[STMT_DECISION_GET] =
	    "SELECT d.id, d.app_id, d.created_at_ms, d.model, d.backend,"
	    " s.slug, d.schema_version, v.questions, t.slug,"
	    " d.template_version, d.state"
	    " FROM decisions d JOIN schemas s ON s.id = d.schema_id"
	    " JOIN schema_versions v ON v.schema_id = d.schema_id"
	    " AND v.version = d.schema_version"
	    " LEFT JOIN templates t ON t.id = d.template_id"
	    " WHERE" DECISION_BY_ID("d", "?1") " AND (?2 = 0 OR d.app_id = ?2)",
	/* A decision's answers and outcomes in the answer's order: a.key is
	 * the place in the array. */
	[STMT_ANSWERS_GET] =
	    "SELECT a.value ->> 'question', a.value -> 'answer'"
	    " FROM decisions d, json_each(d.answers) a"
	    " WHERE" DECISION_BY_ID("d", "?1") " ORDER BY a.key",
	[STMT_OUTCOMES_GET] =
	    "SELECT o.question, o.value, o.source, o.recorded_at_ms"
	    " FROM decisions d, json_each(d.answers) a JOIN outcomes o"
	    " ON o.decision_id = d.id AND o.question = a.value ->> 'question'"
	    " WHERE" DECISION_BY_ID("d", "?1") " ORDER BY a.key",
	[STMT_OUTCOME_VALUE] =
	    "SELECT value FROM outcomes"
	    " WHERE decision_id = ?1 AND question = ?2",
	/* With its decision's schema version, which outcomes_schema
	 * orders by. */
	[STMT_OUTCOME_INSERT] =
	    "INSERT INTO outcomes (decision_id, question, value, source,"
	    " recorded_at_ms, schema_id, schema_version)"
	    " SELECT ?1, ?2, ?3, ?4, ?5, d.schema_id, d.schema_version"
	    " FROM decisions d WHERE" DECISION_BY_ID("d", "?1"),
	[STMT_DECISION_PAGE] =
	    "SELECT id, created_at_ms FROM decisions"
	    " WHERE app_id = ?1 AND created_at_ms >= ?2 AND created_at_ms < ?3"
	    " AND (created_at_ms, id) > (?4, ?5)"
	    " ORDER BY created_at_ms, id LIMIT ?6",
	/* A version's outcomes (outcomes_schema), each with its decision
	 * and the answer's element of its question. */
	[STMT_CALIBRATION_ROWS] =
	    "SELECT d.id, d.backend, d.created_at_ms, o.question,"
	    " a.value ->> 'type', a.value -> 'distribution', o.value"
	    " FROM outcomes o JOIN decisions d ON" DECISION_BY_ID("d",
	    "o.decision_id")
	    " JOIN json_each(d.answers) a ON a.value ->> 'question' = o.question"
	    " WHERE o.schema_id = ?1 AND o.schema_version = ?2"
	    " AND d.created_at_ms >= ?3 AND (?4 IS NULL OR o.question = ?4)"
	    " ORDER BY o.decision_id, a.key",

	/* Retention (store_sqlite_retention.c).  A prune step picks the next
	 * decisions of application ?2 after its cursor, oldest first
	 * (decisions_app_time), whether each has an outcome, and deletes
	 * them one by one: ?1 before, ?3 and ?4 the cursor, ?5 how many. */
	[STMT_PRUNE_PICK] =
	    "SELECT d.id, d.created_at_ms,"
	    " EXISTS (SELECT 1 FROM outcomes o WHERE o.decision_id = d.id)"
	    " FROM decisions d WHERE d.app_id = ?2 AND d.created_at_ms < ?1"
	    " AND (d.created_at_ms, d.id) > (?3, ?4)"
	    " ORDER BY d.created_at_ms, d.id LIMIT ?5",
	[STMT_PRUNE_OUTCOMES] = "DELETE FROM outcomes WHERE decision_id = ?1",
	[STMT_PRUNE_DECISION] =
	    "DELETE FROM decisions WHERE" DECISION_BY_ID("decisions", "?1"),
	/* The oldest ?2 states kept before ?1 (decisions_state_time). */
	[STMT_STATE_CLEAR] =
	    "UPDATE decisions SET state = NULL WHERE rid IN (SELECT rid"
	    " FROM decisions WHERE state IS NOT NULL AND created_at_ms < ?1"
	    " ORDER BY created_at_ms LIMIT ?2)",
	/* The next application after id ?1 whose decisions expire, and
	 * after how many days (?2: SERVICE_RETENTION_DAYS). */
	[STMT_RETAIN_NEXT_APP] =
	    "SELECT id, coalesce(retention_days, ?2) FROM applications"
	    " WHERE id > ?1 AND coalesce(retention_days, ?2) > 0"
	    " ORDER BY id LIMIT 1",
	[STMT_VACUUM_STEP] = "PRAGMA incremental_vacuum(128)",
	[STMT_FREELIST] = "PRAGMA freelist_count",

	/* Setting up (store_sqlite.c), on connections of their own too: run
	 * directly from their text, never kept. */
	[STMT_ATTACH_CACHE] = "ATTACH DATABASE ?1 AS cache",
	[STMT_USER_VERSION] = "PRAGMA user_version",
	[STMT_INIT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_READY] = "SELECT count(*) FROM sqlite_schema",
	/* Backup and restore (store_sqlite_backup.c). */
	[STMT_INTEGRITY] = "PRAGMA integrity_check",
	/* The tables every version of the schema has had. */
	[STMT_EVALGATE_TABLES] = "SELECT count(*) FROM sqlite_schema"
	    " WHERE type = 'table' AND name IN ('applications', 'api_keys',"
	    " 'schemas', 'schema_versions', 'decisions', 'audit_log')",
	[STMT_DECISION_COUNT] = "SELECT count(*) FROM decisions",
	[STMT_JOURNAL_DELETE] = "PRAGMA journal_mode=DELETE",
	[STMT_JOURNAL_WAL] = "PRAGMA journal_mode=WAL",
	/* Before a new file's first table (store_init), or before VACUUM
	 * rewrites an old one (store_compact). */
	[STMT_AUTO_VACUUM] = "PRAGMA auto_vacuum=INCREMENTAL",
	[STMT_VACUUM] = "VACUUM",

	/* Challengers (store_sqlite_challenger.c): ?1 schema, ?2 version,
	 * ?3 backend; adding one again changes its share ?4. */
	[STMT_CHALLENGER_SET] =
	    "INSERT INTO schema_challengers (schema_id, version, backend_id,"
	    " share, created_at) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (schema_id, version, backend_id)"
	    " DO UPDATE SET share = excluded.share",
	[STMT_CHALLENGER_REMOVE] =
	    "DELETE FROM schema_challengers"
	    " WHERE schema_id = ?1 AND version = ?2 AND backend_id = ?3",
	[STMT_CHALLENGER_ALL] =
	    "SELECT c.schema_id, c.version, c.backend_id, b.name, c.share,"
	    " c.created_at FROM schema_challengers c"
	    " JOIN backends b ON b.id = c.backend_id"
	    " WHERE c.schema_id = ?1 AND c.version = ?2 ORDER BY b.name",
	/* One per decision and backend: a second is left out. */
	[STMT_CHALLENGER_ANSWER_INSERT] =
	    "INSERT INTO challenger_answers (decision_id, backend, answers,"
	    " latency_ms, input_tokens, output_tokens, source,"
	    " recorded_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
	    " ON CONFLICT (decision_id, backend) DO NOTHING",
	[STMT_CHALLENGER_ANSWERS] =
	    "SELECT backend, answers, latency_ms, input_tokens, output_tokens,"
	    " source, recorded_at_ms FROM challenger_answers"
	    " WHERE decision_id = ?1 ORDER BY backend",
	[STMT_PRUNE_CHALLENGERS] =
	    "DELETE FROM challenger_answers WHERE decision_id = ?1",
	/* A replay's walk: the decisions of schema ?1 version ?2 created
	 * at or after ?3, in rid order after the decision ?5 ("": from the
	 * start), at most ?6, each with whether backend ?4 answered it
	 * already, and then without its state.  The walk starts at the
	 * rids of a minute before ?3: an id's time is read just before its
	 * decision's created_at_ms (handler_systemone.c), so none created
	 * since ?3 lies before. */
	[STMT_REPLAY_PAGE] =
	    "SELECT d.id, d.created_at_ms, c.decision_id IS NOT NULL,"
	    " CASE WHEN c.decision_id IS NULL THEN d.state END"
	    " FROM decisions d LEFT JOIN challenger_answers c"
	    " ON c.decision_id = d.id AND c.backend = ?4"
	    " WHERE d.rid > max(coalesce((SELECT r.rid FROM decisions r"
	    " WHERE" DECISION_BY_ID("r", "?5") "), decision_rid(?5) - 1, -1),"
	    " ((?3 - 60000) << 16) - 1)"
	    " AND d.schema_id = ?1 AND d.schema_version = ?2"
	    " AND d.created_at_ms >= ?3"
	    " ORDER BY d.rid LIMIT ?6",
	/* The comparison (store_sqlite_report.c): each answered question
	 * with its outcome of each decision of schema ?1, version ?2,
	 * created at or after ?3, of question ?4 (NULL: every one), once
	 * per challenger that answered the decision.  A sum of tokens with
	 * one side unknown is unknown. */
	[STMT_COMPARE_ROWS] =
	    "SELECT d.id, d.created_at_ms, o.question, a.value ->> 'type',"
	    " a.value -> 'distribution', o.value, d.latency_backend_ms,"
	    " d.input_tokens + d.output_tokens, c.backend, c.answers,"
	    " c.latency_ms, c.input_tokens + c.output_tokens, c.source"
	    " FROM outcomes o JOIN decisions d ON" DECISION_BY_ID("d",
	    "o.decision_id")
	    " JOIN challenger_answers c ON c.decision_id = o.decision_id"
	    " JOIN json_each(d.answers) a ON a.value ->> 'question' = o.question"
	    " WHERE o.schema_id = ?1 AND o.schema_version = ?2"
	    " AND d.created_at_ms >= ?3"
	    " AND (?4 IS NULL OR o.question = ?4)"
	    " ORDER BY o.decision_id, c.backend, a.key",
};
