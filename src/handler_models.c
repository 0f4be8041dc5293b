/* handler_models.c: GET /v1/models, one model per enabled backend. */
#include "config.h"

#include "handlers.h"
#include "json_util.h"
#include "store.h"

static void
add_model(const struct backend *b, void *arg)
{
	json_object *m = ju_obj();

	ju_add_str(m, "name", b->name);
	ju_add_str(m, "description", b->description);
	ju_add_str(m, "release_date", b->release_date);
	ju_push(arg, m);
}

int
handle_models(struct req *r, struct error *e)
{
	json_object *list = ju_arr(), *body;

	if (store_backend_each(r->store, 1, add_model, list, e) == -1) {
		json_object_put(list);
		return -1;
	}
	body = ju_obj();
	ju_add(body, "models", list);
	http_json(r, 200, body);
	json_object_put(body);
	return 0;
}
