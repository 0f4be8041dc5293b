/* store_sqlite_report.c: what the reports read, each streamed by one
 * statement in the order store.h gives, so that a report is the same
 * however often it is asked for: calibration (doc/design.md, section
 * 15), every answered question of a schema version that has an outcome,
 * with the untempered distribution the decision kept, in decision id
 * order; the comparison of the version's backend with its challengers
 * (section 15.1), those rows once per challenger that answered the
 * decision. */
#include "config.h"

#include <stdint.h>

#include "store_sqlite.h"

static const char *
col(sqlite3_stmt *stmt, int i)
{
	const unsigned char *t = sqlite3_column_text(stmt, i);

	return t != NULL ? (const char *)t : "";
}

/* Binds report statement id to its version, since and question, and
 * hands its rows to each(stmt, arg, e) in turn.  0, or -1 with e set
 * (what names the read). */
static int
walk(struct store *st, enum stmt id, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*each)(sqlite3_stmt *, void *, struct error *), void *arg,
    struct error *e, const char *what)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = sqlite_stmt(st, id, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, schema_id);
	sqlite3_bind_int64(stmt, 2, version);
	sqlite3_bind_int64(stmt, 3, since_ms);
	sqlite_bind_text(stmt, 4, question);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (each(stmt, arg, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, what);
}

struct calibration_walk {
	int	(*fn)(const struct calibration_row *, void *, struct error *);
	void	*arg;
};

static int
calibration_row(sqlite3_stmt *stmt, void *arg, struct error *e)
{
	struct calibration_walk	*w = arg;
	struct calibration_row	 row;

	row.decision_id = col(stmt, 0);
	row.backend = col(stmt, 1);
	row.created_at_ms = sqlite3_column_int64(stmt, 2);
	row.question = col(stmt, 3);
	row.type = col(stmt, 4);
	row.distribution = col(stmt, 5);
	row.outcome = col(stmt, 6);
	return w->fn(&row, w->arg, e);
}

int
sq_calibration_each(struct store *st, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct calibration_row *, void *, struct error *),
    void *arg, struct error *e)
{
	struct calibration_walk	 w = { fn, arg };

	return walk(st, STMT_CALIBRATION_ROWS, schema_id, version, question,
	    since_ms, calibration_row, &w, e, "calibration rows");
}

/* A count, or -1 for NULL. */
static int64_t
count(sqlite3_stmt *stmt, int i)
{
	return sqlite3_column_type(stmt, i) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(stmt, i);
}

struct compare_walk {
	int	(*fn)(const struct compare_row *, void *, struct error *);
	void	*arg;
};

static int
compare_row(sqlite3_stmt *stmt, void *arg, struct error *e)
{
	struct compare_walk	*w = arg;
	struct compare_row	 row;

	row.decision_id = col(stmt, 0);
	row.created_at_ms = sqlite3_column_int64(stmt, 1);
	row.question = col(stmt, 2);
	row.type = col(stmt, 3);
	row.distribution = col(stmt, 4);
	row.outcome = col(stmt, 5);
	row.latency_ms = count(stmt, 6);
	row.tokens = count(stmt, 7);
	row.challenger = col(stmt, 8);
	row.answers = col(stmt, 9);
	row.challenger_latency_ms = count(stmt, 10);
	row.challenger_tokens = count(stmt, 11);
	row.source = col(stmt, 12);
	return w->fn(&row, w->arg, e);
}

int
sq_compare_each(struct store *st, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct compare_row *, void *, struct error *),
    void *arg, struct error *e)
{
	struct compare_walk	 w = { fn, arg };

	return walk(st, STMT_COMPARE_ROWS, schema_id, version, question,
	    since_ms, compare_row, &w, e, "comparison rows");
}
