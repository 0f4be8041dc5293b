/* error.c: the table of error codes and the setter every module uses. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "utf8.h"
#include "xalloc.h"

static const struct {
	int		 status;
	const char	*name;
} errors[ERR__MAX] = {
	[ERR_NONE]		  = { 200, "ok" },
	[ERR_NOT_FOUND]		  = { 404, "not_found" },
	[ERR_METHOD_NOT_ALLOWED]  = { 405, "method_not_allowed" },
	[ERR_PAYLOAD_TOO_LARGE]	  = { 413, "payload_too_large" },
	[ERR_INVALID_API_KEY]	  = { 401, "invalid_api_key" },
	[ERR_FORBIDDEN]		  = { 403, "forbidden" },
	[ERR_SCHEMA_NOT_GRANTED]  = { 403, "schema_not_granted" },
	[ERR_CONFLICT]		  = { 409, "conflict" },
	[ERR_VALIDATION]	  = { 422, "validation_error" },
	[ERR_INVALID_SCHEMA]	  = { 422, "invalid_schema" },
	[ERR_TEMPLATE_RENDER]	  = { 422, "template_render_error" },
	[ERR_RATE_LIMITED]	  = { 429, "rate_limited" },
	[ERR_QUOTA_EXCEEDED]	  = { 429, "quota_exceeded" },
	[ERR_BACKEND_UNAVAILABLE] = { 503, "backend_unavailable" },
	[ERR_UNAVAILABLE]	  = { 503, "service_unavailable" },
	[ERR_INTERNAL]		  = { 500, "internal_error" },
};

int
error_status(enum err_code code)
{
	return code < ERR__MAX ? errors[code].status : 500;
}

const char *
error_name(enum err_code code)
{
	return code < ERR__MAX ? errors[code].name : "internal_error";
}

/* Adds key: the string s to the details.  json-c itself, failing as
 * json_util.h's constructors do (xalloc.h): json_util.c reports through
 * error_set(), and this file stays below it (src/README.md, "Layers"). */
static void
detail_str(struct error *e, const char *key, const char *s)
{
	json_object	*v = json_object_new_string(s);

	if (v == NULL)
		xoom("json-c object");
	error_detail(e, key, v);
}

int
error_set(struct error *e, enum err_code code, const char *field,
    const char *fmt, ...)
{
	char	 reason[sizeof(e->message) - 160], *f;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	/* A bound (here, or a caller's "%.40s" or buffer) may have cut a
	 * character of a name in two: the message, the field and the
	 * reason are sent as JSON strings. */
	utf8_scrub(reason);

	error_clear(e);
	e->code = code;
	if (field == NULL) {
		snprintf(e->message, sizeof(e->message), "%s", reason);
		return -1;
	}
	snprintf(e->message, sizeof(e->message), "%.150s: %s", field, reason);
	utf8_scrub(e->message);
	f = xstrdup(field);
	utf8_scrub(f);
	detail_str(e, "field", f);
	free(f);
	detail_str(e, "reason", reason);
	return -1;
}

void
error_detail(struct error *e, const char *key, json_object *value)
{
	if (e->details == NULL &&
	    (e->details = json_object_new_object()) == NULL)
		xoom("json-c object");
	if (json_object_object_add(e->details, key, value) != 0)
		xoom("json-c member");
}

void
error_clear(struct error *e)
{
	json_object_put(e->details);
	memset(e, 0, sizeof(*e));
}
