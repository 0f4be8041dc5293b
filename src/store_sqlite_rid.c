/* store_sqlite_rid.c: where a decision lives in SQLite's decisions
 * table, and the SQL function that says it.
 *
 * The table is keyed by an integer, rid, that the decision's id gives:
 * the id's key (uuid7_key(): its creation ms and counter, in the order
 * of time) times 16, plus a slot from 0 to 15 for ids that share a key
 * (two workers drawing the same counter in one ms; a clock set back).
 * So a decision is appended at the table's right edge, where SQLite
 * splits a full page by starting a new one, and found from its id among
 * the 16 rows of its key's range, without an index of ids that every
 * decision would write a page of (bench/frames.py counts them).
 *
 *	decision_rid(id)	the first rid of id's range; NULL when id
 *				is not a UUIDv7 (so a lookup finds nothing)
 *	decision_rid(id, n)	the rid of slot n; an error when n is not
 *				in 0..15 or id not a UUIDv7, so that an
 *				insert fails rather than storing a decision
 *				no lookup would find
 *
 * Registered on every connection that reads or writes decisions
 * (store_sqlite.c and the files that open one of their own), with
 * answer_number(x), the text of number x that store_answers_add()
 * writes (ju_write_num()), for sql/migrate-10.sql to write a stored
 * answer's label_mass as the workers do. */
#include "config.h"

#include "json_util.h"
#include "store_sqlite.h"
#include "uuid7.h"

#define RID_SLOTS 16

static void
decision_rid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char	*id = sqlite3_value_text(argv[0]);
	int64_t			 key, n = 0;

	key = id != NULL && sqlite3_value_bytes(argv[0]) == UUID7_LEN ?
	    uuid7_key((const char *)id) : -1;
	if (argc == 2)
		n = sqlite3_value_int64(argv[1]);
	if (key >= 0 && n >= 0 && n < RID_SLOTS)
		sqlite3_result_int64(ctx, key * RID_SLOTS + n);
	else if (argc == 1)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_error(ctx, key < 0 ? "decision_rid: not a "
		    "UUIDv7" : "decision_rid: 16 decisions share one key", -1);
}

static void
answer_number(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	char	text[JU_NUM_MAX];
	size_t	n;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	n = ju_num_text(sqlite3_value_double(argv[0]), text);
	sqlite3_result_text(ctx, text, (int)n, SQLITE_TRANSIENT);
}

int
sqlite_rid_register(sqlite3 *db)
{
	static const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC |
	    SQLITE_INNOCUOUS;

	if (sqlite3_create_function(db, "decision_rid", 1, flags, NULL,
	    decision_rid, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(db, "decision_rid", 2, flags, NULL,
	    decision_rid, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function(db, "answer_number", 1, flags, NULL,
	    answer_number, NULL, NULL) != SQLITE_OK)
		return -1;
	return 0;
}
