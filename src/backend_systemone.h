/* backend_systemone.h: the "systemone" kind, an upstream speaking the
 * System One contract (doc/design.md, section 7.1), and the pure parser of its
 * answers, exposed for the unit tests and fuzzing. */
#ifndef EVALGATE_BACKEND_SYSTEMONE_H
#define EVALGATE_BACKEND_SYSTEMONE_H

#include <stddef.h>

#include <json-c/json.h>

#include "backend.h"

#define SYSTEMONE_ENDPOINT	"/v1/systemone"	/* after a replica's URL */

/* The kind: POST {replica}/v1/systemone {state, model, questions} with
 * the backend's model (SYSTEMONE_DEFAULT_MODEL when it has none). */
extern const struct backend_kind backend_kind_systemone;

/* Parses an upstream 200 body (len bytes, not necessarily NUL-terminated)
 * against the questions (borrowed, validated) into out (overwritten: it
 * must hold nothing): one distribution per question in the questions'
 * order, as question.h says, plus "usage" when it holds both counts
 * (backend_usage_read(): a count out of range fails the answer).  0,
 * or -1 with a short reason in why (our own text, never the body's)
 * and out left empty.  Pure: no I/O, no global state. */
int	backend_parse_systemone(const char *body, size_t len,
	    json_object *questions, struct backend_answer *out, char *why,
	    size_t whylen);

#endif
