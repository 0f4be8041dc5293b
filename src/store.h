/* store.h: everything evalgate keeps, behind one interface: reading
 * and writing the records of model.h.
 *
 * Two engines implement it (store_engine.h): SQLite, the default, and
 * PostgreSQL.  Their files (store_sqlite*.c, store_pg*.c) are the only
 * ones that see SQL or include sqlite3.h or libpq-fe.h.
 * A struct store is one process's connection to the database with the
 * cache file attached as "cache"; open it after fork, never share it.
 *
 * Conventions: functions returning int give 0 on success and -1 with e
 * set on failure; lookups give 1 found, 0 not found, -1 failure.  Busy,
 * locked, full or read-only databases are ERR_UNAVAILABLE (503 with
 * Retry-After); anything else unexpected is ERR_INTERNAL. */
#ifndef EVALGATE_STORE_H
#define EVALGATE_STORE_H

#include <stdint.h>

#include <json-c/json.h>

#include "error.h"
#include "model.h"

struct backend_option;
struct settings;
struct store;

/* The table of options that the kind of backend named kind takes
 * (bounds.h; NULL: none, or no such kind), by which the store checks a
 * backend's options and parses them into its optval as it reads the row
 * (bound_backend()), and a file's (store_sqlite_check.c).  The store
 * sees no kind: the programs give it the registry's lookup
 * (backend_kind_options() of backend.h) before they use it; until then,
 * every kind takes none. */
typedef const struct backend_option *store_kind_options_fn(const char *kind);
void	 store_set_kind_options(store_kind_options_fn *of);
const struct backend_option *store_kind_options(const char *kind);

/* Creates or migrates the database and the cache.  Idempotent.  The
 * schema version the database had (0: none, it was made), which is now
 * store_schema_version(); -1 with e set. */
int	 store_init(const struct settings *s, struct error *e);
/* The schema version this program's workers need, on either engine. */
int	 store_schema_version(void);
/* Opens this process's connection; NULL with e set. */
struct store *store_open(const struct settings *s, struct error *e);
/* The same for a long-running worker: a database that cannot be opened
 * now (a read-only file system, a missing file) is logged, every query
 * fails with a 503 naming the cause, and store_maintain() tries again.
 * Never NULL. */
struct store *store_open_lazy(const struct settings *s);
/* Between requests: (re)opens the connection if it is not open, or if
 * a query found it unable to write or read its files; at most every
 * STORE_RETRY_MS. */
void	 store_maintain(struct store *st);
/* After a request is answered: the work that need not delay an answer
 * (a WAL checkpoint the last commits made due, a step of automatic
 * retention every STORE_RETAIN_REQUESTS requests or STORE_RETAIN_MS). */
void	 store_idle(struct store *st);
void	 store_close(struct store *st);
/* "sqlite" or "postgresql": the engine s chooses. */
const char *store_engine_name(const struct settings *s);
/* Whether admission may be kept in the host's shared memory (1), or
 * must stay in the database, shared with other hosts (0:
 * doc/design.md, section 10). */
int	 store_host_admission(struct store *st);
/* Whether a decision could be written to each file now
 * (doc/design.md, section 9.3): on fresh connections, each answers a query and
 * gives its write lock within 250 ms (rolled back: nothing written), and
 * no write on the host met a full disk in the last second.  *schema is
 * the database's schema version as the probe read it (-1: unread); one
 * that is not store_schema_version() is not ready either, as the
 * workers refuse it. */
void	 store_ready(struct store *st, int *db_ok, int *cache_ok,
	    int *schema);
/* What a database of another schema version is told (the version
 * found, the one wanted): the workers' log line and readiness's
 * reason. */
#define STORE_SCHEMA_WHY "schema version %d, want %d: run evalgate-admin init"

/* A short write transaction on the database, holding its write lock
 * from the start (as BEGIN IMMEDIATE would, without the cache's). */
int	 store_begin(struct store *st, struct error *e);
/* One read transaction for a request's lookups (key, application,
 * schema, backend): one snapshot and one set of locks instead of one per
 * statement.  Ended by store_read_end(), and by any store_begin*() or
 * cache write; never held across a backend call. */
void	 store_read_begin(struct store *st);
void	 store_read_end(struct store *st);
/* The same on the cache file, for the admission counters: it never
 * waits for a decision being written, and commits without fsync
 * (doc/design.md, section 9.1). */
int	 store_begin_counters(struct store *st, struct error *e);
int	 store_commit(struct store *st, struct error *e);
void	 store_rollback(struct store *st);

/* Applications. */
int	 store_app_insert(struct store *st, struct app *a, struct error *e);
int	 store_app_update(struct store *st, const struct app *a,
	    struct error *e);
int	 store_app_by_name(struct store *st, const char *name, struct app *a,
	    struct error *e);
int	 store_app_by_id(struct store *st, int64_t id, struct app *a,
	    struct error *e);
int	 store_app_each(struct store *st,
	    void (*fn)(const struct app *, void *), void *arg,
	    struct error *e);

/* API keys. */
int	 store_key_insert(struct store *st, const struct key_row *k,
	    struct error *e);
int	 store_key_by_prefix(struct store *st, const char *prefix,
	    struct key_row *k, struct error *e);
int	 store_key_revoke(struct store *st, const char *prefix, int64_t now,
	    struct error *e);
/* Stores the keyed hash of a key's secret, if the row has none yet (a
 * key issued before it existed), in a transaction of its own. */
int	 store_key_set_check(struct store *st, const char *prefix,
	    const unsigned char check[32], struct error *e);
int	 store_key_each(struct store *st, int64_t app_id /* 0: all */,
	    void (*fn)(const struct key_row *, const char *app, void *),
	    void *arg, struct error *e);

/* The verified-key memo (cache file).  It never fails the request: the
 * cache is an optimisation. */
int	 store_memo_has(struct store *st, const unsigned char mac[32],
	    const char *prefix);
void	 store_memo_put(struct store *st, const unsigned char mac[32],
	    const char *prefix, int64_t now_ms);

/* Backends (doc/design.md, section 7). */
int	 store_backend_insert(struct store *st, struct backend *b,
	    struct error *e);
int	 store_backend_set_enabled(struct store *st, const char *name,
	    int enabled, struct error *e);	/* 1 done, 0 no such */
/* Every field of the backend b->id but its name and kind from b, its
 * replicas included (0 and "": NULL, the default). */
int	 store_backend_update(struct store *st, const struct backend *b,
	    struct error *e);
int	 store_backend_by_name(struct store *st, const char *name,
	    struct backend *b, struct error *e);
int	 store_backend_by_id(struct store *st, int64_t id, struct backend *b,
	    struct error *e);
int	 store_backend_each(struct store *st, int enabled_only,
	    void (*fn)(const struct backend *, void *), void *arg,
	    struct error *e);

/* Replica cool-downs, shared by every worker through the cache.  Never
 * fail the request. */
int64_t	 store_cooldown_until(struct store *st, const char *url);
void	 store_cooldown_set(struct store *st, const char *url,
	    int64_t until_ms);

/* Schemas and their versions.
 *
 * Publishes the next version of slug (creating the schema) inside the
 * caller's transaction: v->schema_id, v->version and v->created_at are
 * set.  questions, fingerprint, backend_id, temperature and threshold
 * come from v. */
int	 store_schema_publish(struct store *st, struct schema_version *v,
	    struct error *e);
/* The given version (0: the latest published) of slug: 1, 0, -1. */
int	 store_schema_get(struct store *st, const char *slug, int64_t version,
	    struct schema_version *v, struct error *e);
/* For inline questions: the highest published version with this
 * fingerprint granted to app_id (1), or none (0) with *matched telling
 * whether some published version matched at all. */
int	 store_schema_match(struct store *st, int64_t app_id,
	    const char *fingerprint, struct schema_version *v, int *matched,
	    struct error *e);
/* Every version of slug ("" or NULL: of every schema), oldest first. */
int	 store_schema_each(struct store *st, const char *slug,
	    void (*fn)(const struct schema_version *, void *), void *arg,
	    struct error *e);

/* Grants: version 0 grants every version of the schema.  Granting twice
 * is not an error.  Ungranting version 0 removes every grant of the
 * schema to the application; version N removes the grant of N only. */
int	 store_grant(struct store *st, int64_t app_id, int64_t schema_id,
	    int64_t version, struct error *e);
int	 store_ungrant(struct store *st, int64_t app_id, int64_t schema_id,
	    int64_t version, struct error *e);	/* 1 removed, 0 none */
int	 store_grant_allows(struct store *st, int64_t app_id,
	    int64_t schema_id, int64_t version, struct error *e);
/* Every grant of the schema, by application name then version: fn(the
 * application's name, the version (0: every one), when it was granted
 * in epoch seconds, arg).  0, or -1 with e set. */
int	 store_grant_each(struct store *st, int64_t schema_id,
	    void (*fn)(const char *, int64_t, int64_t, void *), void *arg,
	    struct error *e);

/* Templates (doc/design.md, section 16).
 *
 * Publishes the next version of slug (creating the template) inside the
 * caller's transaction: v->template_id, v->version and v->created_at are
 * set; body, variables and escape_html come from v. */
int	 store_template_publish(struct store *st, struct template_version *v,
	    struct error *e);
/* The given version (0: the latest published) of slug: 1, 0, -1. */
int	 store_template_get(struct store *st, const char *slug,
	    int64_t version, struct template_version *v, struct error *e);
/* Every version of every template, oldest first. */
int	 store_template_each(struct store *st,
	    void (*fn)(const struct template_version *, void *), void *arg,
	    struct error *e);

/* Decisions: one per successful evaluation.
 *
 * Records d with, per question of questions (in order), its answer and
 * its untempered distribution, as the JSON text they are stored as
 * (answers[i] and dists[i] for the i-th question, borrowed), and adds
 * its quota units to the day's counter, in one write transaction. */
int	 store_decision_insert(struct store *st, const struct decision *d,
	    json_object *questions, const char *const *answers,
	    const char *const *dists, struct error *e);

/* Decision id (lowercase) of application app_id (0: of any application),
 * answers and outcomes included: 1, 0 (unknown or another application's:
 * the same answer), -1. */
int	 store_decision_get(struct store *st, const char *id, int64_t app_id,
	    struct decision_row *d, struct error *e);
/* Records the outcomes of decision id: values maps question -> an
 * already validated value (borrowed), source may be NULL.  In one write
 * transaction: a question without an outcome gets this one, one with
 * the same value is left as it is, one with a different value refuses
 * the whole request (ERR_CONFLICT naming "answers.<question>", details
 * "recorded" the stored value) and nothing is written. */
int	 store_outcome_record(struct store *st, const char *id,
	    json_object *values, const char *source, int64_t now_ms,
	    struct error *e);

/* The next at most limit decisions of q, oldest first: fn gets each id
 * and time.  The number given, or -1. */
int	 store_decision_page(struct store *st, const struct decision_range *q,
	    int limit, void (*fn)(const char *id, int64_t created_at_ms,
	    void *), void *arg, struct error *e);

/* Calibration (doc/design.md, section 15): every row of version of
 * schema_id created at or after since_ms, of question (NULL: of every
 * question), in decision id order.  fn returning -1 (with e set) stops
 * the walk, which then returns -1.  0 or -1. */
int	 store_calibration_each(struct store *st, int64_t schema_id,
	    int64_t version, const char *question, int64_t since_ms,
	    int (*fn)(const struct calibration_row *, void *, struct error *),
	    void *arg, struct error *e);

/* Admission state of an application in the cache, for a host without
 * the shared memory (which keeps it otherwise: admission.c), inside a
 * store_begin_counters() transaction: the GCRA arrival time, the rate
 * per minute it was computed under and when it was written (0:
 * unknown), and the units used on a UTC day "YYYY-MM-DD".  The cache
 * keeps the day's running total, charged at admission; the database's
 * counter is charged with the decision (or by store_quota_charge), so
 * it survives a restart and the running total is ahead of it only by
 * the calls in flight.  The units used are the larger of the two: a
 * deleted cache starts again from the database. */
int	 store_admission_read(struct store *st, int64_t app_id,
	    const char *day, int64_t *tat_ms, int64_t *tat_rate,
	    int64_t *tat_at_ms, int64_t *used, struct error *e);
int	 store_admission_write(struct store *st, int64_t app_id,
	    const char *day, int64_t tat_ms, int64_t rate, int64_t at_ms,
	    int64_t used, struct error *e);
/* The database's counter of the day (0 when there is no row), from
 * which the shared memory's running total is rebuilt. */
int	 store_quota_used(struct store *st, int64_t app_id, const char *day,
	    int64_t *used, struct error *e);
/* Adds units to the database's counter of the day, in a transaction of
 * its own: for an admitted call that ends without a decision. */
int	 store_quota_charge(struct store *st, int64_t app_id,
	    const char *day, int64_t units, struct error *e);

/* Backup and restore (store_sqlite_backup.c), for the console: whole files,
 * each on connections of its own, never a worker's.  What a copy
 * holds, for the console to say. */
struct store_copy {
	int64_t	pages;		/* database pages copied */
	int64_t	bytes;		/* the copy's size */
	int64_t	decisions;	/* decisions in it */
	int	version;	/* its schema version, as found */
	int	migrated;	/* restore: the version it was taken to */
};
/* Whether some process has the database at path open (1), with its pid
 * in *pid, or not (0): a lock SQLite holds for as long as a connection
 * is open.  A missing file is not in use. */
int	 store_in_use(const char *path, long *pid);
/* Copies the database of s, while workers read and write it, into the
 * file at to (an empty file the caller made, 0600): one read snapshot,
 * copied with SQLite's online backup API, so that writers never wait
 * for it; the copy is a single file (no WAL).  0 or -1 with e set. */
int	 store_backup(const struct settings *s, const char *to,
	    struct store_copy *c, struct error *e);
/* Checks the file at path, without writing it: integrity_check, an
 * evalgate database, of a schema version this program knows.  0 or -1
 * with e set naming what is wrong. */
int	 store_backup_check(const char *path, struct store_copy *c,
	    struct error *e);
/* Puts the backup at from in place of the database of s, which no
 * process may have open: checks it (store_backup_check), copies it into
 * a file beside the database, migrates that forward as init would and
 * renames it over the database (its stale WAL removed first), then
 * removes the cache.  Refused before anything is changed if the backup
 * is unsound or the database in use.  0 or -1 with e set. */
int	 store_restore(const struct settings *s, const char *from,
	    struct store_copy *c, struct error *e);

/* The move from SQLite to PostgreSQL (store_pg_import.c), for the
 * console's migrate: what was copied, table by table. */
#define STORE_IMPORT_TABLES 15
struct store_import {
	int		 version;	/* the SQLite file's, as found */
	int		 in_use;	/* a process had it open: pid */
	long		 pid;
	char		 database[128];	/* PQdb: never the URL */
	size_t		 ntables;
	const char	*table[STORE_IMPORT_TABLES];	/* static names */
	int64_t		 rows[STORE_IMPORT_TABLES];
};
/* Copies every row of the SQLite file at from (any schema version this
 * program knows; opened read-only, one read snapshot: a gateway may
 * still be writing it) into the PostgreSQL database s->db_url, whose
 * schema store_init() makes if absent, in one transaction of the
 * target: refused (ERR_CONFLICT) if any evalgate table there has a row;
 * the identity sequences are moved past the copied ids and every
 * table's rows counted against the file's, a difference rolling it all
 * back.  0, or -1 with e set and the target as it was.  A build
 * without libpq refuses. */
int	 store_import(const struct settings *s, const char *from,
	    struct store_import *r, struct error *e);

/* Retention (doc/design.md, section 11.1).
 *
 * The decisions a prune deletes, and where it stands: those of app_id
 * created before before_ms (a prune of every application goes through
 * them one by one: no index orders all decisions by time), but one with
 * an outcome only if it was created before outcome_before_ms too (0:
 * never).  The cursor starts zeroed, at the oldest. */
struct prune_range {
	int64_t	before_ms;
	int64_t	app_id;
	int64_t	outcome_before_ms;
	int64_t	cursor_ms;		/* created_at_ms of the last seen */
	char	cursor_id[UUID7_LEN + 1];	/* and its id; "": none */
};
/* One step: examines the next STORE_PRUNE_BATCH decisions of q after
 * its cursor and deletes those to prune, with their answers and
 * outcomes, in one short write transaction of its own, then moves the
 * cursor.  Adds the number deleted to *deleted.  1: more may follow,
 * 0: q is done, -1: failed (the steps before stay done). */
int	 store_prune_step(struct store *st, struct prune_range *q,
	    int64_t *deleted, struct error *e);
/* Gives the pages the deletions freed back to the file system, at most
 * max_steps of STORE_VACUUM_PAGES, each its own short transaction, and
 * checkpoints the WAL so that the file shrinks.  A file without
 * incremental auto-vacuum (made before it, not compacted) keeps its
 * size and reuses the pages.  0 or -1. */
int	 store_vacuum(struct store *st, int max_steps, struct error *e);
/* Offline: rewrites the database of s with incremental auto-vacuum
 * (VACUUM; needs as much free disk again).  Refused while a process has
 * it open.  0 or -1. */
int	 store_compact(const struct settings *s, struct error *e);

/* Challengers (README, "Challengers").  Names backend_id as a
 * challenger of version of schema_id with c->share, or changes its
 * share if it is one, inside the caller's transaction. */
int	 store_challenger_set(struct store *st, const struct challenger *c,
	    struct error *e);
/* 1 removed, 0 it was none, -1. */
int	 store_challenger_remove(struct store *st, int64_t schema_id,
	    int64_t version, int64_t backend_id, struct error *e);
/* The challengers of version of schema_id, by backend name, each with
 * its name read back. */
int	 store_challenger_each(struct store *st, int64_t schema_id,
	    int64_t version, void (*fn)(const struct challenger *, void *),
	    void *arg, struct error *e);
/* The same into *out (the caller's; the first CHALLENGER_LIST_MAX, n
 * of c[] written), inside the caller's read snapshot: an evaluation's,
 * for which the list is kept with the catalog rows (kept.h), so that a
 * version's is read once per catalog generation.  0 or -1. */
int	 store_challenger_list(struct store *st, int64_t schema_id,
	    int64_t version, struct challenger_list *out, struct error *e);
/* Records what a challenger answered, in a write transaction of its
 * own; one already recorded for the decision and backend is left as it
 * is. */
int	 store_challenger_answer_insert(struct store *st,
	    const struct challenger_answer *a, struct error *e);
/* What the challengers answered for decision id, by backend name: fn
 * gets each (its members borrowed for the call). */
int	 store_challenger_answers(struct store *st, const char *id,
	    void (*fn)(const struct challenger_answer *, void *), void *arg,
	    struct error *e);

/* The next at most limit decisions of q (evalgate-admin replay), in id
 * order: fn gets each, with the state it keeps unless the backend has
 * answered it already.  The number given, or -1. */
int	 store_replay_page(struct store *st, const struct replay_range *q,
	    int limit, void (*fn)(const struct replay_row *, void *),
	    void *arg, struct error *e);

/* The comparison (doc/design.md, section 15.1): one answered question
 * of one decision that has its outcome and the answers of one
 * challenger.  Every member is borrowed for the callback's duration;
 * an unknown count is -1. */
struct compare_row {
	const char	*decision_id;
	int64_t		 created_at_ms;
	const char	*question;
	const char	*type;			/* "choice", "score", "noul" */
	const char	*distribution;		/* the decision's, untempered,
						 * JSON text */
	const char	*outcome;		/* the value, JSON text */
	int64_t		 latency_ms;		/* the decision's backend's */
	int64_t		 tokens;		/* its input + output */
	const char	*challenger;		/* backend name */
	const char	*answers;		/* JSON: question -> untempered
						 * distribution */
	int64_t		 challenger_latency_ms;
	int64_t		 challenger_tokens;
	const char	*source;		/* "live" or "replay" */
};
/* Every such row of version of schema_id created at or after since_ms,
 * of question (NULL: of every question), in the order of decision id,
 * challenger name, then the question's position: the rows of one
 * decision and challenger follow one another and share answers.  One
 * statement, streamed; fn returning -1 (with e set) stops the walk,
 * which then returns -1.  0 or -1. */
int	 store_compare_each(struct store *st, int64_t schema_id,
	    int64_t version, const char *question, int64_t since_ms,
	    int (*fn)(const struct compare_row *, void *, struct error *),
	    void *arg, struct error *e);

/* One audit row for a mutation (who, what, on what, details). */
int	 store_audit(struct store *st, const char *actor, const char *action,
	    const char *target, json_object *details, struct error *e);
/* When the latest audit row of action on target (NULL: on any) was
 * written, in *at_ms (0: none): the console's last logout of a key
 * (handler_console.c), the last backup (the console's overview).  0,
 * or -1 with e set. */
int	 store_audit_last(struct store *st, const char *action,
	    const char *target, int64_t *at_ms, struct error *e);

#endif
