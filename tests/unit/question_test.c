/* question_test.c: TAP tests of question.c — every refusal of
 * question_validate() with its field path, the liberal acceptances of
 * doc/design.md, section 5.1, the state size limit, the structural fingerprint
 * and outcome checks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "error.h"
#include "question.h"
#include "tap.h"

#define MAXQ	32

static const char *
detail(const struct error *e, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(e->details, key, &v))
		return NULL;
	return json_object_get_string(v);
}

/* questions refused with ERR_VALIDATION on field. */
static void
refused(const char *questions, int max, const char *field, const char *name)
{
	struct error	 e = { 0 };
	json_object	*q = parse(questions);
	int		 rc;

	rc = question_validate(q, max, &e);
	ok(rc == -1 && e.code == ERR_VALIDATION, "refused: %s", name);
	is_str(detail(&e, "field"), field, "  field path");
	ok(detail(&e, "reason") != NULL && *detail(&e, "reason") != '\0',
	    "  has a reason");
	error_clear(&e);
	json_object_put(q);
}

static void
accepted(const char *questions, const char *name)
{
	struct error	 e = { 0 };
	json_object	*q = parse(questions);
	int		 rc;

	rc = question_validate(q, MAXQ, &e);
	if (!ok(rc == 0 && e.code == ERR_NONE, "accepted: %s", name))
		printf("#   %s\n", e.message);
	error_clear(&e);
	json_object_put(q);
}

/* {"q": {"type":"choice","criteria":{"o0":null,...}}} with n options. */
static char *
choice_with(size_t n)
{
	size_t	 i, cap = 64 + n * 16, len;
	char	*s = malloc(cap);

	strcpy(s, "{\"q\":{\"type\":\"choice\",\"criteria\":{");
	for (i = 0; i < n; i++) {
		len = strlen(s);
		snprintf(s + len, cap - len, "%s\"o%zu\":null",
		    i ? "," : "", i);
	}
	strcat(s, "}}}");
	return s;
}

static char *
score_with(size_t n)
{
	size_t	 i, cap = 64 + n * 16, len;
	char	*s = malloc(cap);

	strcpy(s, "{\"q\":{\"type\":\"score\",\"criteria\":[");
	for (i = 0; i < n; i++) {
		len = strlen(s);
		snprintf(s + len, cap - len, "%s\"l%zu\"", i ? "," : "", i);
	}
	strcat(s, "]}}");
	return s;
}

static void
test_refusals(void)
{
	struct error	 e = { 0 };
	char		*s;

	ok(question_validate(NULL, MAXQ, &e) == -1 &&
	    e.code == ERR_VALIDATION, "refused: missing questions");
	is_str(detail(&e, "field"), "questions", "  field path");
	error_clear(&e);

	refused("[]", MAXQ, "questions", "questions an array");
	refused("\"x\"", MAXQ, "questions", "questions a string");
	refused("{}", MAXQ, "questions", "questions empty");
	refused("{\"a\":{\"type\":\"noul\"},\"b\":{\"type\":\"noul\"},"
	    "\"c\":{\"type\":\"noul\"}}", 2, "questions", "over max_questions");
	refused("{\"\":{\"type\":\"noul\"}}", MAXQ, "questions", "empty name");
	refused("{\"q\":1}", MAXQ, "questions.q", "question a number");
	refused("{\"q\":\"choice\"}", MAXQ, "questions.q", "question a string");
	refused("{\"q\":[]}", MAXQ, "questions.q", "question an array");
	refused("{\"q\":null}", MAXQ, "questions.q", "question null");
	refused("{\"q\":{\"criteria\":{\"a\":null}}}", MAXQ,
	    "questions.q.type", "type missing");
	refused("{\"q\":{\"type\":null}}", MAXQ, "questions.q.type",
	    "type null");
	refused("{\"q\":{\"type\":3}}", MAXQ, "questions.q.type",
	    "type a number");
	refused("{\"q\":{\"type\":\"multi\"}}", MAXQ, "questions.q.type",
	    "unknown type");
	refused("{\"q\":{\"type\":\"Choice\",\"criteria\":{\"a\":null}}}",
	    MAXQ, "questions.q.type", "type is case sensitive");
	refused("{\"q\":{\"type\":\"noul\",\"instructions\":5}}", MAXQ,
	    "questions.q.instructions", "instructions a number");
	refused("{\"q\":{\"type\":\"noul\",\"instructions\":true}}", MAXQ,
	    "questions.q.instructions", "instructions a boolean");

	/* choice */
	refused("{\"q\":{\"type\":\"choice\"}}", MAXQ, "questions.q.criteria",
	    "choice without criteria");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":null}}", MAXQ,
	    "questions.q.criteria", "choice criteria null");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":[\"a\",\"b\"]}}",
	    MAXQ, "questions.q.criteria", "choice criteria an array");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":\"a\"}}", MAXQ,
	    "questions.q.criteria", "choice criteria a string");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":{}}}", MAXQ,
	    "questions.q.criteria", "choice criteria empty");
	s = choice_with(256);
	refused(s, MAXQ, "questions.q.criteria", "choice with 256 options");
	free(s);
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":null,"
	    "\"\":null}}}", MAXQ, "questions.q.criteria", "empty option key");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":null,"
	    "\"b\":5}}}", MAXQ, "questions.q.criteria.b",
	    "option description a number");
	refused("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":false}}}",
	    MAXQ, "questions.q.criteria.a", "option description a boolean");

	/* score */
	refused("{\"q\":{\"type\":\"score\"}}", MAXQ, "questions.q.criteria",
	    "score without criteria");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":{\"0\":\"low\","
	    "\"1\":\"high\"}}}", MAXQ, "questions.q.criteria",
	    "score criteria an object (old form)");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":\"low\"}}", MAXQ,
	    "questions.q.criteria", "score criteria a string");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":[]}}", MAXQ,
	    "questions.q.criteria", "score with 0 levels");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":[\"only\"]}}", MAXQ,
	    "questions.q.criteria", "score with 1 level");
	s = score_with(11);
	refused(s, MAXQ, "questions.q.criteria", "score with 11 levels");
	free(s);
	refused("{\"q\":{\"type\":\"score\",\"criteria\":[\"a\",\"b\",\"c\","
	    "4]}}", MAXQ, "questions.q.criteria[3]", "level 3 a number");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":[null,\"b\"]}}",
	    MAXQ, "questions.q.criteria[0]", "level 0 null");
	refused("{\"q\":{\"type\":\"score\",\"criteria\":[\"a\",{\"b\":1}]}}",
	    MAXQ, "questions.q.criteria[1]", "level 1 an object");

	/* noul */
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":\"yes\"}}", MAXQ,
	    "questions.q.criteria", "noul criteria a string");
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":[\"y\",\"n\"]}}",
	    MAXQ, "questions.q.criteria", "noul criteria an array");
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":true}}", MAXQ,
	    "questions.q.criteria", "noul criteria a boolean");
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":{\"true\":\"y\","
	    "\"maybe\":\"m\"}}}", MAXQ, "questions.q.criteria.maybe",
	    "noul criteria with another key");
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":{\"True\":\"y\"}}}",
	    MAXQ, "questions.q.criteria.True", "noul key is case sensitive");
	refused("{\"q\":{\"type\":\"noul\",\"criteria\":{\"true\":1}}}",
	    MAXQ, "questions.q.criteria.true", "noul description a number");

	/* the path names the offending question, whatever its name */
	refused("{\"ok\":{\"type\":\"noul\"},\"my m\xc3\xa9.od\":"
	    "{\"type\":\"x\"}}", MAXQ, "questions.my m\xc3\xa9.od.type",
	    "path with spaces, dots and UTF-8");
	refused("{\"ok\":{\"type\":\"noul\"},\"bad\":{\"type\":\"choice\","
	    "\"criteria\":{\"a b.c\":7}}}", MAXQ,
	    "questions.bad.criteria.a b.c", "path with an odd option key");
}

static void
test_acceptances(void)
{
	char	*s;

	accepted("{\"my mood \xc3\xa9t\xc3\xa9.v2\":{\"type\":\"noul\"}}",
	    "name with spaces, dots, UTF-8");
	accepted("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":null}}}",
	    "instructions omitted, one option, null description");
	accepted("{\"q\":{\"type\":\"choice\",\"instructions\":null,"
	    "\"criteria\":{\"a\":\"x\"}}}", "instructions null");
	accepted("{\"q\":{\"type\":\"choice\",\"instructions\":\"Pick\","
	    "\"criteria\":{\"a\":\"x\"}}}", "instructions a string");
	accepted("{\"q\":{\"type\":\"choice\",\"instructions\":{\"en\":\"P\"},"
	    "\"criteria\":{\"a\":\"x\"}}}", "instructions an object");
	accepted("{\"q\":{\"type\":\"choice\",\"instructions\":[\"P\",1],"
	    "\"criteria\":{\"a\":\"x\"}}}", "instructions an array");
	accepted("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":{\"d\":1},"
	    "\"b\":[1,2],\"c\":\"t\",\"d\":null,\"\xc3\xa9 x.y\":null}}}",
	    "descriptions of every text shape, odd option keys");
	s = choice_with(255);
	accepted(s, "choice with 255 options");
	free(s);
	s = score_with(2);
	accepted(s, "score with 2 levels");
	free(s);
	s = score_with(10);
	accepted(s, "score with 10 levels");
	free(s);
	accepted("{\"q\":{\"type\":\"score\",\"criteria\":[\"\",\"same\","
	    "\"same\"]}}", "score levels empty or repeated");
	accepted("{\"q\":{\"type\":\"noul\"}}", "noul without criteria");
	accepted("{\"q\":{\"type\":\"noul\",\"criteria\":null}}",
	    "noul criteria null");
	accepted("{\"q\":{\"type\":\"noul\",\"criteria\":{}}}",
	    "noul criteria empty");
	accepted("{\"q\":{\"type\":\"noul\",\"criteria\":{\"true\":\"y\"}}}",
	    "noul with only true");
	accepted("{\"q\":{\"type\":\"noul\",\"criteria\":{\"false\":null}}}",
	    "noul with only false");
	accepted("{\"q\":{\"type\":\"noul\",\"criteria\":{\"true\":[1],"
	    "\"false\":{\"a\":1}}}}", "noul with both, any text shape");
	accepted("{\"q\":{\"type\":\"noul\",\"extra\":1,\"weight\":[]}}",
	    "unknown members ignored");
	accepted("{\"a\":{\"type\":\"noul\"},\"b\":{\"type\":\"noul\"}}",
	    "exactly max_questions (2 of 2)");
	{
		struct error	 e = { 0 };
		json_object	*q = parse("{\"a\":{\"type\":\"noul\"},"
		    "\"b\":{\"type\":\"noul\"}}");

		ok(question_validate(q, 2, &e) == 0, "2 questions, max 2");
		error_clear(&e);
		json_object_put(q);
	}
}

static void
state_case(const char *json, long max, int want, const char *name)
{
	struct error	 e = { 0 };
	json_object	*s = parse(json);
	int		 rc;

	rc = question_validate_state(s, max, &e);
	if (want == 0)
		ok(rc == 0, "state accepted: %s", name);
	else {
		ok(rc == -1 && e.code == ERR_VALIDATION,
		    "state refused: %s", name);
		is_str(detail(&e, "field"), "state", "  field path");
	}
	error_clear(&e);
	json_object_put(s);
}

static void
test_state(void)
{
	struct error	 e = { 0 };

	state_case("\"abc\"", 3, 0, "3 ASCII chars, max 3");
	state_case("\"abcd\"", 3, -1, "4 ASCII chars, max 3");
	state_case("\"\"", 0, 0, "empty string, max 0");
	/* é is 2 bytes, 😀 4 bytes: code points count, not bytes */
	state_case("\"\xc3\xa9\xc3\xa9\xc3\xa9\"", 3, 0, "3 two-byte chars");
	state_case("\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"", 3, -1,
	    "4 two-byte chars");
	state_case("\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"", 2, 0,
	    "2 four-byte chars, max 2");
	state_case("\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"", 1, -1,
	    "2 four-byte chars, max 1");
	state_case("\"\\ud83d\\ude00\"", 1, 0, "escaped surrogate pair");
	/* {"a":"é"} is 9 characters of compact JSON */
	state_case("{ \"a\" : \"\xc3\xa9\" }", 9, 0, "object of 9 chars");
	state_case("{ \"a\" : \"\xc3\xa9\" }", 8, -1, "object of 9, max 8");
	state_case("[1, 2]", 5, 0, "array [1,2] of 5 chars");
	state_case("[1, 2]", 4, -1, "array [1,2], max 4");
	state_case("{\"u\":\"a/b\"}", 11, 0, "slashes not escaped");
	state_case("[]", 2, 0, "empty array");
	state_case("42", 100, -1, "a number");
	state_case("1.5", 100, -1, "a double");
	state_case("true", 100, -1, "a boolean");
	state_case("null", 100, -1, "null");
	ok(question_validate_state(NULL, 100, &e) == -1 &&
	    e.code == ERR_VALIDATION, "state refused: missing");
	error_clear(&e);
}

/* Every fingerprint below is made through kept_fp too, one after the
 * other as a worker makes them (the same questions again, others of
 * the same length): how often the two differed. */
static struct question_kept	 kept_fp;
static size_t			 kept_calls, kept_wrong;

static void
fp_of(const char *json, char hex[65])
{
	json_object	*q = parse(json);
	struct error	 e = { 0 };
	char		 k[65];
	int		 i;

	if (question_validate(q, 1000, &e) != 0)
		printf("# fingerprint input invalid: %s\n", e.message);
	error_clear(&e);
	question_fingerprint(q, hex);
	for (i = 0; i < 2; i++) {	/* made, then kept */
		question_fingerprint_kept(q, k, &kept_fp);
		kept_calls++;
		if (strcmp(k, hex) != 0 && kept_wrong++ == 0)
			printf("# kept %s for %s\n", k, json);
	}
	json_object_put(q);
}

#define BASE_MOOD "\"mood\":{\"type\":\"choice\",\"instructions\":\"How?\"," \
	"\"criteria\":{\"happy\":\"h\",\"sad\":\"s\"}}"
#define BASE_LEVEL "\"level\":{\"type\":\"score\",\"criteria\":" \
	"[\"low\",\"mid\",\"high\"]}"
#define BASE_OK "\"ok\":{\"type\":\"noul\"}"
#define BASE_ODD "\"\xc3\xa9 q.x\":{\"type\":\"choice\",\"criteria\":" \
	"{\"Z\xc3\xa9\":null,\"a\":null}}"

static void
same_fp(const char *base, const char *other, const char *name)
{
	char	 a[65], b[65];

	fp_of(base, a);
	fp_of(other, b);
	if (!ok(strcmp(a, b) == 0, "fingerprint unchanged: %s", name))
		printf("#   %s\n#   %s\n", a, b);
}

static void
diff_fp(const char *base, const char *other, const char *name)
{
	char	 a[65], b[65];

	fp_of(base, a);
	fp_of(other, b);
	ok(strcmp(a, b) != 0, "fingerprint changed: %s", name);
}

/* n noul questions named q0..q(n-1), inserted forwards or backwards. */
static void
many_fp(size_t n, int backwards, char hex[65])
{
	json_object	*qs = json_object_new_object();
	char		 name[32];
	size_t		 i, k;

	for (i = 0; i < n; i++) {
		json_object	*q = json_object_new_object();

		k = backwards ? n - 1 - i : i;
		json_object_object_add(q, "type",
		    json_object_new_string("noul"));
		snprintf(name, sizeof(name), "q%zu", k);
		json_object_object_add(qs, name, q);
	}
	question_fingerprint(qs, hex);
	json_object_put(qs);
}

/* question_fingerprint_kept(): as question_fingerprint() whatever came
 * before (fp_of() above); an encoding too large to keep is hashed as
 * it is, and what was kept stays. */
static void
test_fingerprint_kept(void)
{
	json_object	*qs = json_object_new_object(), *q;
	char		 name[64], a[65], b[65], before[65];
	size_t		 i, len;

	ok(kept_calls > 0 && kept_wrong == 0, "question_fingerprint_kept as"
	    " question_fingerprint, one after the other (%zu of %zu not)",
	    kept_wrong, kept_calls);
	memcpy(before, kept_fp.hex, sizeof(before));
	len = kept_fp.last.len;
	for (i = 0; i < 2000; i++) {	/* past QUESTION_KEPT_MAX */
		q = json_object_new_object();
		json_object_object_add(q, "type",
		    json_object_new_string("noul"));
		snprintf(name, sizeof(name), "question number %04zu with a "
		    "long name", i);
		json_object_object_add(qs, name, q);
	}
	question_fingerprint(qs, a);
	question_fingerprint_kept(qs, b, &kept_fp);
	ok(strcmp(a, b) == 0 && strcmp(kept_fp.hex, before) == 0 &&
	    kept_fp.last.len == len, "an encoding past QUESTION_KEPT_MAX: "
	    "hashed, nothing kept");
	json_object_put(qs);
	question_kept_free(&kept_fp);
}

static void
test_fingerprint(void)
{
	const char	*base = "{" BASE_MOOD "," BASE_LEVEL "," BASE_OK ","
	    BASE_ODD "}";
	char		 hex[65], a[65], b[65];
	size_t		 i;

	fp_of(base, hex);
	ok(strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64,
	    "fingerprint is 64 lowercase hex digits");
	/* the documented encoding, computed independently (Python) */
	is_str(hex, "8334730dfa2961e6db4a3e05db63e2fab2b006f74812e26e"
	    "7ad868230236590f", "fingerprint matches the documented encoding");

	same_fp(base, "{" BASE_OK "," BASE_ODD "," BASE_LEVEL "," BASE_MOOD
	    "}", "questions in another order");
	same_fp(base, "{\"mood\":{\"type\":\"choice\",\"instructions\":"
	    "{\"text\":\"Tell me the mood\"},\"criteria\":{\"happy\":"
	    "\"very glad\",\"sad\":[\"down\"]}}," BASE_LEVEL "," BASE_OK ","
	    BASE_ODD "}", "instructions and descriptions reworded");
	same_fp(base, "{\"mood\":{\"type\":\"choice\",\"criteria\":"
	    "{\"sad\":null,\"happy\":null}}," BASE_LEVEL "," BASE_OK ","
	    BASE_ODD "}", "option order, no texts");
	same_fp(base, "{" BASE_MOOD "," BASE_LEVEL ",\"ok\":{\"type\":"
	    "\"noul\",\"instructions\":\"Fine?\",\"criteria\":{\"true\":"
	    "\"yes\",\"false\":\"no\"}}," BASE_ODD "}",
	    "noul descriptions added");
	same_fp(base, "{" BASE_MOOD ",\"level\":{\"type\":\"score\","
	    "\"instructions\":\"Rate\",\"criteria\":[\"low\",\"mid\","
	    "\"high\"],\"extra\":1}," BASE_OK "," BASE_ODD "}",
	    "score instructions and unknown member added");

	diff_fp(base, "{\"mood\":{\"type\":\"choice\",\"criteria\":"
	    "{\"happy\":null,\"sad\":null,\"meh\":null}}," BASE_LEVEL ","
	    BASE_OK "," BASE_ODD "}", "option added");
	diff_fp(base, "{\"mood\":{\"type\":\"choice\",\"criteria\":"
	    "{\"happy\":null,\"Sad\":null}}," BASE_LEVEL "," BASE_OK ","
	    BASE_ODD "}", "option key renamed (case)");
	diff_fp(base, "{" BASE_MOOD ",\"level\":{\"type\":\"score\","
	    "\"criteria\":[\"low\",\"mid\",\"high\",\"top\"]}," BASE_OK ","
	    BASE_ODD "}", "level added");
	diff_fp(base, "{" BASE_MOOD ",\"level\":{\"type\":\"score\","
	    "\"criteria\":[\"low\",\"high\",\"mid\"]}," BASE_OK ","
	    BASE_ODD "}", "level order changed");
	diff_fp(base, "{" BASE_MOOD ",\"level\":{\"type\":\"score\","
	    "\"criteria\":[\"low\",\"mid\",\"High\"]}," BASE_OK ","
	    BASE_ODD "}", "level relabelled");
	diff_fp(base, "{" BASE_MOOD "," BASE_LEVEL "," BASE_OK ","
	    BASE_ODD ",\"new\":{\"type\":\"noul\"}}", "question added");
	diff_fp(base, "{" BASE_MOOD "," BASE_LEVEL ",\"ok2\":{\"type\":"
	    "\"noul\"}," BASE_ODD "}", "question renamed");
	diff_fp(base, "{" BASE_MOOD "," BASE_LEVEL "," BASE_ODD "}",
	    "question removed");
	diff_fp("{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":null,"
	    "\"b\":null}}}", "{\"q\":{\"type\":\"score\",\"criteria\":"
	    "[\"a\",\"b\"]}}", "choice vs score with the same keys");
	diff_fp("{\"q\":{\"type\":\"noul\"}}", "{\"q\":{\"type\":\"choice\","
	    "\"criteria\":{\"true\":null,\"false\":null}}}",
	    "noul vs choice true/false");
	diff_fp("{\"q\":{\"type\":\"choice\",\"criteria\":{\"ab\":null,"
	    "\"c\":null}}}", "{\"q\":{\"type\":\"choice\",\"criteria\":"
	    "{\"a\":null,\"bc\":null}}}", "unambiguous: ab|c vs a|bc");
	diff_fp("{\"q\":{\"type\":\"score\",\"criteria\":[\"a b\",\"c\"]}}",
	    "{\"q\":{\"type\":\"score\",\"criteria\":[\"a\",\"b c\"]}}",
	    "unambiguous: levels split differently");
	diff_fp("{\"a\":{\"type\":\"noul\"},\"b\":{\"type\":\"noul\"}}",
	    "{\"ab\":{\"type\":\"noul\"}}", "unambiguous: names split");

	/* more than the sorting buffer holds: same order either way */
	many_fp(300, 0, a);
	many_fp(300, 1, b);
	is_str(a, b, "300 questions: insertion order does not matter");
	many_fp(299, 0, b);
	ok(strcmp(a, b) != 0, "300 vs 299 questions differ");
	many_fp(20, 0, a);
	many_fp(20, 1, b);
	is_str(a, b, "20 questions: insertion order does not matter");

	/* deterministic across calls */
	for (i = 0; i < 3; i++)
		fp_of(base, a);
	is_str(a, hex, "repeatable");
}

static void
outcome_case(json_object *q, const char *value, int want, const char *name)
{
	struct error	 e = { 0 };
	json_object	*v = parse(value);
	int		 rc;

	rc = question_check_outcome(q, v, "answers.x", &e);
	if (want == 0)
		ok(rc == 0, "outcome accepted: %s", name);
	else {
		ok(rc == -1 && e.code == ERR_VALIDATION,
		    "outcome refused: %s", name);
		is_str(detail(&e, "field"), "answers.x", "  field path");
	}
	error_clear(&e);
	json_object_put(v);
}

static void
test_outcomes(void)
{
	json_object	*c, *s, *n, *bad;

	c = parse("{\"type\":\"choice\",\"criteria\":{\"happy\":null,"
	    "\"sad\":\"s\",\"\xc3\xa9t\xc3\xa9\":null}}");
	s = parse("{\"type\":\"score\",\"criteria\":[\"low\",\"mid\","
	    "\"high\"]}");
	n = parse("{\"type\":\"noul\"}");
	bad = parse("{\"type\":\"nope\"}");

	ok(question_type(c) == Q_CHOICE && question_type(s) == Q_SCORE &&
	    question_type(n) == Q_NOUL && question_type(bad) == Q__MAX,
	    "question_type");
	is_str(question_type_name(Q_CHOICE), "choice", "type name choice");
	is_str(question_type_name(Q_SCORE), "score", "type name score");
	is_str(question_type_name(Q_NOUL), "noul", "type name noul");
	ok(question_type_name(Q__MAX) == NULL, "type name of Q__MAX");
	ok(question_arity(c) == 3, "arity of a 3-option choice");
	ok(question_arity(s) == 3, "arity of a 3-level score");
	ok(question_arity(n) == 2, "arity of a noul");
	ok(question_arity(bad) == 0, "arity of an invalid question");
	{
		size_t	 a[4] = { 9, 9, 9, 9 };

		ok(question_shape(c, &a[0]) == Q_CHOICE && a[0] == 3 &&
		    question_shape(s, &a[1]) == Q_SCORE && a[1] == 3 &&
		    question_shape(n, &a[2]) == Q_NOUL && a[2] == 2 &&
		    question_shape(bad, &a[3]) == Q__MAX && a[3] == 0,
		    "question_shape: the type and the arity");
	}

	outcome_case(c, "\"happy\"", 0, "choice key");
	outcome_case(c, "\"\xc3\xa9t\xc3\xa9\"", 0, "choice UTF-8 key");
	outcome_case(c, "\"Happy\"", -1, "choice key with wrong case");
	outcome_case(c, "\"angry\"", -1, "choice unknown key");
	outcome_case(c, "\"happy\\u0000x\"", -1, "choice key with a NUL");
	outcome_case(c, "0", -1, "choice index instead of key");
	outcome_case(c, "null", -1, "choice null");
	outcome_case(c, "[\"happy\"]", -1, "choice array");

	outcome_case(n, "true", 0, "noul true");
	outcome_case(n, "false", 0, "noul false");
	outcome_case(n, "\"true\"", -1, "noul string");
	outcome_case(n, "1", -1, "noul integer");
	outcome_case(n, "null", -1, "noul null");

	outcome_case(s, "0", 0, "score 0");
	outcome_case(s, "2", 0, "score 2 (last level)");
	outcome_case(s, "3", -1, "score 3 out of range");
	outcome_case(s, "-1", -1, "score -1");
	outcome_case(s, "1.0", -1, "score 1.0 (a double)");
	outcome_case(s, "\"1\"", -1, "score string");
	outcome_case(s, "true", -1, "score boolean");
	outcome_case(s, "18446744073709551615", -1, "score huge integer");
	outcome_case(bad, "\"x\"", -1, "question of unknown type");

	json_object_put(c);
	json_object_put(s);
	json_object_put(n);
	json_object_put(bad);
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	test_refusals();
	test_acceptances();
	test_state();
	test_fingerprint();
	test_fingerprint_kept();
	test_outcomes();
	return tap_done();
}
