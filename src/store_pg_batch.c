/* store_pg_batch.c: many values in one statement, and many rows out of
 * one without holding them all, for the PostgreSQL engine's data files.
 *
 * A list of values (the questions of an outcome, a prune step's ids)
 * goes to PostgreSQL as one parameter, an array in its text form
 * ('{"a","b\"c",NULL}'), which the statement unnests: one statement
 * and one round trip however many there are, every value still a
 * parameter.  A walk over rows that may be many (calibration)
 * takes them one at a time as they arrive (libpq's single-row mode)
 * rather than as one result in memory. */
#include "config.h"

#include <string.h>

#include "store_pg.h"

#define PG_ARRAY_MAX	(256u << 20)	/* the most one array may hold */

void
pg_array_init(struct pg_array *a)
{
	buf_init(&a->b, PG_ARRAY_MAX);
	a->n = 0;
	a->failed = buf_adds(&a->b, "{") != BUF_OK;
}

void
pg_array_add(struct pg_array *a, const char *v)
{
	const char	*p, *run;

	if (a->failed)
		return;
	if (a->n++ > 0 && buf_adds(&a->b, ",") != BUF_OK)
		goto fail;
	if (v == NULL) {
		if (buf_adds(&a->b, "NULL") != BUF_OK)
			goto fail;
		return;
	}
	if (buf_adds(&a->b, "\"") != BUF_OK)
		goto fail;
	/* Inside quotes only " and \ are special: each gets a \. */
	for (run = p = v; *p != '\0'; p++)
		if (*p == '"' || *p == '\\') {
			if (buf_add(&a->b, run, (size_t)(p - run)) != BUF_OK ||
			    buf_adds(&a->b, "\\") != BUF_OK)
				goto fail;
			run = p;
		}
	if (buf_add(&a->b, run, (size_t)(p - run)) != BUF_OK ||
	    buf_adds(&a->b, "\"") != BUF_OK)
		goto fail;
	return;
fail:
	a->failed = 1;
}

const char *
pg_array_end(struct pg_array *a, struct error *e)
{
	if (!a->failed && buf_adds(&a->b, "}") == BUF_OK)
		return a->b.p;
	a->failed = 1;
	error_set(e, ERR_UNAVAILABLE, NULL, "out of memory (a list of "
	    "values for PostgreSQL)");
	e->retry_after_ms = PG_RETRY_MS;
	return NULL;
}

void
pg_array_free(struct pg_array *a)
{
	buf_free(&a->b);
}

int
pg_stream(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    int (*fn)(const PGresult *, void *, struct error *), void *arg,
    struct error *e, const char *what)
{
	PGresult	*r;
	char		 name[PG_NAME_SIZE];
	int		 rc = 0;

	if (pg_prepare(pg, id, name, e) == -1 ||
	    pg_send_begin(pg, e) == -1)
		return -1;
	if (!PQsendQueryPrepared(pg->conn, name, p ? p->n : 0,
	    p ? p->v : NULL, p ? p->len : NULL, p ? p->fmt : NULL, 0))
		return pg_fail(pg, NULL, e, what);
	(void)PQsetSingleRowMode(pg->conn);
	/* Every result is read, the rows after a failure too: the
	 * connection is then ready for the next statement. */
	while ((r = PQgetResult(pg->conn)) != NULL) {
		switch (PQresultStatus(r)) {
		case PGRES_SINGLE_TUPLE:
			if (rc == 0 && fn(r, arg, e) == -1)
				rc = -1;
			break;
		case PGRES_TUPLES_OK:		/* the end */
			break;
		default:
			if (rc == 0)
				rc = pg_fail(pg, r, e, what);
			break;
		}
		PQclear(r);
	}
	/* libpq keeps single-row mode set once the walk is over, and only
	 * a statement sent outside a pipeline clears it: without this, the
	 * next pipelined statement of the request (pg_exec) would get its
	 * rows one at a time and fail.  An empty query is the cheapest
	 * such statement; it runs after a walk, never per row. */
	PQclear(PQexec(pg->conn, ""));
	return rc;
}
