/* store_engine.h: what a storage engine implements, for store.c to
 * dispatch to.
 *
 * The functions of store.h are one interface with two engines behind
 * it: SQLite (store_sqlite*.c, the default) and PostgreSQL (store_pg*.c,
 * when SERVICE_DB_URL is set and the build has libpq).  Each operation
 * below has the meaning and conventions of the store.h function of the
 * same name with a store_ prefix.
 *
 * Each engine defines its own struct store, privately, in its own
 * files, the way each SQLite VFS defines its own sqlite3_file: its first
 * member is always the engine, so that store.c, which sees the struct
 * incomplete, can find which engine a connection belongs to. */
#ifndef EVALGATE_STORE_ENGINE_H
#define EVALGATE_STORE_ENGINE_H

#include "store.h"

struct kept;

/* Every operation of an engine, as X(type, name, (parameters),
 * (arguments)), in three lists: opening, from the settings; those on a
 * connection that give a value; those that give nothing.  One list
 * serves the struct below, each engine's declarations and table
 * (STORE_DECLARE, STORE_ENTRY) and store.c's dispatch, so that an
 * operation is added in one place and the compiler checks the rest. */
#define STORE_OPEN_OPS(X) \
	X(int, init, (const struct settings *s, struct error *e), (s, e)) \
	X(struct store *, open, (const struct settings *s, struct error *e), \
	    (s, e)) \
	X(struct store *, open_lazy, (const struct settings *s), (s))

#define STORE_OPS(X) \
	X(int, begin, (struct store *st, struct error *e), (st, e)) \
	X(int, begin_counters, (struct store *st, struct error *e), (st, e)) \
	X(int, commit, (struct store *st, struct error *e), (st, e)) \
	X(int, app_insert, (struct store *st, struct app *a, struct error *e), \
	    (st, a, e)) \
	X(int, app_update, (struct store *st, const struct app *a, struct \
	    error *e), (st, a, e)) \
	X(int, app_by_name, (struct store *st, const char *name, struct app \
	    *a, struct error *e), (st, name, a, e)) \
	X(int, app_by_id, (struct store *st, int64_t id, struct app *a, struct \
	    error *e), (st, id, a, e)) \
	X(int, app_each, (struct store *st, void (*fn)(const struct app *, \
	    void *), void *arg, struct error *e), (st, fn, arg, e)) \
	X(int, key_insert, (struct store *st, const struct key_row *k, struct \
	    error *e), (st, k, e)) \
	X(int, key_by_prefix, (struct store *st, const char *prefix, struct \
	    key_row *k, struct error *e), (st, prefix, k, e)) \
	X(int, key_revoke, (struct store *st, const char *prefix, int64_t now, \
	    struct error *e), (st, prefix, now, e)) \
	X(int, key_set_check, (struct store *st, const char *prefix, const \
	    unsigned char check[32], struct error *e), (st, prefix, check, e)) \
	X(int, key_each, (struct store *st, int64_t app_id, void (*fn)(const \
	    struct key_row *, const char *app, void *), void *arg, struct \
	    error *e), (st, app_id, fn, arg, e)) \
	X(int, memo_has, (struct store *st, const unsigned char mac[32], const \
	    char *prefix), (st, mac, prefix)) \
	X(int, backend_insert, (struct store *st, struct backend *b, struct \
	    error *e), (st, b, e)) \
	X(int, backend_set_enabled, (struct store *st, const char *name, int \
	    enabled, struct error *e), (st, name, enabled, e)) \
	X(int, backend_update, (struct store *st, const struct backend *b, \
	    struct error *e), (st, b, e)) \
	X(int, backend_by_name, (struct store *st, const char *name, struct \
	    backend *b, struct error *e), (st, name, b, e)) \
	X(int, backend_by_id, (struct store *st, int64_t id, struct backend \
	    *b, struct error *e), (st, id, b, e)) \
	X(int, backend_each, (struct store *st, int enabled_only, void \
	    (*fn)(const struct backend *, void *), void *arg, struct error \
	    *e), (st, enabled_only, fn, arg, e)) \
	X(int64_t, cooldown_until, (struct store *st, const char *url), (st, \
	    url)) \
	X(int, schema_publish, (struct store *st, struct schema_version *v, \
	    struct error *e), (st, v, e)) \
	X(int, schema_get, (struct store *st, const char *slug, int64_t \
	    version, struct schema_version *v, struct error *e), (st, slug, \
	    version, v, e)) \
	X(int, schema_match, (struct store *st, int64_t app_id, const char \
	    *fingerprint, struct schema_version *v, int *matched, struct error \
	    *e), (st, app_id, fingerprint, v, matched, e)) \
	X(int, schema_each, (struct store *st, const char *slug, void \
	    (*fn)(const struct schema_version *, void *), void *arg, struct \
	    error *e), (st, slug, fn, arg, e)) \
	X(int, grant, (struct store *st, int64_t app_id, int64_t schema_id, \
	    int64_t version, struct error *e), (st, app_id, schema_id, \
	    version, e)) \
	X(int, ungrant, (struct store *st, int64_t app_id, int64_t schema_id, \
	    int64_t version, struct error *e), (st, app_id, schema_id, \
	    version, e)) \
	X(int, grant_allows, (struct store *st, int64_t app_id, int64_t \
	    schema_id, int64_t version, struct error *e), (st, app_id, \
	    schema_id, version, e)) \
	X(int, grant_each, (struct store *st, int64_t schema_id, void (*fn) \
	    (const char *, int64_t, int64_t, void *), void *arg, struct error \
	    *e), (st, schema_id, fn, arg, e)) \
	X(int, template_publish, (struct store *st, struct template_version \
	    *v, struct error *e), (st, v, e)) \
	X(int, template_get, (struct store *st, const char *slug, int64_t \
	    version, struct template_version *v, struct error *e), (st, slug, \
	    version, v, e)) \
	X(int, template_each, (struct store *st, void (*fn)(const struct \
	    template_version *, void *), void *arg, struct error *e), (st, fn, \
	    arg, e)) \
	X(int, decision_insert, (struct store *st, const struct decision *d, \
	    json_object *questions, const char *const *answers, \
	    const char *const *dists, struct error *e), (st, d, questions, \
	    answers, dists, e)) \
	X(int, decision_get, (struct store *st, const char *id, int64_t \
	    app_id, struct decision_row *d, struct error *e), (st, id, app_id, \
	    d, e)) \
	X(int, outcome_record, (struct store *st, const char *id, json_object \
	    *values, const char *source, int64_t now_ms, struct error *e), \
	    (st, id, values, source, now_ms, e)) \
	X(int, decision_page, (struct store *st, const struct decision_range \
	    *q, int limit, void (*fn)(const char *id, int64_t created_at_ms, \
	    void *), void *arg, struct error *e), (st, q, limit, fn, arg, e)) \
	X(int, calibration_each, (struct store *st, int64_t schema_id, int64_t \
	    version, const char *question, int64_t since_ms, int (*fn)(const \
	    struct calibration_row *, void *, struct error *), void *arg, \
	    struct error *e), (st, schema_id, version, question, since_ms, fn, \
	    arg, e)) \
	X(int, admission_read, (struct store *st, int64_t app_id, const char \
	    *day, int64_t *tat_ms, int64_t *tat_rate, int64_t *tat_at_ms, \
	    int64_t *used, struct error *e), (st, app_id, day, tat_ms, \
	    tat_rate, tat_at_ms, used, e)) \
	X(int, admission_write, (struct store *st, int64_t app_id, const char \
	    *day, int64_t tat_ms, int64_t rate, int64_t at_ms, int64_t used, \
	    struct error *e), (st, app_id, day, tat_ms, rate, at_ms, used, e)) \
	X(int, quota_used, (struct store *st, int64_t app_id, const char *day, \
	    int64_t *used, struct error *e), (st, app_id, day, used, e)) \
	X(int, quota_charge, (struct store *st, int64_t app_id, const char \
	    *day, int64_t units, struct error *e), (st, app_id, day, units, \
	    e)) \
	X(int, prune_step, (struct store *st, struct prune_range *q, int64_t \
	    *deleted, struct error *e), (st, q, deleted, e)) \
	X(int, vacuum, (struct store *st, int max_steps, struct error *e), \
	    (st, max_steps, e)) \
	X(int, audit, (struct store *st, const char *actor, const char \
	    *action, const char *target, json_object *details, struct error \
	    *e), (st, actor, action, target, details, e)) \
	X(int, challenger_set, (struct store *st, const struct challenger *c, \
	    struct error *e), (st, c, e)) \
	X(int, challenger_remove, (struct store *st, int64_t schema_id, \
	    int64_t version, int64_t backend_id, struct error *e), (st, \
	    schema_id, version, backend_id, e)) \
	X(int, challenger_each, (struct store *st, int64_t schema_id, int64_t \
	    version, void (*fn)(const struct challenger *, void *), void *arg, \
	    struct error *e), (st, schema_id, version, fn, arg, e)) \
	X(int, challenger_answer_insert, (struct store *st, const struct \
	    challenger_answer *a, struct error *e), (st, a, e)) \
	X(int, challenger_answers, (struct store *st, const char *id, void \
	    (*fn)(const struct challenger_answer *, void *), void *arg, struct \
	    error *e), (st, id, fn, arg, e)) \
	X(int, replay_page, (struct store *st, const struct replay_range *q, \
	    int limit, void (*fn)(const struct replay_row *, void *), void \
	    *arg, struct error *e), (st, q, limit, fn, arg, e)) \
	X(int, compare_each, (struct store *st, int64_t schema_id, int64_t \
	    version, const char *question, int64_t since_ms, int (*fn)(const \
	    struct compare_row *, void *, struct error *), void *arg, struct \
	    error *e), (st, schema_id, version, question, since_ms, fn, arg, \
	    e)) \
	X(int, audit_last, (struct store *st, const char *action, const char \
	    *target, int64_t *at_ms, struct error *e), (st, action, target, \
	    at_ms, e))

#define STORE_VOID_OPS(X) \
	X(void, maintain, (struct store *st), (st)) \
	X(void, idle, (struct store *st), (st)) \
	X(void, close, (struct store *st), (st)) \
	X(void, ready, (struct store *st, int *db_ok, int *cache_ok, \
	    int *schema), (st, db_ok, cache_ok, schema)) \
	X(void, read_begin, (struct store *st), (st)) \
	X(void, read_end, (struct store *st), (st)) \
	X(void, rollback, (struct store *st), (st)) \
	X(void, memo_put, (struct store *st, const unsigned char mac[32], \
	    const char *prefix, int64_t now_ms), (st, mac, prefix, now_ms)) \
	X(void, cooldown_set, (struct store *st, const char *url, int64_t \
	    until_ms), (st, url, until_ms))

/* What the engine-independent policy of store_retention.c asks of an
 * engine (its statements), in the same form; store.h has no function
 * of these names.  retain_begin: whether a step may run on st now (0) or
 * not (-1), and sets up how long it may wait for a lock; retain_end
 * undoes that.  retain_next_app: the first application after after_id
 * whose decisions expire (its retention_days, or default_days when it
 * has none) into *app_id and *days: 1, 0 when none, -1.
 * retain_prune: store_prune_step as automatic retention runs it.
 * retain_states: clears the states kept by the oldest
 * STORE_PRUNE_BATCH decisions created before before_ms, in a
 * transaction of its own: 0 or -1.  retain_freed: after a step deleted
 * decisions, gives space back if the engine does (one vacuum step).
 * kept: the catalog rows st keeps (kept.h), for the lookups written
 * once above the engines (store_challenger.c). */
#define STORE_HOOKS(X) \
	X(struct kept *, kept, (struct store *st), (st)) \
	X(int, retain_begin, (struct store *st), (st)) \
	X(void, retain_end, (struct store *st), (st)) \
	X(int, retain_next_app, (struct store *st, int64_t after_id, int64_t \
	    default_days, int64_t *app_id, int64_t *days, struct error *e), \
	    (st, after_id, default_days, app_id, days, e)) \
	X(int, retain_prune, (struct store *st, struct prune_range *q, \
	    int64_t *deleted, struct error *e), (st, q, deleted, e)) \
	X(int, retain_states, (struct store *st, int64_t before_ms, struct \
	    error *e), (st, before_ms, e)) \
	X(void, retain_freed, (struct store *st, struct error *e), (st, e))

#define STORE_MEMBER(type, name, params, args)	type (*name) params;

struct store_engine {
	const char	*name;		/* "sqlite", "postgresql" */
	/* Admission may be kept in the host's shared memory
	 * (doc/design.md, sections 10 and 13): SQLite's, one host's.  PostgreSQL's is
	 * shared by several hosts and stays in the database. */
	int		 host_admission;
	STORE_OPEN_OPS(STORE_MEMBER)
	STORE_OPS(STORE_MEMBER)
	STORE_VOID_OPS(STORE_MEMBER)
	STORE_HOOKS(STORE_MEMBER)
};

/* Every engine's struct store begins with its engine. */
static inline const struct store_engine *
store_engine_of(struct store *st)
{
	return *(const struct store_engine *const *)(void *)st;
}

/* An engine's implementation of each operation is named by its
 * STORE_IMPL(name), which its private header defines (sq_name for
 * SQLite, pg_name for PostgreSQL) before it declares them all with
 * STORE_DECLARE_ALL and its table lists them with STORE_ENTRIES. */
#define STORE_DECLARE(type, name, params, args) type STORE_IMPL(name) params;
#define STORE_DECLARE_ALL \
	STORE_OPEN_OPS(STORE_DECLARE) \
	STORE_OPS(STORE_DECLARE) \
	STORE_VOID_OPS(STORE_DECLARE) \
	STORE_HOOKS(STORE_DECLARE)
#define STORE_ENTRY(type, name, params, args) .name = STORE_IMPL(name),
#define STORE_ENTRIES \
	STORE_OPEN_OPS(STORE_ENTRY) \
	STORE_OPS(STORE_ENTRY) \
	STORE_VOID_OPS(STORE_ENTRY) \
	STORE_HOOKS(STORE_ENTRY)

/* The schema version of this program's databases, on either engine: a
 * new one adds a step with the same number to each (src/README.md,
 * "Where a new thing goes"), and each engine's table of steps is
 * checked against it when it compiles (_Static_assert in store_sqlite.c
 * and store_pg.c). */
#define STORE_SCHEMA_VERSION 10

/* Retention, the same on either engine (doc/design.md, section 11.1;
 * store_retention.c). */
#define STORE_PRUNE_BATCH 200		/* decisions one prune step examines */
#define STORE_RETAIN_REQUESTS 64	/* a worker's retention step is due */
#define STORE_RETAIN_MS	2000		/* after so many requests or ms */

/* Where an engine's automatic retention stands (its idle step): one
 * step after the answer has gone, every so many requests or ms, on one
 * application at a time.  Owned by the engine's struct store; only
 * store_retain() reads or changes it. */
struct store_retain {
	int64_t		 requests;	/* answered since the last */
	int64_t		 next_us;	/* due from then anyway */
	int64_t		 app_id;	/* being pruned, 0: none */
	struct prune_range q;		/* its range and cursor */
};

/* An engine's idle step calls this after every request, with st's
 * settings s and retention r: when a step is due (every
 * STORE_RETAIN_REQUESTS requests or STORE_RETAIN_MS), clears a batch of
 * old kept states and prunes a batch of the next application whose
 * decisions expire, through st's engine hooks (STORE_HOOKS).  Errors are
 * given up: the step is tried again next time. */
void		 store_retain(struct store *st, const struct settings *s,
		    struct store_retain *r);

/* The engines.  store_pg_engine exists only in a build with libpq
 * (HAVE_POSTGRESQL). */
extern const struct store_engine store_sqlite_engine;
extern const struct store_engine store_pg_engine;

/* rc of an engine's lookup that filled a record, and what checking the
 * record against its bounds gave (bounds.h: bound_app() and the like, 0
 * or -1 with e set): rc, or -1 with the check's error logged when rc is
 * 1 and the check failed (store_bounds.c).  Both engines check a record
 * where they read it, before they keep it (kept.h). */
int		 store_bad_row(int rc, int checked, struct error *e);

/* For an engine whose shared rows live elsewhere (PostgreSQL): the
 * host's cache file alone (the verified-key memo, replica cool-downs),
 * as a SQLite connection whose memo_has, memo_put, cooldown_until,
 * cooldown_set, ready (its second answer), maintain and idle serve.
 * Never NULL; owned by the caller (store_close). */
struct store	*store_sqlite_open_cache(const struct settings *s);

/* A decision's answers as the text of decisions.answers, the same for
 * both engines (store_answers.c says its shape): each question's part
 * appended to b, which starts empty, by store_answers_add(), then
 * store_answers_end().  Each 0, or -1 when b is full or memory ran
 * out. */
struct buf;
struct answer_text {		/* every pointer borrowed */
	const char	*name, *type, *dist, *answer;
	size_t		 name_len, type_len, dist_len, answer_len;
	const double	*label_mass;	/* NULL: the backend gave none */
};
int	 store_answers_add(struct buf *b, const struct answer_text *a);
int	 store_answers_end(struct buf *b);

#endif
