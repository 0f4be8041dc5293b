/* store_pg_report.c: what the reports read on PostgreSQL, as the SQLite
 * engine reads it (store_sqlite_report.c): calibration's rows and the
 * comparison's, each by one statement, its rows streamed. */
#include "config.h"

#include <stdint.h>

#include "store_pg.h"

/* A text column of the row, "" for NULL. */
static const char *
col(const PGresult *r, int c)
{
	const char *t = pg_str(r, 0, c);

	return t != NULL ? t : "";
}

/* A count, or -1 for NULL. */
static int64_t
count(const PGresult *r, int c)
{
	return pg_is_null(r, 0, c) ? -1 : pg_int(r, 0, c);
}

/* Binds report statement id to its version, since and question, and
 * streams its rows to each(r, arg, e).  0, or -1 with e set (what names
 * the read). */
static int
walk(struct store *pg, enum pg_stmt id, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*each)(const PGresult *, void *, struct error *), void *arg,
    struct error *e, const char *what)
{
	struct pg_params	 p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, schema_id);
	pg_bind_int(&p, 2, version);
	pg_bind_int(&p, 3, since_ms);
	pg_bind_text(&p, 4, question);
	return pg_stream(pg, id, &p, each, arg, e, what);
}

/* Calibration (doc/design.md, section 15): in decision id order. */

struct calibration_walk {
	int	(*fn)(const struct calibration_row *, void *, struct error *);
	void	*arg;
};

static int
calibration_row(const PGresult *r, void *arg, struct error *e)
{
	struct calibration_walk	*w = arg;
	struct calibration_row	 row;

	row.decision_id = col(r, 0);
	row.backend = col(r, 1);
	row.created_at_ms = pg_int(r, 0, 2);
	row.question = col(r, 3);
	row.type = col(r, 4);
	row.distribution = col(r, 5);
	row.outcome = col(r, 6);
	return w->fn(&row, w->arg, e);
}

int
pg_calibration_each(struct store *pg, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct calibration_row *, void *, struct error *),
    void *arg, struct error *e)
{
	struct calibration_walk	 w = { fn, arg };

	return walk(pg, PG_CALIBRATION_ROWS, schema_id, version, question,
	    since_ms, calibration_row, &w, e, "calibration rows");
}

/* The comparison (doc/design.md, section 15.1). */

struct compare_walk {
	int	(*fn)(const struct compare_row *, void *, struct error *);
	void	*arg;
};

static int
compare_row(const PGresult *r, void *arg, struct error *e)
{
	struct compare_walk	*w = arg;
	struct compare_row	 row;

	row.decision_id = col(r, 0);
	row.created_at_ms = pg_int(r, 0, 1);
	row.question = col(r, 2);
	row.type = col(r, 3);
	row.distribution = col(r, 4);
	row.outcome = col(r, 5);
	row.latency_ms = count(r, 6);
	row.tokens = count(r, 7);
	row.challenger = col(r, 8);
	row.answers = col(r, 9);
	row.challenger_latency_ms = count(r, 10);
	row.challenger_tokens = count(r, 11);
	row.source = col(r, 12);
	return w->fn(&row, w->arg, e);
}

int
pg_compare_each(struct store *pg, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct compare_row *, void *, struct error *),
    void *arg, struct error *e)
{
	struct compare_walk	 w = { fn, arg };

	return walk(pg, PG_COMPARE_ROWS, schema_id, version, question,
	    since_ms, compare_row, &w, e, "comparison rows");
}
