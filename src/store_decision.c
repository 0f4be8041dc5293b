/* store_decision.c: decisions, their answers and (later) outcomes. */
#include <string.h>

#include "store_internal.h"

static const char SQL_DECISION_INSERT[] =
	"INSERT INTO decisions (id, app_id, created_at_ms, model, backend,"
	" schema_id, schema_version, template_id, template_version, state,"
	" input_tokens, output_tokens, latency_gateway_ms, latency_backend_ms)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
static const char SQL_ANSWER_INSERT[] =
	"INSERT INTO decision_answers (decision_id, question, position, type,"
	" distribution, answer) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

static const char *
compact(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void
bind_id(sqlite3_stmt *stmt, int i, int64_t v)
{
	if (v != 0)
		sqlite3_bind_int64(stmt, i, v);
	else
		sqlite3_bind_null(stmt, i);
}

static int
insert_decision(struct store *st, const struct decision *d, struct error *e)
{
	sqlite3_stmt *stmt = store_stmt(st, SQL_DECISION_INSERT, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, d->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, d->app_id);
	sqlite3_bind_int64(stmt, 3, d->created_at_ms);
	store_bind_text(stmt, 4, d->model);
	store_bind_text(stmt, 5, d->backend);
	sqlite3_bind_int64(stmt, 6, d->schema_id);
	sqlite3_bind_int64(stmt, 7, d->schema_version);
	bind_id(stmt, 8, d->template_id);
	bind_id(stmt, 9, d->template_version);
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
insert_answers(struct store *st, const char *id, json_object *questions,
    json_object *answers, json_object *dists, struct error *e)
{
	sqlite3_stmt	*stmt;
	json_object	*type;
	int		 pos = 0;

	json_object_object_foreach(questions, name, q) {
		if ((stmt = store_stmt(st, SQL_ANSWER_INSERT, e)) == NULL)
			return -1;
		json_object_object_get_ex(q, "type", &type);
		sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
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
store_decision_insert(struct store *st, const struct decision *d,
    json_object *questions, json_object *answers, json_object *dists,
    struct error *e)
{
	if (store_begin(st, e) == -1)
		return -1;
	if (insert_decision(st, d, e) == -1 ||
	    insert_answers(st, d->id, questions, answers, dists, e) == -1 ||
	    store_commit(st, e) == -1) {
		store_rollback(st);
		return -1;
	}
	return 0;
}
