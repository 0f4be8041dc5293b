/* handler_admin.c: the /admin/v1 routes that run one administration
 * operation (doc/admin-api.md).
 *
 * One handler for all of them.  For each route its row in routes.c names
 * the operation of ops.c, the input fields its path's {} segments fill,
 * and the status of a success; the input is otherwise the request body
 * (an object; empty is {}) for POST and PATCH, and nothing for GET and
 * DELETE.  The operations validate, run and audit, exactly as they do
 * for evalgate-admin, so the two cannot drift: nothing here knows what
 * an application or a schema is. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "json_util.h"
#include "ops.h"

#define INT_DIGITS_MAX	15	/* larger versions do not exist */

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
		return ju_obj();
	if (req_read_body(r, e) == -1)
		return NULL;
	return r->body_len == 0 ? ju_obj() :
	    req_json_object(r, e);
}

/* The value of one {} segment: a new reference, or NULL with e set. */
static json_object *
seg_value(const struct route_seg *f, const char *seg, struct error *e)
{
	size_t n = strlen(seg);

	if (f->kind == SEG_TEXT)
		return ju_string(seg);
	if (n == 0 || n > INT_DIGITS_MAX || strspn(seg, "0123456789") != n ||
	    strtoll(seg, NULL, 10) < 1) {
		error_set(e, ERR_NOT_FOUND, NULL, "no %s '%s'", f->field, seg);
		return NULL;
	}
	return ju_int(strtoll(seg, NULL, 10));
}

/* The route's query parameter f, if the request has it, into in: 0,
 * or -1 with e set (an integer that is not one from 1). */
static int
query_value(struct req *r, const struct route_seg *f, json_object *in,
    struct error *e)
{
	char	 buf[INT_DIGITS_MAX + 2];
	size_t	 n;

	if (req_query(r, f->field, buf, sizeof(buf)) == NULL)
		return 0;
	if (f->kind == SEG_TEXT) {
		ju_add(in, f->field, ju_string(buf));
		return 0;
	}
	n = strlen(buf);
	if (n == 0 || n > INT_DIGITS_MAX || strspn(buf, "0123456789") != n ||
	    strtoll(buf, NULL, 10) < 1)
		return error_set(e, ERR_VALIDATION, f->field,
		    "must be an integer from 1");
	ju_add(in, f->field, ju_int(strtoll(buf, NULL, 10)));
	return 0;
}

/* The operation's input: the body with the path's fields added.  A body
 * member naming a path field must agree with the path.  A new
 * reference, or NULL with e set. */
static json_object *
input(struct req *r, const struct admin_call *d, struct error *e)
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
		ju_add(in, d->segs[i].field, v);
	}
	if (d->query.field != NULL && query_value(r, &d->query, in, e) == -1)
		goto fail;
	return in;
fail:
	json_object_put(in);
	return NULL;
}

int
handle_admin(struct req *r, struct error *e)
{
	const struct admin_call	*d = r->admin;
	struct op_ctx		 ctx;
	json_object		*in, *out = NULL;
	int			 rc;

	if (d == NULL || d->status == 0)
		return error_set(e, ERR_INTERNAL, NULL,
		    "not an administration operation route");
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
