/* store_sqlite_challenger.c: challengers on SQLite (README,
 * "Challengers"): the backends named for a schema version beside its
 * own (schema_challengers), and what each one answered for a decision
 * (challenger_answers, deleted with the decision by
 * store_sqlite_retention.c), and the walk of a replay (evalgate-admin
 * replay) over the decisions a backend has not answered yet. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "store_sqlite.h"

/* JSON as kept in a TEXT column: compact, '/' left alone. */
#define STORED_JSON (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

int
sq_challenger_set(struct store *st, const struct challenger *c,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_CHALLENGER_SET, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, c->schema_id);
	sqlite3_bind_int64(stmt, 2, c->version);
	sqlite3_bind_int64(stmt, 3, c->backend_id);
	sqlite3_bind_double(stmt, 4, c->share);
	sqlite3_bind_int64(stmt, 5, clock_now_ms() / 1000);
	return sqlite_exec_stmt(st, stmt, e, "set challenger");
}

int
sq_challenger_remove(struct store *st, int64_t schema_id, int64_t version,
    int64_t backend_id, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_CHALLENGER_REMOVE, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, schema_id);
	sqlite3_bind_int64(stmt, 2, version);
	sqlite3_bind_int64(stmt, 3, backend_id);
	if (sqlite_exec_stmt(st, stmt, e, "remove challenger") == -1)
		return -1;
	return sqlite3_changes(st->db) > 0;
}

int
sq_challenger_each(struct store *st, int64_t schema_id, int64_t version,
    void (*fn)(const struct challenger *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt		*stmt = sqlite_stmt(st, STMT_CHALLENGER_ALL, e);
	struct challenger	 c;
	int			 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, schema_id);
	sqlite3_bind_int64(stmt, 2, version);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&c, 0, sizeof(c));
		c.schema_id = sqlite3_column_int64(stmt, 0);
		c.version = sqlite3_column_int64(stmt, 1);
		c.backend_id = sqlite3_column_int64(stmt, 2);
		sqlite_col_text(stmt, 3, c.backend, sizeof(c.backend));
		c.share = sqlite3_column_double(stmt, 4);
		c.created_at = sqlite3_column_int64(stmt, 5);
		fn(&c, arg);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "challengers");
}

struct kept *
sq_kept(struct store *st)
{
	return st->kept;
}

int
sq_challenger_answer_insert(struct store *st,
    const struct challenger_answer *a, struct error *e)
{
	sqlite3_stmt	*stmt;
	const char	*text;

	if ((text = json_object_to_json_string_ext(a->answers,
	    STORED_JSON)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (sq_begin(st, e) == -1)
		return -1;
	if ((stmt = sqlite_stmt(st, STMT_CHALLENGER_ANSWER_INSERT, e)) ==
	    NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, a->decision_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, a->backend, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, text, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, a->latency_ms);
	if (a->has_usage) {
		sqlite3_bind_int64(stmt, 5, a->input_tokens);
		sqlite3_bind_int64(stmt, 6, a->output_tokens);
	}
	sqlite3_bind_text(stmt, 7, a->source, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 8, a->recorded_at_ms);
	if (sqlite_exec_stmt(st, stmt, e, "record a challenger's answer") ==
	    -1)
		goto fail;
	return sq_commit(st, e);
fail:
	sq_rollback(st);
	return -1;
}

int
sq_challenger_answers(struct store *st, const char *id,
    void (*fn)(const struct challenger_answer *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt		*stmt = sqlite_stmt(st, STMT_CHALLENGER_ANSWERS,
				    e);
	struct challenger_answer a;
	char			 backend[MODEL_NAME_SIZE], source[16];
	int			 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&a, 0, sizeof(a));
		snprintf(a.decision_id, sizeof(a.decision_id), "%s", id);
		sqlite_col_text(stmt, 0, backend, sizeof(backend));
		a.backend = backend;
		if (stored_json((const char *)sqlite3_column_text(stmt, 1),
		    &a.answers, "challenger answers", e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
		a.latency_ms = sqlite3_column_int64(stmt, 2);
		a.has_usage = sqlite3_column_type(stmt, 3) != SQLITE_NULL;
		a.input_tokens = sqlite3_column_int64(stmt, 3);
		a.output_tokens = sqlite3_column_int64(stmt, 4);
		sqlite_col_text(stmt, 5, source, sizeof(source));
		a.source = source;
		a.recorded_at_ms = sqlite3_column_int64(stmt, 6);
		fn(&a, arg);
		json_object_put(a.answers);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e,
	    "challenger answers");
}

int
sq_replay_page(struct store *st, const struct replay_range *q, int limit,
    void (*fn)(const struct replay_row *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt		*stmt = sqlite_stmt(st, STMT_REPLAY_PAGE, e);
	struct replay_row	 row;
	int			 rc, n = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, q->schema_id);
	sqlite3_bind_int64(stmt, 2, q->version);
	sqlite3_bind_int64(stmt, 3, q->since_ms);
	sqlite3_bind_text(stmt, 4, q->backend, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 5, q->after_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 6, limit);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		memset(&row, 0, sizeof(row));
		sqlite_col_text(stmt, 0, row.id, sizeof(row.id));
		row.created_at_ms = sqlite3_column_int64(stmt, 1);
		row.recorded = sqlite3_column_int(stmt, 2) != 0;
		row.state = (const char *)sqlite3_column_text(stmt, 3);
		fn(&row, arg);
		n++;
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? n : sqlite_fail(st, e, "replay page");
}
