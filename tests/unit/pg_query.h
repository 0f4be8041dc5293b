/* pg_query.h: what the PostgreSQL unit tests (store_pg_sql_test.c,
 * store_pg_plan_test.c) share: their settings, and their one way to run
 * a statement. */
#ifndef EVALGATE_TESTS_PG_QUERY_H
#define EVALGATE_TESTS_PG_QUERY_H

#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>

#include "settings.h"

/* Fills s for the cluster EVALGATE_TEST_PG_URL names, its cache in dir
 * (a mkdtemp() template, created here), syncing in full.  Returns the
 * URL (the environment's), or NULL after printing the TAP plan that
 * skips the test when there is none (runner: what gives one). */
static const char *
pg_test_settings(struct settings *s, char *dir, const char *runner)
{
	const char	*url = getenv("EVALGATE_TEST_PG_URL");

	if (url == NULL || *url == '\0') {
		printf("1..0 # SKIP no EVALGATE_TEST_PG_URL (run %s)\n",
		    runner);
		return NULL;
	}
	if (mkdtemp(dir) == NULL)
		exit(1);
	snprintf(s->db_url, sizeof(s->db_url), "%s", url);
	snprintf(s->cache_path, sizeof(s->cache_path), "%s/cache.db", dir);
	s->db_sync = DB_SYNC_FULL;
	return url;
}

/* The statement's result, owned by the caller (PQclear), with a TAP
 * comment when the server refused it. */
static PGresult *
query(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_TUPLES_OK &&
	    PQresultStatus(r) != PGRES_COMMAND_OK)
		printf("# %s: %s", sql, PQerrorMessage(c));
	return r;
}

#endif
