/* lexical_test.c: TAP tests of backend_lexical.c — determinism, the option
 * whose words the state repeats wins, distributions sum to 1 with every
 * value > 0, word rules, each stop word, the kind's answer to several
 * questions, usage counts, and cost on a large input. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "backend_lexical.h"
#include "error.h"
#include "question.h"
#include "tap.h"

#define EPS	1e-12

static int
proper(const double *p, size_t n)
{
	double	 sum = 0;
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (!(p[i] > 0) || p[i] > 1)
			return 0;
		sum += p[i];
	}
	return sum > 1 - EPS && sum < 1 + EPS;
}

static size_t
best(const double *p, size_t n)
{
	size_t	 i, b = 0;

	for (i = 1; i < n; i++)
		if (p[i] > p[b])
			b = i;
	return b;
}

static void
test_choice(void)
{
	json_object	*q;
	double		 p[3], r[3];

	q = parse("{\"type\":\"choice\",\"instructions\":\"What is the"
	    " customer's mood?\",\"criteria\":{\"happy\":\"The customer is"
	    " pleased\",\"angry\":\"The customer is upset or furious\","
	    "\"neutral\":null}}");
	lexical_distribution("The customer is very ANGRY and upset about the"
	    " late delivery", q, p, 3);
	ok(proper(p, 3), "choice: sums to 1, all > 0");
	ok(best(p, 3) == 1, "choice: 'angry' wins");
	/* happy: 1 + customer; angry: 1 + angry, customer, upset; neutral 1 */
	is_num(p[0], 2.0 / 7, EPS, "  P(happy) = 2/7");
	is_num(p[1], 4.0 / 7, EPS, "  P(angry) = 4/7");
	is_num(p[2], 1.0 / 7, EPS, "  P(neutral) = 1/7");

	lexical_distribution("The customer is very ANGRY and upset about the"
	    " late delivery", q, r, 3);
	ok(memcmp(p, r, sizeof(p)) == 0, "deterministic");

	lexical_distribution("", q, p, 3);
	ok(p[0] == p[1] && p[1] == p[2] && proper(p, 3), "empty state: uniform");
	lexical_distribution(NULL, q, p, 3);
	ok(p[0] == p[1] && p[1] == p[2], "NULL state: uniform");
	lexical_distribution("the is and of a", q, p, 3);
	ok(p[0] == p[1] && p[1] == p[2], "stop words only: uniform");
	lexical_distribution("anything", q, p, 2);
	ok(p[0] == 0.5 && p[1] == 0.5, "n != arity: uniform");
	json_object_put(q);

	q = parse("{\"type\":\"choice\",\"criteria\":{\"tr\\u00e8s_f\\u00e2"
	    "ch\\u00e9\":null,\"calme\":null}}");
	lexical_distribution("Il est tr\xc3\xa8s F\xc3\xa2""ch\xc3\xa9.", q, p,
	    2);
	ok(best(p, 2) == 0, "UTF-8 words match bytewise, ASCII case folded");
	/* très, fâché: two words of the key */
	is_num(p[0], 3.0 / 4, EPS, "  P = 3/4");
	json_object_put(q);

	q = parse("{\"type\":\"choice\",\"criteria\":{\"a1\":\"angry angry"
	    " ANGRY\",\"b2\":\"calm\"}}");
	lexical_distribution("angry", q, p, 2);
	is_num(p[0], 2.0 / 3, EPS, "a repeated word counts once");
	lexical_distribution("{\"msg\":\"I am calm\"}", q, p, 2);
	ok(best(p, 2) == 1, "compact JSON state text works");
	json_object_put(q);

	q = parse("{\"type\":\"choice\",\"criteria\":{\"x\":{\"text\":"
	    "\"refund\"},\"y\":[\"refund\"]}}");
	lexical_distribution("refund", q, p, 2);
	ok(p[0] == 0.5 && p[1] == 0.5, "non-string descriptions are ignored");
	json_object_put(q);
}

static void
test_score(void)
{
	json_object	*q;
	double		 p[3];

	q = parse("{\"type\":\"score\",\"criteria\":[\"low urgency\","
	    "\"medium\",\"high priority, urgent\"]}");
	lexical_distribution("This is URGENT: high priority!", q, p, 3);
	ok(proper(p, 3), "score: sums to 1, all > 0");
	ok(best(p, 3) == 2, "score: the 'high' level wins");
	is_num(p[2], 4.0 / 6, EPS, "  P(2) = 4/6");
	json_object_put(q);
}

static void
test_noul(void)
{
	json_object	*q;
	double		 p[2];

	q = parse("{\"type\":\"noul\",\"criteria\":{\"true\":\"asks for a"
	    " refund\",\"false\":\"just says thanks\"}}");
	lexical_distribution("I want a refund now", q, p, 2);
	ok(proper(p, 2) && p[0] > 0.5, "noul: true description matches");
	is_num(p[0], 2.0 / 3, EPS, "  P(true) = (1+1)/(2+1+0)");
	lexical_distribution("thanks, just thanks", q, p, 2);
	ok(p[0] < 0.5, "noul: false description matches");
	is_num(p[0], 1.0 / 4, EPS, "  P(true) = 1/(2+0+2)");
	json_object_put(q);

	q = parse("{\"type\":\"noul\",\"instructions\":\"Does the customer"
	    " ask for a refund?\"}");
	lexical_distribution("refund please", q, p, 2);
	is_num(p[0], 2.0 / 3, EPS, "noul without descriptions: instructions");
	lexical_distribution("hello there", q, p, 2);
	is_num(p[0], 0.5, EPS, "  no overlap: 0.5");
	json_object_put(q);

	q = parse("{\"type\":\"noul\",\"criteria\":{\"false\":\"no"
	    " refund\"}}");
	lexical_distribution("refund", q, p, 2);
	is_num(p[0], 1.0 / 3, EPS, "noul with only false");
	json_object_put(q);
}

/* Each stop word, in either case, is ignored; a word that only starts
 * or ends like one is not. */
static void
test_stopwords(void)
{
	static const char *const stop[] = {
		"a", "an", "and", "are", "as", "at", "be", "by", "for",
		"from", "has", "have", "in", "is", "it", "its", "of", "on",
		"or", "that", "the", "this", "to", "was", "were", "will",
		"with",
	};
	json_object	*q;
	char		 text[64];
	double		 p[2];
	size_t		 i, n = sizeof(stop) / sizeof(stop[0]), bad = 0;

	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "{\"type\":\"noul\",\"criteria\""
		    ":{\"true\":\"%s\",\"false\":\"other\"}}", stop[i]);
		q = parse(text);
		lexical_distribution(stop[i], q, p, 2);
		bad += p[0] != 0.5;
		text[0] = (char)(stop[i][0] - 'a' + 'A');
		snprintf(text + 1, sizeof(text) - 1, "%s", stop[i] + 1);
		lexical_distribution(text, q, p, 2);
		bad += p[0] != 0.5;
		json_object_put(q);
	}
	ok(bad == 0, "each of the %zu stop words is ignored (%zu not)", n,
	    bad);
	q = parse("{\"type\":\"noul\",\"criteria\":{\"true\":\"then"
	    " thee ore tot wit x\",\"false\":\"other\"}}");
	lexical_distribution("then thee ore tot wit x", q, p, 2);
	is_num(p[0], 7.0 / 8, EPS, "words near stop words count");
	json_object_put(q);
}

/* The kind answers several questions from one reading of the state:
 * each as lexical_distribution() answers it alone, a word of the state
 * matched by one question still counting for the next. */
static void
test_kind(void)
{
	json_object		*qs, *state;
	struct backend_answer	 out;
	struct error		 e;
	double			 p[4];
	size_t			 i = 0, same = 0;
	long			 in, outn;
	const char		*text = "The refund is late, the customer is"
	    " angry: refund now, angry angry";

	memset(&out, 0, sizeof(out));
	memset(&e, 0, sizeof(e));
	qs = parse("{\"mood\":{\"type\":\"choice\",\"criteria\":{"
	    "\"angry\":\"upset customer\",\"calm\":null}},\"refund\":{"
	    "\"type\":\"noul\",\"criteria\":{\"true\":\"refund now\","
	    "\"false\":\"angry\"}},\"lvl\":{\"type\":\"score\","
	    "\"criteria\":[\"calm\",\"angry\",\"angry customer\","
	    "\"late refund\"]},\"again\":{\"type\":\"choice\","
	    "\"criteria\":{\"angry\":\"refund\",\"late\":null}}}");
	state = json_object_new_string(text);
	ok(backend_kind_lexical.answer(NULL, state, qs, &out, &e) == 0 &&
	    out.nquestions == 4, "the kind answers 4 questions");
	json_object_object_foreach(qs, name, q) {
		(void)name;
		lexical_distribution(text, q, p, question_arity(q));
		same += memcmp(p, out.dist[i], question_arity(q) *
		    sizeof(p[0])) == 0;
		i++;
	}
	ok(same == 4, "  each as lexical_distribution() alone (%zu of 4)",
	    same);
	is_num(out.dist[3][0], 3.0 / 5, EPS, "  the last question matches"
	    " words the first ones did");
	lexical_usage(text, qs, &in, &outn);
	ok(out.has_usage && out.input_tokens == in &&
	    out.output_tokens == outn, "  usage as lexical_usage() counts it"
	    " (%ld)", in);
	backend_answer_free(&out);
	json_object_put(state);
	json_object_put(qs);
}

static void
test_counts(void)
{
	json_object	*qs;
	long		 in = -1, out = -1;

	ok(lexical_count_words("Hello, world! 42 \xc3\xa9t\xc3\xa9") == 4,
	    "count words");
	ok(lexical_count_words("") == 0, "count words of empty text");
	ok(lexical_count_words(NULL) == 0, "count words of NULL");
	ok(lexical_count_words("  ,;  ") == 0, "count words of separators");

	qs = parse("{\"mood\":{\"type\":\"choice\",\"instructions\":\"How is"
	    " it\",\"criteria\":{\"happy\":\"glad person\",\"sad\":null}},"
	    "\"ok\":{\"type\":\"noul\"},\"lvl\":{\"type\":\"score\","
	    "\"criteria\":[\"low one\",\"high\"]}}");
	lexical_usage("a b c", qs, &in, &out);
	/* state 3; mood 1 + 3 + happy 1 + 2 + sad 1; ok 1; lvl 1 + 2 + 1 */
	ok(in == 16, "usage input tokens (%ld)", in);
	ok(out == 3, "usage output tokens = questions (%ld)", out);
	json_object_put(qs);
}

static void
test_cost(void)
{
	json_object	*q, *c;
	char		*state, key[32], desc[64];
	double		 p[255];
	struct timespec	 t0, t1;
	double		 ms;
	size_t		 i, len = 0;

	state = malloc(32001);
	while (len < 32000) {
		int	 n = snprintf(state + len, 32001 - len, "word%zu ",
		    (len * 7) % 5000);

		if (n < 0 || (size_t)n >= 32001 - len)
			break;
		len += (size_t)n;
	}
	state[len] = '\0';
	q = parse("{\"type\":\"choice\",\"criteria\":{}}");
	json_object_object_get_ex(q, "criteria", &c);
	for (i = 0; i < 255; i++) {
		snprintf(key, sizeof(key), "option_%zu", i);
		snprintf(desc, sizeof(desc), "about word%zu and word%zu",
		    i * 13, i * 17 + 1);
		json_object_object_add(c, key, json_object_new_string(desc));
	}
	timespec_get(&t0, TIME_UTC);
	lexical_distribution(state, q, p, 255);
	timespec_get(&t1, TIME_UTC);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ok(proper(p, 255), "255 options, 32000-char state: proper");
	printf("# 255 options x 32000 chars: %.3f ms\n", ms);
	/* generous bound: sanitizers slow this down several times */
	ok(ms < 50, "255 options x 32000 chars is cheap");
	json_object_put(q);
	free(state);
}

int
main(void)
{
	test_choice();
	test_score();
	test_noul();
	test_stopwords();
	test_kind();
	test_counts();
	test_cost();
	return tap_done();
}
