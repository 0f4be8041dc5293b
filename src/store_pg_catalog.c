/* store_pg_catalog.c: the catalog an evaluation is resolved against,
 * on PostgreSQL: backends and their replicas, schemas and their
 * versions, grants, and templates and their versions, as the SQLite
 * engine keeps them (store_sqlite_catalog.c): the same rows, the same
 * errors, the same kept rows, checked against the same bounds. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "clock.h"
#include "store_pg.h"
#include "xalloc.h"

/* JSON as kept in a TEXT column: compact, '/' left alone. */
#define STORED_JSON (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static void
read_i64(const PGresult *r, int row, void *out)
{
	*(int64_t *)out = pg_int(r, row, 0);
}

/* Binds text, or NULL for "" (an optional column left unset). */
static void
bind_text_or_null(struct pg_params *p, int i, const char *v)
{
	pg_bind_text(p, i, v[0] != '\0' ? v : NULL);
}

/* Runs a statement that changes rows: 1 if it changed some, 0 if none,
 * -1 on failure. */
static int
run_changes(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct error *e, const char *what)
{
	int64_t n = pg_run(pg, id, p, e, what);

	return n == -1 ? -1 : n > 0;
}

static int
run0(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct error *e, const char *what)
{
	return pg_run(pg, id, p, e, what) == -1 ? -1 : 0;
}

/* Statements of a versioned kind (schemas, templates): a parent row per
 * slug and numbered versions under it. */
struct versioned {
	const char	*what;		/* for logs */
	enum pg_stmt	 insert;	/* $1 slug, $2 created_at; ignores
					 * a duplicate */
	enum pg_stmt	 id;		/* $1 slug -> id, locked */
	enum pg_stmt	 next;		/* $1 id -> next version number */
};

/* The id of slug's parent row (created if absent, and locked until the
 * caller's transaction ends) and the next version number under it. */
static int
next_version(struct store *pg, const struct versioned *k, const char *slug,
    int64_t now, int64_t *id, int64_t *version, struct error *e)
{
	struct pg_params	p;
	int			rc;

	pg_params_init(&p);
	pg_bind_text(&p, 1, slug);
	pg_bind_int(&p, 2, now);
	if (pg_run(pg, k->insert, &p, e, k->what) == -1)
		return -1;
	pg_params_init(&p);
	pg_bind_text(&p, 1, slug);
	if ((rc = pg_lookup(pg, k->id, &p, e, k->what, read_i64, id)) != 1)
		return rc == 0 ? error_set(e, ERR_INTERNAL, NULL,
		    "database error") : -1;
	pg_params_init(&p);
	pg_bind_int(&p, 1, *id);
	if ((rc = pg_lookup(pg, k->next, &p, e, k->what, read_i64,
	    version)) != 1)
		return rc == 0 ? error_set(e, ERR_INTERNAL, NULL,
		    "database error") : -1;
	return 0;
}

/* Backends. */

static void
read_backend(const PGresult *r, int row, void *out)
{
	struct backend *b = out;

	memset(b, 0, sizeof(*b));
	b->id = pg_int(r, row, 0);
	pg_copy(r, row, 1, b->name, sizeof(b->name));
	pg_copy(r, row, 2, b->kind, sizeof(b->kind));
	pg_copy(r, row, 3, b->model, sizeof(b->model));
	pg_copy(r, row, 4, b->auth_env, sizeof(b->auth_env));
	pg_copy(r, row, 5, b->description, sizeof(b->description));
	pg_copy(r, row, 6, b->release_date, sizeof(b->release_date));
	b->enabled = (int)pg_int(r, row, 7);
	b->timeout_ms = pg_int(r, row, 8);
	b->max_in_flight = pg_int(r, row, 9);
	pg_copy(r, row, 10, b->options, sizeof(b->options));
}

/* Fills b->urls from backend_replicas, in position order. */
static int
read_replicas(struct store *pg, struct backend *b, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	int			 i;

	pg_params_init(&p);
	pg_bind_int(&p, 1, b->id);
	if ((r = pg_exec(pg, PG_REPLICAS, &p, e, "replicas")) == NULL)
		return -1;
	b->nurls = 0;
	for (i = 0; i < PQntuples(r) && b->nurls < BACKEND_MAX_URLS; i++)
		pg_copy(r, i, 0, b->urls[b->nurls++], sizeof(b->urls[0]));
	PQclear(r);
	return 0;
}

/* The replicas of the backend b->id, in their order. */
static int
insert_replicas(struct store *pg, const struct backend *b, struct error *e)
{
	struct pg_params	p;
	size_t			i;

	for (i = 0; i < b->nurls && i < BACKEND_MAX_URLS; i++) {
		pg_params_init(&p);
		pg_bind_int(&p, 1, b->id);
		pg_bind_int(&p, 2, (int64_t)i);
		pg_bind_text(&p, 3, b->urls[i]);
		if (pg_run(pg, PG_REPLICA_INSERT, &p, e, "insert replica") ==
		    -1)
			return -1;
	}
	return 0;
}

int
pg_backend_insert(struct store *pg, struct backend *b, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;

	pg_params_init(&p);
	pg_bind_text(&p, 1, b->name);
	pg_bind_text(&p, 2, b->kind);
	bind_text_or_null(&p, 3, b->model);
	bind_text_or_null(&p, 4, b->auth_env);
	pg_bind_text(&p, 5, b->description);
	pg_bind_text(&p, 6, b->release_date);
	pg_bind_int(&p, 7, b->enabled);
	pg_bind_optional(&p, 8, b->timeout_ms);
	pg_bind_int(&p, 9, clock_now_ms() / 1000);
	pg_bind_optional(&p, 10, b->max_in_flight);
	bind_text_or_null(&p, 11, b->options);
	if ((r = pg_exec(pg, PG_BACKEND_INSERT, &p, e,
	    "insert backend")) == NULL) {
		if (pg_unique_violation(pg))
			return error_set(e, ERR_CONFLICT, "name",
			    "a backend named '%s' exists", b->name);
		return -1;
	}
	b->id = pg_int(r, 0, 0);
	PQclear(r);
	return insert_replicas(pg, b, e);
}

int
pg_backend_set_enabled(struct store *pg, const char *name, int enabled,
    struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_text(&p, 1, name);
	pg_bind_int(&p, 2, enabled != 0);
	return run_changes(pg, PG_BACKEND_ENABLE, &p, e, "enable backend");
}

int
pg_backend_update(struct store *pg, const struct backend *b,
    struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, b->id);
	bind_text_or_null(&p, 2, b->model);
	bind_text_or_null(&p, 3, b->auth_env);
	pg_bind_text(&p, 4, b->description);
	pg_bind_text(&p, 5, b->release_date);
	pg_bind_int(&p, 6, b->enabled != 0);
	pg_bind_optional(&p, 7, b->timeout_ms);
	pg_bind_optional(&p, 8, b->max_in_flight);
	bind_text_or_null(&p, 9, b->options);
	if (run0(pg, PG_BACKEND_UPDATE, &p, e, "update backend") == -1)
		return -1;
	pg_params_init(&p);
	pg_bind_int(&p, 1, b->id);
	if (run0(pg, PG_REPLICAS_DELETE, &p, e, "delete replicas") == -1)
		return -1;
	return insert_replicas(pg, b, e);
}

/* A one-backend lookup, replicas included. */
static int
backend_lookup(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct backend *b, struct error *e)
{
	int rc = pg_lookup(pg, id, p, e, "backend", read_backend, b);

	if (rc == 1 && read_replicas(pg, b, e) == -1)
		return -1;
	return store_bad_row(rc, rc == 1 ? bound_backend(b,
	    store_kind_options(b->kind), e) : 0, e);
}

int
pg_backend_by_name(struct store *pg, const char *name, struct backend *b,
    struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_text(&p, 1, name);
	return backend_lookup(pg, PG_BACKEND_BY_NAME, &p, b, e);
}

int
pg_backend_by_id(struct store *pg, int64_t id, struct backend *b,
    struct error *e)
{
	struct pg_params	p;
	char			key[24];
	int			rc;

	snprintf(key, sizeof(key), "%lld", (long long)id);
	if (kept_get(pg->kept, KEPT_BACKEND, key, b))
		return 1;
	pg_params_init(&p);
	pg_bind_int(&p, 1, id);
	if ((rc = backend_lookup(pg, PG_BACKEND_BY_ID, &p, b, e)) == 1)
		kept_put(pg->kept, KEPT_BACKEND, key, b);
	return rc;
}

int
pg_backend_each(struct store *pg, int enabled_only,
    void (*fn)(const struct backend *, void *), void *arg, struct error *e)
{
	struct pg_params	 p;
	struct backend		*b;
	PGresult		*r;
	int			 i, rc = 0;

	pg_params_init(&p);
	pg_bind_int(&p, 1, enabled_only != 0);
	if ((r = pg_exec(pg, PG_BACKEND_ALL, &p, e, "backends")) == NULL)
		return -1;
	b = xmalloc(sizeof(*b));	/* 5 KiB: not on the stack */
	for (i = 0; i < PQntuples(r); i++) {
		read_backend(r, i, b);
		if (read_replicas(pg, b, e) == -1 ||
		    store_bad_row(1, bound_backend(b,
		    store_kind_options(b->kind), e), e) == -1) {
			rc = -1;
			break;
		}
		fn(b, arg);
	}
	free(b);
	PQclear(r);
	return rc;
}

/* Schemas and their versions. */

static const struct versioned schema_kind = {
	"schema", PG_SCHEMA_CREATE, PG_SCHEMA_ID, PG_SCHEMA_NEXT
};

/* Row row of r into v, questions parsed and v checked: 0, or -1 with v
 * cleared. */
static int
read_version(const PGresult *r, int row, struct schema_version *v,
    struct error *e)
{
	memset(v, 0, sizeof(*v));
	v->schema_id = pg_int(r, row, 0);
	pg_copy(r, row, 1, v->slug, sizeof(v->slug));
	v->version = pg_int(r, row, 2);
	pg_copy(r, row, 4, v->fingerprint, sizeof(v->fingerprint));
	v->backend_id = pg_int(r, row, 5);
	v->temperature = pg_double(r, row, 6);
	v->abstain_threshold = pg_double(r, row, 7);
	v->created_at = pg_int(r, row, 8);
	if (pg_json(pg_str(r, row, 3), &v->questions, "questions", e) == -1 ||
	    store_bad_row(1, bound_version(v, e), e) == -1) {
		schema_version_clear(v);
		return -1;
	}
	return 0;
}

/* A one-version lookup, questions included: 1, 0, -1. */
static int
version_lookup(struct store *pg, enum pg_stmt id, const struct pg_params *p,
    struct schema_version *v, struct error *e)
{
	PGresult	*r = pg_exec(pg, id, p, e, "schema version");
	int		 rc = 0;

	memset(v, 0, sizeof(*v));
	if (r == NULL)
		return -1;
	if (PQntuples(r) > 0)
		rc = read_version(r, 0, v, e) == -1 ? -1 : 1;
	PQclear(r);
	return rc;
}

int
pg_schema_publish(struct store *pg, struct schema_version *v,
    struct error *e)
{
	struct pg_params	p;
	int64_t			now = clock_now_ms() / 1000;

	if (next_version(pg, &schema_kind, v->slug, now, &v->schema_id,
	    &v->version, e) == -1)
		return -1;
	v->created_at = now;
	pg_params_init(&p);
	pg_bind_int(&p, 1, v->schema_id);
	pg_bind_int(&p, 2, v->version);
	pg_bind_text(&p, 3, json_object_to_json_string_ext(v->questions,
	    STORED_JSON));
	pg_bind_text(&p, 4, v->fingerprint);
	pg_bind_int(&p, 5, v->backend_id);
	pg_bind_double(&p, 6, v->temperature);
	pg_bind_double(&p, 7, v->abstain_threshold);
	pg_bind_int(&p, 8, now);
	return run0(pg, PG_VERSION_INSERT, &p, e, "publish schema");
}

int
pg_schema_get(struct store *pg, const char *slug, int64_t version,
    struct schema_version *v, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_text(&p, 1, slug);
	pg_bind_int(&p, 2, version);
	return version_lookup(pg, PG_VERSION_GET, &p, v, e);
}

int
pg_schema_match(struct store *pg, int64_t app_id, const char *fingerprint,
    struct schema_version *v, int *matched, struct error *e)
{
	struct pg_params	p;
	int64_t			n = 0;
	char			key[KEPT_KEY_MAX];
	int			rc;

	*matched = 0;
	snprintf(key, sizeof(key), "%lld/%s", (long long)app_id, fingerprint);
	if (kept_get(pg->kept, KEPT_MATCH, key, v))
		return *matched = 1;
	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	pg_bind_text(&p, 2, fingerprint);
	if ((rc = version_lookup(pg, PG_VERSION_MATCH, &p, v, e)) != 0) {
		if ((*matched = rc == 1))
			kept_put(pg->kept, KEPT_MATCH, key, v);
		return rc;
	}
	pg_params_init(&p);
	pg_bind_text(&p, 1, fingerprint);
	if (pg_lookup(pg, PG_VERSION_MATCHED, &p, e, "schema match", read_i64,
	    &n) == -1)
		return -1;
	*matched = n > 0;
	return 0;
}

int
pg_schema_each(struct store *pg, const char *slug,
    void (*fn)(const struct schema_version *, void *), void *arg,
    struct error *e)
{
	struct pg_params	 p;
	struct schema_version	 v;
	PGresult		*r;
	int			 i, rc = 0;

	pg_params_init(&p);
	pg_bind_text(&p, 1, slug ? slug : "");
	if ((r = pg_exec(pg, PG_VERSION_ALL, &p, e, "schema versions")) ==
	    NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		if ((rc = read_version(r, i, &v, e)) == -1)
			break;
		fn(&v, arg);
		schema_version_clear(&v);
	}
	PQclear(r);
	return rc;
}

/* Grants. */

/* The (application, schema, version) triple of a grant. */
static void
bind_grant(struct pg_params *p, int64_t app_id, int64_t schema_id,
    int64_t version)
{
	pg_params_init(p);
	pg_bind_int(p, 1, app_id);
	pg_bind_int(p, 2, schema_id);
	pg_bind_int(p, 3, version);
}

int
pg_grant(struct store *pg, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	struct pg_params p;

	bind_grant(&p, app_id, schema_id, version);
	pg_bind_int(&p, 4, clock_now_ms() / 1000);
	return run0(pg, PG_GRANT, &p, e, "grant");
}

int
pg_ungrant(struct store *pg, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	struct pg_params p;

	bind_grant(&p, app_id, schema_id, version);
	return run_changes(pg, PG_UNGRANT, &p, e, "ungrant");
}

int
pg_grant_allows(struct store *pg, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	struct pg_params	p;
	int64_t			one;

	bind_grant(&p, app_id, schema_id, version);
	return pg_lookup(pg, PG_GRANT_ALLOWS, &p, e, "grant", read_i64, &one);
}

int
pg_grant_each(struct store *pg, int64_t schema_id,
    void (*fn)(const char *, int64_t, int64_t, void *), void *arg,
    struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	int			 i;

	pg_params_init(&p);
	pg_bind_int(&p, 1, schema_id);
	if ((r = pg_exec(pg, PG_GRANT_LIST, &p, e, "grants")) == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++)
		fn(PQgetvalue(r, i, 0), pg_int(r, i, 1), pg_int(r, i, 2), arg);
	PQclear(r);
	return 0;
}

/* Templates and their versions. */

static const struct versioned template_kind = {
	"template", PG_TEMPLATE_CREATE, PG_TEMPLATE_ID, PG_TEMPLATE_NEXT
};

/* Row row of r into v (owning its copies) and checked, or -1 with v
 * cleared. */
static int
read_template(const PGresult *r, int row, struct template_version *v,
    struct error *e)
{
	const char *body = pg_str(r, row, 3);

	memset(v, 0, sizeof(*v));
	v->template_id = pg_int(r, row, 0);
	pg_copy(r, row, 1, v->slug, sizeof(v->slug));
	v->version = pg_int(r, row, 2);
	v->escape_html = (int)pg_int(r, row, 5);
	v->created_at = pg_int(r, row, 6);
	/* A template's body, up to max_body_bytes: checked. */
	if ((v->body = strdup(body ? body : "")) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (pg_json(pg_str(r, row, 4), &v->variables, "template variables",
	    e) == -1 || store_bad_row(1, bound_template(v, e), e) == -1) {
		template_version_clear(v);
		return -1;
	}
	return 0;
}

int
pg_template_publish(struct store *pg, struct template_version *v,
    struct error *e)
{
	struct pg_params	p;
	int64_t			now = clock_now_ms() / 1000;

	if (next_version(pg, &template_kind, v->slug, now, &v->template_id,
	    &v->version, e) == -1)
		return -1;
	v->created_at = now;
	pg_params_init(&p);
	pg_bind_int(&p, 1, v->template_id);
	pg_bind_int(&p, 2, v->version);
	pg_bind_text(&p, 3, v->body);
	pg_bind_text(&p, 4, json_object_to_json_string_ext(v->variables,
	    STORED_JSON));
	pg_bind_int(&p, 5, v->escape_html != 0);
	pg_bind_int(&p, 6, now);
	return run0(pg, PG_TEMPLATE_INSERT, &p, e, "publish template");
}

int
pg_template_get(struct store *pg, const char *slug, int64_t version,
    struct template_version *v, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	int			 rc = 0;

	memset(v, 0, sizeof(*v));
	pg_params_init(&p);
	pg_bind_text(&p, 1, slug);
	pg_bind_int(&p, 2, version);
	if ((r = pg_exec(pg, PG_TEMPLATE_GET, &p, e, "template")) == NULL)
		return -1;
	if (PQntuples(r) > 0)
		rc = read_template(r, 0, v, e) == -1 ? -1 : 1;
	PQclear(r);
	return rc;
}

int
pg_template_each(struct store *pg,
    void (*fn)(const struct template_version *, void *), void *arg,
    struct error *e)
{
	struct template_version	 v;
	PGresult		*r;
	int			 i, rc = 0;

	if ((r = pg_exec(pg, PG_TEMPLATE_ALL, NULL, e, "templates")) == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		if ((rc = read_template(r, i, &v, e)) == -1)
			break;
		fn(&v, arg);
		template_version_clear(&v);
	}
	PQclear(r);
	return rc;
}
