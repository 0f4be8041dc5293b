/* store_sqlite_calibration.c: what calibration reads (doc/design.md,
 * section 15):
 * every answered question of a schema version that has an outcome, with
 * the untempered distribution the decision kept, streamed in decision id
 * order so that a report is the same however often it is asked for. */
#include "config.h"

#include <stdint.h>

#include "store_sqlite.h"

static const char *
col(sqlite3_stmt *stmt, int i)
{
	const unsigned char *t = sqlite3_column_text(stmt, i);

	return t != NULL ? (const char *)t : "";
}

int
sq_calibration_each(struct store *st, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct calibration_row *, void *, struct error *),
    void *arg, struct error *e)
{
	sqlite3_stmt		*stmt;
	struct calibration_row	 row;
	int			 rc;

	if ((stmt = sqlite_stmt(st, STMT_CALIBRATION_ROWS, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, schema_id);
	sqlite3_bind_int64(stmt, 2, version);
	sqlite3_bind_int64(stmt, 3, since_ms);
	sqlite_bind_text(stmt, 4, question);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		row.decision_id = col(stmt, 0);
		row.backend = col(stmt, 1);
		row.created_at_ms = sqlite3_column_int64(stmt, 2);
		row.question = col(stmt, 3);
		row.type = col(stmt, 4);
		row.distribution = col(stmt, 5);
		row.outcome = col(stmt, 6);
		if (fn(&row, arg, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "calibration rows");
}
