/* store_sqlite_catalog.c: the catalog an evaluation is resolved against:
 * backends and their replicas, schemas and their versions, grants, and
 * templates and their versions. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "clock.h"
#include "json_util.h"
#include "store_sqlite.h"
#include "xalloc.h"

/* JSON as kept in a TEXT column: compact, '/' left alone. */
#define STORED_JSON (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static void
read_i64(sqlite3_stmt *stmt, void *out)
{
	*(int64_t *)out = sqlite3_column_int64(stmt, 0);
}

/* Binds text, or NULL for "" (an optional column left unset). */
static void
bind_text_or_null(sqlite3_stmt *stmt, int i, const char *v)
{
	sqlite_bind_text(stmt, i, v[0] != '\0' ? v : NULL);
}

/* Steps a statement that changes rows: 1 if it changed some, 0 if none,
 * -1 on failure. */
static int
exec_changes(struct store *st, sqlite3_stmt *stmt, struct error *e,
    const char *what)
{
	if (sqlite_exec_stmt(st, stmt, e, what) == -1)
		return -1;
	return sqlite3_changes(st->db) > 0;
}

/* Statements of a versioned kind (schemas, templates): a parent row per
 * slug and numbered versions under it. */
struct versioned {
	const char	*what;		/* for logs */
	enum stmt	 insert;	/* ?1 slug, ?2 created_at; ignores
					 * a duplicate */
	enum stmt	 id;		/* ?1 slug -> id */
	enum stmt	 next;		/* ?1 id -> next version number */
};

/* The id of slug's parent row (created if absent) and the next version
 * number under it, in the caller's transaction. */
static int
next_version(struct store *st, const struct versioned *k, const char *slug,
    int64_t now, int64_t *id, int64_t *version, struct error *e)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	if ((stmt = sqlite_stmt(st, k->insert, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, slug, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, now);
	if (sqlite_exec_stmt(st, stmt, e, k->what) == -1 ||
	    (stmt = sqlite_stmt(st, k->id, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, slug, -1, SQLITE_STATIC);
	if ((rc = sqlite_lookup(st, stmt, e, k->what, read_i64, id)) != 1)
		return rc == 0 ? sqlite_fail(st, e, k->what) : -1;
	if ((stmt = sqlite_stmt(st, k->next, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, *id);
	if ((rc = sqlite_lookup(st, stmt, e, k->what, read_i64, version)) != 1)
		return rc == 0 ? sqlite_fail(st, e, k->what) : -1;
	return 0;
}

/* JSON kept by the store and read back (store_sqlite.h). */
int
stored_json(const char *text, json_object **out, const char *what,
    struct error *e)
{
	if (text == NULL || (*out = ju_parse(text)) == NULL)
		return error_set(e, ERR_INTERNAL, NULL,
		    "the stored %s is not JSON", what);
	return 0;
}

/* Backends. */

static void
read_backend(sqlite3_stmt *stmt, void *out)
{
	struct backend *b = out;

	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(stmt, 0);
	sqlite_col_text(stmt, 1, b->name, sizeof(b->name));
	sqlite_col_text(stmt, 2, b->kind, sizeof(b->kind));
	sqlite_col_text(stmt, 3, b->model, sizeof(b->model));
	sqlite_col_text(stmt, 4, b->auth_env, sizeof(b->auth_env));
	sqlite_col_text(stmt, 5, b->description, sizeof(b->description));
	sqlite_col_text(stmt, 6, b->release_date, sizeof(b->release_date));
	b->enabled = sqlite3_column_int(stmt, 7);
	b->timeout_ms = sqlite3_column_int64(stmt, 8);
	b->max_in_flight = sqlite3_column_int64(stmt, 9);
	sqlite_col_text(stmt, 10, b->options, sizeof(b->options));
}

/* Fills b->urls from backend_replicas, in position order. */
static int
read_replicas(struct store *st, struct backend *b, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_REPLICAS, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, b->id);
	b->nurls = 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    b->nurls < BACKEND_MAX_URLS)
		sqlite_col_text(stmt, 0, b->urls[b->nurls++],
		    sizeof(b->urls[0]));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return sqlite_fail(st, e, "replicas");
	return 0;
}

/* The replicas of the backend b->id, in their order. */
static int
insert_replicas(struct store *st, const struct backend *b, struct error *e)
{
	sqlite3_stmt	*stmt;
	size_t		 i;

	for (i = 0; i < b->nurls && i < BACKEND_MAX_URLS; i++) {
		if ((stmt = sqlite_stmt(st, STMT_REPLICA_INSERT, e)) == NULL)
			return -1;
		sqlite3_bind_int64(stmt, 1, b->id);
		sqlite3_bind_int64(stmt, 2, (int64_t)i);
		sqlite3_bind_text(stmt, 3, b->urls[i], -1, SQLITE_STATIC);
		if (sqlite_exec_stmt(st, stmt, e, "insert replica") == -1)
			return -1;
	}
	return 0;
}

int
sq_backend_insert(struct store *st, struct backend *b, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_BACKEND_INSERT, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, b->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, b->kind, -1, SQLITE_STATIC);
	bind_text_or_null(stmt, 3, b->model);
	bind_text_or_null(stmt, 4, b->auth_env);
	sqlite3_bind_text(stmt, 5, b->description, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 6, b->release_date, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 7, b->enabled);
	sqlite_bind_optional(stmt, 8, b->timeout_ms);
	sqlite3_bind_int64(stmt, 9, clock_now_ms() / 1000);
	sqlite_bind_optional(stmt, 10, b->max_in_flight);
	bind_text_or_null(stmt, 11, b->options);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return error_set(e, ERR_CONFLICT, "name",
		    "a backend named '%s' exists", b->name);
	if (rc != SQLITE_DONE)
		return sqlite_fail(st, e, "insert backend");
	b->id = sqlite3_last_insert_rowid(st->db);
	return insert_replicas(st, b, e);
}

int
sq_backend_set_enabled(struct store *st, const char *name, int enabled,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_BACKEND_ENABLE, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 2, enabled != 0);
	return exec_changes(st, stmt, e, "enable backend");
}

int
sq_backend_update(struct store *st, const struct backend *b,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_BACKEND_UPDATE, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, b->id);
	bind_text_or_null(stmt, 2, b->model);
	bind_text_or_null(stmt, 3, b->auth_env);
	sqlite3_bind_text(stmt, 4, b->description, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 5, b->release_date, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 6, b->enabled != 0);
	sqlite_bind_optional(stmt, 7, b->timeout_ms);
	sqlite_bind_optional(stmt, 8, b->max_in_flight);
	bind_text_or_null(stmt, 9, b->options);
	if (sqlite_exec_stmt(st, stmt, e, "update backend") == -1 ||
	    (stmt = sqlite_stmt(st, STMT_REPLICAS_DELETE, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, b->id);
	if (sqlite_exec_stmt(st, stmt, e, "delete replicas") == -1)
		return -1;
	return insert_replicas(st, b, e);
}

/* A one-backend lookup on a bound statement, replicas included. */
static int
backend_lookup(struct store *st, sqlite3_stmt *stmt, struct backend *b,
    struct error *e)
{
	int rc = sqlite_lookup(st, stmt, e, "backend", read_backend, b);

	if (rc == 1 && read_replicas(st, b, e) == -1)
		return -1;
	return store_bad_row(rc, rc == 1 ? bound_backend(b,
	    store_kind_options(b->kind), e) : 0, e);
}

int
sq_backend_by_name(struct store *st, const char *name, struct backend *b,
    struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_BACKEND_BY_NAME, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	return backend_lookup(st, stmt, b, e);
}

int
sq_backend_by_id(struct store *st, int64_t id, struct backend *b,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	char		 key[24];
	int		 rc;

	snprintf(key, sizeof(key), "%lld", (long long)id);
	if (kept_get(st->kept, KEPT_BACKEND, key, b))
		return 1;
	if ((stmt = sqlite_stmt(st, STMT_BACKEND_BY_ID, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if ((rc = backend_lookup(st, stmt, b, e)) == 1)
		kept_put(st->kept, KEPT_BACKEND, key, b);
	return rc;
}

int
sq_backend_each(struct store *st, int enabled_only,
    void (*fn)(const struct backend *, void *), void *arg, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_BACKEND_ALL, e);
	struct backend	*b;
	int		 rc;

	if (stmt == NULL)
		return -1;
	b = xmalloc(sizeof(*b));	/* 5 KiB: not on the stack */
	sqlite3_bind_int(stmt, 1, enabled_only != 0);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		read_backend(stmt, b);
		if (read_replicas(st, b, e) == -1 ||
		    store_bad_row(1, bound_backend(b,
		    store_kind_options(b->kind), e), e) == -1) {
			sqlite3_reset(stmt);
			free(b);
			return -1;
		}
		fn(b, arg);
	}
	sqlite3_reset(stmt);
	free(b);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "backends");
}

/* Schemas and their versions. */

static const struct versioned schema_kind = {
	"schema", STMT_SCHEMA_CREATE, STMT_SCHEMA_ID, STMT_SCHEMA_NEXT
};

/* A row into v; questions are parsed by parse_questions() after. */
static void
read_version(sqlite3_stmt *stmt, void *out)
{
	struct schema_version *v = out;

	memset(v, 0, sizeof(*v));
	v->schema_id = sqlite3_column_int64(stmt, 0);
	sqlite_col_text(stmt, 1, v->slug, sizeof(v->slug));
	v->version = sqlite3_column_int64(stmt, 2);
	sqlite_col_text(stmt, 4, v->fingerprint, sizeof(v->fingerprint));
	v->backend_id = sqlite3_column_int64(stmt, 5);
	v->temperature = sqlite3_column_double(stmt, 6);
	v->abstain_threshold = sqlite3_column_double(stmt, 7);
	v->created_at = sqlite3_column_int64(stmt, 8);
}

static int
parse_questions(sqlite3_stmt *stmt, struct schema_version *v,
    struct error *e)
{
	if (stored_json((const char *)sqlite3_column_text(stmt, 3),
	    &v->questions, "questions", e) == -1 ||
	    store_bad_row(1, bound_version(v, e), e) == -1) {
		schema_version_clear(v);
		return -1;
	}
	return 0;
}

/* A one-version lookup on a bound statement, questions included. */
static int
version_lookup(struct store *st, sqlite3_stmt *stmt,
    struct schema_version *v, struct error *e)
{
	int rc = sqlite3_step(stmt);

	memset(v, 0, sizeof(*v));
	if (rc == SQLITE_ROW) {
		read_version(stmt, v);
		rc = parse_questions(stmt, v, e) == -1 ? -1 : 1;
		sqlite3_reset(stmt);
		return rc;
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "schema version");
}

int
sq_schema_publish(struct store *st, struct schema_version *v,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	int64_t		 now = clock_now_ms() / 1000;

	if (next_version(st, &schema_kind, v->slug, now, &v->schema_id,
	    &v->version, e) == -1 ||
	    (stmt = sqlite_stmt(st, STMT_VERSION_INSERT, e)) == NULL)
		return -1;
	v->created_at = now;
	sqlite3_bind_int64(stmt, 1, v->schema_id);
	sqlite3_bind_int64(stmt, 2, v->version);
	sqlite_bind_text(stmt, 3, json_object_to_json_string_ext(v->questions,
	    STORED_JSON));
	sqlite3_bind_text(stmt, 4, v->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 5, v->backend_id);
	sqlite3_bind_double(stmt, 6, v->temperature);
	sqlite3_bind_double(stmt, 7, v->abstain_threshold);
	sqlite3_bind_int64(stmt, 8, now);
	return sqlite_exec_stmt(st, stmt, e, "publish schema");
}

int
sq_schema_get(struct store *st, const char *slug, int64_t version,
    struct schema_version *v, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_VERSION_GET, e);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, slug, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, version);
	return version_lookup(st, stmt, v, e);
}

int
sq_schema_match(struct store *st, int64_t app_id, const char *fingerprint,
    struct schema_version *v, int *matched, struct error *e)
{
	sqlite3_stmt	*stmt;
	int64_t		 n = 0;
	char		 key[KEPT_KEY_MAX];
	int		 rc;

	*matched = 0;
	snprintf(key, sizeof(key), "%lld/%s", (long long)app_id, fingerprint);
	if (kept_get(st->kept, KEPT_MATCH, key, v))
		return *matched = 1;
	if ((stmt = sqlite_stmt(st, STMT_VERSION_MATCH, e)) == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_text(stmt, 2, fingerprint, -1, SQLITE_STATIC);
	if ((rc = version_lookup(st, stmt, v, e)) != 0) {
		if ((*matched = rc == 1))
			kept_put(st->kept, KEPT_MATCH, key, v);
		return rc;
	}
	if ((stmt = sqlite_stmt(st, STMT_VERSION_MATCHED, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, fingerprint, -1, SQLITE_STATIC);
	if (sqlite_lookup(st, stmt, e, "schema match", read_i64, &n) == -1)
		return -1;
	*matched = n > 0;
	return 0;
}

int
sq_schema_each(struct store *st, const char *slug,
    void (*fn)(const struct schema_version *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt		*stmt = sqlite_stmt(st, STMT_VERSION_ALL, e);
	struct schema_version	 v;
	int			 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, slug ? slug : "", -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		read_version(stmt, &v);
		if (parse_questions(stmt, &v, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
		fn(&v, arg);
		schema_version_clear(&v);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "schema versions");
}

/* Grants. */

/* Binds the (application, schema, version) triple of a grant. */
static void
bind_grant(sqlite3_stmt *stmt, int64_t app_id, int64_t schema_id,
    int64_t version)
{
	sqlite3_bind_int64(stmt, 1, app_id);
	sqlite3_bind_int64(stmt, 2, schema_id);
	sqlite3_bind_int64(stmt, 3, version);
}

int
sq_grant(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_GRANT, e);

	if (stmt == NULL)
		return -1;
	bind_grant(stmt, app_id, schema_id, version);
	sqlite3_bind_int64(stmt, 4, clock_now_ms() / 1000);
	return sqlite_exec_stmt(st, stmt, e, "grant");
}

int
sq_ungrant(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	sqlite3_stmt *stmt = sqlite_stmt(st, STMT_UNGRANT, e);

	if (stmt == NULL)
		return -1;
	bind_grant(stmt, app_id, schema_id, version);
	return exec_changes(st, stmt, e, "ungrant");
}

int
sq_grant_allows(struct store *st, int64_t app_id, int64_t schema_id,
    int64_t version, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_GRANT_ALLOWS, e);
	int64_t		 one;

	if (stmt == NULL)
		return -1;
	bind_grant(stmt, app_id, schema_id, version);
	return sqlite_lookup(st, stmt, e, "grant", read_i64, &one);
}

int
sq_grant_each(struct store *st, int64_t schema_id,
    void (*fn)(const char *, int64_t, int64_t, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_GRANT_LIST, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, schema_id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		fn((const char *)sqlite3_column_text(stmt, 0),
		    sqlite3_column_int64(stmt, 1),
		    sqlite3_column_int64(stmt, 2), arg);
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "grants");
}

/* Templates and their versions. */

static const struct versioned template_kind = {
	"template", STMT_TEMPLATE_CREATE, STMT_TEMPLATE_ID, STMT_TEMPLATE_NEXT
};

/* A row into v (owning its copies), or -1 with v cleared. */
static int
read_template(sqlite3_stmt *stmt, struct template_version *v,
    struct error *e)
{
	const char *body = (const char *)sqlite3_column_text(stmt, 3);

	memset(v, 0, sizeof(*v));
	v->template_id = sqlite3_column_int64(stmt, 0);
	sqlite_col_text(stmt, 1, v->slug, sizeof(v->slug));
	v->version = sqlite3_column_int64(stmt, 2);
	v->escape_html = sqlite3_column_int(stmt, 5);
	v->created_at = sqlite3_column_int64(stmt, 6);
	/* A template's body, up to max_body_bytes: checked. */
	if ((v->body = strdup(body ? body : "")) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (stored_json((const char *)sqlite3_column_text(stmt, 4),
	    &v->variables, "template variables", e) == -1 ||
	    store_bad_row(1, bound_template(v, e), e) == -1) {
		template_version_clear(v);
		return -1;
	}
	return 0;
}

int
sq_template_publish(struct store *st, struct template_version *v,
    struct error *e)
{
	sqlite3_stmt	*stmt;
	int64_t		 now = clock_now_ms() / 1000;

	if (next_version(st, &template_kind, v->slug, now, &v->template_id,
	    &v->version, e) == -1 ||
	    (stmt = sqlite_stmt(st, STMT_TEMPLATE_INSERT, e)) == NULL)
		return -1;
	v->created_at = now;
	sqlite3_bind_int64(stmt, 1, v->template_id);
	sqlite3_bind_int64(stmt, 2, v->version);
	sqlite3_bind_text(stmt, 3, v->body, -1, SQLITE_STATIC);
	sqlite_bind_text(stmt, 4, json_object_to_json_string_ext(v->variables,
	    STORED_JSON));
	sqlite3_bind_int(stmt, 5, v->escape_html != 0);
	sqlite3_bind_int64(stmt, 6, now);
	return sqlite_exec_stmt(st, stmt, e, "publish template");
}

int
sq_template_get(struct store *st, const char *slug, int64_t version,
    struct template_version *v, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_TEMPLATE_GET, e);
	int		 rc;

	memset(v, 0, sizeof(*v));
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, slug, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, version);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		rc = read_template(stmt, v, e) == -1 ? -1 : 1;
	else
		rc = rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "template");
	sqlite3_reset(stmt);
	return rc;
}

int
sq_template_each(struct store *st,
    void (*fn)(const struct template_version *, void *), void *arg,
    struct error *e)
{
	sqlite3_stmt		*stmt = sqlite_stmt(st, STMT_TEMPLATE_ALL, e);
	struct template_version	 v;
	int			 rc;

	if (stmt == NULL)
		return -1;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (read_template(stmt, &v, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
		fn(&v, arg);
		template_version_clear(&v);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "templates");
}
