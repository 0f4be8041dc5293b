/* error.h: the one error type every module reports through.
 *
 * Pure modules (question, answer, template, ...) fill a struct error; the
 * HTTP layer turns it into the spec's {"error":{code,message,details}} body
 * with http_error(), and evalgate-admin into one line on stderr.  The table
 * in error.c gives each code its HTTP status and wire name. */
#ifndef EVALGATE_ERROR_H
#define EVALGATE_ERROR_H

#include <json-c/json.h>

enum err_code {
	ERR_NONE = 0,
	ERR_NOT_FOUND,		/* 404 not_found */
	ERR_METHOD_NOT_ALLOWED,	/* 405 method_not_allowed */
	ERR_PAYLOAD_TOO_LARGE,	/* 413 payload_too_large */
	ERR_INVALID_API_KEY,	/* 401 invalid_api_key */
	ERR_FORBIDDEN,		/* 403 forbidden */
	ERR_SCHEMA_NOT_GRANTED,	/* 403 schema_not_granted */
	ERR_CONFLICT,		/* 409 conflict */
	ERR_VALIDATION,		/* 422 validation_error */
	ERR_INVALID_SCHEMA,	/* 422 invalid_schema */
	ERR_TEMPLATE_RENDER,	/* 422 template_render_error */
	ERR_RATE_LIMITED,	/* 429 rate_limited */
	ERR_QUOTA_EXCEEDED,	/* 429 quota_exceeded */
	ERR_BACKEND_UNAVAILABLE,/* 503 backend_unavailable */
	ERR_UNAVAILABLE,	/* 503 service_unavailable (database busy, out of memory) */
	ERR_INTERNAL,		/* 500 internal_error */
	ERR__MAX
};

/* Why a 503 was answered, for the metrics (evalgate_unavailable_total):
 * set by whoever makes the error, counted by the one writer of errors.
 * A cleared error says EU_OTHER. */
enum err_unavailable {
	EU_OTHER = 0,		/* anything else: out of memory */
	EU_IN_FLIGHT,		/* the backend's in-flight limit */
	EU_COOLING,		/* every replica cooling down */
	EU_NO_REPLICA,		/* no replica answered (transport, server),
				 * or none is configured */
	EU_UNFIT,		/* a replica answered what does not fit the
				 * questions, and no other answered */
	EU_DATABASE,		/* the database is not available: busy,
				 * full, unreachable */
	EU_DISABLED,		/* the backend is disabled, or its key
				 * variable unset */
	EU__MAX
};

struct error {
	enum err_code	 code;
	char		 message[512];	/* human text, error.message */
	json_object	*details;	/* owned; NULL is written as {} */
	long		 retry_after_ms;/* > 0: Retry-After and retry-after-ms */
	enum err_unavailable unavailable;	/* a 503's reason */
};

/* Sets e (releasing earlier details) and returns -1, so that callers can
 * write `return error_set(...)`.  With a field, details become
 * {"field": field, "reason": <text>} and the message "field: text". */
int		 error_set(struct error *e, enum err_code code,
		    const char *field, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
/* Adds one member to e->details (taking ownership of value). */
void		 error_detail(struct error *e, const char *key, json_object *value);
void		 error_clear(struct error *e);

int		 error_status(enum err_code code);	/* HTTP status */
const char	*error_name(enum err_code code);	/* wire code */

#endif
