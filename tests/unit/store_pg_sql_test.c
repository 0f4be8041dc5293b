/* store_pg_sql_test.c: TAP tests of the PostgreSQL engine's schema and
 * statements, and of its connection's life, against a real server
 * (EVALGATE_TEST_PG_URL: an empty database; tests/store_pg_test.sh
 * starts a throw-away cluster and runs this).
 *
 * - init creates the schema, is idempotent, refuses a newer version;
 * - init takes a version-6 database to this version: step 10 moves a
 *   decision's answer rows into decisions.answers, in position order,
 *   the text what store_answers_add() writes for the same row (names
 *   and label masses that need escaping or a number's care), and gives
 *   outcomes their decision's schema version;
 * - the schema mirrors SQLite's (schema.sql and every migration step,
 *   the cache's admission table): the same tables, the same columns;
 * - every statement of the core's block of enum pg_stmt has a text in
 *   its table, none has one in both tables, and every text prepares;
 * - the catalog generation moves with a catalog change by hand;
 * - transactions: BEGIN is sent with the first statement, a write kept
 *   for the commit goes with COMMIT, and both fail and roll back as
 *   separate round trips would;
 * - a session the server ends is a 503 with Retry-After naming no URL,
 *   and store_maintain() reconnects; a duplicate name is a conflict;
 *   readiness is refused while the catalog's lock is held elsewhere;
 * - a connection string libpq rejects is not quoted back. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "buf.h"
#include "settings.h"
#include "store_pg.h"
#include "pg_query.h"
#include "tap.h"

/* SQLite's schema steps, its cache and decision_rid(): store_sqlite.h,
 * which declares them, defines another struct store. */
extern const char cache_sql[];
const char	*sqlite_schema_step(int v);
int		 sqlite_rid_register(sqlite3 *db);

/* "table.column" of every column of SQLite's schema, made as init makes
 * it, and of the cache's admission table (as "admission.column"). */
static char	sq_cols[256][128];
static int	nsq;

static void
sqlite_columns(void)
{
	sqlite3		*db;
	sqlite3_stmt	*stmt;
	const char	*sql;
	int		 v;

	sqlite3_open(":memory:", &db);
	sqlite_rid_register(db);
	for (v = 0; (sql = sqlite_schema_step(v)) != NULL; v++)
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_exec(db, "ATTACH DATABASE ':memory:' AS cache", NULL, NULL,
	    NULL);
	sqlite3_exec(db, cache_sql, NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "SELECT m.name || '.' || p.name"
	    " FROM sqlite_schema m, pragma_table_info(m.name) p"
	    " WHERE m.type = 'table' UNION ALL"
	    " SELECT 'admission.' || name FROM"
	    " pragma_table_info('admission', 'cache')", -1, &stmt, NULL);
	while (sqlite3_step(stmt) == SQLITE_ROW && nsq < 256)
		snprintf(sq_cols[nsq++], sizeof(sq_cols[0]), "%s",
		    (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	sqlite3_close(db);
}

static int64_t
one(PGconn *c, const char *sql)
{
	PGresult	*r = query(c, sql);
	int64_t		 v = PQntuples(r) == 1 ? strtoll(PQgetvalue(r, 0, 0),
			    NULL, 10) : -1;

	PQclear(r);
	return v;
}

static void
mirrors_sqlite(PGconn *c)
{
	PGresult	*r;
	int		 i, j, found, extra = 0, rid = 0;

	sqlite_columns();
	ok(nsq > 50, "SQLite's schema has its columns (%d)", nsq);
	r = query(c, "SELECT table_name || '.' || column_name FROM"
	    " information_schema.columns WHERE table_schema = 'public'");
	for (i = 0; i < nsq; i++) {
		for (found = 0, j = 0; j < PQntuples(r) && !found; j++)
			found = strcmp(PQgetvalue(r, j, 0), sq_cols[i]) == 0;
		/* SQLite's rowid alias, its own (store_pg_import.c). */
		if (strcmp(sq_cols[i], "decisions.rid") == 0)
			rid = 1;
		else if (!found)
			ok(0, "PostgreSQL has %s", sq_cols[i]);
	}
	for (j = 0; j < PQntuples(r); j++) {
		for (found = 0, i = 0; i < nsq && !found; i++)
			found = strcmp(PQgetvalue(r, j, 0), sq_cols[i]) == 0;
		if (!found && strcmp(PQgetvalue(r, j, 0),
		    "schema_version.v") != 0) {
			printf("#   only in PostgreSQL: %s\n",
			    PQgetvalue(r, j, 0));
			extra++;
		}
	}
	ok(PQntuples(r) == nsq - rid + 1 && extra == 0, "PostgreSQL's "
	    "tables and "
	    "columns are SQLite's (and the cache's admission), with "
	    "schema_version.v (%d, %d)", PQntuples(r), nsq);
	PQclear(r);
}

static void
statements(PGconn *c)
{
	char		 name[16];
	PGresult	*r;
	int		 id, texts = 0, prepared = 0, both = 0, core = 0;

	for (id = 0; id < PG_STMT__MAX; id++) {
		if (id == PG_CORE__END)
			continue;
		if (pg_core_sql[id] != NULL && pg_data_sql[id] != NULL)
			both++;
		if (id < PG_CORE__END && pg_core_sql[id] != NULL)
			core++;
		/* The data helper's block may name statements it has not
		 * written yet: those it has must prepare. */
		if (pg_text(id) == NULL) {
			if (id > PG_CORE__END)
				printf("#   statement %d: no text yet\n", id);
			continue;
		}
		texts++;
		snprintf(name, sizeof(name), "t%d", id);
		r = PQprepare(c, name, pg_text(id), 0, NULL);
		if (PQresultStatus(r) == PGRES_COMMAND_OK)
			prepared++;
		else
			printf("#   statement %d: %s#   %s\n", id,
			    PQerrorMessage(c), pg_text(id));
		PQclear(r);
	}
	ok(both == 0, "no statement has a text in both tables");
	ok(core == PG_CORE__END, "every statement of the core has its text "
	    "(%d)", core);
	ok(prepared == texts, "every text prepares (%d of %d)", prepared,
	    texts);
}

static int64_t
apps_named(PGconn *c, const char *name)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM applications"
	    " WHERE name = '%s'", name);
	return one(c, sql);
}

/* Whether the server has st's session inside a transaction. */
static int
in_transaction(struct store *st, PGconn *c)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity"
	    " WHERE pid = %d AND state LIKE 'idle in transaction%%'",
	    PQbackendPID(st->conn));
	return one(c, sql) == 1;
}

static void
insert_app(struct store *st, const char *name, struct error *e)
{
	struct app a;

	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "%s", name);
	store_app_insert(st, &a, e);
}

/* BEGIN goes with the first statement, a kept write with COMMIT: the
 * same outcomes as one round trip each. */
static void
transactions(struct store *st, PGconn *c)
{
	struct pg_params	p;
	struct error		e = { 0 };
	int64_t			audits = one(c, "SELECT count(*) FROM audit_log");

	ok(store_begin(st, &e) == 0 && !in_transaction(st, c),
	    "store_begin sends nothing yet");
	insert_app(st, "tx-one", &e);
	ok(in_transaction(st, c), "the first statement began the "
	    "transaction");
	ok(apps_named(c, "tx-one") == 0, "uncommitted, unseen");
	ok(store_commit(st, &e) == 0 && apps_named(c, "tx-one") == 1,
	    "committed, seen %s", e.message);
	ok(store_begin(st, &e) == 0 && store_commit(st, &e) == 0,
	    "an empty transaction commits");
	store_begin(st, &e);
	insert_app(st, "tx-two", &e);
	store_rollback(st);
	ok(apps_named(c, "tx-two") == 0 && !in_transaction(st, c),
	    "rolled back");

	pg_params_init(&p);
	pg_bind_int(&p, 1, 1);
	pg_bind_text(&p, 2, "test");
	pg_bind_text(&p, 3, "at.commit");
	pg_bind_text(&p, 4, NULL);
	pg_bind_text(&p, 5, "{}");
	store_begin(st, &e);
	ok(pg_run_at_commit(st, PG_AUDIT, &p, &e) == 0 &&
	    pg_run_at_commit(st, PG_AUDIT, &p, &e) == -1,
	    "one write kept for the commit, not two");
	error_clear(&e);
	ok(!in_transaction(st, c) && store_commit(st, &e) == 0 &&
	    one(c, "SELECT count(*) FROM audit_log") == audits + 1,
	    "BEGIN, the kept write and COMMIT in one go %s", e.message);

	store_begin(st, &e);
	insert_app(st, "tx-three", &e);
	pg_params_init(&p);
	pg_bind_text(&p, 1, "tx-one");		/* a duplicate name */
	pg_bind_int(&p, 2, 0);
	pg_bind_int(&p, 3, 0);
	pg_bind_null(&p, 4);
	pg_bind_null(&p, 5);
	pg_bind_int(&p, 6, 1);
	pg_run_at_commit(st, PG_APP_INSERT, &p, &e);
	ok(store_commit(st, &e) == -1 && apps_named(c, "tx-three") == 0,
	    "a kept write that fails fails the commit, and nothing is "
	    "written: %s", e.message);
	error_clear(&e);
	ok(!in_transaction(st, c) && apps_named(c, "tx-one") == 1,
	    "and the session is out of the failed transaction");

	store_begin(st, &e);
	insert_app(st, "tx-one", &e);
	ok(e.code == ERR_CONFLICT, "a failing first statement (with its "
	    "BEGIN) is its own error: %s", e.message);
	error_clear(&e);
	store_rollback(st);
	insert_app(st, "tx-four", &e);
	ok(e.code == ERR_NONE && apps_named(c, "tx-four") == 1 &&
	    !in_transaction(st, c), "and the session works after the "
	    "rollback %s", e.message);
	error_clear(&e);
}

/* A key issued before the keyed hash existed gets it later, in one
 * transaction of its own; bytea goes in binary and comes back intact. */
static void
key_check(struct store *st, int64_t app_id)
{
	struct key_row	k, got;
	struct error	e = { 0 };
	unsigned char	check[32];
	size_t		i;

	memset(&k, 0, sizeof(k));
	snprintf(k.prefix, sizeof(k.prefix), "oldkey01");
	snprintf(k.hash, sizeof(k.hash), "$argon2id$not-checked-here");
	k.app_id = app_id;
	k.created_at = 1;
	for (i = 0; i < sizeof(check); i++)
		check[i] = (unsigned char)(i * 37 + 1);	/* a 0 byte too */
	check[5] = 0;
	ok(store_key_insert(st, &k, &e) == 0 &&
	    store_key_by_prefix(st, "oldkey01", &got, &e) == 1 &&
	    !got.has_check, "a key without its keyed hash %s", e.message);
	ok(store_key_set_check(st, "oldkey01", check, &e) == 0 &&
	    store_key_by_prefix(st, "oldkey01", &got, &e) == 1 &&
	    got.has_check && memcmp(got.check, check, 32) == 0,
	    "gets it, byte for byte %s", e.message);
	check[0] ^= 1;
	ok(store_key_set_check(st, "oldkey01", check, &e) == 0 &&
	    store_key_by_prefix(st, "oldkey01", &got, &e) == 1 &&
	    memcmp(got.check, check, 32) != 0, "and keeps the first one");
	error_clear(&e);
}

/* Answer rows of a version-9 database: the decision's (d0 or d1), the
 * position, the columns; mass NULL for none.  Stored out of position
 * order. */
static const struct old_answer {
	const char	*decision, *question, *type, *dist, *answer, *mass;
	int		 position;
} old_answers[] = {
	{ "d0", "b", "noul", "{\"yes\":0.25,\"no\":0.75}", "0.25", NULL, 1 },
	{ "d0", "q \"x\"\\\n\t\001/\xc3\xa9", "choice",
	  "{\"x\": 0.5, \"y\":0.5}", "\"x\"", "1", 0 },
	{ "d0", "c", "score", "[0.1,0.2,0.7]", "1.6", "0.1", 2 },
	{ "d0", "d", "noul", "{}", "0.5", "0.66666666666666663", 3 },
	{ "d0", "e", "noul", "{}", "0.5", "1.0000000000000001e-05", 4 },
	{ "d0", "f", "noul", "{}", "0.5", "1.4999999999999999e-07", 5 },
	{ "d0", "g", "noul", "{}", "0.5", "0.123456789012345", 6 },
	{ "d0", "h", "noul", "{}", "0.5", "0", 7 },
	{ "d0", "i", "noul", "{}", "0.5", "-0", 8 },
	{ "d0", "j", "noul", "{}", "0.5", "NaN", 9 },
	{ "d0", "k", "noul", "{}", "0.5", "0.30000000000000004", 10 },
	{ "d0", "l", "noul", "{}", "0.5", "0.29999999999999999", 11 },
	{ "d1", "only", "choice", "{\"a\":1}", "\"a\"", NULL, 0 },
};
#define OLD_ANSWERS (sizeof(old_answers) / sizeof(old_answers[0]))

/* What store_answers_add() writes for decision's rows, in position
 * order, into b. */
static void
answers_of(const char *decision, struct buf *b)
{
	struct answer_text	 t;
	const struct old_answer	*o;
	double			 mass;
	int			 pos, found;
	size_t			 i;

	for (pos = 0, found = 1; found; pos++) {
		found = 0;
		for (i = 0; i < OLD_ANSWERS; i++) {
			o = &old_answers[i];
			if (strcmp(o->decision, decision) != 0 ||
			    o->position != pos)
				continue;
			memset(&t, 0, sizeof(t));
			t.name = o->question;
			t.name_len = strlen(o->question);
			t.type = o->type;
			t.type_len = strlen(o->type);
			t.dist = o->dist;
			t.dist_len = strlen(o->dist);
			t.answer = o->answer;
			t.answer_len = strlen(o->answer);
			if (o->mass != NULL) {
				mass = strtod(o->mass, NULL);
				t.label_mass = &mass;
			}
			store_answers_add(b, &t);
			found = 1;
		}
	}
	store_answers_end(b);
}

/* The layout of version 9 (decision_answers, decisions_schema, outcomes
 * without their schema version), as sql/pg/migrate-10.sql finds it,
 * with three decisions (d0's and d1's answer rows, d2 none) and an
 * outcome. */
static void
set_back_to_9(PGconn *c)
{
	const char	*v[7];
	char		 pos[16];
	size_t		 i;

	PQclear(query(c, "ALTER TABLE decisions DROP COLUMN answers;"
	    " ALTER TABLE outcomes DROP COLUMN schema_id,"
	    " DROP COLUMN schema_version;"
	    " CREATE INDEX decisions_schema"
	    " ON decisions(schema_id, schema_version);"
	    " CREATE TABLE decision_answers ("
	    " decision_id TEXT COLLATE \"C\" NOT NULL REFERENCES decisions(id),"
	    " question TEXT COLLATE \"C\" NOT NULL, position BIGINT NOT NULL,"
	    " type TEXT NOT NULL, distribution TEXT NOT NULL,"
	    " answer TEXT NOT NULL, label_mass DOUBLE PRECISION,"
	    " PRIMARY KEY (decision_id, question));"
	    " INSERT INTO applications (id, name, created_at)"
	    " VALUES (900, 'old', 1);"
	    " INSERT INTO schemas (id, slug, created_at) VALUES (900, 'old', 1);"
	    " INSERT INTO decisions (id, app_id, created_at_ms, backend,"
	    " schema_id, schema_version) VALUES ('d0', 900, 1, 'b', 900, 3),"
	    " ('d1', 900, 2, 'b', 900, 3), ('d2', 900, 3, 'b', 900, 4);"
	    " INSERT INTO outcomes (decision_id, question, value,"
	    " recorded_at_ms) VALUES ('d0', 'b', 'true', 5)"));
	for (i = 0; i < OLD_ANSWERS; i++) {
		snprintf(pos, sizeof(pos), "%d", old_answers[i].position);
		v[0] = old_answers[i].decision;
		v[1] = old_answers[i].question;
		v[2] = pos;
		v[3] = old_answers[i].type;
		v[4] = old_answers[i].dist;
		v[5] = old_answers[i].answer;
		v[6] = old_answers[i].mass;
		PQclear(PQexecParams(c, "INSERT INTO decision_answers"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7)", 7, NULL, v, NULL,
		    NULL, 0));
	}
	ok(one(c, "SELECT count(*) FROM decision_answers") ==
	    (int64_t)OLD_ANSWERS, "version 9's answer rows are in (%zu)",
	    OLD_ANSWERS);
}

/* After step 10: each decision's answers are what store_answers_add()
 * writes for its rows; the outcome has its decision's version. */
static void
migrated_answers(PGconn *c)
{
	static const char *const ids[] = { "d0", "d1", "d2" };
	const char	*v[1];
	struct buf	 b;
	PGresult	*r;
	size_t		 i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		buf_init(&b, 1 << 16);
		answers_of(ids[i], &b);
		v[0] = ids[i];
		r = PQexecParams(c, "SELECT answers FROM decisions"
		    " WHERE id = $1", 1, NULL, v, NULL, NULL, 0);
		if (!ok(PQntuples(r) == 1 &&
		    strcmp(PQgetvalue(r, 0, 0), b.p) == 0, "step 10: %s's "
		    "answers are the text store_answers_add() writes",
		    ids[i]))
			printf("#   got  %s\n#   want %s\n", PQntuples(r) == 1 ?
			    PQgetvalue(r, 0, 0) : "(no row)", b.p);
		PQclear(r);
		buf_free(&b);
	}
	ok(one(c, "SELECT count(*) FROM outcomes WHERE decision_id = 'd0'"
	    " AND schema_id = 900 AND schema_version = 3") == 1,
	    "and the outcome has its decision's schema version");
	ok(one(c, "SELECT count(*) FROM information_schema.tables"
	    " WHERE table_name = 'decision_answers'") == 0 &&
	    one(c, "SELECT count(*) FROM pg_indexes WHERE indexname IN"
	    " ('decisions_schema', 'outcomes_schema')") == 1 &&
	    one(c, "SELECT count(*) FROM pg_indexes"
	    " WHERE indexname = 'outcomes_schema'") == 1,
	    "decision_answers and decisions_schema are gone, outcomes_schema"
	    " is there");
	PQclear(query(c, "DELETE FROM outcomes; DELETE FROM decisions;"
	    " DELETE FROM schemas; DELETE FROM applications"));
}

int
main(void)
{
	static struct settings	 s;
	const char		*url;
	char			 dir[] = "/tmp/evalgate-pg.XXXXXX", sql[160];
	struct error		 e = { 0 };
	struct store		*st;
	struct app		 a;
	json_object		*values;
	PGconn			*c;
	int64_t			 before;
	int			 db_ok = 0, cache_ok = 0, schema;

	if ((url = pg_test_settings(&s, dir, "tests/store_pg_test.sh")) == NULL)
		return 0;
	s.workers = 2;

	ok(strcmp(store_engine_name(&s), "postgresql") == 0,
	    "SERVICE_DB_URL chooses PostgreSQL");
	ok(store_init(&s, &e) == 0, "init creates the schema (found none) %s",
	    e.message);
	ok(store_init(&s, &e) == STORE_SCHEMA_VERSION, "init again is "
	    "idempotent (found version %d) %s", STORE_SCHEMA_VERSION,
	    e.message);
	ok(access(s.cache_path, F_OK) == 0, "init made the local cache");
	c = PQconnectdb(url);
	if (!ok(PQstatus(c) == CONNECTION_OK, "a connection of the test's"))
		return tap_done();
	ok(one(c, "SELECT v FROM schema_version") == STORE_SCHEMA_VERSION,
	    "the database records schema version %d", STORE_SCHEMA_VERSION);
	PQclear(query(c, "UPDATE schema_version SET v = 99"));
	ok(store_init(&s, &e) == -1 && strstr(e.message, "newer") != NULL,
	    "a database of a newer version is refused: %s", e.message);
	ok((st = store_open(&s, &e)) == NULL, "and not opened: %s",
	    e.message);
	error_clear(&e);
	/* A database of version 6, the engine's first, with the index
	 * version 7 dropped, the columns of the openai options that
	 * version 8 moves into backends.options, set for one backend, and
	 * the answer rows version 10 moves into decisions.answers. */
	set_back_to_9(c);
	PQclear(query(c, "CREATE INDEX decisions_time ON"
	    " decisions(created_at_ms);"
	    " ALTER TABLE backends ADD COLUMN max_options BIGINT,"
	    " ADD COLUMN concurrency BIGINT, ADD COLUMN extra TEXT,"
	    " DROP COLUMN options;"
	    " INSERT INTO backends (name, kind, created_at, max_options,"
	    " concurrency, extra) VALUES ('oa', 'openai', 1, 8, NULL,"
	    " '{\"seed\":1}'), ('lex', 'lexical', 1, NULL, NULL, NULL);"
	    " UPDATE schema_version SET v = 6"));
	ok(store_init(&s, &e) == 6 &&
	    one(c, "SELECT v FROM schema_version") == STORE_SCHEMA_VERSION,
	    "init takes a version-6 database to version %d, saying 6 %s",
	    STORE_SCHEMA_VERSION, e.message);
	ok(one(c, "SELECT count(*) FROM pg_indexes"
	    " WHERE indexname = 'decisions_time'") == 0,
	    "and drops decisions_time");
	ok(one(c, "SELECT count(*) FROM backends WHERE name = 'oa' AND"
	    " options::jsonb = '{\"max_options\":8,\"extra\":{\"seed\":1}}'")
	    == 1 && one(c, "SELECT count(*) FROM backends WHERE name = 'lex'"
	    " AND options IS NULL") == 1, "and moves the openai options into"
	    " backends.options, only those set");
	PQclear(query(c, "DELETE FROM backends"));
	migrated_answers(c);

	mirrors_sqlite(c);
	statements(c);

	before = one(c, "SELECT n FROM catalog_generation");
	PQclear(query(c, "INSERT INTO applications (name, created_at)"
	    " VALUES ('by-hand', 1)"));
	ok(one(c, "SELECT n FROM catalog_generation") > before,
	    "a catalog change by hand moves the generation");

	if (!ok((st = store_open(&s, &e)) != NULL, "store_open %s",
	    e.message))
		return tap_done();
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "by-hand");
	ok(store_app_insert(st, &a, &e) == -1 && e.code == ERR_CONFLICT,
	    "a duplicate name is a conflict: %s", e.message);
	error_clear(&e);
	/* The outcome's row takes its schema version from its decision:
	 * a decision gone meanwhile (a prune) is not found, and nothing is
	 * written. */
	values = json_tokener_parse("{\"q\":true}");
	ok(store_outcome_record(st, "0190aaaa-0000-7000-8000-000000000009",
	    values, NULL, 1, &e) == -1 && e.code == ERR_NOT_FOUND &&
	    one(c, "SELECT count(*) FROM outcomes") == 0, "an outcome of a "
	    "decision that is gone: not found, nothing written: %s",
	    e.message);
	json_object_put(values);
	error_clear(&e);
	ok(store_app_by_name(st, "by-hand", &a, &e) == 1 && a.id > 0,
	    "the application is found");

	/* The server ends the session. */
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)",
	    PQbackendPID(st->conn));
	PQclear(query(c, sql));
	usleep(100000);
	ok(store_app_by_name(st, "by-hand", &a, &e) == -1 &&
	    e.code == ERR_UNAVAILABLE && e.retry_after_ms == 1000,
	    "a session the server ended is a 503 with Retry-After: %s",
	    e.message);
	ok(strstr(e.message, url) == NULL && strstr(e.message, "host=") ==
	    NULL, "naming no URL");
	error_clear(&e);
	store_maintain(st);
	ok(store_app_by_name(st, "by-hand", &a, &e) == 1,
	    "store_maintain() reconnected %s", e.message);

	transactions(st, c);
	key_check(st, a.id);

	store_ready(st, &db_ok, &cache_ok, &schema);
	ok(db_ok && cache_ok && schema == STORE_SCHEMA_VERSION, "ready, at "
	    "schema version %d", schema);
	PQclear(query(c, "BEGIN"));
	PQclear(query(c, "UPDATE catalog_generation SET n = n"));
	store_ready(st, &db_ok, &cache_ok, &schema);
	ok(!db_ok && cache_ok, "not ready while a catalog change holds its "
	    "lock");
	PQclear(query(c, "ROLLBACK"));
	store_close(st);

	snprintf(s.db_url, sizeof(s.db_url),
	    "postgresql://u:s3cr%%zzet@/db");
	ok(store_open(&s, &e) == NULL && strstr(e.message, "s3cr") == NULL,
	    "a URL libpq rejects is not quoted back: %s", e.message);
	error_clear(&e);

	PQfinish(c);
	snprintf(sql, sizeof(sql), "rm -rf '%s'", dir);
	if (system(sql) != 0)
		printf("# cannot remove %s\n", dir);
	return tap_done();
}
