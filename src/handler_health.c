/* handler_health.c: GET /health and GET /health/ready (no key). */
#include "handlers.h"
#include "store.h"

int
handle_health(struct req *r, struct error *e)
{
	json_object *body = json_object_new_object();

	json_object_object_add(body, "status", json_object_new_string("ok"));
	http_json(r, 200, body);
	json_object_put(body);
	return 0;
}

int
handle_ready(struct req *r, struct error *e)
{
	json_object	*body;
	int		 db_ok, cache_ok;

	store_ready(r->settings, &db_ok, &cache_ok);
	if (db_ok && cache_ok)
		body = json_object_new_object();
	else {
		/* Not ready is an error like any other (the spec's format,
		 * Retry-After), and still says which file failed. */
		error_set(e, ERR_UNAVAILABLE, NULL, "not ready: the %s does "
		    "not answer", !db_ok ? "database" : "cache");
		error_detail(e, "database", json_object_new_boolean(db_ok));
		error_detail(e, "cache", json_object_new_boolean(cache_ok));
		e->retry_after_ms = 5000;
		body = http_error_body(e);
		http_header(r, "Retry-After", "5");
		http_header(r, "retry-after-ms", "5000");
	}
	json_object_object_add(body, "status",
	    json_object_new_string(db_ok && cache_ok ? "ok" : "unavailable"));
	json_object_object_add(body, "database",
	    json_object_new_boolean(db_ok));
	json_object_object_add(body, "cache", json_object_new_boolean(cache_ok));
	http_json(r, db_ok && cache_ok ? 200 : 503, body);
	json_object_put(body);
	return 0;
}
