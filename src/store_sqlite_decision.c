/* store_decision.c: decisions, their answers and outcomes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "store_sqlite.h"
#include "xalloc.h"

static const char *
compact(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int
insert_decision(struct store *st, const struct decision *d, struct error *e)
{
	sqlite3_stmt *stmt = store_stmt(st, STMT_DECISION_INSERT, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, d->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, d->app_id);
	sqlite3_bind_int64(stmt, 3, d->created_at_ms);
	store_bind_text(stmt, 4, d->model);
	store_bind_text(stmt, 5, d->backend);
	sqlite3_bind_int64(stmt, 6, d->schema_id);
	sqlite3_bind_int64(stmt, 7, d->schema_version);
	store_bind_optional(stmt, 8, d->template_id);
	store_bind_optional(stmt, 9, d->template_version);
	store_bind_text(stmt, 10, d->state);
	if (d->has_usage) {
		sqlite3_bind_int64(stmt, 11, d->input_tokens);
		sqlite3_bind_int64(stmt, 12, d->output_tokens);
	}
	sqlite3_bind_int64(stmt, 13, d->latency_gateway_ms);
	sqlite3_bind_int64(stmt, 14, d->latency_backend_ms);
	return store_exec_stmt(st, stmt, e, "insert decision");
}

static int
insert_answers(struct store *st, const struct decision *d,
    json_object *questions, json_object *answers, json_object *dists,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	json_object	*type;
	int		 pos = 0;

	json_object_object_foreach(questions, name, q) {
		if ((stmt = store_stmt(st, STMT_ANSWER_INSERT, e)) == NULL)
			return -1;
		json_object_object_get_ex(q, "type", &type);
		sqlite3_bind_text(stmt, 1, d->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
		if (d->label_mass != NULL)
			sqlite3_bind_double(stmt, 7, d->label_mass[pos]);
		sqlite3_bind_int(stmt, 3, pos++);
		store_bind_text(stmt, 4, json_object_get_string(type));
		store_bind_text(stmt, 5,
		    compact(json_object_object_get(dists, name)));
		store_bind_text(stmt, 6,
		    compact(json_object_object_get(answers, name)));
		if (store_exec_stmt(st, stmt, e, "insert answer") == -1)
			return -1;
	}
	return 0;
}

int
sq_decision_insert(struct store *st, const struct decision *d,
    json_object *questions, json_object *answers, json_object *dists,
    struct error *e)
{
	if (store_begin(st, e) == -1)
		return -1;
	if (insert_decision(st, d, e) == -1 ||
	    insert_answers(st, d, questions, answers, dists, e) == -1 ||
	    store_quota_add(st, d->app_id, d->quota_day, d->quota_units,
	    e) == -1 || store_commit(st, e) == -1) {
		store_rollback(st);
		return -1;
	}
	return 0;
}

/* Reading a decision back. */

static const char *
col(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

/* The decision row into d (owning its copies); d is cleared by the
 * caller on failure. */
static int
read_decision(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	store_col_text(stmt, 0, d->id, sizeof(d->id));
	d->app_id = sqlite3_column_int64(stmt, 1);
	d->created_at_ms = sqlite3_column_int64(stmt, 2);
	/* The model is the client's, of any length: checked. */
	if (col(stmt, 3) != NULL && (d->model = strdup(col(stmt, 3))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	store_col_text(stmt, 4, d->backend, sizeof(d->backend));
	store_col_text(stmt, 5, d->schema_slug, sizeof(d->schema_slug));
	d->schema_version = sqlite3_column_int64(stmt, 6);
	store_col_text(stmt, 8, d->template_slug, sizeof(d->template_slug));
	d->template_version = sqlite3_column_int64(stmt, 9);
	if (stored_json(col(stmt, 7), &d->questions, "questions", e) == -1 ||
	    (col(stmt, 10) != NULL &&
	    stored_json(col(stmt, 10), &d->state, "state", e) == -1))
		return -1;
	d->answers = ju_obj();
	d->outcomes = ju_obj();
	return 0;
}

static int
add_answer(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	json_object *a;

	if (stored_json(col(stmt, 1), &a, "answer", e) == -1)
		return -1;
	ju_add(d->answers, col(stmt, 0), a);
	return 0;
}

static int
add_outcome(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	json_object *o, *v;

	if (stored_json(col(stmt, 1), &v, "outcome", e) == -1)
		return -1;
	o = ju_obj();
	ju_add(o, "value", v);
	ju_add_str(o, "source", col(stmt, 2));
	ju_add(o, "recorded_at_ms", ju_int(sqlite3_column_int64(stmt, 3)));
	ju_add(d->outcomes, col(stmt, 0), o);
	return 0;
}

/* Hands each row of statement id, run for d->id, to add(): 0 or -1. */
static int
read_rows(struct store *st, enum stmt id, struct decision_row *d,
    int (*add)(sqlite3_stmt *, struct decision_row *, struct error *),
    struct error *e)
{
	sqlite3_stmt	*stmt = store_stmt(st, id, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, d->id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (add(stmt, d, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : store_fail(st, e, "decision rows");
}

int
sq_decision_get(struct store *st, const char *id, int64_t app_id,
    struct decision_row *d, struct error *e)
{
	sqlite3_stmt	*stmt = store_stmt(st, STMT_DECISION_GET, e);
	int		 rc;

	memset(d, 0, sizeof(*d));
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, app_id);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		rc = read_decision(stmt, d, e) == -1 ? -1 : 1;
	else
		rc = rc == SQLITE_DONE ? 0 : store_fail(st, e, "decision");
	sqlite3_reset(stmt);
	if (rc == 1 && (read_rows(st, STMT_ANSWERS_GET, d, add_answer, e) ==
	    -1 || read_rows(st, STMT_OUTCOMES_GET, d, add_outcome, e) == -1))
		rc = -1;
	if (rc != 1)
		decision_row_clear(d);
	return rc;
}

/* Outcomes (spec section 3, design.md section 9). */

/* One question's outcome, inside the caller's transaction. */
static int
record_one(struct store *st, const char *id, const char *question,
    json_object *value, const char *source, int64_t now_ms,
    struct error *e)
{
	sqlite3_stmt	*stmt = store_stmt(st, STMT_OUTCOME_VALUE, e);
	const char	*text = compact(value);
	int		 rc, same = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, question, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		same = col(stmt, 0) != NULL && strcmp(col(stmt, 0), text) == 0;
		if (!same)
			outcome_conflict(question, col(stmt, 0) ? col(stmt, 0) : "",
			    e);
	}
	sqlite3_reset(stmt);
	if (rc == SQLITE_ROW)
		return same ? 0 : -1;
	if (rc != SQLITE_DONE)
		return store_fail(st, e, "outcome");
	if ((stmt = store_stmt(st, STMT_OUTCOME_INSERT, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, question, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, text, -1, SQLITE_TRANSIENT);
	store_bind_text(stmt, 4, source);
	sqlite3_bind_int64(stmt, 5, now_ms);
	return store_exec_stmt(st, stmt, e, "insert outcome");
}

int
sq_outcome_record(struct store *st, const char *id, json_object *values,
    const char *source, int64_t now_ms, struct error *e)
{
	if (store_begin(st, e) == -1)
		return -1;
	json_object_object_foreach(values, question, value) {
		if (record_one(st, id, question, value, source, now_ms,
		    e) == -1) {
			store_rollback(st);
			return -1;
		}
	}
	return store_commit(st, e);
}
