/* pg_query.h: the PostgreSQL unit tests' one way to run a statement
 * (store_pg_sql_test.c, store_pg_plan_test.c): its result, owned by the
 * caller (PQclear), with a TAP comment when the server refused it. */
#ifndef EVALGATE_TESTS_PG_QUERY_H
#define EVALGATE_TESTS_PG_QUERY_H

#include <stdio.h>

#include <libpq-fe.h>

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
