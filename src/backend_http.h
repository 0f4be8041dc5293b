/* backend_http.h: the "systemone" kind, an upstream speaking the System
 * One contract over blocking libcurl (design.md section 7), and the pure
 * parser of its answers (backend_answer.c), exposed for the unit tests
 * and fuzzing. */
#ifndef EVALGATE_BACKEND_HTTP_H
#define EVALGATE_BACKEND_HTTP_H

#include <stddef.h>

#include <json-c/json.h>

#include "backend.h"

#define SYSTEMONE_MAX_ANSWER	(8u << 20)	/* bytes of one answer */
#define SYSTEMONE_COOLDOWN_MS	30000		/* a failing replica rests */
#define SYSTEMONE_MAX_RETRY_MS	60000		/* cap on an upstream hint */
#define SYSTEMONE_MAX_CONNECT_MS 5000
#define SYSTEMONE_DEFAULT_MODEL	"jev-latest"

/* The backend_evaluate() of the kind: POST {replica}/v1/systemone, one
 * replica after another from a rotating start, cool-downs shared through
 * the cache.  Uses the process's one curl handle (created on first use,
 * so after fork). */
int	backend_systemone_evaluate(struct store *st,
	    const struct settings *s, const struct backend *b,
	    json_object *state, json_object *questions,
	    struct backend_answer *out, struct error *e);
/* Releases the curl handle.  Idempotent. */
void	backend_systemone_cleanup(void);

/* Parses an upstream 200 body (len bytes, not necessarily NUL-terminated)
 * against the questions (borrowed, validated) into out (overwritten: it
 * must hold nothing): one distribution per question in the questions'
 * order, as question.h says, plus "usage" when it holds two integers
 * >= 0.  0, or -1 with a short reason in why (never the body) and out
 * left empty.  Pure: no I/O, no global state. */
int	backend_parse_systemone(const char *body, size_t len,
	    json_object *questions, struct backend_answer *out, char *why,
	    size_t whylen);

#endif
