/* store_sql_test.c: TAP tests of the store's SQL (src/store_sqlite_sql.c and
 * the .sql files): every statement of enum stmt has a text, and every
 * text prepares against a database made by schema.sql and each
 * migration step, with the cache made by cache.sql attached, as a
 * worker's connection has them.  A statement lost from the table, or
 * naming a column no step creates, fails here, not in a request. */
#include "config.h"

#include <sqlite3.h>

#include "store_sqlite.h"
#include "tap.h"

static int
run(sqlite3 *db, const char *sql, const char *what)
{
	char	*err = NULL;
	int	 rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (!ok(rc == SQLITE_OK, "%s", what))
		printf("#   %s\n", err ? err : "?");
	sqlite3_free(err);
	return rc;
}

int
main(void)
{
	static const struct {
		const char	*sql;
		const char	*what;
	} steps[] = {
		{ schema_sql, "schema.sql" },
		{ migrate_2_sql, "sql/migrate-2.sql" },
		{ migrate_3_sql, "sql/migrate-3.sql" },
		{ migrate_4_sql, "sql/migrate-4.sql" },
		{ migrate_5_sql, "sql/migrate-5.sql" },
		{ migrate_6_sql, "sql/migrate-6.sql" },
		{ migrate_7_sql, "sql/migrate-7.sql" },
		{ migrate_8_sql, "sql/migrate-8.sql" },
		{ migrate_9_sql, "sql/migrate-9.sql" },
		{ "ATTACH DATABASE ':memory:' AS cache", "attach a cache" },
		{ cache_sql, "sql/cache.sql" },
	};
	sqlite3		*db;
	sqlite3_stmt	*stmt;
	size_t		 i;
	int		 rc;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 1;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		run(db, steps[i].sql, steps[i].what);
	for (i = 0; i < STMT__MAX; i++) {
		if (!ok(store_sql[i] != NULL, "statement %zu has a text", i))
			continue;
		stmt = NULL;
		rc = sqlite3_prepare_v2(db, store_sql[i], -1, &stmt, NULL);
		if (!ok(rc == SQLITE_OK, "statement %zu prepares", i))
			printf("#   %s\n#   %s\n", sqlite3_errmsg(db),
			    store_sql[i]);
		sqlite3_finalize(stmt);
	}
	sqlite3_close(db);
	return tap_done();
}
