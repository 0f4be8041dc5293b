/* handler_health.c: GET /health and GET /health/ready (no key). */
#include "config.h"

#include <stdio.h>

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
	char		 why[128] = "";
	int		 db_ok, cache_ok, schema, want;

	store_ready(r->store, &db_ok, &cache_ok, &schema);
	body = ju_obj();
	ju_add(body, "status",
	    ju_string(db_ok && cache_ok ? "ok" : "unavailable"));
	ju_add(body, "database", ju_bool(db_ok));
	ju_add(body, "cache", ju_bool(cache_ok));
	/* A database the workers refuse for its schema version (an upgrade
	 * without init) is named, as the log names it. */
	want = store_schema_version();
	if (schema != -1 && schema != want) {
		snprintf(why, sizeof(why), STORE_SCHEMA_WHY, schema, want);
		ju_add(body, "reason", ju_string(why));
	}
	if (db_ok && cache_ok)
		http_json(r, 200, body);
	else {
		/* Not ready is an error like any other (the spec's format,
		 * Retry-After, counted), and still says which file failed. */
		if (why[0] != '\0')
			error_set(e, ERR_UNAVAILABLE, NULL, "not ready: the "
			    "database has %s", why);
		else
			error_set(e, ERR_UNAVAILABLE, NULL, "not ready: the "
			    "%s cannot be written now", !db_ok ? "database" :
			    "cache");
		error_detail(e, "database", ju_bool(db_ok));
		error_detail(e, "cache", ju_bool(cache_ok));
		if (why[0] != '\0')
			error_detail(e, "reason", ju_string(why));
		e->retry_after_ms = 5000;
		e->unavailable = EU_DATABASE;
		http_error(r, e, body);
	}
	json_object_put(body);
	return 0;
}
