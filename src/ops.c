/* ops.c: applications and keys (more operations join the table as the
 * parts they administer arrive). */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "json_util.h"
#include "ops.h"
#include "settings.h"
#include "store.h"

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

	if (store_app_each(c->st, app_add, list, e) == -1) {
		json_object_put(list);
		return -1;
	}
	*out = json_object_new_object();
	json_object_object_add(*out, "applications", list);
	return 0;
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
	if (store_key_each(c->st, a.id, key_add, list, e) == -1) {
		json_object_put(list);
		return -1;
	}
	*out = json_object_new_object();
	json_object_object_add(*out, "keys", list);
	return 0;
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
