/* backend_openai.h: the "openai" kind, any server speaking the OpenAI
 * chat-completions contract with log-probabilities (llama.cpp's
 * llama-server, vLLM, the OpenAI API; doc/design.md, section 7.1),
 * and its pure parts, exposed for the unit tests and fuzzing: the
 * labels, the request of one question, the parser of one reply. */
#ifndef EVALGATE_BACKEND_OPENAI_H
#define EVALGATE_BACKEND_OPENAI_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "backend.h"
#include "question.h"

#define OPENAI_ENDPOINT		"/chat/completions"	/* after the URL */
#define OPENAI_OPTIONS_MIN	2	/* max_options: one is no choice */
#define OPENAI_OPTIONS_MAX	26	/* a letter each, A..Z */
#define OPENAI_OPTIONS_DEF	20	/* the OpenAI API's top_logprobs */
#define OPENAI_CONCURRENCY_MAX	64	/* calls in flight */
#define OPENAI_CONCURRENCY_DEF	8
#define OPENAI_MIN_LABEL_MASS	0.5	/* below: the answer does not fit */
#define OPENAI_MASS_SLACK	1e-6	/* above 1 + this: does not fit */
#define OPENAI_LOGPROB_SLACK	1e-6	/* above: unfit; 0 to it: 0 */
#define OPENAI_LABEL_TOKENS_MAX	64	/* label tokens of a reply */
#define OPENAI_LABEL_SIZE	4	/* "yes" and its NUL */

/* The kind: one POST {replica}/chat/completions per question, all of an
 * evaluation's at once (at most its concurrency in flight). */
extern const struct backend_kind backend_kind_openai;

/* The label of the i-th answer of a question of type t into buf: choice
 * "A", "B", ...; score "0", "1", ...; noul "yes" (index 0, true) and
 * "no".  buf, or NULL when there is none (i past the last). */
const char *backend_openai_label(enum qtype t, size_t i,
	    char buf[OPENAI_LABEL_SIZE]);

/* The request body asking the question name (q, borrowed, validated)
 * about state (borrowed, validated) of backend b, with b's model,
 * max_options and extra members: a new NUL-terminated JSON text the
 * caller frees, or NULL when memory ran out.  Pure. */
char	*backend_openai_request(const struct backend *b, json_object *state,
	    const char *name, json_object *q);

/* What a reply says besides the distribution. */
struct openai_reply {
	double	 mass;		/* on the labels, before renormalising */
	int	 has_usage;
	int64_t	 prompt_tokens;
	int64_t	 completion_tokens;
};

/* Parses a 2xx reply body (len bytes, not necessarily NUL-terminated)
 * to question q (borrowed, validated, of n answers) into dist (n
 * entries, overwritten: the labels' masses renormalised to sum 1) and
 * r.  The masses are read from choices[0].logprobs.content[0]
 * .top_logprobs: each entry whose token, with surrounding whitespace
 * removed and case folded, is a label adds exp(logprob) to it; an
 * entry whose token repeats the exact text of one before it counts
 * once.  0, or -1 with a short one-line reason in why (our own text,
 * never the body's): no JSON object, no logprobs, a logprob above 0,
 * no label among the tokens, a mass below OPENAI_MIN_LABEL_MASS or
 * above 1, a usage count out of range (backend_usage_read()).  Pure:
 * no I/O, no global state. */
int	backend_parse_openai(const char *body, size_t len, json_object *q,
	    double *dist, size_t n, struct openai_reply *r, char *why,
	    size_t whylen);

#endif
