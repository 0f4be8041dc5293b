/* handler_admin.c: the /admin/v1 routes that run one administration
 * operation (doc/admin-api.md).
 *
 * One handler and one table.  For each route the table names the
 * operation of ops.c, the input fields its path's {} segments fill, and
 * the status of a success; the input is otherwise the request body (an
 * object; empty is {}) for POST and PATCH, and nothing for GET and
 * DELETE.  The operations validate, run and audit, exactly as they do
 * for evalgate-admin, so the two cannot drift: nothing here knows what
 * an application or a schema is. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "ops.h"

/* How a {} segment becomes a field: as it is, or a positive integer
 * spelled with digits only (anything else: the route does not exist). */
enum seg { SEG_TEXT, SEG_INT };

struct seg_field {
	const char	*field;		/* NULL: no more segments */
	enum seg	 kind;
};

#define INT_DIGITS_MAX	15	/* larger versions do not exist */

static const struct admin_def {
	enum op			 op;
	struct seg_field	 segs[HTTP_MAX_PARAMS];	/* in path order */
	int			 status;
} calls[ADMIN__MAX] = {
	[ADMIN_APP_CREATE] = { OP_APP_CREATE, { { NULL } }, 201 },
	[ADMIN_APP_LIST] = { OP_APP_LIST, { { NULL } }, 200 },
	[ADMIN_APP_UPDATE] = { OP_APP_UPDATE, { { "name" } }, 200 },
	[ADMIN_KEY_ISSUE] = { OP_KEY_ISSUE, { { "application" } }, 201 },
	[ADMIN_KEY_LIST] = { OP_KEY_LIST, { { "application" } }, 200 },
	[ADMIN_KEY_REVOKE] = { OP_KEY_REVOKE, { { "prefix" } }, 200 },
	[ADMIN_BACKEND_ADD] = { OP_BACKEND_ADD, { { NULL } }, 201 },
	[ADMIN_BACKEND_LIST] = { OP_BACKEND_LIST, { { NULL } }, 200 },
	[ADMIN_BACKEND_UPDATE] = { OP_BACKEND_UPDATE, { { "name" } }, 200 },
	[ADMIN_SCHEMA_PUBLISH] = { OP_SCHEMA_PUBLISH, { { "id" } }, 201 },
	[ADMIN_SCHEMA_LIST] = { OP_SCHEMA_LIST, { { NULL } }, 200 },
	[ADMIN_SCHEMA_VERSIONS] = { OP_SCHEMA_LIST, { { "id" } }, 200 },
	[ADMIN_SCHEMA_SHOW] = { OP_SCHEMA_SHOW,
	    { { "id" }, { "version", SEG_INT } }, 200 },
	[ADMIN_GRANT] = { OP_GRANT, { { NULL } }, 201 },
	[ADMIN_UNGRANT] = { OP_UNGRANT, { { "application" }, { "schema" } },
	    200 },
	[ADMIN_UNGRANT_VERSION] = { OP_UNGRANT,
	    { { "application" }, { "schema" }, { "version", SEG_INT } }, 200 },
	[ADMIN_TEMPLATE_PUBLISH] = { OP_TEMPLATE_PUBLISH, { { "id" } }, 201 },
	[ADMIN_TEMPLATE_LIST] = { OP_TEMPLATE_LIST, { { NULL } }, 200 },
	[ADMIN_TEMPLATE_RENDER] = { OP_TEMPLATE_RENDER, { { "id" } }, 200 },
};

/* The methods whose body is the operation's input. */
static const char *const body_methods[] = { "POST", "PATCH" };
#define NBODY_METHODS (sizeof(body_methods) / sizeof(body_methods[0]))

/* The body object, {} when there is none: a new reference, or NULL
 * with e set. */
static json_object *
body_input(struct req *r, struct error *e)
{
	size_t i;

	for (i = 0; i < NBODY_METHODS; i++)
		if (strcmp(r->method, body_methods[i]) == 0)
			break;
	if (i == NBODY_METHODS)
		return json_object_new_object();
	if (req_read_body(r, e) == -1)
		return NULL;
	return r->body_len == 0 ? json_object_new_object() :
	    req_json_object(r, e);
}

/* The value of one {} segment: a new reference, or NULL with e set. */
static json_object *
seg_value(const struct seg_field *f, const char *seg, struct error *e)
{
	size_t n = strlen(seg);

	if (f->kind == SEG_TEXT)
		return json_object_new_string(seg);
	if (n == 0 || n > INT_DIGITS_MAX || strspn(seg, "0123456789") != n ||
	    strtoll(seg, NULL, 10) < 1) {
		error_set(e, ERR_NOT_FOUND, NULL, "no %s '%s'", f->field, seg);
		return NULL;
	}
	return json_object_new_int64(strtoll(seg, NULL, 10));
}

/* The operation's input: the body with the path's fields added.  A body
 * member naming a path field must agree with the path.  A new
 * reference, or NULL with e set. */
static json_object *
input(struct req *r, const struct admin_def *d, struct error *e)
{
	json_object	*in, *v, *given;
	size_t		 i;

	if ((in = body_input(r, e)) == NULL)
		return NULL;
	for (i = 0; i < HTTP_MAX_PARAMS && d->segs[i].field != NULL; i++) {
		if ((v = seg_value(&d->segs[i], r->params[i], e)) == NULL)
			goto fail;
		if (json_object_object_get_ex(in, d->segs[i].field, &given) &&
		    !json_object_equal(given, v)) {
			json_object_put(v);
			error_set(e, ERR_VALIDATION, d->segs[i].field,
			    "differs from the path, which gives it as '%s'",
			    r->params[i]);
			goto fail;
		}
		json_object_object_add(in, d->segs[i].field, v);
	}
	return in;
fail:
	json_object_put(in);
	return NULL;
}

int
handle_admin(struct req *r, struct error *e)
{
	const struct admin_def	*d;
	struct op_ctx		 ctx;
	json_object		*in, *out = NULL;
	int			 rc;

	if (r->route_arg < 0 || r->route_arg >= ADMIN__MAX)
		return error_set(e, ERR_INTERNAL, NULL,
		    "no administration call %d", r->route_arg);
	d = &calls[r->route_arg];
	if ((in = input(r, d, e)) == NULL)
		return -1;
	ctx.st = r->store;
	ctx.settings = r->settings;
	ctx.actor = r->app.name;	/* the audit log's "who" */
	rc = ops_run(d->op, &ctx, in, &out, e);
	json_object_put(in);
	if (rc == -1)
		return -1;
	http_json(r, d->status, out);
	json_object_put(out);
	return 0;
}
