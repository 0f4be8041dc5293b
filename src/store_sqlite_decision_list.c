/* store_sqlite_decision_list.c: an application's decisions by creation
 * time, a page at a time, for the operators' listing and export.  Pages are cut
 * on the keyset (created_at_ms, id), which the index decisions_app_time
 * serves, so that a page costs the same wherever it starts and rows
 * recorded meanwhile neither repeat nor shift what follows. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "store_sqlite.h"

int
sq_decision_page(struct store *st, const struct decision_range *q,
    int limit, void (*fn)(const char *id, int64_t created_at_ms, void *),
    void *arg, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_DECISION_PAGE, e);
	char		 id[UUID7_LEN + 1];
	int		 rc, n = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, q->app_id);
	sqlite3_bind_int64(stmt, 2, q->since_ms);
	sqlite3_bind_int64(stmt, 3, q->until_ms);
	/* No keyset yet: before every row. */
	sqlite3_bind_int64(stmt, 4, *q->after_id ? q->after_ms : INT64_MIN);
	sqlite3_bind_text(stmt, 5, q->after_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 6, limit);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		sqlite_col_text(stmt, 0, id, sizeof(id));
		fn(id, sqlite3_column_int64(stmt, 1), arg);
		n++;
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? n : sqlite_fail(st, e, "decision page");
}
