/* ops_schema.c: publishing and listing schema versions, and granting
 * them to applications (evalgate-admin schema, grant, ungrant;
 * /admin/v1/schemas, /admin/v1/grants). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "json_util.h"
#include "ops_internal.h"
#include "question.h"
#include "store.h"


static json_object *
schema_json(const struct schema_version *v, const char *backend,
    int with_questions)
{
	json_object *o = ju_obj();

	ju_add_str(o, "id", v->slug);
	ju_add(o, "version", ju_int(v->version));
	ju_add_str(o, "fingerprint", v->fingerprint);
	ju_add_str(o, "backend", backend);
	ju_add(o, "temperature", ju_num(v->temperature));
	ju_add(o, "abstain_threshold", ju_num(v->abstain_threshold));
	ju_add_time(o, "created_at", v->created_at * 1000);
	if (with_questions)
		ju_add(o, "questions", json_object_get(v->questions));
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
		return ops_not_found(e, "schema", slug);
	return error_set(e, ERR_NOT_FOUND, NULL,
	    "no version %lld of a schema named '%s'", (long long)version, slug);
}

int
op_schema_publish(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend		 b;
	struct schema_version	 v = { 0 };
	json_object		*questions = NULL;
	const char		*slug, *backend;
	int			 rc;

	v.temperature = 1.0;
	json_object_object_get_ex(in, "questions", &questions);
	if (ops_req_slug(in, &slug, e) == -1 ||
	    question_validate(questions, BOUND_QUESTIONS_MAX, e) == -1 ||
	    ju_req_str(in, "backend", NAME_MAX_LEN, &backend, e) == -1 ||
	    ju_opt_num(in, "temperature", 0, BOUND_TEMPERATURE_MAX,
	    &v.temperature, e) == -1 ||
	    ju_opt_num(in, "abstain_threshold", 0, 1, &v.abstain_threshold,
	    e) == -1)
		return -1;
	if (v.temperature <= 0)
		return error_set(e, ERR_VALIDATION, "temperature",
		    "must be greater than 0 and at most %g",
		    BOUND_TEMPERATURE_MAX);
	if ((rc = store_backend_by_name(c->st, backend, &b, e)) != 1)
		return rc == -1 ? -1 : error_set(e, ERR_VALIDATION, "backend",
		    "no backend named '%s'", backend);
	if (backend_check_schema(&b, questions, e) == -1)
		return -1;
	snprintf(v.slug, sizeof(v.slug), "%s", slug);
	question_fingerprint(questions, v.fingerprint);
	v.backend_id = b.id;
	v.questions = json_object_get(questions);
	if ((rc = store_schema_publish(c->st, &v, e)) == 0) {
		*out = ju_obj();
		ju_add_str(*out, "id", v.slug);
		ju_add(*out, "version", ju_int(v.version));
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
	ju_add(arg, id, ju_string(b->name));
}

static void
schema_add_json(const struct schema_version *v, void *arg)
{
	struct schema_rows	*r = arg;
	char			 id[24];

	snprintf(id, sizeof(id), "%lld", (long long)v->backend_id);
	ju_push(r->list, schema_json(v, ju_str(r->backends, id),
	    0));
}

int
op_schema_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_rows	 r;
	const char		*slug = NULL;
	int			 rc;

	if (ju_opt_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1)
		return -1;
	r.list = ju_arr();
	r.backends = ju_obj();
	if ((rc = store_backend_each(c->st, 0, backend_name_add, r.backends,
	    e)) == 0 &&
	    (rc = store_schema_each(c->st, slug, schema_add_json, &r, e)) == 0 &&
	    slug != NULL && json_object_array_length(r.list) == 0)
		rc = ops_not_found(e, "schema", slug);
	json_object_put(r.backends);
	return ops_listed(rc, "schemas", r.list, out);
}

int
op_schema_show(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct backend		 b;
	struct schema_version	 v;
	const char		*slug;
	int64_t			 version;
	int			 rc;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1 ||
	    ops_opt_version(in, &version, e) == -1 ||
	    find_version(c, slug, version, &v, e) == -1)
		return -1;
	if ((rc = store_backend_by_id(c->st, v.backend_id, &b, e)) != -1)
		*out = schema_json(&v, rc == 1 ? b.name : NULL, 1);
	schema_version_clear(&v);
	return rc == -1 ? -1 : 0;
}

/* A grant of op_grant_list()'s, onto the array arg. */
static void
grant_row(const char *app, int64_t version, int64_t created_at, void *arg)
{
	json_object *o = ju_obj();

	ju_add_str(o, "application", app);
	ju_add(o, "version", version > 0 ? ju_int(version) : NULL);
	ju_add_time(o, "created_at", created_at * 1000);
	ju_push(arg, o);
}

int
op_grant_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	const char		*slug;
	json_object		*list;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1 ||
	    find_version(c, slug, 0, &v, e) == -1)
		return -1;
	list = ju_arr();
	if (store_grant_each(c->st, v.schema_id, grant_row, list, e) == -1) {
		json_object_put(list);
		schema_version_clear(&v);
		return -1;
	}
	*out = ju_obj();
	ju_add_str(*out, "schema", v.slug);
	ju_add(*out, "grants", list);
	schema_version_clear(&v);
	return 0;
}

/* What grant and ungrant take: application, schema, version?. */
static int
grant_args(struct op_ctx *c, json_object *in, struct app *a,
    struct schema_version *v, int64_t *version, struct error *e)
{
	const char *name, *slug;

	if (ju_req_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_req_str(in, "schema", SLUG_MAX_LEN, &slug, e) == -1 ||
	    ops_opt_version(in, version, e) == -1 ||
	    ops_find_app(c, name, a, e) == -1)
		return -1;
	return find_version(c, slug, *version, v, e);
}

static json_object *
grant_json(const struct app *a, const struct schema_version *v,
    int64_t version, int granted)
{
	json_object *o = ju_obj();

	ju_add_str(o, "application", a->name);
	ju_add_str(o, "schema", v->slug);
	ju_add(o, "version", version > 0 ?
	    ju_int(version) : NULL);
	ju_add(o, "granted", ju_bool(granted));
	return o;
}

int
op_grant(struct op_ctx *c, json_object *in, json_object **out, struct error *e)
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

int
op_ungrant(struct op_ctx *c, json_object *in, json_object **out,
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
