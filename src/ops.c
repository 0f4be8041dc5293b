/* ops.c: the table of administration operations and the one path that
 * runs each (a mutation in one write transaction with its audit row),
 * and the checks the families share.  The operations themselves are in
 * ops_app.c (applications, keys), ops_backend.c, ops_schema.c (schemas,
 * grants), ops_template.c, ops_calibration.c, ops_retention.c,
 * ops_challenger.c and ops_compare.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "ops.h"
#include "ops_internal.h"
#include "store.h"
#include "utf8.h"

int
ops_not_found(struct error *e, const char *what, const char *name)
{
	return error_set(e, ERR_NOT_FOUND, NULL, "no %s named '%s'", what,
	    name);
}

int
ops_find_app(struct op_ctx *c, const char *name, struct app *a,
    struct error *e)
{
	int rc = store_app_by_name(c->st, name, a, e);

	return rc == 1 ? 0 : rc == 0 ? ops_not_found(e, "application", name) :
	    -1;
}

/* A name is printable and has no '/', so that it fits in a path. */
int
ops_check_name(const char *field, const char *name, struct error *e)
{
	const char *why = bound_name_fault(name);

	return why == NULL ? 0 : error_set(e, ERR_VALIDATION, field, "%s",
	    why);
}

int
ops_check_text(const char *field, const char *text, struct error *e)
{
	if (text != NULL && utf8_control(text, NULL) != NULL)
		return error_set(e, ERR_VALIDATION, field, "must have no "
		    "control characters (C0, DEL, C1, U+2028, U+2029)");
	return 0;
}

/* Finishes a listing the store filled (rc from its _each function):
 * {key: list} in *out, or the list released on failure. */
int
ops_listed(int rc, const char *key, json_object *list, json_object **out)
{
	if (rc == -1) {
		json_object_put(list);
		return -1;
	}
	*out = ju_obj();
	ju_add(*out, key, list);
	return 0;
}

/* Whether s is one character of first, then characters of rest: slugs,
 * variable names. */
int
ops_spelled(const char *s, const char *first, const char *rest)
{
	return *s != '\0' && strchr(first, *s) != NULL &&
	    strspn(s + 1, rest) == strlen(s + 1);
}

/* The id of a schema or template: [a-z0-9][a-z0-9_.-]{0,99}. */
int
ops_req_slug(json_object *in, const char **slug, struct error *e)
{
	const char *why;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, slug, e) == -1)
		return -1;
	why = bound_slug_fault(*slug);
	return why == NULL ? 0 : error_set(e, ERR_VALIDATION, "id", "%s",
	    why);
}

/* The optional version of a schema or template: 0 when absent. */
int
ops_opt_version(json_object *in, int64_t *version, struct error *e)
{
	*version = 0;
	return ju_opt_int(in, "version", 1, BOUND_LIMIT_MAX, version, NULL, e);
}

static const struct op_def {
	const char	*name;		/* the audit log's action */
	op_fn		 fn;
	int		 mutates;	/* transaction and audit row */
} ops[OP__MAX] = {
	[OP_APP_CREATE] = { "app.create", op_app_create, 1 },
	[OP_APP_UPDATE] = { "app.update", op_app_update, 1 },
	[OP_APP_LIST] = { "app.list", op_app_list, 0 },
	[OP_KEY_ISSUE] = { "key.issue", op_key_issue, 1 },
	[OP_KEY_REVOKE] = { "key.revoke", op_key_revoke, 1 },
	[OP_KEY_LIST] = { "key.list", op_key_list, 0 },
	[OP_BACKEND_ADD] = { "backend.add", op_backend_add, 1 },
	[OP_BACKEND_ENABLE] = { "backend.enable", op_backend_enable, 1 },
	[OP_BACKEND_DISABLE] = { "backend.disable", op_backend_disable, 1 },
	[OP_BACKEND_UPDATE] = { "backend.update", op_backend_update, 1 },
	[OP_BACKEND_LIST] = { "backend.list", op_backend_list, 0 },
	[OP_SCHEMA_PUBLISH] = { "schema.publish", op_schema_publish, 1 },
	[OP_SCHEMA_LIST] = { "schema.list", op_schema_list, 0 },
	[OP_SCHEMA_SHOW] = { "schema.show", op_schema_show, 0 },
	[OP_GRANT] = { "grant", op_grant, 1 },
	[OP_UNGRANT] = { "ungrant", op_ungrant, 1 },
	[OP_GRANT_LIST] = { "grant.list", op_grant_list, 0 },
	[OP_TEMPLATE_PUBLISH] = { "template.publish", op_template_publish, 1 },
	[OP_TEMPLATE_LIST] = { "template.list", op_template_list, 0 },
	[OP_TEMPLATE_RENDER] = { "template.render", op_template_render, 0 },
	[OP_CALIBRATION] = { "calibration", ops_calibration, 0 },
	/* Its steps are transactions of their own, then its audit row:
	 * ops_retention.c. */
	[OP_DECISIONS_PRUNE] = { "decisions.prune", op_decisions_prune, 0 },
	[OP_CHALLENGER_ADD] = { "schema.challenger.add", op_challenger_add,
	    1 },
	[OP_CHALLENGER_LIST] = { "schema.challenger.list", op_challenger_list,
	    0 },
	[OP_CHALLENGER_REMOVE] = { "schema.challenger.remove",
	    op_challenger_remove, 1 },
	/* Read-only, or publishing through OP_SCHEMA_PUBLISH (its own
	 * transaction and audit row): ops_compare.c. */
	[OP_COMPARE] = { "schema.compare", op_compare, 0 },
	[OP_PROMOTE] = { "schema.promote", op_promote, 0 },
	[OP_CONSOLE_LOGIN] = { "console.login", op_console_session, 1 },
	[OP_CONSOLE_LOGOUT] = { OPS_CONSOLE_LOGOUT_ACTION, op_console_session,
	    1 },
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
