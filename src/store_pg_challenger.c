/* store_pg_challenger.c: challengers on PostgreSQL, as the SQLite
 * engine keeps them (store_sqlite_challenger.c): the backends named for
 * a schema version beside its own, and what each one answered for a
 * decision (deleted with it by PG_PRUNE_DELETE), and the walk of a
 * replay (evalgate-admin replay). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "store_pg.h"

/* JSON as kept in a TEXT column: compact, '/' left alone. */
#define STORED_JSON (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

int
pg_challenger_set(struct store *pg, const struct challenger *c,
    struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, c->schema_id);
	pg_bind_int(&p, 2, c->version);
	pg_bind_int(&p, 3, c->backend_id);
	pg_bind_double(&p, 4, c->share);
	pg_bind_int(&p, 5, clock_now_ms() / 1000);
	return pg_run(pg, PG_CHALLENGER_SET, &p, e, "set challenger") == -1 ?
	    -1 : 0;
}

int
pg_challenger_remove(struct store *pg, int64_t schema_id, int64_t version,
    int64_t backend_id, struct error *e)
{
	struct pg_params	p;
	int64_t			n;

	pg_params_init(&p);
	pg_bind_int(&p, 1, schema_id);
	pg_bind_int(&p, 2, version);
	pg_bind_int(&p, 3, backend_id);
	n = pg_run(pg, PG_CHALLENGER_REMOVE, &p, e, "remove challenger");
	return n == -1 ? -1 : n > 0;
}

int
pg_challenger_each(struct store *pg, int64_t schema_id, int64_t version,
    void (*fn)(const struct challenger *, void *), void *arg,
    struct error *e)
{
	struct pg_params	p;
	struct challenger	c;
	PGresult		*r;
	int			i;

	pg_params_init(&p);
	pg_bind_int(&p, 1, schema_id);
	pg_bind_int(&p, 2, version);
	if ((r = pg_exec(pg, PG_CHALLENGER_ALL, &p, e, "challengers")) ==
	    NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		memset(&c, 0, sizeof(c));
		c.schema_id = pg_int(r, i, 0);
		c.version = pg_int(r, i, 1);
		c.backend_id = pg_int(r, i, 2);
		pg_copy(r, i, 3, c.backend, sizeof(c.backend));
		c.share = pg_double(r, i, 4);
		c.created_at = pg_int(r, i, 5);
		fn(&c, arg);
	}
	PQclear(r);
	return 0;
}

struct kept *
pg_kept(struct store *pg)
{
	return pg->kept;
}

int
pg_challenger_answer_insert(struct store *pg,
    const struct challenger_answer *a, struct error *e)
{
	struct pg_params	 p;
	const char		*text;

	if ((text = json_object_to_json_string_ext(a->answers,
	    STORED_JSON)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	pg_params_init(&p);
	pg_bind_text(&p, 1, a->decision_id);
	pg_bind_text(&p, 2, a->backend);
	pg_bind_text(&p, 3, text);
	pg_bind_int(&p, 4, a->latency_ms);
	if (a->has_usage) {
		pg_bind_int(&p, 5, a->input_tokens);
		pg_bind_int(&p, 6, a->output_tokens);
	} else {
		pg_bind_null(&p, 5);
		pg_bind_null(&p, 6);
	}
	pg_bind_text(&p, 7, a->source);
	pg_bind_int(&p, 8, a->recorded_at_ms);
	/* One statement: its own transaction. */
	return pg_run(pg, PG_CHALLENGER_ANSWER_INSERT, &p, e,
	    "record a challenger's answer") == -1 ? -1 : 0;
}

int
pg_challenger_answers(struct store *pg, const char *id,
    void (*fn)(const struct challenger_answer *, void *), void *arg,
    struct error *e)
{
	struct pg_params	 p;
	struct challenger_answer a;
	PGresult		*r;
	int			 i, rc = 0;

	pg_params_init(&p);
	pg_bind_text(&p, 1, id);
	if ((r = pg_exec(pg, PG_CHALLENGER_ANSWERS, &p, e,
	    "challenger answers")) == NULL)
		return -1;
	for (i = 0; i < PQntuples(r) && rc == 0; i++) {
		memset(&a, 0, sizeof(a));
		snprintf(a.decision_id, sizeof(a.decision_id), "%s", id);
		a.backend = pg_str(r, i, 0);
		if (pg_json(pg_str(r, i, 1), &a.answers, "challenger answers",
		    e) == -1) {
			rc = -1;
			break;
		}
		a.latency_ms = pg_int(r, i, 2);
		a.has_usage = !pg_is_null(r, i, 3);
		a.input_tokens = pg_int(r, i, 3);
		a.output_tokens = pg_int(r, i, 4);
		a.source = pg_str(r, i, 5);
		a.recorded_at_ms = pg_int(r, i, 6);
		fn(&a, arg);
		json_object_put(a.answers);
	}
	PQclear(r);
	return rc;
}

/* How far before a replay's since its ids are looked for (ms).  A
 * decision's id and its created_at_ms are two readings of the worker's
 * clock, the id's taken first (handler_systemone.c, record()), and an
 * id's first 48 bits are the ms of its reading (uuid7.c): an id may
 * stand before its created_at_ms by the time between the readings, or
 * more if the clock was stepped forward between them.  A minute is far
 * more than either; an id of a later ms than its reading (the clock
 * stepped back, uuid7.c reuses its last ms) is above the bound
 * anyway. */
#define REPLAY_ID_MARGIN_MS	60000

/* The smallest id text of a decision made at or after ms - the margin:
 * its 48-bit ms as uuid7.c writes the first 12 hex digits,
 * "xxxxxxxx-xxxx", which sorts (COLLATE "C") before every id of that ms
 * and after every id of an earlier one. */
static void
replay_floor(int64_t since_ms, char out[14])
{
	int64_t ms = since_ms;	/* INT64_MIN: no since */

	ms = ms < REPLAY_ID_MARGIN_MS ? 0 : ms - REPLAY_ID_MARGIN_MS;
	ms = ms > 0xffffffffffffLL ? 0xffffffffffffLL : ms;
	snprintf(out, 14, "%08llx-%04llx", (unsigned long long)(ms >> 16),
	    (unsigned long long)(ms & 0xffff));
}

int
pg_replay_page(struct store *pg, const struct replay_range *q, int limit,
    void (*fn)(const struct replay_row *, void *), void *arg,
    struct error *e)
{
	struct pg_params	p;
	struct replay_row	row;
	PGresult		*r;
	char			from[14];
	int			i, n;

	replay_floor(q->since_ms, from);
	pg_params_init(&p);
	pg_bind_int(&p, 1, q->schema_id);
	pg_bind_int(&p, 2, q->version);
	pg_bind_int(&p, 3, q->since_ms);
	pg_bind_text(&p, 4, q->backend);
	pg_bind_text(&p, 5, q->after_id);
	pg_bind_int(&p, 6, limit);
	pg_bind_text(&p, 7, from);
	if ((r = pg_exec(pg, PG_REPLAY_PAGE, &p, e, "replay page")) == NULL)
		return -1;
	n = PQntuples(r);
	for (i = 0; i < n; i++) {
		memset(&row, 0, sizeof(row));
		pg_copy(r, i, 0, row.id, sizeof(row.id));
		row.created_at_ms = pg_int(r, i, 1);
		row.recorded = pg_int(r, i, 2) != 0;
		row.state = pg_str(r, i, 3);
		fn(&row, arg);
	}
	PQclear(r);
	return n;
}
