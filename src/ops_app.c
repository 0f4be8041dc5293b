/* ops_app.c: the operations on applications and their API keys
 * (evalgate-admin app, key; /admin/v1/applications, /admin/v1/keys). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "json_util.h"
#include "ops_internal.h"
#include "store.h"

static json_object *
app_json(const struct app *a)
{
	json_object *o = ju_obj();

	ju_add_str(o, "name", a->name);
	ju_add(o, "log_state", ju_bool(a->log_state));
	ju_add(o, "admin", ju_bool(a->is_admin));
	ju_add(o, "rate_per_minute", a->rate_per_minute ?
	    ju_int(a->rate_per_minute) : NULL);
	ju_add(o, "daily_quota", a->daily_quota ?
	    ju_int(a->daily_quota) : NULL);
	ju_add_time(o, "created_at", a->created_at * 1000);
	ju_add(o, "retention_days", a->retention_days >= 0 ?
	    ju_int(a->retention_days) : NULL);
	return o;
}

int
op_app_create(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct app	 a = { .retention_days = -1 };
	const char	*name;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    ops_check_name("name", name, e) == -1 ||
	    ju_opt_bool(in, "log_state", &a.log_state, e) == -1 ||
	    ju_opt_bool(in, "admin", &a.is_admin, e) == -1 ||
	    ju_opt_int(in, "rate_per_minute", 1, BOUND_LIMIT_MAX,
	    &a.rate_per_minute, NULL, e) == -1 ||
	    ju_opt_int(in, "daily_quota", 1, BOUND_LIMIT_MAX, &a.daily_quota,
	    NULL, e) == -1)
		return -1;
	snprintf(a.name, sizeof(a.name), "%s", name);
	a.created_at = clock_now_ms() / 1000;
	if (store_app_insert(c->st, &a, e) == -1)
		return -1;
	*out = app_json(&a);
	return 0;
}

int
op_app_update(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct app	 a;
	const char	*name;
	int		 rate_null = 0, quota_null = 0, days_null = 0;

	if (ju_req_str(in, "name", NAME_MAX_LEN, &name, e) == -1 ||
	    ops_find_app(c, name, &a, e) == -1 ||
	    ju_opt_bool(in, "log_state", &a.log_state, e) == -1 ||
	    ju_opt_int(in, "rate_per_minute", 1, BOUND_LIMIT_MAX,
	    &a.rate_per_minute, &rate_null, e) == -1 ||
	    ju_opt_int(in, "daily_quota", 1, BOUND_LIMIT_MAX,
	    &a.daily_quota, &quota_null, e) == -1 ||
	    ju_opt_int(in, "retention_days", 0,
	    BOUND_RETENTION_DAYS_MAX,
	    &a.retention_days, &days_null, e) == -1)
		return -1;
	if (days_null)
		a.retention_days = -1;
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
	ju_push(arg, app_json(a));
}

int
op_app_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = ju_arr();

	return ops_listed(store_app_each(c->st, app_add, list, e), "applications",
	    list, out);
}

int
op_key_issue(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	char		 key[AUTH_KEY_LEN + 1];
	struct key_row	 k = { 0 };
	struct app	 a;
	const char	*name, *expires = NULL;
	int64_t		 exp_ms = 0;

	if (ju_req_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_opt_str(in, "expires", 64, &expires, e) == -1 ||
	    ops_find_app(c, name, &a, e) == -1)
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
	*out = ju_obj();
	ju_add_str(*out, "key", key);
	ju_add_str(*out, "prefix", k.prefix);
	ju_add_str(*out, "application", a.name);
	ju_add_time(*out, "expires", k.expires_at * 1000);
	explicit_bzero(key, sizeof(key));
	return 0;
}

int
op_key_revoke(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	const char	*prefix;
	int64_t		 now = clock_now_ms() / 1000;
	int		 rc;

	if (ju_req_str(in, "prefix", 64, &prefix, e) == -1)
		return -1;
	if ((rc = store_key_revoke(c->st, prefix, now, e)) <= 0)
		return rc == 0 ? ops_not_found(e, "key", prefix) : -1;
	*out = ju_obj();
	ju_add_str(*out, "prefix", prefix);
	ju_add(*out, "revoked", ju_bool(1));
	return 0;
}

static void
key_add(const struct key_row *k, const char *app, void *arg)
{
	json_object *o = ju_obj();

	ju_add_str(o, "prefix", k->prefix);
	ju_add_str(o, "application", app);
	ju_add_time(o, "created_at", k->created_at * 1000);
	ju_add_time(o, "expires", k->expires_at * 1000);
	ju_add_time(o, "revoked_at", k->revoked_at * 1000);
	ju_push(arg, o);
}

int
op_key_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object	*list;
	const char	*name = NULL;
	struct app	 a = { 0 };

	if (ju_opt_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    (name != NULL && ops_find_app(c, name, &a, e) == -1))
		return -1;
	list = ju_arr();
	return ops_listed(store_key_each(c->st, a.id, key_add, list, e), "keys",
	    list, out);
}
