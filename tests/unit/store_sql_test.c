/* store_sql_test.c: TAP tests of the store's SQL (src/store_sqlite_sql.c and
 * the .sql files): every statement of enum stmt has a text, and every
 * text prepares against a database made by the schema's steps
 * (sqlite_schema_step(): schema.sql, then each sql/migrate-N.sql), with
 * the cache made by cache.sql attached, as a worker's connection has
 * them.  A statement lost from the table, or naming a column no step
 * creates, fails here, not in a request.  The statements on decisions
 * search by an index or key (plans[] below). */
#include "config.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

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

/* The statements that read decisions, their outcomes or challengers'
 * answers, each with the index (or the table's own key) its plan must
 * search by: the listing and export (a page), retention, calibration,
 * the comparison, replay, a decision's page and its outcomes.  None may
 * scan one of those tables whole: a plan line "SCAN" is refused unless
 * it reads a decision's answers (json_each, a virtual table). */
static const struct {
	enum stmt	 id;
	const char	*search;	/* a substring of the plan */
} plans[] = {
	{ STMT_DECISION_INSERT, "SEARCH decisions USING INTEGER PRIMARY KEY" },
	{ STMT_DECISION_GET, "SEARCH d USING INTEGER PRIMARY KEY" },
	{ STMT_ANSWERS_GET, "SEARCH d USING INTEGER PRIMARY KEY" },
	{ STMT_OUTCOMES_GET, "SEARCH o USING PRIMARY KEY" },
	{ STMT_OUTCOME_VALUE, "SEARCH outcomes USING PRIMARY KEY" },
	{ STMT_OUTCOME_INSERT, "SEARCH d USING INTEGER PRIMARY KEY" },
	{ STMT_DECISION_PAGE, "USING COVERING INDEX decisions_app_time" },
	{ STMT_CALIBRATION_ROWS, "SEARCH o USING INDEX outcomes_schema" },
	{ STMT_COMPARE_ROWS, "SEARCH o USING INDEX outcomes_schema" },
	{ STMT_REPLAY_PAGE, "SEARCH d USING INTEGER PRIMARY KEY (rowid>?)" },
	{ STMT_PRUNE_PICK, "SEARCH d USING COVERING INDEX decisions_app_time" },
	{ STMT_PRUNE_OUTCOMES, "SEARCH outcomes USING PRIMARY KEY" },
	{ STMT_PRUNE_CHALLENGERS, "SEARCH challenger_answers USING PRIMARY KEY" },
	{ STMT_PRUNE_DECISION, "SEARCH decisions USING INTEGER PRIMARY KEY" },
	{ STMT_STATE_CLEAR, "USING INDEX decisions_state_time" },
	{ STMT_CHALLENGER_ANSWERS, "SEARCH challenger_answers USING PRIMARY KEY" },
};

/* Statement id's query plan, its lines joined by newlines, into out. */
static void
plan(sqlite3 *db, enum stmt id, char *out, size_t size)
{
	sqlite3_stmt	*stmt = NULL;
	char		 sql[4096];
	size_t		 len = 0;

	out[0] = '\0';
	snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s", store_sql[id]);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		snprintf(out, size, "(%s)\n", sqlite3_errmsg(db));
	else
		while (sqlite3_step(stmt) == SQLITE_ROW && len < size)
			len += (size_t)snprintf(out + len, size - len,
			    "#     %s\n",
			    (const char *)sqlite3_column_text(stmt, 3));
	sqlite3_finalize(stmt);
}

/* Whether plan p scans a table whole: a line "SCAN" but for a
 * decision's answers (json_each, a virtual table) or a subquery's rows. */
static int
scans(const char *p)
{
	const char	*end;
	char		 line[512];

	for (; (end = strchr(p, '\n')) != NULL; p = end + 1) {
		snprintf(line, sizeof(line), "%.*s", (int)(end - p), p);
		if (strncmp(line, "#     SCAN ", 11) == 0 &&
		    strstr(line, "VIRTUAL TABLE") == NULL &&
		    strstr(line, "(subquery") == NULL)
			return 1;
	}
	return 0;
}

int
main(void)
{
	sqlite3		*db;
	sqlite3_stmt	*stmt;
	const char	*sql;
	char		 what[32];
	size_t		 i;
	int		 rc, v;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite_rid_register(db) == -1)
		return 1;
	for (v = 0; (sql = sqlite_schema_step(v)) != NULL; v++) {
		snprintf(what, sizeof(what), "step %d of the schema", v + 1);
		run(db, sql, what);
	}
	ok(v == STORE_SCHEMA_VERSION, "%d steps", v);
	run(db, "ATTACH DATABASE ':memory:' AS cache", "attach a cache");
	run(db, cache_sql, "sql/cache.sql");
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
	for (i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		char p[2048];

		plan(db, plans[i].id, p, sizeof(p));
		if (!ok(strstr(p, plans[i].search) != NULL && !scans(p),
		    "statement %d searches by %s, scanning no table",
		    (int)plans[i].id, plans[i].search))
			printf("#   %s\n#   plan:\n%s", store_sql[plans[i].id],
			    p);
	}
	sqlite3_close(db);
	return tap_done();
}
