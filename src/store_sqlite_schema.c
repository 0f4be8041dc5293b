/* store_sqlite_schema.c: the steps that make a SQLite database of the
 * schema version this program needs, in one table: run in order by the
 * migration (store_sqlite.c) and, on an empty database in memory, by the
 * check of a file against the schema it should have
 * (store_sqlite_check.c).  Neither of those calls the other through
 * here: no call cycle (tests/layering_test.sh). */
#include "config.h"

#include <stddef.h>

#include "store_sqlite.h"

/* migrations[i] takes a database from user_version i to i + 1: step 1
 * is schema.sql, step N is sql/migrate-N.sql.  A new database runs them
 * all, starting from schema.sql, which holds every table; later steps
 * are written to be no-ops where it has them. */
static const char *const migrations[] = {
	schema_sql,
	migrate_2_sql,		/* the index calibration reads by */
	migrate_3_sql,		/* the catalog generation and its triggers */
	migrate_4_sql,		/* keys' keyed hash, backends' in-flight cap */
	migrate_5_sql,		/* openai options, answers' label mass */
	migrate_6_sql,		/* retention: per application, indexes */
	migrate_7_sql,		/* decisions_time dropped */
	migrate_8_sql,		/* backends' kind options in one column */
	migrate_9_sql,		/* challengers and their answers */
	migrate_10_sql,		/* a decision's answers in its row */
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) ==
    STORE_SCHEMA_VERSION, "migrations[] must end at STORE_SCHEMA_VERSION");

const char *
sqlite_schema_step(int v)
{
	if (v < 0 || (size_t)v >= sizeof(migrations) / sizeof(migrations[0]))
		return NULL;
	return migrations[v];
}
