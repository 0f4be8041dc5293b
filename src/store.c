/* store.c: the storage interface of store.h, dispatched to the engine
 * the configuration chose (store_engine.h): PostgreSQL when
 * SERVICE_DB_URL is set, SQLite otherwise. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "settings.h"
#include "store_engine.h"

/* A build without libpq refuses SERVICE_DB_URL when the settings are
 * loaded (settings.c), so it never reaches here. */
static const struct store_engine *
engine_for(const struct settings *s)
{
#ifdef HAVE_POSTGRESQL
	if (s->db_url[0] != '\0')
		return &store_pg_engine;
#else
	(void)s;
#endif
	return &store_sqlite_engine;
}

/* Every engine's struct store begins with its engine. */
static const struct store_engine *
engine(struct store *st)
{
	return *(const struct store_engine *const *)(void *)st;
}

int
store_host_admission(struct store *st)
{
	return engine(st)->host_admission;
}

const char *
store_engine_name(const struct settings *s)
{
	return engine_for(s)->name;
}

int
store_init(const struct settings *s, struct error *e)
{
	return engine_for(s)->init(s, e);
}

struct store *
store_open(const struct settings *s, struct error *e)
{
	return engine_for(s)->open(s, e);
}

struct store *
store_open_lazy(const struct settings *s)
{
	return engine_for(s)->open_lazy(s);
}

void
store_maintain(struct store *st)
{
	engine(st)->maintain(st);
}

void
store_idle(struct store *st)
{
	engine(st)->idle(st);
}

void
store_close(struct store *st)
{
	if (st != NULL)
		engine(st)->close(st);
}

void
store_ready(struct store *st, int *db_ok, int *cache_ok)
{
	engine(st)->ready(st, db_ok, cache_ok);
}

int
store_begin(struct store *st, struct error *e)
{
	return engine(st)->begin(st, e);
}

void
store_read_begin(struct store *st)
{
	if (st != NULL)
		engine(st)->read_begin(st);
}

void
store_read_end(struct store *st)
{
	if (st != NULL)
		engine(st)->read_end(st);
}

int
store_begin_counters(struct store *st, struct error *e)
{
	return engine(st)->begin_counters(st, e);
}

int
store_commit(struct store *st, struct error *e)
{
	return engine(st)->commit(st, e);
}

void
store_rollback(struct store *st)
{
	engine(st)->rollback(st);
}

int
store_app_insert(struct store *st, struct app *a, struct error *e)
{
	return engine(st)->app_insert(st, a, e);
}

int
store_app_update(struct store *st, const struct app *a, struct error *e)
{
	return engine(st)->app_update(st, a, e);
}

int
store_app_by_name(struct store *st, const char *name, struct app *a,
    struct error *e)
{
	return engine(st)->app_by_name(st, name, a, e);
}

int
store_app_by_id(struct store *st, int64_t id, struct app *a, struct error *e)
{
	return engine(st)->app_by_id(st, id, a, e);
}

int
store_app_each(struct store *st, void (*fn)(const struct app *, void *),
    void *arg, struct error *e)
{
	return engine(st)->app_each(st, fn, arg, e);
}

int
store_key_insert(struct store *st, const struct key_row *k, struct error *e)
{
	return engine(st)->key_insert(st, k, e);
}

int
store_key_by_prefix(struct store *st, const char *prefix, struct key_row *k,
    struct error *e)
{
	return engine(st)->key_by_prefix(st, prefix, k, e);
}

int
store_key_revoke(struct store *st, const char *prefix, int64_t now,
    struct error *e)
{
	return engine(st)->key_revoke(st, prefix, now, e);
}

int
store_key_set_check(struct store *st, const char *prefix,
    const unsigned char check[32], struct error *e)
{
	return engine(st)->key_set_check(st, prefix, check, e);
}

int
store_key_each(struct store *st, int64_t app_id,
    void (*fn)(const struct key_row *, const char *app, void *), void *arg,
    struct error *e)
{
	return engine(st)->key_each(st, app_id, fn, arg, e);
}

int
store_memo_has(struct store *st, const unsigned char mac[32],
    const char *prefix)
{
	return engine(st)->memo_has(st, mac, prefix);
}

void
store_memo_put(struct store *st, const unsigned char mac[32], const
    char *prefix,
    int64_t now_ms)
{
	engine(st)->memo_put(st, mac, prefix, now_ms);
}

int
store_backend_insert(struct store *st, struct backend *b, struct error *e)
{
	return engine(st)->backend_insert(st, b, e);
}

int
store_backend_set_enabled(struct store *st, const char *name, int enabled,
    struct error *e)
{
	return engine(st)->backend_set_enabled(st, name, enabled, e);
}

int
store_backend_update(struct store *st, const struct backend *b, struct error *e)
{
	return engine(st)->backend_update(st, b, e);
}

int
store_backend_by_name(struct store *st, const char *name, struct backend *b,
    struct error *e)
{
	return engine(st)->backend_by_name(st, name, b, e);
}

int
store_backend_by_id(struct store *st, int64_t id, struct backend *b,
    struct error *e)
{
	return engine(st)->backend_by_id(st, id, b, e);
}

int
store_backend_each(struct store *st, int enabled_only,
    void (*fn)(const struct backend *, void *), void *arg, struct error *e)
{
	return engine(st)->backend_each(st, enabled_only, fn, arg, e);
}

int64_t
store_cooldown_until(struct store *st, const char *url)
{
	return engine(st)->cooldown_until(st, url);
}

void
store_cooldown_set(struct store *st, const char *url, int64_t until_ms)
{
	engine(st)->cooldown_set(st, url, until_ms);
}

int
store_schema_publish(struct store *st, struct schema_version *v,
    struct error *e)
{
	return engine(st)->schema_publish(st, v, e);
}

int
store_schema_get(struct store *st, const char *slug, int64_t version,
    struct schema_version *v, struct error *e)
{
	return engine(st)->schema_get(st, slug, version, v, e);
}

int
store_schema_match(struct store *st, int64_t app_id, const char *fingerprint,
    struct schema_version *v, int *matched, struct error *e)
{
	return engine(st)->schema_match(st, app_id, fingerprint, v, matched, e);
}

int
store_schema_each(struct store *st, const char *slug,
    void (*fn)(const struct schema_version *, void *), void *arg,
    struct error *e)
{
	return engine(st)->schema_each(st, slug, fn, arg, e);
}

int
store_grant(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version,
    struct error *e)
{
	return engine(st)->grant(st, app_id, schema_id, version, e);
}

int
store_ungrant(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	return engine(st)->ungrant(st, app_id, schema_id, version, e);
}

int
store_grant_allows(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	return engine(st)->grant_allows(st, app_id, schema_id, version, e);
}

int
store_template_publish(struct store *st, struct template_version *v,
    struct error *e)
{
	return engine(st)->template_publish(st, v, e);
}

int
store_template_get(struct store *st, const char *slug, int64_t version,
    struct template_version *v, struct error *e)
{
	return engine(st)->template_get(st, slug, version, v, e);
}

int
store_template_each(struct store *st, void (*fn)(const struct
    template_version *,
    void *), void *arg, struct error *e)
{
	return engine(st)->template_each(st, fn, arg, e);
}

int
store_decision_insert(struct store *st, const struct decision *d,
    json_object *questions, json_object *answers, json_object *dists,
    struct error *e)
{
	return engine(st)->decision_insert(st, d, questions, answers, dists, e);
}

int
store_decision_get(struct store *st, const char *id, int64_t app_id,
    struct decision_row *d, struct error *e)
{
	return engine(st)->decision_get(st, id, app_id, d, e);
}

int
store_outcome_record(struct store *st, const char *id, json_object *values,
    const char *source, int64_t now_ms, struct error *e)
{
	return engine(st)->outcome_record(st, id, values, source, now_ms, e);
}

int
store_decision_page(struct store *st, const struct decision_range *q, int limit,
    void (*fn)(const char *id, int64_t created_at_ms, void *), void *arg,
    struct error *e)
{
	return engine(st)->decision_page(st, q, limit, fn, arg, e);
}

int
store_calibration_each(struct store *st, int64_t schema_id, int64_t version,
    const char *question, int64_t since_ms,
    int (*fn)(const struct calibration_row *, void *, struct error *),
    void *arg,
    struct error *e)
{
	return engine(st)->calibration_each(st, schema_id, version, question,
	    since_ms, fn, arg, e);
}

int
store_admission_read(struct store *st, int64_t app_id, const char *day,
    int64_t *tat_ms, int64_t *tat_rate, int64_t *tat_at_ms, int64_t *used,
    struct error *e)
{
	return engine(st)->admission_read(st, app_id, day, tat_ms, tat_rate,
	    tat_at_ms, used, e);
}

int
store_admission_write(struct store *st, int64_t app_id, const char *day,
    int64_t tat_ms, int64_t rate, int64_t at_ms, int64_t used, struct error *e)
{
	return engine(st)->admission_write(st, app_id, day, tat_ms, rate, at_ms,
	    used, e);
}

int
store_quota_used(struct store *st, int64_t app_id, const char *day,
    int64_t *used, struct error *e)
{
	return engine(st)->quota_used(st, app_id, day, used, e);
}

int
store_quota_charge(struct store *st, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	return engine(st)->quota_charge(st, app_id, day, units, e);
}

int
store_prune_step(struct store *st, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	return engine(st)->prune_step(st, q, deleted, e);
}

int
store_vacuum(struct store *st, int max_steps, struct error *e)
{
	return engine(st)->vacuum(st, max_steps, e);
}

int
store_audit(struct store *st, const char *actor, const char *action,
    const char *target, json_object *details, struct error *e)
{
	return engine(st)->audit(st, actor, action, target, details, e);
}

#ifndef HAVE_POSTGRESQL
/* The move to PostgreSQL is store_pg_import.c's, in a build with libpq;
 * without it, the console's migrate says why it cannot. */
int
store_import(const struct settings *s, const char *from,
    struct store_import *r, struct error *e)
{
	(void)s;
	(void)from;
	memset(r, 0, sizeof(*r));
	return error_set(e, ERR_UNAVAILABLE, NULL, "this evalgate was built "
	    "without PostgreSQL (configure --with-postgresql)");
}
#endif
