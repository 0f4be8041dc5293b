/* store_pg_decision.c: decisions, their answers and outcomes and the
 * operators' pages of them, in PostgreSQL (the SQLite engine's
 * store_sqlite_decision*.c, with the same answers and errors).
 *
 * A decision costs one statement: the decision, every answer (one
 * array parameter per column) and its quota units, in the implicit
 * transaction of that statement, committed as SERVICE_DB_SYNC says (the
 * connection's synchronous_commit), before the caller answers.  Reading
 * one back is one statement too. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "json_util.h"
#include "store_pg.h"
#include "xalloc.h"

/* The columns of a decision's answers, as PG_DECISION_INSERT takes
 * them ($15 to $19). */
enum { ANS_QUESTION, ANS_TYPE, ANS_DIST, ANS_ANSWER, ANS_MASS, ANS__MAX };

static const char *
compact(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* One array per column of the answers, in question order. */
static void
answer_arrays(struct pg_array a[ANS__MAX], const struct decision *d,
    json_object *questions, const char *const *answers,
    const char *const *dists)
{
	json_object	*type;
	size_t		 pos = 0;

	json_object_object_foreach(questions, name, q) {
		type = NULL;
		json_object_object_get_ex(q, "type", &type);
		pg_array_add(&a[ANS_QUESTION], name);
		pg_array_add(&a[ANS_TYPE], type != NULL ?
		    json_object_get_string(type) : NULL);
		pg_array_add(&a[ANS_DIST], dists[pos]);
		pg_array_add(&a[ANS_ANSWER], answers[pos]);
		pg_array_add_double(&a[ANS_MASS],
		    d->label_mass != NULL ? &d->label_mass[pos] : NULL);
		pos++;
	}
}

int
pg_decision_insert(struct store *pg, const struct decision *d,
    json_object *questions, const char *const *answers,
    const char *const *dists, struct error *e)
{
	struct pg_array		 a[ANS__MAX];
	struct pg_params	 p;
	PGresult		*r = NULL;
	const char		*text;
	int			 i;

	pg_read_end(pg);
	for (i = 0; i < ANS__MAX; i++)
		pg_array_init(&a[i]);
	answer_arrays(a, d, questions, answers, dists);
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
	for (i = 0; i < ANS__MAX; i++) {
		if ((text = pg_array_end(&a[i], e)) == NULL)
			goto out;
		pg_bind_text(&p, 15 + i, text);
	}
	pg_bind_text(&p, 20, d->quota_day);
	pg_bind_int(&p, 21, d->quota_units);
	r = pg_exec(pg, PG_DECISION_INSERT, &p, e, "insert decision");
out:
	for (i = 0; i < ANS__MAX; i++)
		pg_array_free(&a[i]);
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
	/* Nothing is kept unless every value matched. */
	if ((r = pg_exec(pg, PG_OUTCOME_RECORD, &p, e, "outcome")) == NULL ||
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
