/* ops_backend.c: the operations on backends (evalgate-admin backend;
 * /admin/v1/backends). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "clock.h"
#include "json_util.h"
#include "ops_internal.h"
#include "store.h"
#include "utf8.h"

static const char *const url_schemes[] = { "http://", "https://" };
#define NURL_SCHEMES (sizeof(url_schemes) / sizeof(url_schemes[0]))

/* The kind named kind, or a validation error listing the kinds. */
static int
check_kind(const char *kind, const struct backend_kind **k,
    struct error *e)
{
	const struct backend_kind	*o;
	char				 names[128] = "";
	size_t				 i;

	if ((*k = backend_kind_find(kind)) != NULL)
		return 0;
	for (i = 0; (o = backend_kind_at(i)) != NULL; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
		    "%s%s", *names ? ", " : "", o->name);
	return error_set(e, ERR_VALIDATION, "kind", "must be one of: %s",
	    names);
}

/* A replica URL: http or https, a host, no credentials (the key is read
 * from auth_env), no spaces or control characters. */
static int
check_url(const char *field, const char *url, struct error *e)
{
	const char		*host = NULL;
	size_t			 i, n;

	for (i = 0; i < NURL_SCHEMES && host == NULL; i++)
		if (strncmp(url, url_schemes[i], strlen(url_schemes[i])) == 0)
			host = url + strlen(url_schemes[i]);
	if (host == NULL)
		return error_set(e, ERR_VALIDATION, field,
		    "must be an http:// or https:// URL");
	if (strchr(url, ' ') != NULL || utf8_control(url, NULL) != NULL)
		return error_set(e, ERR_VALIDATION, field,
		    "must have no spaces or control characters");
	if ((n = strcspn(host, "/?#")) == 0)
		return error_set(e, ERR_VALIDATION, field, "must name a host");
	if (memchr(host, '@', n) != NULL)
		return error_set(e, ERR_VALIDATION, field, "must not carry "
		    "credentials: name the variable holding the key in "
		    "auth_env");
	return 0;
}

/* urls into b: as many as the kind k takes (none for built-in kinds,
 * 1..BACKEND_MAX_URLS for remote ones), distinct, stored without
 * trailing '/'. */
static int
backend_urls(json_object *in, const struct backend_kind *k,
    struct backend *b, struct error *e)
{
	json_object	*urls = NULL, *u;
	char		 field[32];
	size_t		 i, j, n = 0, len;

	if (json_object_object_get_ex(in, "urls", &urls) && urls != NULL) {
		if (!json_object_is_type(urls, json_type_array))
			return error_set(e, ERR_VALIDATION, "urls",
			    "must be an array of URLs");
		n = json_object_array_length(urls);
	}
	if (backend_check_replicas(k, n, e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(field, sizeof(field), "urls[%zu]", i);
		u = json_object_array_get_idx(urls, i);
		if (!json_object_is_type(u, json_type_string) ||
		    (len = (size_t)json_object_get_string_len(u)) == 0 ||
		    len >= sizeof(b->urls[0]))
			return error_set(e, ERR_VALIDATION, field,
			    "must be a URL of at most %zu characters",
			    sizeof(b->urls[0]) - 1);
		if (check_url(field, json_object_get_string(u), e) == -1)
			return -1;
		memcpy(b->urls[i], json_object_get_string(u), len + 1);
		while (len > 0 && b->urls[i][len - 1] == '/')
			b->urls[i][--len] = '\0';
		for (j = 0; j < i; j++)
			if (strcmp(b->urls[j], b->urls[i]) == 0)
				return error_set(e, ERR_VALIDATION, field,
				    "repeats urls[%zu]", j);
	}
	b->nurls = n;
	return 0;
}

/* A release date: YYYY-MM-DD naming a real day. */
static int
check_date(const char *field, const char *date, struct error *e)
{
	char	 day[11];
	int64_t	 ms;

	if (clock_parse_rfc3339(date, &ms) == 0) {
		clock_utc_day(ms, day);		/* "2026-02-30" is not one */
		if (strcmp(day, date) == 0)
			return 0;
	}
	return error_set(e, ERR_VALIDATION, field, "must be a date YYYY-MM-DD");
}

/* An optional string member into a fixed buffer: absent, the buffer is
 * kept; null, it is cleared (the default); else the string. */
static int
field_str(json_object *in, const char *key, char *buf, size_t size,
    struct error *e)
{
	const char	*v = NULL;
	json_object	*j;

	if (!json_object_object_get_ex(in, key, &j))
		return 0;
	if (ju_opt_str(in, key, size - 1, &v, e) == -1)
		return -1;
	snprintf(buf, size, "%s", v ? v : "");
	return 0;
}

/* An optional integer member: absent, kept; null, 0 (the default). */
static int
field_int(json_object *in, const char *key, int64_t min, int64_t max,
    int64_t *out, struct error *e)
{
	int	 is_null = 0;

	if (ju_opt_int(in, key, min, max, out, &is_null, e) == -1)
		return -1;
	if (is_null)
		*out = 0;
	return 0;
}

/* The fields that backend add and backend update share, from in into b,
 * whose kind is k: each one given is checked and set (null: its
 * default), the others are left as b has them; then b as a whole is
 * checked.  Adding, the replicas are read whether given or not. */
static int
backend_fields(json_object *in, const struct backend_kind *k, int adding,
    struct backend *b, struct error *e)
{
	if (((adding || json_object_object_get_ex(in, "urls", NULL)) &&
	    backend_urls(in, k, b, e) == -1) ||
	    field_str(in, "model", b->model, sizeof(b->model), e) == -1 ||
	    field_str(in, "auth_env", b->auth_env, sizeof(b->auth_env),
	    e) == -1 ||
	    field_str(in, "description", b->description,
	    sizeof(b->description), e) == -1 ||
	    field_str(in, "release_date", b->release_date,
	    sizeof(b->release_date), e) == -1 ||
	    field_int(in, "timeout_ms", BOUND_TIMEOUT_MS_MIN,
	    BOUND_TIMEOUT_MS_MAX, &b->timeout_ms, e) == -1 ||
	    field_int(in, "max_in_flight", 1, BOUND_IN_FLIGHT_MAX,
	    &b->max_in_flight, e) == -1)
		return -1;
	if (ops_check_text("model", b->model, e) == -1 ||
	    ops_check_text("description", b->description, e) == -1)
		return -1;
	if (*b->auth_env && !ops_spelled(b->auth_env, UPPER_, UPPER_ DIGITS))
		return error_set(e, ERR_VALIDATION, "auth_env", "must be the "
		    "name of an environment variable ([A-Z_][A-Z0-9_]*), not "
		    "the key itself");
	if (*b->release_date && check_date("release_date", b->release_date,
	    e) == -1)
		return -1;
	/* A kind's own options (k->options); the kind checks the rest. */
	if (backend_read_options(k, in, !adding, b, e) == -1 ||
	    backend_check_add(k, in, b, e) == -1)
		return -1;
	return 0;
}

static json_object *
backend_json(const struct backend *b)
{
	json_object	*o = ju_obj(), *urls;
	size_t		 i;

	ju_add_str(o, "name", b->name);
	ju_add_str(o, "kind", b->kind);
	ju_add(o, "enabled", ju_bool(b->enabled));
	ju_add_str(o, "model", *b->model ? b->model : NULL);
	ju_add_str(o, "auth_env", *b->auth_env ? b->auth_env : NULL);
	ju_add_str(o, "description", b->description);
	ju_add_str(o, "release_date", *b->release_date ? b->release_date :
	    NULL);
	ju_add(o, "timeout_ms", b->timeout_ms ?
	    ju_int(b->timeout_ms) : NULL);
	ju_add(o, "max_in_flight", b->max_in_flight ?
	    ju_int(b->max_in_flight) : NULL);
	backend_options_json(b, o);
	urls = ju_arr();
	for (i = 0; i < b->nurls; i++)
		ju_push(urls, ju_string(b->urls[i]));
	ju_add(o, "urls", urls);
	return o;
}

int
op_backend_add(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend			*b;
	const struct backend_kind	*k;
	const char			*name, *kind;
	int				 rc = -1;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    ops_check_name("name", name, e) == -1 ||
	    ju_req_str(in, "kind", sizeof(b->kind) - 1, &kind, e) == -1 ||
	    check_kind(kind, &k, e) == -1)
		return -1;
	if ((b = calloc(1, sizeof(*b))) == NULL)	/* 9 KiB */
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->kind, sizeof(b->kind), "%s", kind);
	b->enabled = 1;
	if (backend_fields(in, k, 1, b, e) == 0 &&
	    store_backend_insert(c->st, b, e) == 0) {
		*out = backend_json(b);
		rc = 0;
	}
	free(b);
	return rc;
}

static int
backend_set_enabled(struct op_ctx *c, json_object *in, int enabled,
    json_object **out, struct error *e)
{
	struct backend	 b;
	const char	*name;
	int		 rc;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    (rc = store_backend_set_enabled(c->st, name, enabled, e)) == -1)
		return -1;
	if (rc == 0 || (rc = store_backend_by_name(c->st, name, &b, e)) == 0)
		return ops_not_found(e, "backend", name);
	if (rc == -1)
		return -1;
	*out = backend_json(&b);
	return 0;
}

int
op_backend_enable(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	return backend_set_enabled(c, in, 1, out, e);
}

int
op_backend_disable(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	return backend_set_enabled(c, in, 0, out, e);
}

/* Each published schema version on a backend must still fit it. */
struct fit {
	const struct backend	*b;
	struct error		*e;	/* the first misfit */
	int			 failed;
};

static void
schema_fits(const struct schema_version *v, void *arg)
{
	struct fit			*f = arg;
	struct error			 why = { 0 };
	const struct backend_kind	*k = backend_kind_find(f->b->kind);

	if (f->failed || v->backend_id != f->b->id ||
	    backend_check_schema(f->b, v->questions, &why) == 0)
		return;
	f->failed = 1;
	/* The kind's option that bounds what a schema may ask. */
	error_set(f->e, ERR_VALIDATION, k != NULL ? k->schema_option : NULL,
	    "schema '%s' version %lld is published on this backend and "
	    "would no longer fit: %s",
	    v->slug, (long long)v->version, why.message);
	error_clear(&why);
}

static int
check_schemas(struct op_ctx *c, const struct backend *b, struct error *e)
{
	struct fit	 f = { b, e, 0 };

	if (store_schema_each(c->st, NULL, schema_fits, &f, e) == -1)
		return -1;
	return f.failed ? -1 : 0;
}

/* What backend update may change besides the options of its kind (the
 * kind is the backend's for good: another kind is another backend). */
static const char *const updatable[] = { "enabled", "urls", "model",
    "auth_env", "description", "release_date", "timeout_ms",
    "max_in_flight" };
#define NUPDATABLE (sizeof(updatable) / sizeof(updatable[0]))

/* {name, and at least one of updatable[]}: each given field replaces
 * the stored one (null: its default), and the backend is checked whole,
 * as backend add checks it: PATCH /admin/v1/backends/NAME and `backend
 * update`. */
int
op_backend_update(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	const struct backend_kind	*k;
	struct backend			*b;
	json_object			*enabled = NULL;
	const char			*name;
	size_t				 i, given = 0;
	int				 rc;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1)
		return -1;
	if (json_object_object_get_ex(in, "kind", NULL))
		return error_set(e, ERR_VALIDATION, "kind", "cannot be changed: "
		    "add a backend of the other kind and publish the schemas "
		    "on it");
	if (json_object_object_get_ex(in, "enabled", &enabled) &&
	    !json_object_is_type(enabled, json_type_boolean))
		return error_set(e, ERR_VALIDATION, "enabled",
		    "must be true or false");
	for (i = 0; i < NUPDATABLE; i++)
		given += json_object_object_get_ex(in, updatable[i], NULL);
	given += backend_options_given(in);
	if (given == 0)
		return error_set(e, ERR_VALIDATION, "enabled", "nothing to change: "
		    "give enabled, urls, model, auth_env, description, "
		    "release_date, timeout_ms, max_in_flight or a kind's "
		    "option");
	if ((b = calloc(1, sizeof(*b))) == NULL)	/* 9 KiB */
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if ((rc = store_backend_by_name(c->st, name, b, e)) == 0)
		rc = ops_not_found(e, "backend", name);
	else if (rc == 1 && (k = backend_kind_find(b->kind)) == NULL)
		rc = error_set(e, ERR_INTERNAL, NULL, "backend '%s' has an "
		    "unknown kind", name);
	else if (rc == 1) {
		if (enabled != NULL)
			b->enabled = json_object_get_boolean(enabled);
		rc = backend_fields(in, k, 0, b, e) == -1 ||
		    check_schemas(c, b, e) == -1 ||
		    store_backend_update(c->st, b, e) == -1 ? -1 : 0;
		if (rc == 0)
			*out = backend_json(b);
	}
	free(b);
	return rc;
}

static void
backend_add_json(const struct backend *b, void *arg)
{
	ju_push(arg, backend_json(b));
}

int
op_backend_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = ju_arr();

	return ops_listed(store_backend_each(c->st, 0, backend_add_json, list, e),
	    "backends", list, out);
}
