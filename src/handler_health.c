/* handler_health.c: GET /health and GET /health/ready (no key). */
#include "config.h"

#include "handlers.h"
#include "json_util.h"
#include "store.h"

int
handle_health(struct req *r, struct error *e)
{
	json_object *body = ju_obj();

	ju_add(body, "status", ju_string("ok"));
	http_json(r, 200, body);
	json_object_put(body);
	return 0;
}

int
handle_ready(struct req *r, struct error *e)
{
	json_object	*body;
	int		 db_ok, cache_ok;

	store_ready(r->store, &db_ok, &cache_ok);
	body = ju_obj();
	ju_add(body, "status",
	    ju_string(db_ok && cache_ok ? "ok" : "unavailable"));
	ju_add(body, "database", ju_bool(db_ok));
	ju_add(body, "cache", ju_bool(cache_ok));
	if (db_ok && cache_ok)
		http_json(r, 200, body);
	else {
		/* Not ready is an error like any other (the spec's format,
		 * Retry-After, counted), and still says which file failed. */
		error_set(e, ERR_UNAVAILABLE, NULL, "not ready: the %s cannot "
		    "be written now", !db_ok ? "database" : "cache");
		error_detail(e, "database", ju_bool(db_ok));
		error_detail(e, "cache", ju_bool(cache_ok));
		e->retry_after_ms = 5000;
		e->unavailable = EU_DATABASE;
		http_error(r, e, body);
	}
	json_object_put(body);
	return 0;
}
