/* store_pg_decision.c: decisions, their answers and outcomes and the
 * operators' pages of them, in PostgreSQL (the SQLite engine's
 * store_sqlite_decision*.c, with the same answers and errors).
 *
 * A decision costs one statement: the decision with its answers (one
 * JSON text in its row, store_answers.c's) and its quota units, in the
 * implicit transaction of that statement, committed as SERVICE_DB_SYNC
 * says (the connection's synchronous_commit), before the caller
 * answers.  Reading one back is one statement too. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "buf.h"
#include "json_util.h"
#include "store_pg.h"
#include "xalloc.h"

static const char *
compact(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

#define ANSWERS_MAX	(256u << 20)	/* the most decisions.answers holds */

/* The text of decisions.answers (store_answers.c writes it) into b, in
 * question order: 0, or -1 with a 503 in e. */
static int
answers_text(struct buf *b, const struct decision *d,
    json_object *questions, const char *const *answers,
    const char *const *dists, struct error *e)
{
	struct answer_text	 a;
	json_object		*type;
	size_t			 pos = 0;

	json_object_object_foreach(questions, name, q) {
		type = NULL;
		json_object_object_get_ex(q, "type", &type);
		memset(&a, 0, sizeof(a));
		a.name = name;
		a.name_len = strlen(name);
		a.type = type != NULL ? json_object_get_string(type) : "";
		a.type_len = strlen(a.type);
		a.dist = dists[pos];
		a.dist_len = strlen(a.dist);
		a.answer = answers[pos];
		a.answer_len = strlen(a.answer);
		a.label_mass = d->label_mass != NULL ? &d->label_mass[pos] :
		    NULL;
		if (store_answers_add(b, &a) == -1)
			goto fail;
		pos++;
	}
	if (store_answers_end(b) == 0)
		return 0;
fail:
	error_set(e, ERR_UNAVAILABLE, NULL, "out of memory (a decision's "
	    "answers for PostgreSQL)");
	e->retry_after_ms = PG_RETRY_MS;
	return -1;
}

int
pg_decision_insert(struct store *pg, const struct decision *d,
    json_object *questions, const char *const *answers,
    const char *const *dists, struct error *e)
{
	struct buf		 b;
	struct pg_params	 p;
	PGresult		*r = NULL;

	pg_read_end(pg);
	buf_init(&b, ANSWERS_MAX);
	if (answers_text(&b, d, questions, answers, dists, e) == -1)
		goto out;
	pg_params_init(&p);
	pg_bind_text(&p, 1, d->id);
	pg_bind_int(&p, 2, d->app_id);
	pg_bind_int(&p, 3, d->created_at_ms);
	pg_bind_text(&p, 4, d->model);
	pg_bind_text(&p, 5, d->backend);
	pg_bind_int(&p, 6, d->schema_id);
	pg_bind_int(&p, 7, d->schema_version);
	pg_bind_optional(&p, 8, d->template_id);
	pg_bind_optional(&p, 9, d->template_version);
	pg_bind_text(&p, 10, d->state);
	if (d->has_usage) {
		pg_bind_int(&p, 11, d->input_tokens);
		pg_bind_int(&p, 12, d->output_tokens);
	} else {
		pg_bind_null(&p, 11);
		pg_bind_null(&p, 12);
	}
	pg_bind_int(&p, 13, d->latency_gateway_ms);
	pg_bind_int(&p, 14, d->latency_backend_ms);
	pg_bind_text(&p, 15, b.p);
	pg_bind_text(&p, 16, d->quota_day);
	pg_bind_int(&p, 17, d->quota_units);
	r = pg_exec(pg, PG_DECISION_INSERT, &p, e, "insert decision");
out:
	buf_free(&b);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

/* Reading a decision back. */

/* JSON text of column c of row 0 into *out; NULL is an empty object
 * (a decision without outcomes). */
static int
json_or_empty(const PGresult *r, int c, json_object **out, const char *what,
    struct error *e)
{
	if (pg_is_null(r, 0, c)) {
		*out = ju_obj();
		return 0;
	}
	return pg_json(pg_str(r, 0, c), out, what, e);
}

/* The decision row into d (owning its copies); d is cleared by the
 * caller on failure. */
static int
read_decision(const PGresult *r, struct decision_row *d, struct error *e)
{
	const char *model = pg_str(r, 0, 3);

	pg_copy(r, 0, 0, d->id, sizeof(d->id));
	d->app_id = pg_int(r, 0, 1);
	d->created_at_ms = pg_int(r, 0, 2);
	/* The model is the client's, of any length: checked. */
	if (model != NULL && (d->model = strdup(model)) == NULL) {
		error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		e->retry_after_ms = PG_RETRY_MS;
		return -1;
	}
	pg_copy(r, 0, 4, d->backend, sizeof(d->backend));
	pg_copy(r, 0, 5, d->schema_slug, sizeof(d->schema_slug));
	d->schema_version = pg_int(r, 0, 6);
	pg_copy(r, 0, 8, d->template_slug, sizeof(d->template_slug));
	d->template_version = pg_int(r, 0, 9);
	if (pg_json(pg_str(r, 0, 7), &d->questions, "questions", e) == -1 ||
	    store_bad_row(1, bound_decision(d, e), e) == -1 ||
	    (!pg_is_null(r, 0, 10) &&
	    pg_json(pg_str(r, 0, 10), &d->state, "state", e) == -1) ||
	    json_or_empty(r, 11, &d->answers, "answers", e) == -1 ||
	    json_or_empty(r, 12, &d->outcomes, "outcomes", e) == -1)
		return -1;
	return 0;
}

int
pg_decision_get(struct store *pg, const char *id, int64_t app_id,
    struct decision_row *d, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	int			 rc;

	memset(d, 0, sizeof(*d));
	pg_params_init(&p);
	pg_bind_text(&p, 1, id);
	pg_bind_int(&p, 2, app_id);
	if ((r = pg_exec(pg, PG_DECISION_GET, &p, e, "decision")) == NULL)
		return -1;
	rc = PQntuples(r) == 0 ? 0 : read_decision(r, d, e) == -1 ? -1 : 1;
	PQclear(r);
	if (rc != 1)
		decision_row_clear(d);
	return rc;
}

/* Outcomes (doc/design.md, section 14). */

/* The first question of values (in their order) whose recorded value,
 * as the statement gave it back, is not the one given: 409.  0 or -1. */
static int
check_recorded(const PGresult *r, json_object *values, struct error *e)
{
	const char	*recorded;
	int		 i, n = PQntuples(r);

	json_object_object_foreach(values, question, value) {
		for (i = 0; i < n; i++)
			if (strcmp(pg_str(r, i, 0), question) == 0)
				break;
		if (i == n)
			continue;
		recorded = pg_str(r, i, 1);
		if (recorded == NULL || strcmp(recorded, compact(value)) != 0)
			return outcome_conflict(question, recorded ? recorded : "", e);
	}
	return 0;
}

int
pg_outcome_record(struct store *pg, const char *id, json_object *values,
    const char *source, int64_t now_ms, struct error *e)
{
	struct pg_array		 q, v;
	struct pg_params	 p;
	PGresult		*r = NULL;
	const char		*qt, *vt;

	pg_array_init(&q);
	pg_array_init(&v);
	json_object_object_foreach(values, question, value) {
		pg_array_add(&q, question);
		pg_array_add(&v, compact(value));
	}
	if ((qt = pg_array_end(&q, e)) == NULL ||
	    (vt = pg_array_end(&v, e)) == NULL ||
	    pg_begin(pg, e) == -1)
		goto out;
	pg_params_init(&p);
	pg_bind_text(&p, 1, id);
	pg_bind_text(&p, 2, qt);
	pg_bind_text(&p, 3, vt);
	pg_bind_text(&p, 4, source);
	pg_bind_int(&p, 5, now_ms);
	/* Nothing is kept unless every value matched.  No row back: the
	 * decision went since the caller read it (a prune), a 404 as if it
	 * had not been there. */
	if ((r = pg_exec(pg, PG_OUTCOME_RECORD, &p, e, "outcome")) == NULL ||
	    (PQntuples(r) == 0 && json_object_object_length(values) > 0 &&
	    error_set(e, ERR_NOT_FOUND, NULL, "no such decision") == -1) ||
	    check_recorded(r, values, e) == -1 || pg_commit(pg, e) == -1) {
		pg_rollback(pg);
		PQclear(r);
		r = NULL;
	}
out:
	pg_array_free(&q);
	pg_array_free(&v);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

int
pg_decision_page(struct store *pg, const struct decision_range *q,
    int limit, void (*fn)(const char *id, int64_t created_at_ms, void *),
    void *arg, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	char			 id[UUID7_LEN + 1];
	int			 i, n;

	pg_params_init(&p);
	pg_bind_int(&p, 1, q->app_id);
	pg_bind_int(&p, 2, q->since_ms);
	pg_bind_int(&p, 3, q->until_ms);
	/* No keyset yet: before every row. */
	pg_bind_int(&p, 4, *q->after_id ? q->after_ms : INT64_MIN);
	pg_bind_text(&p, 5, q->after_id);
	pg_bind_int(&p, 6, limit);
	if ((r = pg_exec(pg, PG_DECISION_PAGE, &p, e, "decision page")) ==
	    NULL)
		return -1;
	n = PQntuples(r);
	for (i = 0; i < n; i++) {
		pg_copy(r, i, 0, id, sizeof(id));
		fn(id, pg_int(r, i, 1), arg);
	}
	PQclear(r);
	return n;
}
