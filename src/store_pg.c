/* store_pg.c: the PostgreSQL engine's connections, schema, statements
 * and transactions, and the helpers every store_pg*.c file uses; the
 * engine's table (store_pg_engine) and the making of a connection are
 * store_pg_engine.c's.
 *
 * A worker keeps one connection (libpq), opened after fork, and the
 * host's local cache file beside it (store_sqlite_open_cache), which
 * keeps what is only a per-host speed-up: the verified-key memo and the
 * replica cool-downs.  Everything shared lives in PostgreSQL.  Log
 * lines and error messages name the database "PostgreSQL", and where
 * it cannot be reached, its socket's path or host:port; never its URL
 * (it may hold a password), its role or its database name. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json_util.h"
#include "log.h"
#include "metrics.h"
#include "settings.h"
#include "store_pg.h"
#include "xalloc.h"

/* pg_migrations[v - PG_SCHEMA_BASE] takes a database from version v to
 * v + 1 (sql/pg/migrate-N.sql); sql/pg/schema.sql makes a new database
 * at STORE_SCHEMA_VERSION.  PG_SCHEMA_BASE is the first version the
 * engine had. */
#define PG_SCHEMA_BASE	6
static const char *const pg_migrations[] = {
	pg_migrate_7_sql,	/* decisions_time dropped */
	pg_migrate_8_sql,	/* backends' kind options in one column */
	pg_migrate_9_sql,	/* challengers and their answers */
	pg_migrate_10_sql,	/* a decision's answers in its row */
};
_Static_assert(PG_SCHEMA_BASE + sizeof(pg_migrations) /
    sizeof(pg_migrations[0]) == STORE_SCHEMA_VERSION,
    "pg_migrations[] must end at STORE_SCHEMA_VERSION");

/* Set while a failure is expected or already said (store_maintain
 * trying again, readiness probing): nothing is logged. */
static int quiet;

/* What a failed statement's SQLSTATE means for the caller: the
 * conditions that pass (the server going away or coming back, too many
 * connections, a lock or serialization conflict) are a 503 with
 * Retry-After; the class or code, and the words a client is told. */
static const struct {
	const char	*state;		/* a prefix of the SQLSTATE */
	const char	*why;
	int		 busy;		/* a conflict between writers */
} transient[] = {
	{ "08", "the connection failed", 0 },
	{ "57P01", "the server is shutting down", 0 },
	{ "57P02", "the server is shutting down", 0 },
	{ "57P03", "the server is starting", 0 },
	{ "53", "the server is out of resources", 0 },
	{ "40001", "a serialization conflict", 1 },
	{ "40P01", "a deadlock", 1 },
	{ "55P03", "a lock time-out", 1 },
	{ "25006", "the server is read-only", 0 },
};

void
pg_params_init(struct pg_params *p)
{
	memset(p, 0, sizeof(*p));
}

static void
bind(struct pg_params *p, int i, const char *v, int len, int fmt)
{
	if (i < 1 || i > PG_PARAMS_MAX)
		return;
	p->v[i - 1] = v;
	p->len[i - 1] = len;
	p->fmt[i - 1] = fmt;
	if (i > p->n)
		p->n = i;
}

void
pg_bind_text(struct pg_params *p, int i, const char *v)
{
	bind(p, i, v, 0, 0);
}

void
pg_bind_null(struct pg_params *p, int i)
{
	bind(p, i, NULL, 0, 0);
}

void
pg_bind_int(struct pg_params *p, int i, int64_t v)
{
	if (i < 1 || i > PG_PARAMS_MAX)
		return;
	snprintf(p->num[i - 1], PG_NUM_SIZE, "%lld", (long long)v);
	bind(p, i, p->num[i - 1], 0, 0);
}

void
pg_bind_optional(struct pg_params *p, int i, int64_t v)
{
	if (v > 0)
		pg_bind_int(p, i, v);
	else
		pg_bind_null(p, i);
}

void
pg_bind_double(struct pg_params *p, int i, double v)
{
	if (i < 1 || i > PG_PARAMS_MAX)
		return;
	snprintf(p->num[i - 1], PG_NUM_SIZE, "%.17g", v);
	bind(p, i, p->num[i - 1], 0, 0);
}

void
pg_bind_blob(struct pg_params *p, int i, const void *v, size_t len)
{
	bind(p, i, v, (int)len, 1);
}

int
pg_is_null(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col);
}

int64_t
pg_int(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 :
	    strtoll(PQgetvalue(r, row, col), NULL, 10);
}

double
pg_double(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 :
	    strtod(PQgetvalue(r, row, col), NULL);
}

const char *
pg_str(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

void
pg_copy(const PGresult *r, int row, int col, char *buf, size_t size)
{
	const char *v = pg_str(r, row, col);

	snprintf(buf, size, "%s", v ? v : "");
}

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Text results give bytea in the hex format ("\x" and two digits a
 * byte), the server's default since 9.0. */
int
pg_blob(const PGresult *r, int row, int col, unsigned char *out,
    size_t size)
{
	const char	*v = pg_str(r, row, col);
	size_t		 i;
	int		 hi, lo;

	if (v == NULL || strncmp(v, "\\x", 2) != 0 ||
	    strlen(v + 2) != size * 2)
		return 0;
	for (i = 0; i < size; i++) {
		if ((hi = hex(v[2 + 2 * i])) == -1 ||
		    (lo = hex(v[3 + 2 * i])) == -1)
			return 0;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 1;
}

int
pg_json(const char *text, json_object **out, const char *what,
    struct error *e)
{
	if (text == NULL || (*out = ju_parse(text)) == NULL)
		return error_set(e, ERR_INTERNAL, NULL,
		    "the stored %s is not JSON", what);
	return 0;
}

static int
unavailable(struct error *e, const char *why)
{
	error_set(e, ERR_UNAVAILABLE, NULL,
	    "the database is not available (%s); try again", why);
	e->retry_after_ms = PG_RETRY_MS;
	e->unavailable = EU_DATABASE;
	return -1;
}

int
pg_unique_violation(const struct store *pg)
{
	return strcmp(pg->sqlstate, "23505") == 0;
}

int
pg_fail(struct store *pg, const PGresult *r, struct error *e,
    const char *what)
{
	const char	*state = r ? PQresultErrorField(r,
			    PG_DIAG_SQLSTATE) : NULL;
	const char	*msg = r ? PQresultErrorField(r,
			    PG_DIAG_MESSAGE_PRIMARY) : NULL;
	size_t		 i;

	snprintf(pg->sqlstate, sizeof(pg->sqlstate), "%s",
	    state ? state : "");
	if (pg_unique_violation(pg))
		return error_set(e, ERR_INTERNAL, NULL, "database error");
	/* No result, or none with a state: the connection itself. */
	if (pg->conn == NULL || PQstatus(pg->conn) == CONNECTION_BAD ||
	    state == NULL) {
		/* Said once, when the connection is found lost: until it
		 * is back, every statement of every request fails the
		 * same way, and pg_maintain() says how reconnecting goes. */
		int said = pg->stale || pg->why[0] != '\0';

		if (pg->conn == NULL || PQstatus(pg->conn) == CONNECTION_BAD)
			pg->stale = 1;
		if (!quiet && !said)
			log_warn("PostgreSQL: %s: the connection failed%s",
			    what, pg->stale ? "; reconnecting" : "");
		return unavailable(e, "the connection failed");
	}
	/* A data exception's message quotes the value: the state of a
	 * decision, say.  Only the code is logged. */
	if (!quiet)
		log_warn("PostgreSQL: %s: %s (SQLSTATE %s)", what,
		    strncmp(state, "22", 2) != 0 && msg ? msg :
		    "invalid data", state);
	for (i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
		if (strncmp(state, transient[i].state,
		    strlen(transient[i].state)) == 0) {
			if (transient[i].busy)
				metrics_db_busy();
			if (strncmp(state, "57P", 3) == 0)
				pg->stale = 1;	/* the session is gone */
			return unavailable(e, transient[i].why);
		}
	return error_set(e, ERR_INTERNAL, NULL, "database error");
}

int
pg_prepare(struct store *pg, enum pg_stmt id, char name[PG_NAME_SIZE],
    struct error *e)
{
	const char	*text = pg_text(id);
	PGresult	*r;

	snprintf(name, PG_NAME_SIZE, "s%d", (int)id);
	if (pg->conn == NULL)
		/* The cause is in the log; the client learns no URL. */
		return unavailable(e, "no connection");
	if (text == NULL)
		return error_set(e, ERR_INTERNAL, NULL, "no statement %d",
		    (int)id);
	if (pg->prepared[id])
		return 0;
	r = PQprepare(pg->conn, name, text, 0, NULL);
	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
		pg_fail(pg, r, e, "prepare");
		PQclear(r);
		return -1;
	}
	PQclear(r);
	pg->prepared[id] = 1;
	return 0;
}

static int
succeeded(const PGresult *r)
{
	ExecStatusType rs = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;

	return rs == PGRES_TUPLES_OK || rs == PGRES_COMMAND_OK;
}

/* Runs n prepared statements (ps[i] NULL: no parameters) one after the
 * other in one round trip (libpq's pipeline mode; without it, one round
 * trip each): 0 with each result in r[i], owned by the caller, or -1
 * with e set by the first that failed and none kept.  A statement after
 * one that failed is not run. */
static int
pipeline(struct store *pg, int n, const enum pg_stmt *ids,
    const struct pg_params *const *ps, PGresult **r, struct error *e,
    const char *what)
{
	char		 name[PG_NAME_SIZE];
	int		 i, bad = -1;
#ifdef LIBPQ_HAS_PIPELINING
	PGresult	*x;
	int		 sent;
#endif

	for (i = 0; i < n; i++) {
		r[i] = NULL;
		if (pg_prepare(pg, ids[i], name, e) == -1)
			return -1;
	}
#ifdef LIBPQ_HAS_PIPELINING
	sent = PQenterPipelineMode(pg->conn) == 1;
	for (i = 0; i < n && sent; i++) {
		snprintf(name, sizeof(name), "s%d", (int)ids[i]);
		sent = PQsendQueryPrepared(pg->conn, name, ps[i] ? ps[i]->n : 0,
		    ps[i] ? ps[i]->v : NULL, ps[i] ? ps[i]->len : NULL,
		    ps[i] ? ps[i]->fmt : NULL, 0) == 1;
	}
	sent = sent && PQpipelineSync(pg->conn) == 1;
	/* Each statement's result, then NULL; then the sync's. */
	for (i = 0; i < n && sent; i++) {
		r[i] = PQgetResult(pg->conn);
		while (r[i] != NULL && (x = PQgetResult(pg->conn)) != NULL)
			PQclear(x);
	}
	while (sent && (x = PQgetResult(pg->conn)) != NULL) {
		sent = PQresultStatus(x) != PGRES_PIPELINE_SYNC;
		PQclear(x);
		if (!sent)
			break;
	}
	/* A pipeline not ended cleanly leaves the connection unusable. */
	if (PQexitPipelineMode(pg->conn) != 1)
		pg->stale = 1;
#else
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "s%d", (int)ids[i]);
		r[i] = PQexecPrepared(pg->conn, name, ps[i] ? ps[i]->n : 0,
		    ps[i] ? ps[i]->v : NULL, ps[i] ? ps[i]->len : NULL,
		    ps[i] ? ps[i]->fmt : NULL, 0);
		if (!succeeded(r[i]))
			break;
	}
#endif
	for (i = 0; i < n && bad == -1; i++)
		if (!succeeded(r[i]))
			bad = i;
	if (bad == -1 && !pg->stale)
		return 0;
	pg_fail(pg, bad == -1 ? NULL : r[bad], e, what);
	for (i = 0; i < n; i++) {
		PQclear(r[i]);
		r[i] = NULL;
	}
	return -1;
}

PGresult *
pg_exec(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct error *e, const char *what)
{
	const enum pg_stmt		 ids[2] = { PG_BEGIN, id };
	const struct pg_params *const	 ps[2] = { NULL, p };
	PGresult			*r[2];

	/* A transaction's BEGIN goes with its first statement. */
	if (pg->begin_due) {
		pg->begin_due = 0;
		if (pipeline(pg, 2, ids, ps, r, e, what) == -1)
			return NULL;
		PQclear(r[0]);
		return r[1];
	}
	if (pipeline(pg, 1, ids + 1, ps + 1, r, e, what) == -1)
		return NULL;
	return r[0];
}

int
pg_send_begin(struct store *pg, struct error *e)
{
	if (!pg->begin_due)
		return 0;
	pg->begin_due = 0;	/* or pg_exec() would send it twice */
	return pg_run(pg, PG_BEGIN, NULL, e, "begin") == -1 ? -1 : 0;
}

int64_t
pg_run(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct error *e, const char *what)
{
	PGresult	*r = pg_exec(pg, id, p, e, what);
	const char	*n;
	int64_t		 changed;

	if (r == NULL)
		return -1;
	n = PQcmdTuples(r);
	changed = n != NULL && *n != '\0' ? strtoll(n, NULL, 10) : 0;
	PQclear(r);
	return changed;
}

int
pg_lookup(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct error *e, const char *what,
    void (*read)(const PGresult *, int, void *), void *out)
{
	PGresult	*r = pg_exec(pg, id, p, e, what);
	int		 found;

	if (r == NULL)
		return -1;
	if ((found = PQntuples(r) > 0))
		read(r, 0, out);
	PQclear(r);
	return found;
}

/* The server's refusals to connect (libpq gives their SQLSTATE only:
 * connect() asks it so), in words.  The server's own message names
 * the role or the database, which no line shows. */
static const struct {
	const char	*state;		/* a prefix of the SQLSTATE */
	const char	*why;
} refusals[] = {
	{ "28P01", "password authentication failed" },
	{ "28", "the server does not let this role in from here "
	    "(no such role, or pg_hba.conf)" },
	{ "3D000", "the database does not exist" },
	{ "42501", "no permission to connect to the database" },
	{ "53300", "too many connections" },
	{ "57P03", "the server is starting or stopping" },
	{ "", "the server refused the connection" },
};

/* Whether text holds conn's role, database or password. */
static int
names_secret(const PGconn *conn, const char *text)
{
	const char	*parts[3];
	size_t		 i;

	parts[0] = PQuser(conn);
	parts[1] = PQdb(conn);
	parts[2] = PQpass(conn);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i] != NULL && *parts[i] != '\0' &&
		    strstr(text, parts[i]) != NULL)
			return 1;
	return 0;
}

/* Sets e to why conn (NULL: out of memory, or a timeout at deadline)
 * did not connect: "cannot connect to PostgreSQL at SERVER: WHY", the
 * server named by its socket's path or host:port (the last libpq
 * tried), WHY words for the server's SQLSTATE, or else libpq's own
 * reason (the connection refused, no such socket...) unless it holds
 * the role, the database or the password.  Never the URL.  -1. */
static int
connect_failed(PGconn *conn, int timed_out, struct error *e)
{
	const char	*host = conn ? PQhost(conn) : NULL;
	const char	*port = conn ? PQport(conn) : NULL;
	const char	*msg = conn ? PQerrorMessage(conn) : "", *p;
	char		 server[300], line[512], last[512], why[200], *r;
	size_t		 n, i;

	if (port == NULL || *port == '\0')
		port = "5432";
	if (host == NULL || *host == '\0')
		snprintf(server, sizeof(server), "PostgreSQL");
	else if (host[0] == '/' || host[0] == '@')
		snprintf(server, sizeof(server), "PostgreSQL at %s/.s.PGSQL.%s",
		    host, port);
	else
		snprintf(server, sizeof(server), "PostgreSQL at %s%s%s:%s",
		    strchr(host, ':') ? "[" : "", host,
		    strchr(host, ':') ? "]" : "", port);
	/* The reason for the last server tried: after "failed: " on the
	 * last line that has one, or the first line. */
	last[0] = '\0';
	for (p = msg; *p != '\0'; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (last[0] == '\0' || strstr(line, " failed: ") != NULL)
			memcpy(last, line, sizeof(last));
	}
	r = (r = strstr(last, " failed: ")) != NULL ? r + 9 : last;
	n = strlen(r);
	if (conn == NULL)
		snprintf(why, sizeof(why), "out of memory");
	else if (timed_out)
		snprintf(why, sizeof(why), "no answer within the time-out");
	else if (n > 8 && strncmp(r + n - 8, ":  ", 3) == 0 &&
	    strspn(r + n - 5, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 5) {
		/* "FATAL:  28P01": the server's SQLSTATE. */
		for (i = 0; strncmp(r + n - 5, refusals[i].state,
		    strlen(refusals[i].state)) != 0; i++)
			;
		snprintf(why, sizeof(why), "%s (SQLSTATE %s)",
		    refusals[i].why, r + n - 5);
	} else if (n == 0 || names_secret(conn, r))
		snprintf(why, sizeof(why), "the connection failed");
	else
		snprintf(why, sizeof(why), "%.150s", r);
	error_set(e, ERR_UNAVAILABLE, NULL, "cannot connect to %s: %s",
	    server, why);
	e->retry_after_ms = PG_RETRY_MS;
	e->unavailable = EU_DATABASE;
	return -1;
}

PGconn *
pg_connect(const char *url, int timeout_s, struct error *e)
{
	const char *const keys[] = { "dbname", "fallback_application_name",
	    "client_encoding", NULL };
	const char *const values[] = { url, "evalgate", "UTF8", NULL };
	PQconninfoOption	*opts;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	struct pollfd		 pfd;
	char			*err = NULL;
	int64_t			 end, left;
	PGconn			*conn;

	/* One that does not parse: libpq's message may quote it,
	 * password and all. */
	if ((opts = PQconninfoParse(url, &err)) == NULL) {
		PQfreemem(err);
		error_set(e, ERR_UNAVAILABLE, NULL, "cannot connect to "
		    "PostgreSQL: SERVICE_DB_URL is not a connection string "
		    "libpq accepts");
		e->retry_after_ms = PG_RETRY_MS;
		e->unavailable = EU_DATABASE;
		return NULL;
	}
	PQconninfoFree(opts);
	if ((conn = PQconnectStartParams(keys, values, 1)) == NULL) {
		connect_failed(NULL, 0, e);
		return NULL;
	}
	/* A refusal's message is the server's, with the role or the
	 * database in it: its SQLSTATE alone, until connected. */
	PQsetErrorVerbosity(conn, PQERRORS_SQLSTATE);
	end = clock_mono_us() + (int64_t)timeout_s * 1000000;
	while (PQstatus(conn) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	    st != PGRES_POLLING_FAILED) {
		if ((left = end - clock_mono_us()) <= 0) {
			connect_failed(conn, 1, e);
			PQfinish(conn);
			return NULL;
		}
		pfd.fd = PQsocket(conn);
		pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)((left + 999) / 1000)) > 0)
			st = PQconnectPoll(conn);
	}
	if (st == PGRES_POLLING_OK && PQstatus(conn) == CONNECTION_OK) {
		PQsetErrorVerbosity(conn, PQERRORS_DEFAULT);
		return conn;
	}
	connect_failed(conn, 0, e);
	PQfinish(conn);
	return NULL;
}

/* Forgets the statement pg_run_at_commit() kept. */
static void
forget_at_commit(struct store *pg)
{
	free(pg->at_commit.held);
	pg->at_commit.held = NULL;
	pg->at_commit.id = PG_STMT__MAX;
}

/* Closes the connection and forgets its statements. */
static void
disconnect(struct store *pg)
{
	PQfinish(pg->conn);
	pg->conn = NULL;
	memset(pg->prepared, 0, sizeof(pg->prepared));
	kept_free(pg->kept);
	pg->kept = NULL;
	pg->in_tx = 0;
	pg->begin_due = 0;
	forget_at_commit(pg);
	pg->in_read = 0;
	pg->stale = 0;
}

static int
schema_version(struct store *pg, struct error *e)
{
	PGresult	*r = pg_exec(pg, PG_VERSION, NULL, e, "schema version");
	int		 v;

	if (r == NULL)
		return -1;
	v = PQntuples(r) == 1 ? (int)pg_int(r, 0, 0) : 0;
	PQclear(r);
	return v;
}

int
pg_connect_store(struct store *pg, struct error *e)
{
	int	v;

	if ((pg->conn = pg_connect(pg->settings->db_url,
	    PG_CONNECT_TIMEOUT_S, e)) == NULL)
		return -1;
	if (pg_run(pg, pg->sync_full ? PG_SYNC_ON : PG_SYNC_OFF, NULL, e,
	    "synchronous_commit") == -1 || (v = schema_version(pg, e)) == -1)
		goto fail;
	if (v != STORE_SCHEMA_VERSION) {
		error_set(e, ERR_UNAVAILABLE, NULL, "PostgreSQL: "
		    STORE_SCHEMA_WHY, v, STORE_SCHEMA_VERSION);
		e->retry_after_ms = PG_RETRY_MS;
		e->unavailable = EU_DATABASE;
		goto fail;
	}
	return 0;
fail:
	disconnect(pg);
	return -1;
}

void
pg_maintain(struct store *pg)
{
	struct error	 e = { 0 };
	int64_t		 now = clock_mono_us();
	int		 rc;

	pg_local(pg)->maintain(pg->local);
	if ((pg->conn != NULL && !pg->stale &&
	    PQstatus(pg->conn) == CONNECTION_OK) || now < pg->retry_at_us)
		return;
	pg->retry_at_us = now + PG_RETRY_MS * 1000;
	if (pg->conn != NULL)
		disconnect(pg);
	quiet = pg->why[0] != '\0';	/* already said */
	rc = pg_connect_store(pg, &e);
	quiet = 0;
	if (rc == 0) {
		if (pg->why[0] != '\0')
			log_info("database: connected to PostgreSQL again");
		pg->why[0] = '\0';
	} else {
		/* The failure is logged when it changes, not every second. */
		if (strcmp(pg->why, e.message) != 0)
			log_warn("database: unavailable, trying again every"
			    " %d ms: %s", PG_RETRY_MS, e.message);
		snprintf(pg->why, sizeof(pg->why), "%s", e.message);
	}
	error_clear(&e);
}

void
pg_idle(struct store *pg)
{
	pg_local(pg)->idle(pg->local);
	store_retain(pg, pg->settings, &pg->retain);
}

void
pg_close(struct store *pg)
{
	if (pg == NULL)
		return;
	disconnect(pg);
	pg_local(pg)->close(pg->local);
	free(pg);
}

/* Whether a decision could be written now, on a connection of its own
 * beside pg's (with pg's settings and engine):
 * it connects, answers a query (and says the schema version in
 * *version), and takes the row lock every catalog
 * change takes within PG_READY_WAIT_MS (rolled back: nothing is
 * written).  A lock held longer is not ready; the wait is short so that
 * readiness never queues behind writers. */
static int
writable(const struct store *pg, int *version)
{
	const struct settings	*s = pg->settings;
	struct store		 probe;
	struct pg_params	 p;
	struct error		 e = { 0 };
	char			 ms[16];
	int			 ok;

	memset(&probe, 0, sizeof(probe));
	probe.engine = pg->engine;
	probe.at_commit.id = PG_STMT__MAX;
	probe.settings = s;
	if ((probe.conn = pg_connect(s->db_url, 2, &e)) == NULL) {
		error_clear(&e);
		return 0;
	}
	snprintf(ms, sizeof(ms), "%dms", PG_READY_WAIT_MS);
	pg_params_init(&p);
	pg_bind_text(&p, 1, ms);
	quiet = 1;
	ok = pg_run(&probe, PG_BEGIN, NULL, &e, "ready") == 0 &&
	    pg_run(&probe, PG_LOCK_TIMEOUT, &p, &e, "ready") >= 0 &&
	    pg_run(&probe, PG_READY_READ, NULL, &e, "ready") == 1 &&
	    (*version = schema_version(&probe, &e)) != -1 &&
	    pg_run(&probe, PG_READY_WRITE, NULL, &e, "ready") == 1;
	pg_run(&probe, PG_ROLLBACK, NULL, &e, "ready");
	quiet = 0;
	error_clear(&e);
	PQfinish(probe.conn);
	return ok;
}

void
pg_ready(struct store *pg, int *db_ok, int *cache_ok, int *schema)
{
	int unused, none;

	*schema = -1;
	*db_ok = writable(pg, schema) &&
	    *schema == STORE_SCHEMA_VERSION;
	pg_local(pg)->ready(pg->local, &unused, cache_ok, &none);
}

/* Creates the schema in a new database, or takes an older one to this
 * program's version, in one transaction; refuses a newer one.  Several
 * at once wait for each other (an advisory lock).  The version found
 * (0: none), or -1. */
int
pg_migrate(struct store *pg, struct error *e)
{
	PGresult	*r;
	int		 v, has, found;

	if (pg_run(pg, PG_BEGIN, NULL, e, "begin") == -1)
		return -1;
	pg->in_tx = 1;
	if (pg_run(pg, PG_INIT_LOCK, NULL, e, "lock") == -1 ||
	    (r = pg_exec(pg, PG_HAS_SCHEMA, NULL, e, "schema")) == NULL)
		goto fail;
	has = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!has) {
		/* The compiled-in file, several statements without a
		 * parameter: the simple query protocol. */
		r = PQexec(pg->conn, pg_schema_sql);
		if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
			pg_fail(pg, r, e, "create the schema");
			PQclear(r);
			goto fail;
		}
		PQclear(r);
	}
	if ((v = schema_version(pg, e)) == -1)
		goto fail;
	found = has ? v : 0;
	if (v > STORE_SCHEMA_VERSION || v < PG_SCHEMA_BASE) {
		error_set(e, ERR_INTERNAL, NULL, "PostgreSQL: schema version "
		    "%d is %s this program (%d)", v, v > STORE_SCHEMA_VERSION ?
		    "newer than" : "unknown to", STORE_SCHEMA_VERSION);
		goto fail;
	}
	for (; v < STORE_SCHEMA_VERSION; v++) {
		r = PQexec(pg->conn, pg_migrations[v - PG_SCHEMA_BASE]);
		if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
			pg_fail(pg, r, e, "migrate");
			PQclear(r);
			goto fail;
		}
		PQclear(r);
	}
	return pg_commit(pg, e) == -1 ? -1 : found;
fail:
	pg_rollback(pg);
	return -1;
}

/* The catalog's generation: -1 when it cannot be read (no row is then
 * given from what is kept).  A connection found lost is opened again
 * at once, if it may be: the request need not fail. */
static int64_t
generation(struct store *pg)
{
	struct error	 e = { 0 };
	PGresult	*r;
	int64_t		 n = -1;

	if ((r = pg_exec(pg, PG_GENERATION, NULL, &e, "generation")) ==
	    NULL && pg->stale) {
		error_clear(&e);
		pg_maintain(pg);
		r = pg_exec(pg, PG_GENERATION, NULL, &e, "generation");
	}
	error_clear(&e);
	if (r != NULL && PQntuples(r) == 1)
		n = pg_int(r, 0, 0);
	PQclear(r);
	if (pg->kept == NULL)
		pg->kept = kept_new();
	return n;
}

/* No transaction: each lookup reads the latest committed rows, and the
 * kept ones are those of the generation read first (kept.h). */
void
pg_read_begin(struct store *pg)
{
	int64_t n;

	if (pg == NULL || pg->in_tx || pg->in_read)
		return;
	n = generation(pg);	/* may reconnect: kept afresh */
	pg->in_read = 1;
	kept_begin(pg->kept, n);
}

void
pg_read_end(struct store *pg)
{
	if (pg == NULL || !pg->in_read)
		return;
	pg->in_read = 0;
	if (pg->kept != NULL)
		kept_end(pg->kept);
}

/* No round trip: BEGIN is sent with the transaction's first statement
 * (pg_exec), or with its COMMIT. */
int
pg_begin(struct store *pg, struct error *e)
{
	pg_read_end(pg);
	if (pg->conn == NULL)
		return unavailable(e, "no connection");
	pg->in_tx = 1;
	pg->begin_due = 1;
	return 0;
}

/* Admission's transaction: an ordinary one on PostgreSQL, where its
 * rows are (admission_read locks the application's). */
int
pg_begin_counters(struct store *pg, struct error *e)
{
	return pg_begin(pg, e);
}

int
pg_run_at_commit(struct store *pg, enum pg_stmt id,
    const struct pg_params *p, struct error *e)
{
	struct pg_params	*q = &pg->at_commit.p;
	size_t			 size = 0, len[PG_PARAMS_MAX];
	char			*at;
	int			 i;

	if (!pg->in_tx || pg->at_commit.id != PG_STMT__MAX)
		return error_set(e, ERR_INTERNAL, NULL, "database error");
	*q = *p;
	for (i = 0; i < p->n; i++) {
		len[i] = p->v[i] == NULL ? 0 : p->fmt[i] ? (size_t)p->len[i] :
		    strlen(p->v[i]) + 1;
		size += len[i];
	}
	at = pg->at_commit.held = xmalloc(size + 1);
	for (i = 0; i < p->n; i++)
		if (p->v[i] != NULL) {
			memcpy(at, p->v[i], len[i]);
			q->v[i] = at;
			at += len[i];
		}
	pg->at_commit.id = id;
	return 0;
}

int
pg_commit(struct store *pg, struct error *e)
{
	enum pg_stmt		 ids[3];
	const struct pg_params	*ps[3] = { NULL, NULL, NULL };
	PGresult		*r[3];
	int			 n = 0, rc;

	if (pg->begin_due && pg->at_commit.id == PG_STMT__MAX) {
		/* Nothing was run: nothing to send. */
		pg->begin_due = 0;
		pg->in_tx = 0;
		return 0;
	}
	if (pg->begin_due)
		ids[n++] = PG_BEGIN;
	if (pg->at_commit.id != PG_STMT__MAX) {
		ps[n] = &pg->at_commit.p;
		ids[n++] = pg->at_commit.id;
	}
	ids[n++] = PG_COMMIT;
	pg->begin_due = 0;
	rc = pipeline(pg, n, ids, ps, r, e, "commit");
	forget_at_commit(pg);
	if (rc == -1) {
		pg_rollback(pg);
		return -1;
	}
	pg->in_tx = 0;
	/* COMMIT ends a transaction a failed statement aborted with
	 * ROLLBACK, and says so only in its tag. */
	rc = strcmp(PQcmdStatus(r[n - 1]), "COMMIT") == 0 ? 0 : -1;
	while (n > 0)
		PQclear(r[--n]);
	if (rc == -1) {
		if (!quiet)
			log_warn("PostgreSQL: commit: the transaction had "
			    "failed and was rolled back");
		return error_set(e, ERR_INTERNAL, NULL, "database error");
	}
	return 0;
}

void
pg_rollback(struct store *pg)
{
	struct error e = { 0 };

	forget_at_commit(pg);
	if (!pg->in_tx)
		return;
	pg->in_tx = 0;
	if (pg->begin_due)		/* nothing was sent */
		pg->begin_due = 0;
	else if (pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_OK)
		pg_run(pg, PG_ROLLBACK, NULL, &e, "rollback");
	error_clear(&e);
}

int
pg_audit(struct store *pg, const char *actor, const char *action,
    const char *target, json_object *details, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, clock_now_ms());
	pg_bind_text(&p, 2, actor);
	pg_bind_text(&p, 3, action);
	pg_bind_text(&p, 4, target);
	pg_bind_text(&p, 5, details ? json_object_to_json_string_ext(
	    details, JSON_C_TO_STRING_PLAIN) : NULL);
	return pg_run(pg, PG_AUDIT, &p, e, "audit") == -1 ? -1 : 0;
}

static void
read_at(const PGresult *r, int row, void *out)
{
	*(int64_t *)out = pg_int(r, row, 0);
}

int
pg_audit_last(struct store *pg, const char *action, const char *target,
    int64_t *at_ms, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_text(&p, 1, action);
	pg_bind_text(&p, 2, target);
	*at_ms = 0;
	return pg_lookup(pg, PG_AUDIT_LAST, &p, e, "audit", read_at, at_ms) ==
	    -1 ? -1 : 0;
}

/* The host's cache keeps these (store_engine.h). */
int
pg_memo_has(struct store *pg, const unsigned char mac[32],
    const char *prefix)
{
	return pg_local(pg)->memo_has(pg->local, mac, prefix);
}

void
pg_memo_put(struct store *pg, const unsigned char mac[32],
    const char *prefix, int64_t now_ms)
{
	pg_local(pg)->memo_put(pg->local, mac, prefix, now_ms);
}

int64_t
pg_cooldown_until(struct store *pg, const char *url)
{
	return pg_local(pg)->cooldown_until(pg->local, url);
}

void
pg_cooldown_set(struct store *pg, const char *url, int64_t until_ms)
{
	pg_local(pg)->cooldown_set(pg->local, url, until_ms);
}
