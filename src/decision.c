/* decision.c: a recorded decision as the JSON of doc/design.md, section 14,
 * shared by GET /v1/decisions/{id} and the administration export. */
#include "config.h"

#include <ctype.h>

#include "decision.h"
#include "json_util.h"
#include "store.h"

int
decision_id_canon(const char *s, char id[UUID7_LEN + 1])
{
	size_t i;

	if (s == NULL || !uuid7_valid(s))
		return 0;
	for (i = 0; i < UUID7_LEN; i++)
		id[i] = (char)tolower((unsigned char)s[i]);
	id[UUID7_LEN] = '\0';
	return 1;
}

/* {question: {value, source, recorded_at}} from the store's rows, which
 * carry the time as recorded_at_ms. */
static json_object *
outcomes_json(json_object *rows)
{
	json_object *out = ju_obj(), *o, *v;

	json_object_object_foreach(rows, name, row) {
		o = ju_obj();
		json_object_object_get_ex(row, "value", &v);
		ju_add(o, "value", json_object_get(v));
		json_object_object_get_ex(row, "source", &v);
		ju_add(o, "source", json_object_get(v));
		json_object_object_get_ex(row, "recorded_at_ms", &v);
		ju_add_time(o, "recorded_at", json_object_get_int64(v));
		ju_add(out, name, o);
	}
	return out;
}

json_object *
decision_to_json(const struct decision_row *d, int with_state)
{
	json_object *o = ju_obj();

	ju_add_str(o, "id", d->id);
	ju_add_time(o, "created_at", d->created_at_ms);
	ju_add_str(o, "model", d->model);
	ju_add_str(o, "x_backend", d->backend);
	ju_add(o, "x_schema", ju_ref(d->schema_slug, d->schema_version));
	if (d->template_version != 0)
		ju_add(o, "x_template",
		    ju_ref(d->template_slug, d->template_version));
	ju_add(o, "answers", json_object_get(d->answers));
	ju_add(o, "outcomes", outcomes_json(d->outcomes));
	if (with_state && d->state != NULL)
		ju_add(o, "state", json_object_get(d->state));
	return o;
}

int
decision_json(struct store *st, const char *id, int64_t app_id,
    int with_state, json_object **out, struct error *e)
{
	struct decision_row	d;
	char			canon[UUID7_LEN + 1];
	int			rc;

	*out = NULL;
	if (!decision_id_canon(id, canon))
		return 0;
	if ((rc = store_decision_get(st, canon, app_id, &d, e)) != 1)
		return rc;
	*out = decision_to_json(&d, with_state);
	decision_row_clear(&d);
	return 1;
}
