/* backend_parse_test.c: TAP tests of backend_parse_systemone() — exact
 * distributions for the three question types in the questions' order,
 * usage relayed or not, and every misfit refused with a reason and
 * nothing left behind; also the kind table and the lexical kind. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "backend.h"
#include "backend_lexical.h"
#include "backend_systemone.h"
#include "tap.h"

#define EPS	1e-12

static json_object *questions;

static int
empty(const struct backend_answer *a)
{
	return a->nquestions == 0 && a->dist == NULL && !a->has_usage &&
	    a->replica[0] == '\0';
}

#define GOOD_ANSWERS \
	"\"answers\":{" \
	"\"hot\":{\"type\":\"noul\",\"noul\":0.25}," \
	"\"dept\":{\"type\":\"choice\",\"choice\":\"sales\"," \
	"\"confidence\":0.5,\"probabilities\":{\"sales\":0.5," \
	"\"billing\":0.125,\"technical\":0.375,\"extra\":9}}," \
	"\"urg\":{\"type\":\"score\",\"score\":1.7,\"confidence\":0.8," \
	"\"legend\":{\"0\":\"low\",\"1\":\"mid\",\"2\":\"high\"}," \
	"\"probabilities\":{\"2\":0.8,\"0\":0.1,\"1\":0.1}}}"

/* Usage counts that are numbers out of range (0 to 10^9, integers). */
static const char *const bad_usage[] = {
	"-1", "2.5", "1e3", "1000000001", "9223372036854775806",
};

static void
test_good(void)
{
	struct backend_answer	 a;
	char			 why[128] = "", text[1024];
	const char		*body;
	size_t			 i;

	body = "{\"model\":\"jev-1.14.0\"," GOOD_ANSWERS ",\"usage\":"
	    "{\"input_tokens\":318,\"output_tokens\":34}}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0, "well-formed answer parses (%s)", why);
	ok(a.nquestions == 3, "three distributions");
	/* questions order: dept, urg, hot; option order billing, technical,
	 * sales, whatever the answer's order */
	is_num(a.dist[0][0], 0.125, EPS, "choice: billing");
	is_num(a.dist[0][1], 0.375, EPS, "choice: technical");
	is_num(a.dist[0][2], 0.5, EPS, "choice: sales (extra keys ignored)");
	is_num(a.dist[1][0], 0.1, EPS, "score: level 0");
	is_num(a.dist[1][1], 0.1, EPS, "score: level 1");
	is_num(a.dist[1][2], 0.8, EPS, "score: level 2");
	is_num(a.dist[2][0], 0.25, EPS, "noul: P(true)");
	is_num(a.dist[2][1], 0.75, EPS, "noul: P(false) = 1 - noul");
	ok(a.has_usage && a.input_tokens == 318 && a.output_tokens == 34,
	    "usage relayed");
	ok(a.replica[0] == '\0', "the parser sets no replica");
	backend_answer_free(&a);
	ok(empty(&a), "backend_answer_free leaves it empty");
	backend_answer_free(&a);
	ok(empty(&a), "  and is idempotent");

	body = "{" GOOD_ANSWERS "}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0 && !a.has_usage, "usage absent: has_usage 0");
	backend_answer_free(&a);

	body = "{" GOOD_ANSWERS ",\"usage\":{\"input_tokens\":\"3\","
	    "\"output_tokens\":1}}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0 && !a.has_usage,
	    "usage with a string count: ignored");
	backend_answer_free(&a);

	/* A count that is a number out of range: the answer does not fit. */
	for (i = 0; i < sizeof(bad_usage) / sizeof(bad_usage[0]); i++) {
		snprintf(text, sizeof(text), "{" GOOD_ANSWERS ",\"usage\":{"
		    "\"input_tokens\":%s,\"output_tokens\":1}}",
		    bad_usage[i]);
		ok(backend_parse_systemone(text, strlen(text), questions, &a,
		    why, sizeof(why)) == -1 && empty(&a) &&
		    strstr(why, "usage") != NULL,
		    "usage with a count of %s: does not fit (%s)",
		    bad_usage[i], why);
		backend_answer_free(&a);
	}

	body = "{" GOOD_ANSWERS ",\"usage\":{\"input_tokens\":1000000000,"
	    "\"output_tokens\":0}}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0 && a.has_usage && a.input_tokens == 1000000000,
	    "usage of 10^9: relayed");
	backend_answer_free(&a);

	body = "{" GOOD_ANSWERS ",\"usage\":null}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0 && !a.has_usage, "usage null: ignored");
	backend_answer_free(&a);

	/* integers, zeros, no "type", whitespace around, noul at its ends */
	body = " \r\n{\"answers\":{\"dept\":{\"probabilities\":{\"billing\":0,"
	    "\"technical\":1,\"sales\":0}},\"urg\":{\"probabilities\":"
	    "{\"0\":2,\"1\":1,\"2\":1}},\"hot\":{\"noul\":1}},"
	    "\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}\n\t ";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, why,
	    sizeof(why)) == 0, "integers, no type members, white space (%s)",
	    why);
	ok(a.nquestions == 3 && a.dist[0][0] == 0 && a.dist[0][1] == 1 &&
	    a.dist[1][0] == 2 && a.dist[2][0] == 1 && a.dist[2][1] == 0,
	    "  values as given, not yet normalised");
	ok(a.has_usage && a.input_tokens == 0, "  zero usage relayed");
	backend_answer_free(&a);

	body = "{\"answers\":{\"dept\":{\"probabilities\":{\"billing\":0.2,"
	    "\"technical\":0.2,\"sales\":0.6}},\"urg\":{\"probabilities\":"
	    "{\"0\":0.2,\"1\":0.3,\"2\":0.5}},\"hot\":{\"noul\":0}}}";
	ok(backend_parse_systemone(body, strlen(body), questions, &a, NULL,
	    0) == 0 && a.dist[2][0] == 0 && a.dist[2][1] == 1,
	    "noul 0; NULL why accepted");
	backend_answer_free(&a);
}

static const struct {
	const char	*name;
	const char	*body;
	const char	*reason;	/* a part of why */
} misfits[] = {
	{ "not JSON", "{\"model\": \"jev-latest\", \"answers\": {\"x\":"
	  " {\"type\": \"choice\", \"probabilities\": {0.5, oops",
	  "not valid JSON" },
	{ "cut short", "{\"answers\":{", "not valid JSON" },
	{ "trailing data", "{\"answers\":{}} x", "not valid JSON" },
	{ "two documents", "{\"answers\":{}}{}", "not valid JSON" },
	{ "single-value garbage", "oops", "not valid JSON" },
	{ "HTML error page", "<html><body>Bad gateway</body></html>",
	  "not valid JSON" },
	{ "not an object: array", "[1,2,3]", "not an object" },
	{ "not an object: string", "\"answers\"", "not an object" },
	{ "not an object: null", "null", "not an object" },
	{ "not an object: a number", "42", "not an object" },
	{ "not an object: true", "true", "not an object" },
	{ "a cut literal", "tru", "not valid JSON" },
	{ "a key reflected, cut short", "{\"Bearer sk-secret-1",
	  "not valid JSON" },
	{ "a key reflected, trailing", "{} Bearer sk-secret-1", "valid JSON" },
	{ "no answers", "{\"model\":\"m\"}", "no answers" },
	{ "answers an array (wrong_shape)", "{\"model\":\"m\",\"answers\":[],"
	  "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}", "no answers" },
	{ "answers null", "{\"answers\":null}", "no answers" },
	{ "a question missing", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}}}}",
	  "'hot' missing" },
	{ "an answer not an object", "{\"answers\":{\"dept\":[0.2,0.2,0.6]}}",
	  "'dept' is not an object" },
	{ "a choice option missing", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":0.5,\"technical\":0.5}},"
	  "\"urg\":{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"noul\":0.5}}}", "'sales' missing" },
	{ "a score level missing", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":0.2,\"technical\":0.2,"
	  "\"sales\":0.6}},\"urg\":{\"probabilities\":{\"0\":0.5,\"1\":0.5}},"
	  "\"hot\":{\"noul\":0.5}}}", "'2' missing" },
	{ "score keyed by label", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":0.2,\"technical\":0.2,"
	  "\"sales\":0.6}},\"urg\":{\"probabilities\":{\"low\":0.2,"
	  "\"mid\":0.3,\"high\":0.5}},\"hot\":{\"noul\":0.5}}}", "'0' missing" },
	{ "no probabilities", "{\"answers\":{\"dept\":{\"choice\":\"sales\"}}}",
	  "no probabilities" },
	{ "probabilities an array", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":[0.2,0.2,0.6]}}}", "no probabilities" },
	{ "a negative probability", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":-0.2,\"technical\":0.6,"
	  "\"sales\":0.6}}}}", "not a finite number" },
	{ "NaN", "{\"answers\":{\"dept\":{\"probabilities\":{\"billing\":NaN,"
	  "\"technical\":0.6,\"sales\":0.6}}}}", "not a finite number" },
	{ "Infinity", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":Infinity,\"technical\":0.6,\"sales\":0.6}}}}",
	  "not a finite number" },
	{ "-Infinity", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":-Infinity,\"technical\":0.6,\"sales\":0.6}}}}",
	  "not a finite number" },
	{ "1e999 (overflows)", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":1e999,\"technical\":0.6,\"sales\":0.6}}}}",
	  "not a finite number" },
	{ "huge values whose sum overflows", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":1e308,\"technical\":1e308,"
	  "\"sales\":1e308}}}}", "sum to too much" },
	{ "all zero", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0,\"technical\":0.0,\"sales\":0}}}}", "sum to zero" },
	{ "a probability as a string", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":\"0.2\",\"technical\":0.2,"
	  "\"sales\":0.6}}}}", "not a finite number" },
	{ "a probability null", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":null,\"technical\":0.2,\"sales\":0.6}}}}",
	  "not a finite number" },
	{ "a probability true", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":true,\"technical\":0.2,\"sales\":0.6}}}}",
	  "not a finite number" },
	{ "a probability an object", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":{\"p\":1},\"technical\":0.2,"
	  "\"sales\":0.6}}}}", "not a finite number" },
	{ "noul above 1", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"noul\":1.5}}}", "from 0 to 1" },
	{ "noul below 0", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"noul\":-0.1}}}", "from 0 to 1" },
	{ "noul NaN", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"noul\":NaN}}}", "from 0 to 1" },
	{ "noul a boolean", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"noul\":true}}}", "from 0 to 1" },
	{ "noul missing", "{\"answers\":{\"dept\":{\"probabilities\":"
	  "{\"billing\":0.2,\"technical\":0.2,\"sales\":0.6}},\"urg\":"
	  "{\"probabilities\":{\"0\":0.2,\"1\":0.3,\"2\":0.5}},"
	  "\"hot\":{\"type\":\"noul\",\"probabilities\":{\"true\":1}}}}",
	  "noul missing" },
	{ "an answer of the wrong type", "{\"answers\":{\"dept\":"
	  "{\"type\":\"score\",\"probabilities\":{\"billing\":0.2,"
	  "\"technical\":0.2,\"sales\":0.6}}}}", "not of type choice" },
	{ "a type that is not a string", "{\"answers\":{\"dept\":"
	  "{\"type\":1,\"probabilities\":{\"billing\":0.2,"
	  "\"technical\":0.2,\"sales\":0.6}}}}", "not of type choice" },
	/* json-c cuts a key at \u0000: "dept\u0000x" is not "dept" */
	{ "a key cut at a NUL", "{\"answers\":{\"dept\\u0000x\":"
	  "{\"probabilities\":{\"billing\":0.2,\"technical\":0.2,"
	  "\"sales\":0.6}},\"urg\":{\"probabilities\":{\"0\":0.2,"
	  "\"1\":0.3,\"2\":0.5}},\"hot\":{\"noul\":0.5}}}", "\\u0000" },
	/* and saturates an integer beyond 64 bits */
	{ "an integer beyond 64 bits", "{\"answers\":{\"dept\":"
	  "{\"probabilities\":{\"billing\":123456789012345678901234567890,"
	  "\"technical\":0.2,\"sales\":0.6}},\"urg\":{\"probabilities\":"
	  "{\"0\":0.2,\"1\":0.3,\"2\":0.5}},\"hot\":{\"noul\":0.5}}}",
	  "out of range" },
};

static void
test_misfits(void)
{
	struct backend_answer	 a;
	char			 why[128];
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof(misfits) / sizeof(misfits[0]); i++) {
		strcpy(why, "");
		rc = backend_parse_systemone(misfits[i].body,
		    strlen(misfits[i].body), questions, &a, why, sizeof(why));
		ok(rc == -1 && empty(&a) && strstr(why, misfits[i].reason) !=
		    NULL && strstr(why, "sk-") == NULL, "refused: %s (%s)",
		    misfits[i].name, why);
	}
}

static void
test_odd_input(void)
{
	struct backend_answer	 a;
	char			 why[128], *deep, small[8];
	const char		 nul[] = "{\"answers\":{}}\0{\"x\":1}";
	size_t			 i, n = 10000;
	int			 rc;

	strcpy(why, "");
	ok(backend_parse_systemone("", 0, questions, &a, why,
	    sizeof(why)) == -1 && empty(&a) && strstr(why, "empty") != NULL,
	    "empty body (%s)", why);
	ok(backend_parse_systemone(NULL, 0, questions, &a, why,
	    sizeof(why)) == -1 && empty(&a), "NULL body");
	ok(backend_parse_systemone("   \n", 4, questions, &a, why,
	    sizeof(why)) == -1 && empty(&a), "white space only (%s)", why);
	ok(backend_parse_systemone(nul, sizeof(nul) - 1, questions, &a, why,
	    sizeof(why)) == -1 && empty(&a) && strstr(why, "trailing") !=
	    NULL, "a NUL byte inside (%s)", why);

	/* {"answers": [[[[... 10000 deep: refused by depth, not recursion */
	if ((deep = malloc(n + 32)) == NULL)
		abort();
	strcpy(deep, "{\"answers\":");
	for (i = strlen(deep); i < n; i++)
		deep[i] = '[';
	deep[i] = '\0';
	ok(backend_parse_systemone(deep, strlen(deep), questions, &a, why,
	    sizeof(why)) == -1 && empty(&a) && strstr(why, "deeply") != NULL,
	    "deeply nested garbage (%s)", why);
	/* nesting past the limit in an ignored member is refused too */
	strcpy(deep, "{\"x\":");
	for (i = strlen(deep); i < 5 + 40; i++)
		deep[i] = '[';
	for (; i < 5 + 80; i++)
		deep[i] = ']';
	strcpy(deep + i, "," GOOD_ANSWERS "}");
	ok(backend_parse_systemone(deep, strlen(deep), questions, &a, why,
	    sizeof(why)) == -1 && empty(&a), "nesting of 40 anywhere (%s)",
	    why);
	free(deep);

	/* the body is read to len only: not NUL-terminated input */
	memcpy(small, "{}{}{}{}", 8);
	ok(backend_parse_systemone(small, 2, questions, &a, why,
	    sizeof(why)) == -1 && strstr(why, "no answers") != NULL,
	    "reads len bytes only (%s)", why);

	/* a short why buffer is cut, not overrun */
	memset(why, 'x', sizeof(why));
	rc = backend_parse_systemone("[]", 2, questions, &a, why, 4);
	ok(rc == -1 && why[3] == '\0' && why[4] == 'x', "why is cut to whylen");

	/* a question name with a newline stays one log line */
	{
		json_object	*q = parse("{\"a\\nb\":{\"type\":\"noul\"}}");
		const char	*body = "{\"answers\":{}}";

		ok(backend_parse_systemone(body, strlen(body), q, &a, why,
		    sizeof(why)) == -1 && strchr(why, '\n') == NULL,
		    "control characters leave why (%s)", why);
		json_object_put(q);
	}
}

static void
test_kinds(void)
{
	struct backend		 b;
	struct backend_answer	 a;
	struct error		 e = { 0 };
	json_object		*state;
	double			 sum;
	size_t			 i, j, arity[3] = { 3, 3, 2 };

	ok(backend_kind_find("lexical") == &backend_kind_lexical &&
	    backend_kind_find("systemone") == &backend_kind_systemone,
	    "kinds lexical and systemone known");
	ok(!backend_kind_find("lexical")->remote &&
	    backend_kind_find("systemone")->remote, "  systemone is remote");
	ok(backend_kind_at(0) == &backend_kind_lexical &&
	    backend_kind_at(1) == &backend_kind_systemone &&
	    backend_kind_at(2) == backend_kind_find("openai") &&
	    backend_kind_at(3) == NULL, "  listed in that order, openai last");
	ok(backend_kind_find("open") == NULL &&
	    backend_kind_find("") == NULL && backend_kind_find(NULL) == NULL,
	    "others unknown");

	memset(&b, 0, sizeof(b));
	snprintf(b.name, sizeof(b.name), "offline");
	snprintf(b.kind, sizeof(b.kind), "lexical");
	state = json_object_new_string("Please fix the billing of my"
	    " invoice, it is urgent");
	ok(backend_evaluate(NULL, NULL, &b, state, questions, &a, &e) == 0,
	    "lexical evaluates");
	ok(a.nquestions == 3 && a.has_usage && a.input_tokens > 0 &&
	    a.output_tokens == 3 && a.replica[0] == '\0',
	    "  with usage (%lld, %lld)", (long long)a.input_tokens,
	    (long long)a.output_tokens);
	for (i = 0; i < a.nquestions; i++) {
		for (sum = 0, j = 0; j < arity[i]; j++)
			sum += a.dist[i][j];
		is_num(sum, 1, 1e-9, "  distribution sums to 1");
	}
	ok(a.dist[0][0] > a.dist[0][1] && a.dist[0][0] > a.dist[0][2],
	    "  'billing' wins");
	backend_answer_free(&a);
	json_object_put(state);

	state = parse("{\"text\":\"technical fault\"}");
	ok(backend_evaluate(NULL, NULL, &b, state, questions, &a, &e) == 0 &&
	    a.dist[0][1] > a.dist[0][0], "object state as JSON text");
	backend_answer_free(&a);
	json_object_put(state);

	snprintf(b.kind, sizeof(b.kind), "nosuch");
	state = json_object_new_string("x");
	ok(backend_evaluate(NULL, NULL, &b, state, questions, &a, &e) == -1 &&
	    e.code == ERR_INTERNAL && empty(&a), "unknown kind: internal");
	error_clear(&e);

	snprintf(b.kind, sizeof(b.kind), "systemone");
	ok(backend_evaluate(NULL, NULL, &b, state, questions, &a, &e) == -1 &&
	    e.code == ERR_BACKEND_UNAVAILABLE && e.retry_after_ms > 0 &&
	    empty(&a), "systemone without replicas: unavailable (%s)",
	    e.message);
	error_clear(&e);
	json_object_put(state);
	backend_cleanup();
	backend_cleanup();
	ok(1, "backend_cleanup is idempotent");
}

/* backend_parse_json(): one tokener parses every upstream body; one
 * cut short, nested or after half of a surrogate pair, leaves nothing
 * behind for the next. */
static void
test_kept_tokener(void)
{
	json_object	*o, *v;
	const char	*s;
	char		 why[128];

	ok(backend_parse_json("{\"a\": [{\"b\": [1,", 16, why,
	    sizeof(why)) == NULL, "a body cut short: refused (%s)", why);
	o = backend_parse_json("{\"c\": 2}", 8, why, sizeof(why));
	ok(o != NULL && json_object_object_length(o) == 1 &&
	    json_object_object_get_ex(o, "c", NULL), "  the next body whole");
	json_object_put(o);
	ok(backend_parse_json("{\"a\": \"\\ud83d", 13, why,
	    sizeof(why)) == NULL, "a body cut after \\ud83d: refused");
	o = backend_parse_json("{\"s\": \"\\ude00x\"}", 16, why, sizeof(why));
	s = o != NULL && json_object_object_get_ex(o, "s", &v) ?
	    json_object_get_string(v) : NULL;
	/* json-c keeps the lone low half as U+FFFD */
	ok(s != NULL && strcmp(s, "\xef\xbf\xbdx") == 0,
	    "  the next body's \\ude00 its own character");
	json_object_put(o);
	o = backend_parse_json("{\"d\": 3}", 8, why, sizeof(why));
	ok(o != NULL && json_object_object_get_ex(o, "d", NULL),
	    "  and after a body taken whole, the next");
	json_object_put(o);
}

int
main(void)
{
	questions = parse("{"
	    "\"dept\":{\"type\":\"choice\",\"instructions\":\"Which team?\","
	    "\"criteria\":{\"billing\":\"invoices and payments\","
	    "\"technical\":\"faults\",\"sales\":null}},"
	    "\"urg\":{\"type\":\"score\",\"criteria\":[\"low\",\"mid\","
	    "\"high\"]},"
	    "\"hot\":{\"type\":\"noul\",\"instructions\":null}}");
	test_good();
	test_misfits();
	test_odd_input();
	test_kinds();
	test_kept_tokener();
	json_object_put(questions);
	return tap_done();
}
