/* store_pg_plan_test.c: TAP tests of the plans PostgreSQL makes for the
 * statements that walk decisions and outcomes (doc/design.md, section
 * 10): on a database of a few thousand decisions, ANALYZEd, with the
 * planner's costs as they are (enable_seqscan on), each of the
 * listing, calibration, the comparison, a replay from a since, the
 * prune's pick, the clearing of states and a decision's GET reads
 * decisions and outcomes by the index named here, and no Seq Scan of
 * either table.  Each is planned both as a first execution (a custom
 * plan, for its values) and as a worker's prepared statement ends up
 * (a generic plan, for any values).
 *
 * Run by tests/pg/test_plans.pg (tests/pg/plans.py: a throw-away
 * cluster, its database in EVALGATE_TEST_PG_URL); alone it skips. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "settings.h"
#include "store_pg.h"
#include "pg_query.h"
#include "tap.h"

#define DECISIONS	"6000"		/* rows of decisions */
#define T0		"1700000000000"	/* the first one's created_at_ms */

/* A statement, its values, the index each of decisions and outcomes
 * must be read by (NULL: the statement does not read that table), and
 * a condition the plan must show, if any. */
static const struct plan_case {
	const char	*what;
	enum pg_stmt	 id;
	int		 n;
	const char	*v[8];
	const char	*decisions, *outcomes;
	const char	*cond;
} cases[] = {
	{ "listing (a page of an application's decisions)",
	  PG_DECISION_PAGE, 6,
	  { "2", "1700001000000", "1700004000000", "1700002000000",
	    "018bd003-ec80-7000-8000-000000000000", "100" },
	  "decisions_app_time", NULL, NULL },
	{ "calibration (a version's outcomes)", PG_CALIBRATION_ROWS, 4,
	  { "2", "3", "0", NULL }, "decisions_pkey", "outcomes_schema", NULL },
	{ "calibration of one question since a time", PG_CALIBRATION_ROWS, 4,
	  { "2", "3", "1700003000000", "q" }, "decisions_pkey",
	  "outcomes_schema", NULL },
	{ "the comparison", PG_COMPARE_ROWS, 4,
	  { "2", "3", "0", NULL }, "decisions_pkey", "outcomes_schema", NULL },
	{ "a replay from a since", PG_REPLAY_PAGE, 7,
	  { "2", "3", "1700005000000", "challenger", "", "100",
	    "018bd030-c8e0" }, "decisions_pkey", NULL,
	  /* The primary key read from the since's smallest id on, not
	   * from its start. */
	  "(id >= " },
	{ "the prune's pick", PG_PRUNE_PICK, 5,
	  { "1700003000000", "2", "1700000500000",
	    "018bcfed-0920-7000-8000-000000000000", "200" },
	  "decisions_app_time", NULL, NULL },
	{ "the clearing of states", PG_STATE_CLEAR, 2,
	  { "1700000300000", "200" }, "decisions_state_time", NULL, NULL },
	{ "a decision's GET", PG_DECISION_GET, 2,
	  { "018bcfe5-6be8-7001-8000-000000000001", "0" },
	  "decisions_pkey", "outcomes_pkey", NULL },
};

/* A few thousand decisions of four applications and schemas, one a
 * second from T0, their ids UUIDv7 texts of that ms; one in three with
 * a state, one in two with an outcome, one in three with a challenger's
 * answer; then ANALYZE. */
static int
fill(PGconn *c)
{
	PGresult	*r;
	int		 ok_;

	r = query(c, "INSERT INTO applications (id, name, created_at)"
	    " SELECT i, 'app' || i, 1 FROM generate_series(1, 4) i;"
	    " INSERT INTO backends (id, name, kind, created_at)"
	    " VALUES (1, 'lex', 'lexical', 1);"
	    " INSERT INTO schemas (id, slug, created_at)"
	    " SELECT i, 's' || i, 1 FROM generate_series(1, 4) i;"
	    " INSERT INTO schema_versions (schema_id, version, questions,"
	    " fingerprint, backend_id, created_at)"
	    " SELECT s, v, '{\"q\":{\"type\":\"noul\"}}', 'f' || s || '.' || v,"
	    " 1, 1 FROM generate_series(1, 4) s, generate_series(1, 5) v;"
	    " INSERT INTO decisions (id, app_id, created_at_ms, backend,"
	    " schema_id, schema_version, state, answers)"
	    " SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' ||"
	    " lpad(to_hex(i % 4096), 3, '0') || '-8000-' ||"
	    " lpad(to_hex(i), 12, '0'), 1 + i % 4, ms, 'lex', 1 + i % 4,"
	    " 1 + i / 4 % 5, CASE WHEN i % 3 = 0 THEN '{}' END,"
	    " '[{\"question\":\"q\",\"type\":\"noul\",\"distribution\":"
	    "{\"yes\":0.5,\"no\":0.5},\"answer\":0.5}]'"
	    " FROM generate_series(1, " DECISIONS ") i,"
	    " LATERAL (SELECT " T0 "::bigint + i * 1000 AS ms) m,"
	    " LATERAL (SELECT lpad(to_hex(ms), 12, '0') AS h) x;"
	    " INSERT INTO outcomes (decision_id, question, value,"
	    " recorded_at_ms, schema_id, schema_version)"
	    " SELECT id, 'q', 'true', created_at_ms, schema_id,"
	    " schema_version FROM decisions WHERE created_at_ms / 1000 % 2 = 0;"
	    " INSERT INTO challenger_answers (decision_id, backend, answers,"
	    " latency_ms, source, recorded_at_ms)"
	    " SELECT id, 'challenger', '{\"q\":{\"yes\":0.5,\"no\":0.5}}', 1,"
	    " 'live', created_at_ms FROM decisions"
	    " WHERE created_at_ms / 1000 % 3 = 0;"
	    " ANALYZE");
	ok_ = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	return ok(ok_, "a database of " DECISIONS " decisions, ANALYZEd");
}

/* Whether the plan reads table by index (of that table): an Index or
 * Index Only Scan "using <index> on <table>", or a Bitmap Index Scan
 * "on <index>" under a Bitmap Heap Scan of the table. */
static int
reads_by(const char *plan, const char *table, const char *index)
{
	char	 want[128], bitmap[128];

	snprintf(want, sizeof(want), "using %s on %s ", index, table);
	snprintf(bitmap, sizeof(bitmap), "Bitmap Index Scan on %s ", index);
	return strstr(plan, want) != NULL || strstr(plan, bitmap) != NULL;
}

/* Whether the plan reads table by a sequential scan. */
static int
seq_scans(const char *plan, const char *table)
{
	char	 want[128];
	const char *p;

	snprintf(want, sizeof(want), "Seq Scan on %s", table);
	/* "Seq Scan on decisions d": the table's name ends there. */
	for (p = plan; (p = strstr(p, want)) != NULL; p += strlen(want))
		if (p[strlen(want)] == ' ' || p[strlen(want)] == '\n' ||
		    p[strlen(want)] == '\0')
			return 1;
	return 0;
}

/* The plan of case k under plan_cache_mode mode, its lines joined. */
static char *
plan_of(PGconn *c, const struct plan_case *k, const char *mode)
{
	PGresult	*r;
	char		 sql[512];
	size_t		 len = 0, i;
	char		*plan = NULL, *lit;
	int		 j;

	snprintf(sql, sizeof(sql), "SET plan_cache_mode = %s", mode);
	PQclear(query(c, sql));
	PQclear(query(c, "DEALLOCATE ALL"));
	r = PQprepare(c, "s", pg_text(k->id), 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		printf("#   %s: %s", k->what, PQerrorMessage(c));
	PQclear(r);
	/* EXPLAIN EXECUTE takes no parameters of its own: the values as
	 * literals, quoted by libpq. */
	len = (size_t)snprintf(sql, sizeof(sql), "EXPLAIN EXECUTE s(");
	for (j = 0; j < k->n; j++) {
		lit = k->v[j] != NULL ? PQescapeLiteral(c, k->v[j],
		    strlen(k->v[j])) : NULL;
		len += (size_t)snprintf(sql + len, sizeof(sql) - len,
		    "%s%s", j > 0 ? ", " : "", lit != NULL ? lit : "NULL");
		PQfreemem(lit);
	}
	snprintf(sql + len, sizeof(sql) - len, ")");
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		printf("#   %s: %s", k->what, PQerrorMessage(c));
		PQclear(r);
		return NULL;
	}
	for (len = 0, j = 0; j < PQntuples(r); j++)
		len += strlen(PQgetvalue(r, j, 0)) + 1;
	plan = malloc(len + 1);
	if (plan != NULL) {
		plan[0] = '\0';
		for (i = 0, j = 0; j < PQntuples(r); j++) {
			strcpy(plan + i, PQgetvalue(r, j, 0));
			i += strlen(plan + i);
			plan[i++] = '\n';
			plan[i] = '\0';
		}
	}
	PQclear(r);
	return plan;
}

static void
check(PGconn *c, const struct plan_case *k, const char *mode)
{
	char	*plan = plan_of(c, k, mode);
	int	 good;

	if (plan == NULL) {
		ok(0, "%s (%s): planned", k->what, mode);
		return;
	}
	good = !seq_scans(plan, "decisions") && !seq_scans(plan, "outcomes") &&
	    (k->decisions == NULL || reads_by(plan, "decisions",
	    k->decisions)) &&
	    (k->outcomes == NULL || reads_by(plan, "outcomes", k->outcomes)) &&
	    (k->cond == NULL || strstr(plan, k->cond) != NULL);
	if (!ok(good, "%s (%s plan): decisions by %s%s%s%s%s, no Seq Scan "
	    "of decisions or outcomes", k->what, mode + strlen("force_"),
	    k->decisions, k->outcomes ? ", outcomes by " : "",
	    k->outcomes ? k->outcomes : "", k->cond ? ", with " : "",
	    k->cond ? k->cond : ""))
		for (char *line = strtok(plan, "\n"); line != NULL;
		    line = strtok(NULL, "\n"))
			printf("#   %s\n", line);
	free(plan);
}

int
main(void)
{
	static struct settings	 s;
	static const char *const modes[] = { "force_custom_plan",
	    "force_generic_plan" };
	const char		*url;
	char			 dir[] = "/tmp/evalgate-plan.XXXXXX", path[64];
	struct error		 e = { 0 };
	PGconn			*c;
	size_t			 i, m;

	if ((url = pg_test_settings(&s, dir, "tests/pg/test_plans.pg")) == NULL)
		return 0;
	s.workers = 1;
	ok(store_init(&s, &e) == 0, "init creates the schema %s", e.message);
	c = PQconnectdb(url);
	if (!ok(PQstatus(c) == CONNECTION_OK, "a connection of the test's") ||
	    !fill(c)) {
		PQfinish(c);
		return tap_done();
	}
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			check(c, &cases[i], modes[m]);
	PQfinish(c);
	snprintf(path, sizeof(path), "%s/cache.db", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
