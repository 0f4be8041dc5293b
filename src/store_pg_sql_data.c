/* store_pg_sql_data.c: the statements of the PostgreSQL engine's
 * decisions, outcomes, calibration, admission, quota and retention, by
 * name (the second part of enum pg_stmt in store_pg.h), indexed by
 * the whole enum; the connection's and the catalog's are in
 * store_pg_sql.c.  The tables are in sql/pg/.
 *
 * Each is the SQLite engine's (store_sqlite_sql.c) in PostgreSQL's
 * words, fewer of them where one statement can do the work of several
 * (a round trip costs more than a statement): a decision (its answers
 * in its row) and its quota units are one INSERT; a decision read back,
 * its answers and outcomes one SELECT.  Lists of values come as one
 * array parameter each ($N::text[]), never pasted into the text. */
#include "config.h"

#include "store_pg.h"

const char *const pg_data_sql[PG_STMT__MAX] = {
	/* Decisions, answers, outcomes (store_pg_decision.c).  The
	 * decision ($1..$14), its answers in one JSON text as
	 * store_answers_add() wrote it ($15) and the quota units of its
	 * day ($16 day, $17 units), in one statement: one transaction,
	 * one round trip. */
	[PG_DECISION_INSERT] =
	    "WITH d AS (INSERT INTO decisions (id, app_id, created_at_ms,"
	    " model, backend, schema_id, schema_version, template_id,"
	    " template_version, state, input_tokens, output_tokens,"
	    " latency_gateway_ms, latency_backend_ms, answers) VALUES ($1, $2,"
	    " $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)),"
	    " q AS (INSERT INTO quota_days (app_id, day, used)"
	    " SELECT $2::bigint, $16::text, $17::bigint WHERE $17::bigint > 0"
	    " ON CONFLICT (app_id, day)"
	    " DO UPDATE SET used = quota_days.used + excluded.used)"
	    " SELECT 1",
	/* The answers and the outcomes as JSON objects in answer order,
	 * their values the stored texts unchanged (json, not jsonb: ->
	 * gives a member's text as it is).  n is a question's place in
	 * decisions.answers. */
	[PG_DECISION_GET] =
	    "SELECT d.id, d.app_id, d.created_at_ms, d.model, d.backend,"
	    " s.slug, d.schema_version, v.questions, t.slug,"
	    " d.template_version, d.state,"
	    " (SELECT json_object_agg(a.e ->> 'question', a.e -> 'answer'"
	    " ORDER BY a.n)"
	    " FROM json_array_elements(d.answers::json) WITH ORDINALITY"
	    " AS a(e, n)),"
	    " (SELECT json_object_agg(o.question, json_build_object('value',"
	    " o.value::json, 'source', o.source, 'recorded_at_ms',"
	    " o.recorded_at_ms) ORDER BY a.n)"
	    " FROM outcomes o JOIN json_array_elements(d.answers::json)"
	    " WITH ORDINALITY AS a(e, n) ON a.e ->> 'question' = o.question"
	    " WHERE o.decision_id = d.id)"
	    " FROM decisions d JOIN schemas s ON s.id = d.schema_id"
	    " JOIN schema_versions v ON v.schema_id = d.schema_id"
	    " AND v.version = d.schema_version"
	    " LEFT JOIN templates t ON t.id = d.template_id"
	    " WHERE d.id = $1 AND ($2::bigint = 0 OR d.app_id = $2::bigint)",
	/* Each question's outcome ($2 questions, $3 values), with its
	 * decision's schema version: a new one is inserted, an existing
	 * one (a concurrent one too: the conflict waits for it) is locked
	 * and left as it was; either way its value comes back, for the
	 * caller to compare and roll back on a difference.  No row at
	 * all: the decision is gone. */
	[PG_OUTCOME_RECORD] =
	    "INSERT INTO outcomes (decision_id, question, value, source,"
	    " recorded_at_ms, schema_id, schema_version)"
	    " SELECT d.id, u.question, u.value, $4::text, $5::bigint,"
	    " d.schema_id, d.schema_version"
	    " FROM decisions d, unnest($2::text[], $3::text[])"
	    " AS u(question, value) WHERE d.id = $1::text"
	    " ON CONFLICT (decision_id, question)"
	    " DO UPDATE SET value = outcomes.value"
	    " RETURNING question, value",
	[PG_DECISION_PAGE] =
	    "SELECT id, created_at_ms FROM decisions"
	    " WHERE app_id = $1 AND created_at_ms >= $2 AND created_at_ms < $3"
	    " AND (created_at_ms, id) > ($4::bigint, $5::text)"
	    " ORDER BY created_at_ms, id LIMIT $6",
	/* A version's outcomes (outcomes_schema, in decision id order),
	 * each with its decision, looked up by its id, and the element of
	 * its question in the decision's answers, in the answer's order.
	 * OFFSET 0 keeps the lookup a lookup: joined as a table, a plan
	 * made for any since ($3, a generic plan) may read every decision
	 * to hash them (tests/unit/store_pg_plan_test.c). */
	[PG_CALIBRATION_ROWS] =
	    "SELECT d.id, d.backend, d.created_at_ms, o.question,"
	    " a.e ->> 'type', (a.e -> 'distribution')::text, o.value"
	    " FROM outcomes o CROSS JOIN LATERAL (SELECT d.id, d.backend,"
	    " d.created_at_ms, d.answers FROM decisions d"
	    " WHERE d.id = o.decision_id AND d.created_at_ms >= $3"
	    " OFFSET 0) d"
	    " CROSS JOIN LATERAL json_array_elements(d.answers::json)"
	    " WITH ORDINALITY AS a(e, n)"
	    " WHERE o.schema_id = $1 AND o.schema_version = $2"
	    " AND ($4::text IS NULL OR o.question = $4::text)"
	    " AND a.e ->> 'question' = o.question"
	    " ORDER BY o.decision_id, a.n",

	/* Admission and the day's quota (store_pg_quota.c). */
	/* The application's row, so that there is one to lock. */
	[PG_ADMISSION_ENSURE] =
	    "INSERT INTO admission (app_id, tat_ms, day, used, rate, at_ms)"
	    " VALUES ($1, 0, $2, 0, 0, 0) ON CONFLICT (app_id) DO NOTHING",
	/* Locked until the transaction ends: the arrival time, and the
	 * day's units, the larger of the running total and the counter
	 * (store.h).  The transaction commits without waiting for the
	 * disk, as the SQLite engine's counters do (its cache file, its
	 * shared memory): a crash of the server may lose a moment of
	 * arrival times, never units, which are durable in quota_days
	 * with each decision. */
	[PG_ADMISSION_LOCK] =
	    "SELECT a.tat_ms, a.rate, a.at_ms,"
	    " greatest(CASE WHEN a.day = $2::text THEN a.used ELSE 0 END,"
	    " coalesce((SELECT q.used FROM quota_days q"
	    " WHERE q.app_id = $1::bigint AND q.day = $2::text), 0)),"
	    " set_config('synchronous_commit', 'off', true)"
	    " FROM admission a WHERE a.app_id = $1::bigint FOR UPDATE OF a",
	[PG_ADMISSION_SET] =
	    "INSERT INTO admission (app_id, tat_ms, day, used, rate, at_ms)"
	    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app_id) DO UPDATE"
	    " SET tat_ms = excluded.tat_ms, day = excluded.day,"
	    " used = excluded.used, rate = excluded.rate,"
	    " at_ms = excluded.at_ms",
	[PG_USED_ADD] =
	    "INSERT INTO quota_days (app_id, day, used) VALUES ($1, $2, $3)"
	    " ON CONFLICT (app_id, day)"
	    " DO UPDATE SET used = quota_days.used + excluded.used",
	[PG_USED_GET] =
	    "SELECT used FROM quota_days WHERE app_id = $1 AND day = $2",

	/* Retention (store_pg_retention.c).  A prune step picks the next
	 * decisions of an application after its cursor, oldest first
	 * (decisions_app_time; $1 before, $2 the application, $3 and $4
	 * the cursor, $5 how many), locks them ($1
	 * their ids; automatic retention skips those another worker holds,
	 * to be seen again on its next round), then, on a snapshot taken once
	 * they are locked, so that no outcome can be added to them meanwhile,
	 * deletes those to prune ($1 the ids locked; $2: one with an outcome
	 * only if created before it) with their outcomes and challengers'
	 * answers (its own are in its row). */
	[PG_PRUNE_PICK] =
	    "SELECT id, created_at_ms FROM decisions"
	    " WHERE app_id = $2 AND created_at_ms < $1"
	    " AND (created_at_ms, id) > ($3::bigint, $4::text)"
	    " ORDER BY created_at_ms, id LIMIT $5",
	[PG_PRUNE_LOCK] =
	    "SELECT id FROM decisions WHERE id = ANY ($1::text[]) FOR UPDATE",
	[PG_PRUNE_LOCK_SKIP] =
	    "SELECT id FROM decisions WHERE id = ANY ($1::text[])"
	    " FOR UPDATE SKIP LOCKED",
	[PG_PRUNE_DELETE] =
	    "WITH gone AS (SELECT id FROM decisions d"
	    " WHERE id = ANY ($1::text[]) AND (created_at_ms < $2::bigint"
	    " OR NOT EXISTS (SELECT 1 FROM outcomes o"
	    " WHERE o.decision_id = d.id))),"
	    " o AS (DELETE FROM outcomes WHERE decision_id IN"
	    " (SELECT id FROM gone)),"
	    " c AS (DELETE FROM challenger_answers WHERE decision_id IN"
	    " (SELECT id FROM gone)),"
	    " d AS (DELETE FROM decisions WHERE id IN (SELECT id FROM gone)"
	    " RETURNING 1)"
	    " SELECT count(*) FROM d",
	/* The oldest $2 states kept before $1 (decisions_state_time), but
	 * those another worker is clearing, as one array of ids, each
	 * updated by its primary key (as IN (SELECT ...), the planner may
	 * hash the ids and read the whole table to find them). */
	[PG_STATE_CLEAR] =
	    "UPDATE decisions SET state = NULL WHERE id = ANY (ARRAY(SELECT id"
	    " FROM decisions WHERE state IS NOT NULL AND created_at_ms < $1"
	    " ORDER BY created_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED))",
	/* The next application after id $1 whose decisions expire, and
	 * after how many days ($2: SERVICE_RETENTION_DAYS). */
	[PG_RETAIN_NEXT_APP] =
	    "SELECT id, coalesce(retention_days, $2::bigint) FROM applications"
	    " WHERE id > $1 AND coalesce(retention_days, $2::bigint) > 0"
	    " ORDER BY id LIMIT 1",
	/* After a prune from the console: the space of the rows it
	 * deleted made reusable now rather than when autovacuum comes by
	 * (outside any transaction). */
	[PG_VACUUM] = "VACUUM decisions, outcomes,"
	    " challenger_answers",

	/* Challengers (store_pg_challenger.c): $1 schema, $2 version, $3
	 * backend; adding one again changes its share $4. */
	[PG_CHALLENGER_SET] =
	    "INSERT INTO schema_challengers (schema_id, version, backend_id,"
	    " share, created_at) VALUES ($1, $2, $3, $4, $5)"
	    " ON CONFLICT (schema_id, version, backend_id)"
	    " DO UPDATE SET share = excluded.share",
	[PG_CHALLENGER_REMOVE] =
	    "DELETE FROM schema_challengers"
	    " WHERE schema_id = $1 AND version = $2 AND backend_id = $3",
	[PG_CHALLENGER_ALL] =
	    "SELECT c.schema_id, c.version, c.backend_id, b.name, c.share,"
	    " c.created_at FROM schema_challengers c"
	    " JOIN backends b ON b.id = c.backend_id"
	    " WHERE c.schema_id = $1 AND c.version = $2 ORDER BY b.name",
	/* One per decision and backend: a second is left out. */
	[PG_CHALLENGER_ANSWER_INSERT] =
	    "INSERT INTO challenger_answers (decision_id, backend, answers,"
	    " latency_ms, input_tokens, output_tokens, source,"
	    " recorded_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
	    " ON CONFLICT (decision_id, backend) DO NOTHING",
	[PG_CHALLENGER_ANSWERS] =
	    "SELECT backend, answers, latency_ms, input_tokens, output_tokens,"
	    " source, recorded_at_ms FROM challenger_answers"
	    " WHERE decision_id = $1 ORDER BY backend",
	/* A replay's walk, as the SQLite engine's: the decisions of
	 * schema $1 version $2 created at or after $3, in id order after
	 * $5, at most $6, each with whether backend $4 answered it
	 * already, and then without its state.  By the primary key, from
	 * the larger of $5 and $7, the smallest id of a decision made at
	 * or after $3 (store_pg_challenger.c says why it is safe): a walk
	 * from a --since does not read the table from its start. */
	[PG_REPLAY_PAGE] =
	    "SELECT d.id, d.created_at_ms,"
	    " (c.decision_id IS NOT NULL)::int,"
	    " CASE WHEN c.decision_id IS NULL THEN d.state END"
	    " FROM decisions d LEFT JOIN challenger_answers c"
	    " ON c.decision_id = d.id AND c.backend = $4::text"
	    " WHERE d.schema_id = $1 AND d.schema_version = $2"
	    " AND d.created_at_ms >= $3 AND d.id > $5::text"
	    " AND d.id >= $7::text"
	    " ORDER BY d.id LIMIT $6",
	/* The comparison (store_pg_report.c), as the SQLite engine's, by
	 * the version's outcomes as calibration, each decision looked up
	 * as there. */
	[PG_COMPARE_ROWS] =
	    "SELECT d.id, d.created_at_ms, o.question, a.e ->> 'type',"
	    " (a.e -> 'distribution')::text, o.value, d.latency_backend_ms,"
	    " d.tokens, c.backend, c.answers,"
	    " c.latency_ms, c.input_tokens + c.output_tokens, c.source"
	    " FROM outcomes o CROSS JOIN LATERAL (SELECT d.id,"
	    " d.created_at_ms, d.latency_backend_ms,"
	    " d.input_tokens + d.output_tokens AS tokens, d.answers"
	    " FROM decisions d WHERE d.id = o.decision_id"
	    " AND d.created_at_ms >= $3 OFFSET 0) d"
	    " JOIN challenger_answers c ON c.decision_id = o.decision_id"
	    " CROSS JOIN LATERAL json_array_elements(d.answers::json)"
	    " WITH ORDINALITY AS a(e, n)"
	    " WHERE o.schema_id = $1 AND o.schema_version = $2"
	    " AND ($4::text IS NULL OR o.question = $4::text)"
	    " AND a.e ->> 'question' = o.question"
	    " ORDER BY o.decision_id, c.backend, a.n",
};
