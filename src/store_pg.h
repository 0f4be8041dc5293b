/* store_pg.h: what the PostgreSQL engine's files (store_pg*.c) share,
 * and nobody else: the connection, the statements by name, the helpers
 * around them (libpq).
 *
 * The statements are named by one enum, pg_stmt, in two parts: the
 * connection's and the catalog's, whose texts are pg_core_sql[]
 * (store_pg_sql.c), then the data's (decisions, outcomes, calibration,
 * admission, quota, retention), whose texts are pg_data_sql[]
 * (store_pg_sql_data.c).  Both tables are indexed by the whole enum
 * with designated initialisers; a statement's text is in one of them
 * (pg_text()).
 *
 * Statements are prepared on a connection at their first use (named
 * "s<N>", N the enum value) and run with PQexecPrepared; values are
 * parameters ($1, $2, ...) as text, or binary for bytea; results are
 * text.  No text is ever pasted into a statement. */
#ifndef EVALGATE_STORE_PG_H
#define EVALGATE_STORE_PG_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "buf.h"
#include "kept.h"
#include "store_engine.h"
#include "store_pg_connect.h"

/* The .sql files of sql/pg/, compiled in (Makefile.am: src/sql_files.c).
 * pg_schema_sql makes a new database at STORE_SCHEMA_VERSION; a later
 * version adds sql/pg/migrate-N.sql (pg_migrate_N_sql), with the same
 * number as SQLite's step, to the table in store_pg.c. */
extern const char pg_schema_sql[];	/* sql/pg/schema.sql */
extern const char pg_migrate_7_sql[];	/* sql/pg/migrate-7.sql */
extern const char pg_migrate_8_sql[];	/* sql/pg/migrate-8.sql */
extern const char pg_migrate_9_sql[];	/* sql/pg/migrate-9.sql */
extern const char pg_migrate_10_sql[];	/* sql/pg/migrate-10.sql */

#define PG_RETRY_MS	1000		/* between attempts to reconnect,
					 * and the Retry-After of a 503 */
#define PG_READY_WAIT_MS 250		/* readiness waits for a lock */
#define PG_PARAMS_MAX	24		/* parameters of one statement */
#define PG_NUM_SIZE	24		/* an int64 or double as text */

/* Every statement the engine runs, by name. */
enum pg_stmt {
	/* Transactions, set-up and the audit log (store_pg.c). */
	PG_BEGIN,
	PG_COMMIT,
	PG_ROLLBACK,
	PG_SYNC_ON,		/* SERVICE_DB_SYNC=full */
	PG_SYNC_OFF,		/* normal */
	PG_LOCK_TIMEOUT,	/* readiness: SET LOCAL lock_timeout */
	PG_READY_READ,		/* readiness: a trivial query */
	PG_READY_WRITE,		/* readiness: a write, rolled back */
	PG_INIT_LOCK,		/* init: one at a time */
	PG_HAS_SCHEMA,		/* init: whether schema_version exists */
	PG_VERSION,		/* the schema's version */
	PG_VERSION_SET,
	PG_GENERATION,		/* the catalog's generation (kept.h) */
	PG_AUDIT,
	PG_AUDIT_LAST,
	/* Applications and keys (store_pg_app.c). */
	PG_APP_INSERT,
	PG_APP_UPDATE,
	PG_APP_BY_NAME,
	PG_APP_BY_ID,
	PG_APP_ALL,
	PG_KEY_INSERT,
	PG_KEY_BY_PREFIX,
	PG_KEY_REVOKE,
	PG_KEY_SET_CHECK,
	PG_KEY_ALL,
	/* The catalog (store_pg_catalog.c): backends, schemas, grants,
	 * templates. */
	PG_BACKEND_INSERT,
	PG_REPLICA_INSERT,
	PG_REPLICAS,
	PG_BACKEND_ENABLE,
	PG_BACKEND_UPDATE,
	PG_REPLICAS_DELETE,
	PG_BACKEND_BY_NAME,
	PG_BACKEND_BY_ID,
	PG_BACKEND_ALL,
	PG_SCHEMA_CREATE,
	PG_SCHEMA_ID,
	PG_SCHEMA_NEXT,
	PG_VERSION_INSERT,
	PG_VERSION_GET,
	PG_VERSION_MATCH,
	PG_VERSION_MATCHED,
	PG_VERSION_ALL,
	PG_GRANT,
	PG_UNGRANT,
	PG_GRANT_ALLOWS,
	PG_GRANT_LIST,
	PG_TEMPLATE_CREATE,
	PG_TEMPLATE_ID,
	PG_TEMPLATE_NEXT,
	PG_TEMPLATE_INSERT,
	PG_TEMPLATE_GET,
	PG_TEMPLATE_ALL,
	PG_CORE__END,		/* not a statement */

	/* Decisions, answers, outcomes, calibration, admission and the
	 * day's quota, retention: texts in pg_data_sql[]
	 * (store_pg_sql_data.c). */
	PG_DECISION_INSERT,	/* the decision, its answers, its units */
	PG_DECISION_GET,	/* with its answers and outcomes */
	PG_OUTCOME_RECORD,
	PG_DECISION_PAGE,
	PG_CALIBRATION_ROWS,
	PG_ADMISSION_ENSURE,
	PG_ADMISSION_LOCK,
	PG_ADMISSION_SET,
	PG_USED_ADD,
	PG_USED_GET,
	PG_PRUNE_PICK,
	PG_PRUNE_LOCK,
	PG_PRUNE_LOCK_SKIP,	/* automatic retention's */
	PG_PRUNE_DELETE,
	PG_STATE_CLEAR,
	PG_RETAIN_NEXT_APP,
	PG_VACUUM,
	/* Challengers and their answers (store_pg_challenger.c). */
	PG_CHALLENGER_SET,
	PG_CHALLENGER_REMOVE,
	PG_CHALLENGER_ALL,
	PG_CHALLENGER_ANSWER_INSERT,
	PG_CHALLENGER_ANSWERS,
	PG_REPLAY_PAGE,		/* a replay's walk */
	/* The comparison (store_pg_report.c). */
	PG_COMPARE_ROWS,

	PG_STMT__MAX
};
/* The texts, indexed by the whole enum: the connection's and the
 * catalog's, and the data's (NULL where the other table has it). */
extern const char *const pg_core_sql[PG_STMT__MAX]; /* store_pg_sql.c */
extern const char *const pg_data_sql[PG_STMT__MAX]; /* store_pg_sql_data.c */
/* The text of statement id, or NULL. */
const char	*pg_text(enum pg_stmt id);
/* Prepares statement id on pg's connection, once (named "s<N>", N the
 * enum value), and gives its name: 0, or -1 with e set. */
#define PG_NAME_SIZE	16
int		 pg_prepare(struct store *pg, enum pg_stmt id,
		    char name[PG_NAME_SIZE], struct error *e);

/* The parameters of one statement ($1 is p->v[0]): text, NULL, or
 * binary (bytea).  Fill with pg_bind_*() after pg_params_init(). */
struct pg_params {
	int		 n;			/* the highest $N bound */
	const char	*v[PG_PARAMS_MAX];	/* borrowed, or num[i] */
	int		 len[PG_PARAMS_MAX];
	int		 fmt[PG_PARAMS_MAX];	/* 0 text, 1 binary */
	char		 num[PG_PARAMS_MAX][PG_NUM_SIZE];
};
/* A connection of the PostgreSQL engine (store_engine.h: each engine
 * has its own struct store). */
struct store {
	const struct store_engine *engine;	/* first: &store_pg_engine */
	const struct settings *settings;	/* borrowed, process-wide */
	PGconn		*conn;		/* owned; NULL while not connected */
	struct store	*local;		/* owned: the host's cache file
					 * (store_sqlite_open_cache): key
					 * memo, cool-downs */
	struct kept	*kept;		/* owned: kept.c */
	int		 sync_full;	/* SERVICE_DB_SYNC=full */
	int		 in_tx;		/* inside BEGIN ... COMMIT */
	int		 begin_due;	/* pg_begin() was called, its BEGIN not
					 * sent yet: it goes with the first
					 * statement (pg_exec) or the COMMIT */
	struct {
		enum pg_stmt	 id;	/* PG_STMT__MAX: none */
		struct pg_params p;	/* its values point into held */
		char		*held;	/* owned: copies of the values */
	} at_commit;			/* pg_run_at_commit() */
	int		 in_read;	/* between read_begin and read_end */
	int		 stale;		/* the connection broke: reconnect
					 * before the next request */
	int64_t		 retry_at_us;	/* no reconnecting before */
	char		 why[512];	/* why it is not connected, or "" */
	char		 sqlstate[6];	/* of the last failed statement */
	unsigned char	 prepared[PG_STMT__MAX];	/* on this connection */
	struct store_retain retain;	/* store_retention.c */
};

void		 pg_params_init(struct pg_params *p);
/* $i (from 1): text (NULL: NULL), borrowed until the statement ran. */
void		 pg_bind_text(struct pg_params *p, int i, const char *v);
void		 pg_bind_int(struct pg_params *p, int i, int64_t v);
void		 pg_bind_null(struct pg_params *p, int i);
/* v if it is positive, else NULL ("use the default"). */
void		 pg_bind_optional(struct pg_params *p, int i, int64_t v);
void		 pg_bind_double(struct pg_params *p, int i, double v);
/* bytea, binary, borrowed. */
void		 pg_bind_blob(struct pg_params *p, int i, const void *v,
		    size_t len);

/* Runs statement id with p (NULL: none), preparing it on first use:
 * the result (PGRES_TUPLES_OK or PGRES_COMMAND_OK), owned by the
 * caller (PQclear), or NULL with e set by pg_fail().  Not connected:
 * NULL with a 503.  The first statement of a transaction carries its
 * BEGIN in the same round trip (libpq's pipeline mode). */
PGresult	*pg_exec(struct store *pg, enum pg_stmt id,
		    const struct pg_params *p, struct error *e,
		    const char *what);
/* Sends the BEGIN of the transaction pg_begin() began, if it is not
 * yet: for code that sends statements to libpq itself.  0 or -1. */
int		 pg_send_begin(struct store *pg, struct error *e);
/* Runs statement id with p (copied) with the COMMIT of the caller's
 * transaction, in the same round trip: a transaction's last write,
 * whose result is not needed.  One per transaction; its failure is
 * pg_commit()'s.  0, or -1 with e set (no transaction, or one is
 * already kept). */
int		 pg_run_at_commit(struct store *pg, enum pg_stmt id,
		    const struct pg_params *p, struct error *e);
/* pg_exec() for a statement that returns no rows: the rows it changed
 * (>= 0), or -1 with e set. */
int64_t		 pg_run(struct store *pg, enum pg_stmt id,
		    const struct pg_params *p, struct error *e,
		    const char *what);
/* A one-row lookup: 1 with row 0 given to read(), 0 none, -1 with e
 * set. */
int		 pg_lookup(struct store *pg, enum pg_stmt id,
		    const struct pg_params *p, struct error *e,
		    const char *what,
		    void (*read)(const PGresult *, int, void *), void *out);
/* Maps the failed result r (NULL: none came: the connection) onto e
 * and logs it, naming the database "PostgreSQL", never its URL:
 * connection loss, shutdown, "cannot connect now", too many
 * connections, serialization failures, deadlocks and lock time-outs are
 * ERR_UNAVAILABLE with retry_after_ms PG_RETRY_MS (and a lost
 * connection is reopened by store_maintain); anything else is
 * ERR_INTERNAL.  A unique violation (23505) is not logged: callers turn
 * it into their ERR_CONFLICT (pg_unique_violation).  pg->sqlstate is
 * set.  Returns -1. */
int		 pg_fail(struct store *pg, const PGresult *r, struct error *e,
		    const char *what);
/* Whether the last failed statement was a unique violation. */
int		 pg_unique_violation(const struct store *pg);

/* Reading a text result: NULL is 0, "" or NULL. */
int		 pg_is_null(const PGresult *r, int row, int col);
int64_t		 pg_int(const PGresult *r, int row, int col);
double		 pg_double(const PGresult *r, int row, int col);
/* The value, or NULL for NULL; borrowed from r. */
const char	*pg_str(const PGresult *r, int row, int col);
/* Copies the value into a fixed buffer ("" for NULL). */
void		 pg_copy(const PGresult *r, int row, int col, char *buf,
		    size_t size);
/* A bytea value of exactly size bytes into out: 1, or 0 (NULL, or
 * another size). */
int		 pg_blob(const PGresult *r, int row, int col,
		    unsigned char *out, size_t size);
/* Parses JSON text the store kept into *out (a new reference); NULL or
 * unparsable text is corruption: ERR_INTERNAL naming what.  0 or -1. */
int		 pg_json(const char *text, json_object **out,
		    const char *what, struct error *e);

/* Opens pg's connection: 0, or -1 with e set and pg unconnected. */
int		 pg_connect_store(struct store *pg, struct error *e);
/* Creates the schema in a new database, or takes an older one to this
 * program's version, in one transaction; refuses a newer one.  The
 * version found (0: none), or -1. */
int		 pg_migrate(struct store *pg, struct error *e);

/* The engine of pg's host cache file (pg->local, a SQLite connection,
 * never NULL), called through its table as store.c would: the engine's
 * files do not call back up into store.c. */
static inline const struct store_engine *
pg_local(const struct store *pg)
{
	return store_engine_of(pg->local);
}

/* The engine's implementation of each operation of store_engine.h is
 * pg_<name>; store_pg_engine.c's table store_pg_engine names them. */
#define STORE_IMPL(name)	pg_##name
STORE_DECLARE_ALL

/* store_pg_batch.c: a list of values as one array parameter, in
 * PostgreSQL's text form: init, add each value (NULL: NULL), then end
 * gives the text (owned by a, valid until pg_array_free) or NULL with a
 * 503 in e when it could not be built. */
struct pg_array {
	struct buf	 b;		/* owned */
	int		 n;		/* values added */
	int		 failed;	/* out of memory: end says so */
};
void	 pg_array_init(struct pg_array *a);
void	 pg_array_add(struct pg_array *a, const char *v);
const char *pg_array_end(struct pg_array *a, struct error *e);
void	 pg_array_free(struct pg_array *a);
/* Runs statement id with p, giving each row to fn as it arrives (a
 * result of one row: row 0) rather than all at once; fn returning -1
 * (with e set) stops the walk (the rows left are read and dropped).  fn
 * must run no statement on pg meanwhile.  0 or -1 with e set. */
int	 pg_stream(struct store *pg, enum pg_stmt id,
	    const struct pg_params *p,
	    int (*fn)(const PGresult *, void *, struct error *), void *arg,
	    struct error *e, const char *what);

#endif
