/* ops_challenger.c: naming, listing and removing the challengers of a
 * schema version (evalgate-admin schema challenger;
 * /admin/v1/schemas/{id}/challengers; README, "Challengers"). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "json_util.h"
#include "ops_internal.h"
#include "store.h"

/* The schema version the input names: id, version? (0: the latest),
 * or 404. */
static int
challenger_version(struct op_ctx *c, json_object *in,
    struct schema_version *v, struct error *e)
{
	const char	*slug;
	int64_t		 version;
	int		 rc;

	if (ops_req_slug(in, &slug, e) == -1 ||
	    ops_opt_version(in, &version, e) == -1)
		return -1;
	if ((rc = store_schema_get(c->st, slug, version, v, e)) != 0)
		return rc == 1 ? 0 : -1;
	if (version == 0)
		return ops_not_found(e, "schema", slug);
	return error_set(e, ERR_NOT_FOUND, NULL,
	    "no version %lld of a schema named '%s'", (long long)version, slug);
}

/* The backend the input names, or 404. */
static int
challenger_backend(struct op_ctx *c, json_object *in, struct backend *b,
    struct error *e)
{
	const char	*name;
	int		 rc;

	if (ju_req_str(in, "backend", NAME_MAX_LEN, &name, e) == -1)
		return -1;
	if ((rc = store_backend_by_name(c->st, name, b, e)) != 1)
		return rc == -1 ? -1 : ops_not_found(e, "backend", name);
	return 0;
}

static json_object *
challenger_json(const struct schema_version *v, const char *backend,
    double share)
{
	json_object *o = ju_obj();

	ju_add_str(o, "id", v->slug);
	ju_add(o, "version", ju_int(v->version));
	ju_add_str(o, "backend", backend);
	ju_add(o, "share", ju_num(share));
	return o;
}

/* Counts a version's challengers other than the backend being added. */
struct others {
	int64_t	backend_id;
	size_t	n;
};

static void
count_others(const struct challenger *ch, void *arg)
{
	struct others *o = arg;

	o->n += ch->backend_id != o->backend_id;
}

int
op_challenger_add(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	struct backend		 b;
	struct challenger	 ch;
	struct others		 others = { 0, 0 };
	json_object		*share;
	int			 rc = -1;

	memset(&v, 0, sizeof(v));
	memset(&ch, 0, sizeof(ch));
	/* Required: a number in (0, 1]. */
	if (!json_object_object_get_ex(in, "share", &share) ||
	    !(json_object_is_type(share, json_type_double) ||
	    json_object_is_type(share, json_type_int)) ||
	    !((ch.share = json_object_get_double(share)) > 0 &&
	    ch.share <= 1))
		return error_set(e, ERR_VALIDATION, "share",
		    "must be a number greater than 0 and at most 1");
	if (challenger_version(c, in, &v, e) == -1)
		return -1;
	if (challenger_backend(c, in, &b, e) == -1)
		goto out;
	if (b.id == v.backend_id) {
		error_set(e, ERR_VALIDATION, "backend", "'%s' is the "
		    "version's own backend", b.name);
		goto out;
	}
	if (backend_check_schema(&b, v.questions, e) == -1)
		goto out;
	/* An evaluation looks up at most CHALLENGER_LIST_MAX of them. */
	others.backend_id = b.id;
	if (store_challenger_each(c->st, v.schema_id, v.version,
	    count_others, &others, e) == -1)
		goto out;
	if (others.n >= CHALLENGER_LIST_MAX) {
		error_set(e, ERR_VALIDATION, "backend", "version %lld of "
		    "'%s' has %d challengers already, the most it may have",
		    (long long)v.version, v.slug, CHALLENGER_LIST_MAX);
		goto out;
	}
	ch.schema_id = v.schema_id;
	ch.version = v.version;
	ch.backend_id = b.id;
	if ((rc = store_challenger_set(c->st, &ch, e)) == 0)
		*out = challenger_json(&v, b.name, ch.share);
out:
	schema_version_clear(&v);
	return rc;
}

static void
challenger_add_row(const struct challenger *ch, void *arg)
{
	json_object *o = ju_obj();

	ju_add_str(o, "backend", ch->backend);
	ju_add(o, "share", ju_num(ch->share));
	ju_add_time(o, "created_at", ch->created_at * 1000);
	ju_push(arg, o);
}

int
op_challenger_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	json_object		*list;
	int			 rc;

	memset(&v, 0, sizeof(v));
	if (challenger_version(c, in, &v, e) == -1)
		return -1;
	list = ju_arr();
	rc = store_challenger_each(c->st, v.schema_id, v.version,
	    challenger_add_row, list, e);
	if (ops_listed(rc, "challengers", list, out) == 0) {
		ju_add_str(*out, "id", v.slug);
		ju_add(*out, "version", ju_int(v.version));
	}
	schema_version_clear(&v);
	return rc;
}

int
op_challenger_remove(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	struct backend		 b;
	int			 rc = -1;

	memset(&v, 0, sizeof(v));
	if (challenger_version(c, in, &v, e) == -1)
		return -1;
	if (challenger_backend(c, in, &b, e) == -1)
		goto out;
	rc = store_challenger_remove(c->st, v.schema_id, v.version, b.id, e);
	if (rc == 0)
		error_set(e, ERR_NOT_FOUND, NULL, "backend '%s' is no "
		    "challenger of version %lld of schema '%s'", b.name,
		    (long long)v.version, v.slug);
	if (rc == 1) {
		*out = ju_obj();
		ju_add_str(*out, "id", v.slug);
		ju_add(*out, "version", ju_int(v.version));
		ju_add_str(*out, "backend", b.name);
		ju_add(*out, "removed", ju_bool(1));
		rc = 0;
	} else
		rc = -1;
out:
	schema_version_clear(&v);
	return rc;
}
