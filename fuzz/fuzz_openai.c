/* fuzz_openai.c: libFuzzer target for backend_parse_openai(), the parser
 * of an "openai" server's reply to one question (its chat completion
 * with log-probabilities), followed by what the kind does with a parsed
 * distribution: answer_normalise() and answer_build().  The body is
 * parsed once for each question of the demo questions (a choice, a
 * score and a noul), or, when the input holds a NUL, of the part before
 * it if that is a valid questions map (the body is then what follows).
 *
 * Properties: a parse that succeeds gives the question's arity of
 * finite values >= 0 summing to 1, a label mass from
 * OPENAI_MIN_LABEL_MASS to 1 + OPENAI_MASS_SLACK, usage from 0 to
 * BACKEND_USAGE_MAX; the answer built from it succeeds.  A parse that
 * fails leaves the distribution zero and the reply empty, with a
 * one-line reason of our own: never the body's text (the seeds reflect
 * a key "sk-..." in keys, values and tokens; the reason never holds
 * "sk-"). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "answer.h"
#include "backend.h"
#include "backend_openai.h"
#include "fuzz.h"
#include "question.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* backend.c is not linked (it needs the store and the shared memory):
 * the parser never reads a backend's options, and these prove it. */
long
backend_option_long(const struct backend *b, const char *name)
{
	(void)b;
	(void)name;
	__builtin_trap();
}

json_object *
backend_option_json(const struct backend *b, const char *name)
{
	(void)b;
	(void)name;
	__builtin_trap();
}

static const char demo[] = "{"
    "\"sentiment\":{\"type\":\"choice\",\"criteria\":{\"positive\":\"happy\","
    "\"neutral\":\"asking\",\"negative\":\"angry\"}},"
    "\"urgency\":{\"type\":\"score\",\"criteria\":[\"not urgent\",\"soon\","
    "\"urgent today\",\"critical\"]},"
    "\"refund\":{\"type\":\"noul\"}}";

static json_object	*demo_questions;

static void
check(json_object *q, const char *body, size_t len)
{
	struct openai_reply	 r;
	json_object		*o;
	double			 dist[OPENAI_OPTIONS_MAX + 1], sum = 0;
	char			 why[120];
	size_t			 i, n = question_arity(q);

	if (n == 0 || n > OPENAI_OPTIONS_MAX)
		return;		/* publish refuses it for an openai backend */
	memset(why, 0, sizeof(why));
	if (backend_parse_openai(body, len, q, dist, n, &r, why,
	    sizeof(why)) == 0) {
		for (i = 0; i < n; i++) {
			FUZZ_ASSERT(isfinite(dist[i]) && dist[i] >= 0);
			sum += dist[i];
		}
		FUZZ_ASSERT(fabs(sum - 1) < 1e-9);
		FUZZ_ASSERT(isfinite(r.mass) &&
		    r.mass >= OPENAI_MIN_LABEL_MASS &&
		    r.mass <= 1 + OPENAI_MASS_SLACK);
		FUZZ_ASSERT(!r.has_usage || (r.prompt_tokens >= 0 &&
		    r.completion_tokens >= 0 &&
		    r.prompt_tokens <= BACKEND_USAGE_MAX &&
		    r.completion_tokens <= BACKEND_USAGE_MAX));
		FUZZ_ASSERT(answer_normalise(dist, n) == 0);
		FUZZ_ASSERT((o = answer_build(q, dist, n, 1, 0)) != NULL);
		json_object_put(o);
	} else {
		for (i = 0; i < n; i++)
			FUZZ_ASSERT(dist[i] == 0);
		FUZZ_ASSERT(r.mass == 0 && !r.has_usage);
		FUZZ_ASSERT(why[0] != '\0' && memchr(why, '\0', sizeof(why)));
		FUZZ_ASSERT(strcspn(why, "\r\n") == strlen(why));
		FUZZ_ASSERT(strstr(why, "sk-") == NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object		*qs;
	const char		*body;
	size_t			 len;

	if (demo_questions == NULL)
		demo_questions = json_tokener_parse(demo);
	qs = fuzz_questions_body(data, size, demo_questions, &body, &len);
	json_object_object_foreach(qs, name, q) {
		(void)name;
		check(q, body, len);
	}
	json_object_put(qs);
	return 0;
}
