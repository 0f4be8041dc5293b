/* fuzz_upstream.c: libFuzzer target for backend_parse_systemone(), the
 * parser of a "systemone" upstream's 200 body, followed by what the
 * handler does with a parsed answer: answer_normalise(), answer_build()
 * and answer_distribution_json().  The questions are the demo questions,
 * or, when the input holds a NUL, the part before it if that is a valid
 * questions map (the body is then what follows the NUL).  The schema's
 * temperature and abstain threshold are taken from a table by the
 * input's hash, down to the smallest temperature a schema may have.
 *
 * Properties: a parse that succeeds gives one distribution per question,
 * each of the question's arity, of finite values >= 0 with a finite
 * positive sum (noul: p, 1 - p), usage from 0 to BACKEND_USAGE_MAX, and
 * no replica; the handler then normalises it and builds an answer and
 * a stored distribution.  A parse that fails leaves the answer empty
 * and gives a one-line reason of our own: with the demo questions
 * (whose names it may hold), never the body's text (the seeds reflect
 * a key "sk-..."; the reason never holds "sk-"). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "answer.h"
#include "backend.h"
#include "backend_systemone.h"
#include "fuzz.h"
#include "question.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char demo[] = "{"
    "\"sentiment\":{\"type\":\"choice\",\"instructions\":\"How does the"
    " customer feel?\",\"criteria\":{\"positive\":\"happy\",\"neutral\":"
    "\"asking\",\"negative\":\"angry\"}},"
    "\"urgency\":{\"type\":\"score\",\"criteria\":[\"not urgent\",\"soon\","
    "\"urgent today\",\"critical\"]},"
    "\"refund\":{\"type\":\"noul\",\"criteria\":{\"true\":\"refund\","
    "\"false\":\"no refund\"}}}";

static const double temperatures[] = { 1, 0.5, 2, 100, 1e-3, 4.9e-324 };
static const double thresholds[] = { 0, 0.5, 0.9, 1 };
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static json_object	*demo_questions;

/* What build_answers() in handler_systemone.c does with the answer. */
static void
shape(json_object *qs, struct backend_answer *a, uint64_t h)
{
	json_object	*o;
	double		 T = temperatures[h % NELEM(temperatures)];
	double		 th = thresholds[(h >> 8) % NELEM(thresholds)];
	size_t		 i = 0, j, n;
	double		 sum;

	json_object_object_foreach(qs, name, q) {
		(void)name;
		n = question_arity(q);
		FUZZ_ASSERT(answer_normalise(a->dist[i], n) == 0);
		for (sum = 0, j = 0; j < n; j++)
			sum += a->dist[i][j];
		FUZZ_ASSERT(fabs(sum - 1) < 1e-9);
		FUZZ_ASSERT((o = answer_build(q, a->dist[i], n, T, th)) !=
		    NULL);
		FUZZ_ASSERT(json_object_to_json_string(o) != NULL);
		json_object_put(o);
		FUZZ_ASSERT((o = answer_distribution_json(q, a->dist[i], n)) !=
		    NULL);
		json_object_put(o);
		i++;
	}
}

static void
check_answer(json_object *qs, const struct backend_answer *a)
{
	size_t	 i = 0, j, n;
	double	 sum;

	FUZZ_ASSERT(a->nquestions == (size_t)json_object_object_length(qs));
	FUZZ_ASSERT(a->replica[0] == '\0');
	FUZZ_ASSERT(!a->has_usage || (a->input_tokens >= 0 &&
	    a->output_tokens >= 0 && a->input_tokens <= BACKEND_USAGE_MAX &&
	    a->output_tokens <= BACKEND_USAGE_MAX));
	json_object_object_foreach(qs, name, q) {
		(void)name;
		n = question_arity(q);
		for (sum = 0, j = 0; j < n; j++) {
			FUZZ_ASSERT(isfinite(a->dist[i][j]) &&
			    a->dist[i][j] >= 0);
			sum += a->dist[i][j];
		}
		FUZZ_ASSERT(isfinite(sum) && sum > 0);
		if (question_type(q) == Q_NOUL)
			FUZZ_ASSERT(a->dist[i][0] <= 1 &&
			    a->dist[i][1] == 1 - a->dist[i][0]);
		i++;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct backend_answer	 a;
	json_object		*qs;
	const char		*body;
	char			 why[120];
	size_t			 len;

	if (demo_questions == NULL)
		demo_questions = json_tokener_parse(demo);
	qs = fuzz_questions_body(data, size, demo_questions, &body, &len);

	memset(why, 0, sizeof(why));
	if (backend_parse_systemone(body, len, qs, &a, why, sizeof(why)) ==
	    0) {
		check_answer(qs, &a);
		shape(qs, &a, fuzz_seed(data, size));
		backend_answer_free(&a);
	} else {
		FUZZ_ASSERT(a.nquestions == 0 && a.dist == NULL &&
		    !a.has_usage);
		FUZZ_ASSERT(why[0] != '\0' && memchr(why, '\0', sizeof(why)));
		FUZZ_ASSERT(strcspn(why, "\r\n") == strlen(why));
		FUZZ_ASSERT(memchr(data, '\0', size) != NULL ||
		    strstr(why, "sk-") == NULL);
	}
	json_object_put(qs);
	return 0;
}
