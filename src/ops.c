/* ops.c: applications and keys, and the catalog: backends, schemas and
 * their versions, grants, templates (more operations join the table as
 * the parts they administer arrive). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "backend.h"
#include "clock.h"
#include "json_util.h"
#include "ops.h"
#include "question.h"
#include "settings.h"
#include "store.h"
#include "template.h"

typedef int (*op_fn)(struct op_ctx *, json_object *, json_object **,
    struct error *);

#define NAME_MAX_LEN 100
#define LIMIT_MAX 1000000000000LL

static int
not_found(struct error *e, const char *what, const char *name)
{
	return error_set(e, ERR_NOT_FOUND, NULL, "no %s named '%s'", what,
	    name);
}

static int
find_app(struct op_ctx *c, const char *name, struct app *a, struct error *e)
{
	int rc = store_app_by_name(c->st, name, a, e);

	return rc == 1 ? 0 : rc == 0 ? not_found(e, "application", name) : -1;
}

static json_object *
app_json(const struct app *a)
{
	json_object *o = json_object_new_object();

	ju_add_str(o, "name", a->name);
	json_object_object_add(o, "log_state",
	    json_object_new_boolean(a->log_state));
	json_object_object_add(o, "admin", json_object_new_boolean(a->is_admin));
	json_object_object_add(o, "rate_per_minute", a->rate_per_minute ?
	    json_object_new_int64(a->rate_per_minute) : NULL);
	json_object_object_add(o, "daily_quota", a->daily_quota ?
	    json_object_new_int64(a->daily_quota) : NULL);
	ju_add_time(o, "created_at", a->created_at * 1000);
	return o;
}

/* A name is printable and has no '/', so that it fits in a path. */
static int
check_name(const char *field, const char *name, struct error *e)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '/')
			return error_set(e, ERR_VALIDATION, field,
			    "must have no spaces, control characters or '/'");
	return 0;
}

static int
app_create(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct app	 a = { 0 };
	const char	*name;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    check_name("name", name, e) == -1 ||
	    ju_opt_bool(in, "log_state", &a.log_state, e) == -1 ||
	    ju_opt_bool(in, "admin", &a.is_admin, e) == -1 ||
	    ju_opt_int(in, "rate_per_minute", 1, LIMIT_MAX,
	    &a.rate_per_minute, NULL, e) == -1 ||
	    ju_opt_int(in, "daily_quota", 1, LIMIT_MAX, &a.daily_quota, NULL,
	    e) == -1)
		return -1;
	snprintf(a.name, sizeof(a.name), "%s", name);
	a.created_at = clock_now_ms() / 1000;
	if (store_app_insert(c->st, &a, e) == -1)
		return -1;
	*out = app_json(&a);
	return 0;
}

static int
app_update(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct app	 a;
	const char	*name;
	int		 rate_null = 0, quota_null = 0;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    find_app(c, name, &a, e) == -1 ||
	    ju_opt_bool(in, "log_state", &a.log_state, e) == -1 ||
	    ju_opt_int(in, "rate_per_minute", 1, LIMIT_MAX,
	    &a.rate_per_minute, &rate_null, e) == -1 ||
	    ju_opt_int(in, "daily_quota", 1, LIMIT_MAX, &a.daily_quota,
	    &quota_null, e) == -1)
		return -1;
	if (rate_null)
		a.rate_per_minute = 0;
	if (quota_null)
		a.daily_quota = 0;
	if (store_app_update(c->st, &a, e) == -1)
		return -1;
	*out = app_json(&a);
	return 0;
}

/* Finishes a listing the store filled (rc from its _each function):
 * {key: list} in *out, or the list released on failure. */
static int
listed(int rc, const char *key, json_object *list, json_object **out)
{
	if (rc == -1) {
		json_object_put(list);
		return -1;
	}
	*out = json_object_new_object();
	json_object_object_add(*out, key, list);
	return 0;
}

static void
app_add(const struct app *a, void *arg)
{
	json_object_array_add(arg, app_json(a));
}

static int
app_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = json_object_new_array();

	return listed(store_app_each(c->st, app_add, list, e), "applications",
	    list, out);
}

static int
key_issue(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	char		 key[AUTH_KEY_LEN + 1];
	struct key_row	 k = { 0 };
	struct app	 a;
	const char	*name, *expires = NULL;
	int64_t		 exp_ms = 0;

	if (ju_req_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_opt_str(in, "expires", 64, &expires, e) == -1 ||
	    find_app(c, name, &a, e) == -1)
		return -1;
	if (expires != NULL && clock_parse_rfc3339(expires, &exp_ms) == -1)
		return error_set(e, ERR_VALIDATION, "expires",
		    "must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z");
	if (auth_issue(key, &k, e) == -1)
		return -1;
	k.app_id = a.id;
	k.created_at = clock_now_ms() / 1000;
	k.expires_at = exp_ms > 0 ? (exp_ms + 999) / 1000 : 0;
	if (store_key_insert(c->st, &k, e) == -1)
		return -1;
	*out = json_object_new_object();
	ju_add_str(*out, "key", key);
	ju_add_str(*out, "prefix", k.prefix);
	ju_add_str(*out, "application", a.name);
	ju_add_time(*out, "expires", k.expires_at * 1000);
	explicit_bzero(key, sizeof(key));
	return 0;
}

static int
key_revoke(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	const char	*prefix;
	int64_t		 now = clock_now_ms() / 1000;
	int		 rc;

	if (ju_req_str(in, "prefix", 64, &prefix, e) == -1)
		return -1;
	if ((rc = store_key_revoke(c->st, prefix, now, e)) <= 0)
		return rc == 0 ? not_found(e, "key", prefix) : -1;
	*out = json_object_new_object();
	ju_add_str(*out, "prefix", prefix);
	json_object_object_add(*out, "revoked", json_object_new_boolean(1));
	return 0;
}

static void
key_add(const struct key_row *k, const char *app, void *arg)
{
	json_object *o = json_object_new_object();

	ju_add_str(o, "prefix", k->prefix);
	ju_add_str(o, "application", app);
	ju_add_time(o, "created_at", k->created_at * 1000);
	ju_add_time(o, "expires", k->expires_at * 1000);
	ju_add_time(o, "revoked_at", k->revoked_at * 1000);
	json_object_array_add(arg, o);
}

static int
key_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object	*list;
	const char	*name = NULL;
	struct app	 a = { 0 };

	if (ju_opt_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    (name != NULL && find_app(c, name, &a, e) == -1))
		return -1;
	list = json_object_new_array();
	return listed(store_key_each(c->st, a.id, key_add, list, e), "keys",
	    list, out);
}

/* The catalog: backends, schemas, grants, templates. */
#define LOWER_DIGITS	"abcdefghijklmnopqrstuvwxyz0123456789"
#define UPPER_		"ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
#define DIGITS		"0123456789"
#define SLUG_MAX_LEN	100
#define TEMPERATURE_MAX	100.0
#define MAX_QUESTIONS_STORED 1000	/* per schema version */

/* Whether s is one character of first, then characters of rest: slugs,
 * variable names. */
static int
spelled(const char *s, const char *first, const char *rest)
{
	return *s != '\0' && strchr(first, *s) != NULL &&
	    strspn(s + 1, rest) == strlen(s + 1);
}

/* The id of a schema or template: [a-z0-9][a-z0-9_.-]{0,99}. */
static int
req_slug(json_object *in, const char **slug, struct error *e)
{
	if (ju_req_str(in, "id", SLUG_MAX_LEN, slug, e) == -1)
		return -1;
	if (!spelled(*slug, LOWER_DIGITS, LOWER_DIGITS "_.-"))
		return error_set(e, ERR_VALIDATION, "id", "must be lowercase "
		    "letters, digits, '_', '.' or '-', starting with a letter "
		    "or a digit");
	return 0;
}

/* The optional version of a schema or template: 0 when absent. */
static int
opt_version(json_object *in, int64_t *version, struct error *e)
{
	*version = 0;
	return ju_opt_int(in, "version", 1, LIMIT_MAX, version, NULL, e);
}

/* What a kind of backend needs besides its name: built-in kinds have no
 * replicas, remote ones 1 to BACKEND_MAX_URLS.  A kind is accepted when
 * it is both here and in backend.c's table (which runs it). */
static const struct kind_rule {
	const char	*kind;
	int		 remote;
} kind_rules[] = {
	{ "lexical", 0 },
	{ "systemone", 1 },
};
#define NKIND_RULES (sizeof(kind_rules) / sizeof(kind_rules[0]))

static const char *const url_schemes[] = { "http://", "https://" };
#define NURL_SCHEMES (sizeof(url_schemes) / sizeof(url_schemes[0]))

static const struct kind_rule *
kind_rule(const char *kind)
{
	size_t i;

	for (i = 0; i < NKIND_RULES; i++)
		if (strcmp(kind_rules[i].kind, kind) == 0)
			return &kind_rules[i];
	return NULL;
}

static int
check_kind(const char *kind, const struct kind_rule **rule,
    struct error *e)
{
	char	 names[128] = "";
	size_t	 i;

	if ((*rule = kind_rule(kind)) != NULL && backend_kind_known(kind))
		return 0;
	for (i = 0; i < NKIND_RULES; i++)
		if (backend_kind_known(kind_rules[i].kind))
			snprintf(names + strlen(names), sizeof(names) -
			    strlen(names), "%s%s", *names ? ", " : "",
			    kind_rules[i].kind);
	return error_set(e, ERR_VALIDATION, "kind", "must be one of: %s",
	    names);
}

/* A replica URL: http or https, a host, no credentials (the key is read
 * from auth_env), no spaces or control characters. */
static int
check_url(const char *field, const char *url, struct error *e)
{
	const char		*host = NULL;
	const unsigned char	*p;
	size_t			 i, n;

	for (i = 0; i < NURL_SCHEMES && host == NULL; i++)
		if (strncmp(url, url_schemes[i], strlen(url_schemes[i])) == 0)
			host = url + strlen(url_schemes[i]);
	if (host == NULL)
		return error_set(e, ERR_VALIDATION, field,
		    "must be an http:// or https:// URL");
	for (p = (const unsigned char *)url; *p != '\0'; p++)
		if (*p <= 0x20 || *p == 0x7f)
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

/* urls into b: refused for built-in kinds, 1..BACKEND_MAX_URLS distinct
 * URLs for remote ones, stored without trailing '/'. */
static int
backend_urls(json_object *in, const struct kind_rule *rule,
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
	if (!rule->remote && n > 0)
		return error_set(e, ERR_VALIDATION, "urls", "a %s backend is "
		    "built in and has no replicas", rule->kind);
	if (rule->remote && (n == 0 || n > BACKEND_MAX_URLS))
		return error_set(e, ERR_VALIDATION, "urls", "a %s backend "
		    "needs 1 to %d replica URLs", rule->kind, BACKEND_MAX_URLS);
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

/* Copies an optional string member into a fixed buffer ("" if absent). */
static int
opt_copy(json_object *in, const char *key, char *buf, size_t size,
    struct error *e)
{
	const char *v = NULL;

	if (ju_opt_str(in, key, size - 1, &v, e) == -1)
		return -1;
	snprintf(buf, size, "%s", v ? v : "");
	return 0;
}

static json_object *
backend_json(const struct backend *b)
{
	json_object	*o = json_object_new_object(), *urls;
	size_t		 i;

	ju_add_str(o, "name", b->name);
	ju_add_str(o, "kind", b->kind);
	json_object_object_add(o, "enabled",
	    json_object_new_boolean(b->enabled));
	ju_add_str(o, "model", *b->model ? b->model : NULL);
	ju_add_str(o, "auth_env", *b->auth_env ? b->auth_env : NULL);
	ju_add_str(o, "description", b->description);
	ju_add_str(o, "release_date", *b->release_date ? b->release_date :
	    NULL);
	json_object_object_add(o, "timeout_ms", b->timeout_ms ?
	    json_object_new_int64(b->timeout_ms) : NULL);
	urls = json_object_new_array();
	for (i = 0; i < b->nurls; i++)
		json_object_array_add(urls, json_object_new_string(b->urls[i]));
	json_object_object_add(o, "urls", urls);
	return o;
}

static int
backend_add(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend		 b;
	const struct kind_rule	*rule;
	const char		*name, *kind;

	memset(&b, 0, sizeof(b));
	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    check_name("name", name, e) == -1 ||
	    ju_req_str(in, "kind", sizeof(b.kind) - 1, &kind, e) == -1 ||
	    check_kind(kind, &rule, e) == -1 ||
	    backend_urls(in, rule, &b, e) == -1 ||
	    opt_copy(in, "model", b.model, sizeof(b.model), e) == -1 ||
	    opt_copy(in, "auth_env", b.auth_env, sizeof(b.auth_env), e) == -1 ||
	    opt_copy(in, "description", b.description, sizeof(b.description),
	    e) == -1 ||
	    opt_copy(in, "release_date", b.release_date,
	    sizeof(b.release_date), e) == -1 ||
	    ju_opt_int(in, "timeout_ms", 100, 3600000, &b.timeout_ms, NULL,
	    e) == -1)
		return -1;
	if (*b.auth_env && !spelled(b.auth_env, UPPER_, UPPER_ DIGITS))
		return error_set(e, ERR_VALIDATION, "auth_env", "must be the "
		    "name of an environment variable ([A-Z_][A-Z0-9_]*), not "
		    "the key itself");
	if (*b.release_date && check_date("release_date", b.release_date,
	    e) == -1)
		return -1;
	snprintf(b.name, sizeof(b.name), "%s", name);
	snprintf(b.kind, sizeof(b.kind), "%s", kind);
	b.enabled = 1;
	if (store_backend_insert(c->st, &b, e) == -1)
		return -1;
	*out = backend_json(&b);
	return 0;
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
		return not_found(e, "backend", name);
	if (rc == -1)
		return -1;
	*out = backend_json(&b);
	return 0;
}

static int
backend_enable(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	return backend_set_enabled(c, in, 1, out, e);
}

static int
backend_disable(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	return backend_set_enabled(c, in, 0, out, e);
}

/* {name, enabled}: enable or disable, as PATCH /admin/v1/backends/NAME
 * says it. */
static int
backend_update(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *v;

	if (!json_object_object_get_ex(in, "enabled", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return error_set(e, ERR_VALIDATION, "enabled",
		    "is required: true or false");
	return backend_set_enabled(c, in, json_object_get_boolean(v), out, e);
}

static void
backend_add_json(const struct backend *b, void *arg)
{
	json_object_array_add(arg, backend_json(b));
}

static int
backend_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = json_object_new_array();

	return listed(store_backend_each(c->st, 0, backend_add_json, list, e),
	    "backends", list, out);
}

/* Schemas and grants. */

static json_object *
schema_json(const struct schema_version *v, const char *backend,
    int with_questions)
{
	json_object *o = json_object_new_object();

	ju_add_str(o, "id", v->slug);
	json_object_object_add(o, "version", json_object_new_int64(v->version));
	ju_add_str(o, "fingerprint", v->fingerprint);
	ju_add_str(o, "backend", backend);
	json_object_object_add(o, "temperature", ju_num(v->temperature));
	json_object_object_add(o, "abstain_threshold",
	    ju_num(v->abstain_threshold));
	ju_add_time(o, "created_at", v->created_at * 1000);
	if (with_questions)
		json_object_object_add(o, "questions",
		    json_object_get(v->questions));
	return o;
}

/* The version of slug (0: the latest), or 404. */
static int
find_version(struct op_ctx *c, const char *slug, int64_t version,
    struct schema_version *v, struct error *e)
{
	int rc = store_schema_get(c->st, slug, version, v, e);

	if (rc != 0)
		return rc == 1 ? 0 : -1;
	if (version == 0)
		return not_found(e, "schema", slug);
	return error_set(e, ERR_NOT_FOUND, NULL,
	    "no version %lld of a schema named '%s'", (long long)version, slug);
}

static int
schema_publish(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend		 b;
	struct schema_version	 v = { 0 };
	json_object		*questions = NULL;
	const char		*slug, *backend;
	int			 rc;

	v.temperature = 1.0;
	json_object_object_get_ex(in, "questions", &questions);
	if (req_slug(in, &slug, e) == -1 ||
	    question_validate(questions, MAX_QUESTIONS_STORED, e) == -1 ||
	    ju_req_str(in, "backend", NAME_MAX_LEN, &backend, e) == -1 ||
	    ju_opt_num(in, "temperature", 0, TEMPERATURE_MAX, &v.temperature,
	    e) == -1 ||
	    ju_opt_num(in, "abstain_threshold", 0, 1, &v.abstain_threshold,
	    e) == -1)
		return -1;
	if (v.temperature <= 0)
		return error_set(e, ERR_VALIDATION, "temperature",
		    "must be greater than 0 and at most %g", TEMPERATURE_MAX);
	if ((rc = store_backend_by_name(c->st, backend, &b, e)) != 1)
		return rc == -1 ? -1 : error_set(e, ERR_VALIDATION, "backend",
		    "no backend named '%s'", backend);
	snprintf(v.slug, sizeof(v.slug), "%s", slug);
	question_fingerprint(questions, v.fingerprint);
	v.backend_id = b.id;
	v.questions = json_object_get(questions);
	if ((rc = store_schema_publish(c->st, &v, e)) == 0) {
		*out = json_object_new_object();
		ju_add_str(*out, "id", v.slug);
		json_object_object_add(*out, "version",
		    json_object_new_int64(v.version));
		ju_add_str(*out, "fingerprint", v.fingerprint);
	}
	schema_version_clear(&v);
	return rc;
}

struct schema_rows {
	json_object	*list;
	json_object	*backends;	/* backend id (text) -> name */
};

static void
backend_name_add(const struct backend *b, void *arg)
{
	char id[24];

	snprintf(id, sizeof(id), "%lld", (long long)b->id);
	json_object_object_add(arg, id, json_object_new_string(b->name));
}

static void
schema_add_json(const struct schema_version *v, void *arg)
{
	struct schema_rows	*r = arg;
	char			 id[24];

	snprintf(id, sizeof(id), "%lld", (long long)v->backend_id);
	json_object_array_add(r->list, schema_json(v, ju_str(r->backends, id),
	    0));
}

static int
schema_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_rows	 r;
	const char		*slug = NULL;
	int			 rc;

	if (ju_opt_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1)
		return -1;
	r.list = json_object_new_array();
	r.backends = json_object_new_object();
	if ((rc = store_backend_each(c->st, 0, backend_name_add, r.backends,
	    e)) == 0 &&
	    (rc = store_schema_each(c->st, slug, schema_add_json, &r, e)) == 0 &&
	    slug != NULL && json_object_array_length(r.list) == 0)
		rc = not_found(e, "schema", slug);
	json_object_put(r.backends);
	return listed(rc, "schemas", r.list, out);
}

static int
schema_show(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend		 b;
	struct schema_version	 v;
	const char		*slug;
	int64_t			 version;
	int			 rc;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1 ||
	    opt_version(in, &version, e) == -1 ||
	    find_version(c, slug, version, &v, e) == -1)
		return -1;
	if ((rc = store_backend_by_id(c->st, v.backend_id, &b, e)) != -1)
		*out = schema_json(&v, rc == 1 ? b.name : NULL, 1);
	schema_version_clear(&v);
	return rc == -1 ? -1 : 0;
}

/* What grant and ungrant take: application, schema, version?. */
static int
grant_args(struct op_ctx *c, json_object *in, struct app *a,
    struct schema_version *v, int64_t *version, struct error *e)
{
	const char *name, *slug;

	if (ju_req_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_req_str(in, "schema", SLUG_MAX_LEN, &slug, e) == -1 ||
	    opt_version(in, version, e) == -1 ||
	    find_app(c, name, a, e) == -1)
		return -1;
	return find_version(c, slug, *version, v, e);
}

static json_object *
grant_json(const struct app *a, const struct schema_version *v,
    int64_t version, int granted)
{
	json_object *o = json_object_new_object();

	ju_add_str(o, "application", a->name);
	ju_add_str(o, "schema", v->slug);
	json_object_object_add(o, "version", version > 0 ?
	    json_object_new_int64(version) : NULL);
	json_object_object_add(o, "granted", json_object_new_boolean(granted));
	return o;
}

static int
grant(struct op_ctx *c, json_object *in, json_object **out, struct error *e)
{
	struct schema_version	 v;
	struct app		 a;
	int64_t			 version;
	int			 rc;

	if (grant_args(c, in, &a, &v, &version, e) == -1)
		return -1;
	if ((rc = store_grant(c->st, a.id, v.schema_id, version, e)) == 0)
		*out = grant_json(&a, &v, version, 1);
	schema_version_clear(&v);
	return rc;
}

static int
ungrant(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	struct app		 a;
	int64_t			 version;
	int			 rc;

	if (grant_args(c, in, &a, &v, &version, e) == -1)
		return -1;
	if ((rc = store_ungrant(c->st, a.id, v.schema_id, version, e)) == 0 &&
	    version > 0)
		error_set(e, ERR_NOT_FOUND, NULL, "application '%s' has no "
		    "grant of version %lld of schema '%s'", a.name,
		    (long long)version, v.slug);
	else if (rc == 0)
		error_set(e, ERR_NOT_FOUND, NULL, "application '%s' has no "
		    "grant on schema '%s'", a.name, v.slug);
	else if (rc == 1)
		*out = grant_json(&a, &v, version, 0);
	schema_version_clear(&v);
	return rc == 1 ? 0 : -1;
}

/* Templates. */

static int
template_publish(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct template_version	 v = { 0 };
	json_object		*variables = NULL;
	const char		*slug, *body, *escape = NULL;
	int			 rc;

	json_object_object_get_ex(in, "variables", &variables);
	if (req_slug(in, &slug, e) == -1 ||
	    ju_req_str(in, "body", (size_t)c->settings->max_body_bytes, &body,
	    e) == -1 ||
	    ju_opt_str(in, "escape", 16, &escape, e) == -1)
		return -1;
	if (escape != NULL && strcmp(escape, "html") != 0)
		return error_set(e, ERR_VALIDATION, "escape",
		    "must be \"html\" or absent");
	if (template_check(body, variables, e) == -1)
		return -1;
	snprintf(v.slug, sizeof(v.slug), "%s", slug);
	if ((v.body = strdup(body)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	v.variables = json_object_get(variables);
	v.escape_html = escape != NULL;
	if ((rc = store_template_publish(c->st, &v, e)) == 0) {
		*out = json_object_new_object();
		ju_add_str(*out, "id", v.slug);
		json_object_object_add(*out, "version",
		    json_object_new_int64(v.version));
	}
	template_version_clear(&v);
	return rc;
}

static void
template_add_json(const struct template_version *v, void *arg)
{
	json_object *o = json_object_new_object();

	ju_add_str(o, "id", v->slug);
	json_object_object_add(o, "version", json_object_new_int64(v->version));
	json_object_object_add(o, "variables", json_object_get(v->variables));
	ju_add_str(o, "escape", v->escape_html ? "html" : NULL);
	ju_add_time(o, "created_at", v->created_at * 1000);
	json_object_array_add(arg, o);
}

static int
template_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = json_object_new_array();

	return listed(store_template_each(c->st, template_add_json, list, e),
	    "templates", list, out);
}

/* An unknown template is a render error, as it is for a request. */
static int
template_render_op(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct template_version	 v;
	json_object		*values = NULL;
	const char		*slug;
	char			*state = NULL;
	size_t			 len;
	int64_t			 version;
	int			 rc;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1 ||
	    opt_version(in, &version, e) == -1)
		return -1;
	if (!json_object_object_get_ex(in, "values", &values) ||
	    !json_object_is_type(values, json_type_object))
		return error_set(e, ERR_VALIDATION, "values",
		    "must be an object of variable values");
	if ((rc = store_template_get(c->st, slug, version, &v, e)) == -1)
		return -1;
	if (rc == 0 && version > 0)
		return error_set(e, ERR_TEMPLATE_RENDER, "version",
		    "no version %lld of a template named '%s'",
		    (long long)version, slug);
	if (rc == 0)
		return error_set(e, ERR_TEMPLATE_RENDER, "id",
		    "no template named '%s'", slug);
	if ((rc = template_render(v.body, v.variables, values, v.escape_html,
	    (size_t)c->settings->max_state_chars, &state, &len, e)) == 0) {
		*out = json_object_new_object();
		ju_add_str(*out, "id", v.slug);
		json_object_object_add(*out, "version",
		    json_object_new_int64(v.version));
		json_object_object_add(*out, "state",
		    json_object_new_string_len(state, (int)len));
	}
	free(state);
	template_version_clear(&v);
	return rc;
}

static const struct op_def {
	const char	*name;		/* the audit log's action */
	op_fn		 fn;
	int		 mutates;	/* transaction and audit row */
} ops[OP__MAX] = {
	[OP_APP_CREATE] = { "app.create", app_create, 1 },
	[OP_APP_UPDATE] = { "app.update", app_update, 1 },
	[OP_APP_LIST] = { "app.list", app_list, 0 },
	[OP_KEY_ISSUE] = { "key.issue", key_issue, 1 },
	[OP_KEY_REVOKE] = { "key.revoke", key_revoke, 1 },
	[OP_KEY_LIST] = { "key.list", key_list, 0 },
	[OP_BACKEND_ADD] = { "backend.add", backend_add, 1 },
	[OP_BACKEND_ENABLE] = { "backend.enable", backend_enable, 1 },
	[OP_BACKEND_DISABLE] = { "backend.disable", backend_disable, 1 },
	[OP_BACKEND_UPDATE] = { "backend.update", backend_update, 1 },
	[OP_BACKEND_LIST] = { "backend.list", backend_list, 0 },
	[OP_SCHEMA_PUBLISH] = { "schema.publish", schema_publish, 1 },
	[OP_SCHEMA_LIST] = { "schema.list", schema_list, 0 },
	[OP_SCHEMA_SHOW] = { "schema.show", schema_show, 0 },
	[OP_GRANT] = { "grant", grant, 1 },
	[OP_UNGRANT] = { "ungrant", ungrant, 1 },
	[OP_TEMPLATE_PUBLISH] = { "template.publish", template_publish, 1 },
	[OP_TEMPLATE_LIST] = { "template.list", template_list, 0 },
	[OP_TEMPLATE_RENDER] = { "template.render", template_render_op, 0 },
	[OP_CALIBRATION] = { "calibration", ops_calibration, 0 },
};

/* What the audit row names: the first identifying member of the input. */
static const char *
target(json_object *in)
{
	static const char *const names[] = { "name", "application", "prefix",
	    "id", "schema" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ju_str(in, names[i]) != NULL)
			return ju_str(in, names[i]);
	return NULL;
}

int
ops_run(enum op op, struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	const struct op_def *d = &ops[op];

	*out = NULL;
	if (!json_object_is_type(in, json_type_object))
		return error_set(e, ERR_VALIDATION, "body",
		    "must be a JSON object");
	if (!d->mutates)
		return d->fn(c, in, out, e);
	if (store_begin(c->st, e) == -1)
		return -1;
	if (d->fn(c, in, out, e) == -1 ||
	    store_audit(c->st, c->actor, d->name, target(in), in, e) == -1 ||
	    store_commit(c->st, e) == -1) {
		store_rollback(c->st);
		json_object_put(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
