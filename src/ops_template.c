/* ops_template.c: publishing, listing and rendering templates
 * (evalgate-admin template; /admin/v1/templates). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "ops_internal.h"
#include "settings.h"
#include "store.h"
#include "template.h"

int
op_template_publish(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct template_version	 v = { 0 };
	json_object		*variables = NULL;
	const char		*slug, *body, *escape = NULL;
	int			 rc;

	json_object_object_get_ex(in, "variables", &variables);
	if (ops_req_slug(in, &slug, e) == -1 ||
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
	/* The body, up to max_body_bytes: checked. */
	if ((v.body = strdup(body)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	v.variables = json_object_get(variables);
	v.escape_html = escape != NULL;
	if ((rc = store_template_publish(c->st, &v, e)) == 0) {
		*out = ju_obj();
		ju_add_str(*out, "id", v.slug);
		ju_add(*out, "version", ju_int(v.version));
	}
	template_version_clear(&v);
	return rc;
}

static void
template_add_json(const struct template_version *v, void *arg)
{
	json_object *o = ju_obj();

	ju_add_str(o, "id", v->slug);
	ju_add(o, "version", ju_int(v->version));
	ju_add(o, "variables", json_object_get(v->variables));
	ju_add_str(o, "escape", v->escape_html ? "html" : NULL);
	ju_add_time(o, "created_at", v->created_at * 1000);
	ju_push(arg, o);
}

int
op_template_list(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	json_object *list = ju_arr();

	return ops_listed(store_template_each(c->st, template_add_json, list, e),
	    "templates", list, out);
}

/* An unknown template is a render error, as it is for a request. */
int
op_template_render(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct template_version	 v;
	json_object		*values = NULL, *text;
	const char		*slug;
	char			*state = NULL;
	size_t			 len;
	int64_t			 version;
	int			 rc;

	if (ju_req_str(in, "id", SLUG_MAX_LEN, &slug, e) == -1 ||
	    ops_opt_version(in, &version, e) == -1)
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
		*out = ju_obj();
		ju_add_str(*out, "id", v.slug);
		ju_add(*out, "version", ju_int(v.version));
		/* Sized by the input: checked, a 503 without memory. */
		if ((text = json_object_new_string_len(state, (int)len)) ==
		    NULL)
			rc = error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
		ju_add(*out, "state", text);
	}
	free(state);
	template_version_clear(&v);
	return rc;
}
