/* answer_test.c: TAP tests of answer.c against hand-computed values —
 * renormalisation and its refusals, temperature, the answer objects of
 * every type, abstention at the threshold boundary, extreme temperatures,
 * and the serialised form of the numbers; the text answer_write() and
 * answer_distribution_write() make, byte for byte what json-c writes. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "answer.h"
#include "buf.h"
#include "json_util.h"
#include "question.h"
#include "tap.h"

#define EPS	1e-12

static const char *
text(json_object *o)
{
	return o == NULL ? "(null)" :
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

static double
dbl(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v))
		return NAN;
	return json_object_get_double(v);
}

static double
dbl2(json_object *o, const char *key, const char *key2)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v))
		return NAN;
	return dbl(v, key2);
}

static int
abstains(json_object *o)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, "x_abstain", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return -1;
	return json_object_get_boolean(v);
}

static int
all_finite(const double *q, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (!isfinite(q[i]) || q[i] < 0)
			return 0;
	return 1;
}

static void
test_normalise(void)
{
	double	 p[4];
	double	 nan3[3] = { 0.5, NAN, 0.5 };
	double	 inf3[3] = { 0.5, INFINITY, 0.5 };
	double	 neg3[3] = { 0.5, -0.1, 0.6 };
	double	 zero3[3] = { 0, 0, 0 };
	double	 big[2] = { 1e308, 1e308 };

	p[0] = 2, p[1] = 1, p[2] = 1;
	ok(answer_normalise(p, 3) == 0, "normalise (2,1,1)");
	is_num(p[0], 0.5, 0, "  -> 0.5");
	is_num(p[1], 0.25, 0, "  -> 0.25");
	is_num(p[2], 0.25, 0, "  -> 0.25");

	p[0] = 0.5, p[1] = 0.3, p[2] = 0.2;
	ok(answer_normalise(p, 3) == 0, "normalise an already normal p");
	is_num(p[0], 0.5, EPS, "  0.5 kept");
	is_num(p[1], 0.3, EPS, "  0.3 kept");
	is_num(p[2], 0.2, EPS, "  0.2 kept");

	p[0] = 0, p[1] = 3;
	ok(answer_normalise(p, 2) == 0 && p[0] == 0 && p[1] == 1,
	    "normalise (0,3) -> (0,1)");
	p[0] = -0.0, p[1] = 1;
	ok(answer_normalise(p, 2) == 0 && p[0] == 0 && !signbit(p[0]),
	    "negative zero accepted, becomes +0");

	ok(answer_normalise(nan3, 3) == -1, "refuses NaN");
	ok(isnan(nan3[1]) && nan3[0] == 0.5, "  p untouched");
	ok(answer_normalise(inf3, 3) == -1, "refuses infinity");
	ok(answer_normalise(neg3, 3) == -1, "refuses a negative value");
	ok(neg3[0] == 0.5 && neg3[2] == 0.6, "  p untouched");
	ok(answer_normalise(zero3, 3) == -1, "refuses all zeros");
	ok(answer_normalise(p, 0) == -1, "refuses n = 0");
	ok(answer_normalise(NULL, 2) == -1, "refuses NULL");
	ok(answer_normalise(big, 2) == 0, "huge values whose sum overflows");
	is_num(big[0], 0.5, EPS, "  -> 0.5");
	is_num(big[1], 0.5, EPS, "  -> 0.5");
}

static void
test_temper(void)
{
	const double	 p[3] = { 0.5, 0.3, 0.2 };
	double		 q[3], r[3], s[2];
	double		 z[3] = { 0.5, 0.5, 0 };
	size_t		 i;

	answer_temper(p, 3, 1, q);
	ok(q[0] == 0.5 && q[1] == 0.3 && q[2] == 0.2,
	    "T = 1 leaves p unchanged");

	/* T = 2: q_i = sqrt(p_i) / sum_j sqrt(p_j).
	 * sqrt(0.5) = 0.70710678118654752, sqrt(0.3) = 0.54772255750516611,
	 * sqrt(0.2) = 0.44721359549995794; sum = 1.70204293419167157;
	 * 0.70710678118654752 / 1.70204293419167157 = 0.41544591325034011
	 * 0.54772255750516611 / 1.70204293419167157 = 0.32180302065369969
	 * 0.44721359549995794 / 1.70204293419167157 = 0.26275106609596020 */
	answer_temper(p, 3, 2, q);
	is_num(q[0], 0.41544591325034011, EPS, "T = 2: q0");
	is_num(q[1], 0.32180302065369969, EPS, "T = 2: q1");
	is_num(q[2], 0.26275106609596020, EPS, "T = 2: q2");

	/* T = 0.5: q_i = p_i^2 / sum: (0.25, 0.09, 0.04) / 0.38 */
	answer_temper(p, 3, 0.5, q);
	is_num(q[0], 0.25 / 0.38, EPS, "T = 0.5: q0 = 0.25/0.38");
	is_num(q[1], 0.09 / 0.38, EPS, "T = 0.5: q1 = 0.09/0.38");
	is_num(q[2], 0.04 / 0.38, EPS, "T = 0.5: q2 = 0.04/0.38");
	is_num(q[0] + q[1] + q[2], 1, EPS, "T = 0.5: sums to 1");

	/* T = 0.05: q_i = p_i^20 / sum; relative to 0.5: (1, 0.6^20, 0.4^20)
	 * = (1, 3.6561584400629760e-05, 1.0995116277760000e-08) */
	answer_temper(p, 3, 0.05, q);
	ok(all_finite(q, 3), "T = 0.05: finite");
	is_num(q[0], 0.99996342875798775, EPS, "T = 0.05: q0");
	is_num(q[1], 3.6560247298078293e-05, EPS, "T = 0.05: q1");
	is_num(q[2], 1.0994714172701653e-08, EPS, "T = 0.05: q2");

	/* powers that underflow: the largest stays 1, no 0/0 */
	s[0] = 0.999999, s[1] = 1e-6;
	answer_temper(s, 2, 0.001, s);
	ok(all_finite(s, 2) && s[0] == 1 && s[1] == 0,
	    "T = 0.001 on (0.999999, 1e-6): (1, 0)");
	r[0] = 1.0 / 3, r[1] = 1.0 / 3, r[2] = 1.0 / 3;
	answer_temper(r, 3, 1e-300, q);
	ok(all_finite(q, 3), "T = 1e-300 on a uniform p: finite");
	is_num(q[0], 1.0 / 3, EPS, "  stays uniform");
	r[0] = 0.4, r[1] = 0.35, r[2] = 0.25;
	answer_temper(r, 3, 1e-300, q);
	ok(q[0] == 1 && q[1] == 0 && q[2] == 0, "T = 1e-300: argmax takes all");
	answer_temper(r, 3, 1e300, q);
	is_num(q[1], 1.0 / 3, 1e-9, "T = 1e300: uniform");

	/* zeros stay zero */
	answer_temper(z, 3, 0.5, q);
	ok(q[0] == 0.5 && q[1] == 0.5 && q[2] == 0, "T = 0.5: zero stays 0");
	answer_temper(z, 3, 3, q);
	ok(q[0] == 0.5 && q[1] == 0.5 && q[2] == 0, "T = 3: zero stays 0");

	/* in place */
	for (i = 0; i < 3; i++)
		r[i] = p[i];
	answer_temper(r, 3, 2, r);
	is_num(r[0], 0.41544591325034011, EPS, "in place (q == p)");

	/* bad T is taken as 1 */
	answer_temper(p, 3, 0, q);
	ok(q[1] == 0.3, "T = 0 taken as 1");
	answer_temper(p, 3, -2, q);
	ok(q[1] == 0.3, "T < 0 taken as 1");
	answer_temper(p, 3, NAN, q);
	ok(q[1] == 0.3, "T = NaN taken as 1");
}

static void
test_choice(void)
{
	json_object	*q, *a;
	const double	 p[3] = { 0.2, 0.5, 0.3 };
	const double	 tie[3] = { 0.4, 0.4, 0.2 };
	const double	 exact[3] = { 0.25, 0.5, 0.25 };
	const double	 one[1] = { 1 };

	q = parse("{\"type\":\"choice\",\"instructions\":\"Mood?\","
	    "\"criteria\":{\"happy\":null,\"sad\":\"down\",\"meh\":null}}");

	a = answer_build(q, p, 3, 1, 0.6);
	is_str(text(a), "{\"type\":\"choice\",\"choice\":\"sad\","
	    "\"probabilities\":{\"happy\":0.2,\"sad\":0.5,\"meh\":0.3},"
	    "\"confidence\":0.5,\"x_abstain\":true}",
	    "choice answer at T = 1, exact text");
	json_object_put(a);

	/* T = 2 on (0.2, 0.5, 0.3): the same values as test_temper reordered */
	a = answer_build(q, p, 3, 2, 0);
	is_num(dbl2(a, "probabilities", "happy"), 0.26275106609596020, EPS,
	    "T = 2: P(happy)");
	is_num(dbl2(a, "probabilities", "sad"), 0.41544591325034011, EPS,
	    "T = 2: P(sad)");
	is_num(dbl2(a, "probabilities", "meh"), 0.32180302065369969, EPS,
	    "T = 2: P(meh)");
	is_num(dbl(a, "confidence"), 0.41544591325034011, EPS,
	    "T = 2: confidence = max q");
	ok(abstains(a) == 0, "threshold 0: never abstains");
	json_object_put(a);

	a = answer_build(q, tie, 3, 1, 0);
	is_str(json_object_get_string(json_object_object_get(a, "choice")),
	    "happy", "tie goes to the first option");
	json_object_put(a);

	a = answer_build(q, exact, 3, 1, 0.5);
	ok(abstains(a) == 0, "confidence 0.5, threshold 0.5: answers");
	json_object_put(a);
	a = answer_build(q, exact, 3, 1, nextafter(0.5, 1));
	ok(abstains(a) == 1, "confidence 0.5, threshold just above: abstains");
	json_object_put(a);

	ok(answer_build(q, p, 2, 1, 0.5) == NULL, "n != arity: NULL");
	ok(answer_build(q, NULL, 3, 1, 0.5) == NULL, "p NULL: NULL");

	a = answer_distribution_json(q, p, 3);
	is_str(text(a), "{\"happy\":0.2,\"sad\":0.5,\"meh\":0.3}",
	    "choice distribution as stored");
	json_object_put(a);
	ok(answer_distribution_json(q, p, 4) == NULL,
	    "distribution with n != arity: NULL");
	json_object_put(q);

	q = parse("{\"type\":\"choice\",\"criteria\":{\"only\":null}}");
	a = answer_build(q, one, 1, 0.3, 0.99);
	is_str(text(a), "{\"type\":\"choice\",\"choice\":\"only\","
	    "\"probabilities\":{\"only\":1.0},\"confidence\":1.0,"
	    "\"x_abstain\":false}", "one option: 1.0 printed as a double");
	json_object_put(a);
	json_object_put(q);
}

static void
test_score(void)
{
	json_object	*q, *a;
	const double	 p[3] = { 0.2, 0.3, 0.5 };

	q = parse("{\"type\":\"score\",\"criteria\":[\"low\",\"mid\","
	    "\"high\"]}");

	/* score = 0*0.2 + 1*0.3 + 2*0.5 = 1.3 */
	a = answer_build(q, p, 3, 1, 0.5);
	is_str(text(a), "{\"type\":\"score\",\"score\":1.3,\"legend\":"
	    "{\"0\":\"low\",\"1\":\"mid\",\"2\":\"high\"},\"probabilities\":"
	    "{\"0\":0.2,\"1\":0.3,\"2\":0.5},\"confidence\":0.5,"
	    "\"x_abstain\":false}", "score answer at T = 1, exact text");
	json_object_put(a);

	/* T = 2: q = (0.26275106609596020, 0.32180302065369969,
	 * 0.41544591325034011); score = q1 + 2 q2 = 1.15269484715437991 */
	a = answer_build(q, p, 3, 2, 0.42);
	is_num(dbl(a, "score"), 1.15269484715437991, EPS, "T = 2: score");
	is_num(dbl2(a, "probabilities", "2"), 0.41544591325034011, EPS,
	    "T = 2: P(2)");
	is_num(dbl(a, "confidence"), 0.41544591325034011, EPS,
	    "T = 2: confidence");
	ok(abstains(a) == 1, "T = 2: 0.415 < 0.42 abstains");
	json_object_put(a);

	a = answer_distribution_json(q, p, 3);
	is_str(text(a), "[0.2,0.3,0.5]", "score distribution as stored");
	json_object_put(a);
	json_object_put(q);
}

static void
test_noul(void)
{
	json_object	*q, *a;
	const double	 p[2] = { 0.8, 0.2 };
	const double	 low[2] = { 0.25, 0.75 };

	q = parse("{\"type\":\"noul\",\"instructions\":\"Refund?\"}");

	a = answer_build(q, p, 2, 1, 0.8);
	is_str(text(a), "{\"type\":\"noul\",\"noul\":0.8,\"x_abstain\":false}",
	    "noul answer at T = 1, exact text");
	json_object_put(a);
	a = answer_build(q, p, 2, 1, 0.81);
	ok(abstains(a) == 1, "noul 0.8, threshold 0.81: abstains");
	json_object_put(a);

	/* T = 2 on (0.8, 0.2): sqrt(0.8) = 2 sqrt(0.2), so q = 2/3 */
	a = answer_build(q, p, 2, 2, 0);
	is_num(dbl(a, "noul"), 2.0 / 3, EPS, "noul T = 2: 2/3");
	ok(!json_object_object_get_ex(a, "confidence", NULL),
	    "noul has no confidence member");
	json_object_put(a);

	/* T = 0.5 on (0.25, 0.75): 0.0625 / (0.0625 + 0.5625) = 0.1 */
	a = answer_build(q, low, 2, 0.5, 0);
	is_num(dbl(a, "noul"), 0.1, EPS, "noul T = 0.5: 0.1");
	json_object_put(a);

	/* confidence of a low P(true) is 1 - q */
	a = answer_build(q, low, 2, 1, 0.75);
	ok(abstains(a) == 0, "noul 0.25: confidence 0.75, threshold 0.75");
	json_object_put(a);
	a = answer_build(q, low, 2, 1, nextafter(0.75, 1));
	ok(abstains(a) == 1, "noul 0.25: threshold just above 0.75");
	json_object_put(a);

	a = answer_distribution_json(q, p, 2);
	is_str(text(a), "0.8", "noul distribution as stored: P(true)");
	json_object_put(a);
	json_object_put(q);
}

static void
test_extreme(void)
{
	json_object	*q, *c, *a;
	double		 p[300];
	char		 key[16];
	const char	*s;
	size_t		 i;

	q = parse("{\"type\":\"choice\",\"criteria\":{}}");
	json_object_object_get_ex(q, "criteria", &c);
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "o%zu", i);
		json_object_object_add(c, key, NULL);
		p[i] = (double)(i + 1);
	}
	ok(answer_normalise(p, 300) == 0, "normalise 300 values");
	a = answer_build(q, p, 300, 0.05, 0.5);
	s = text(a);
	ok(a != NULL && strstr(s, "nan") == NULL && strstr(s, "inf") == NULL,
	    "300 options (heap buffer), T = 0.05: no NaN or inf");
	is_str(json_object_get_string(json_object_object_get(a, "choice")),
	    "o299", "  the largest wins");
	json_object_put(a);

	a = answer_build(q, p, 300, 1e-300, 0.5);
	is_num(dbl(a, "confidence"), 1, 0, "T = 1e-300: confidence 1");
	json_object_put(a);
	json_object_put(q);

	q = parse("{\"type\":\"score\",\"criteria\":[\"a\",\"b\"]}");
	p[0] = 1e-300, p[1] = 1;
	answer_normalise(p, 2);
	a = answer_build(q, p, 2, 0.05, 0.5);
	s = text(a);
	ok(strstr(s, "nan") == NULL && strstr(s, "inf") == NULL,
	    "tiny p, T = 0.05: no NaN or inf");
	is_num(dbl(a, "score"), 1, 0, "  score 1");
	json_object_put(a);
	json_object_put(q);
}

/* Whether the text in b is what json-c writes again for the value it
 * parses to (JU_WIRE): escapes, order and punctuation as json-c's. */
static int
as_json_c(const struct buf *b, const char *name)
{
	json_object	*o = b->p != NULL ? ju_parse(b->p) : NULL;
	const char	*again = o != NULL ?
			    json_object_to_json_string_ext(o, JU_WIRE) : NULL;
	int		 same = again != NULL && strcmp(again, b->p) == 0;

	if (!same)
		printf("# %s: wrote %s, json-c writes %s\n", name,
		    b->p ? b->p : "(nothing)", again ? again : "(no JSON)");
	json_object_put(o);
	return same;
}

/* The text writers, on keys and labels that need escapes (quotes,
 * backslashes, control bytes, NUL inside a label), a slash json-c keeps
 * as is under JU_WIRE, UTF-8, and each type. */
static void
test_write(void)
{
	static const char *const qs[] = {
		"{\"type\":\"choice\",\"criteria\":{\"a\\\"b\":\"x\","
		"\"c\\\\d/e\":\"y\",\"\\u0001\\t\\n\\u001f\\u007f\":\"z\","
		"\"\u00e9t\u00e9\":\"w\"}}",
		"{\"type\":\"score\",\"criteria\":[\"lo\\u0000w\",\"m/id\","
		"\"h\\\"i\\\\gh\",\"\\b\\f\\r\"]}",
		"{\"type\":\"noul\",\"criteria\":{\"true\":\"t\"}}",
	};
	double		 p[4] = { 0.1, 0.2, 0.3, 0.4 }, two[2] = { 0.7, 0.3 };
	double		 p12[12];
	json_object	*q, *a;
	struct buf	 b;
	size_t		 i, n;
	int		 rc;

	buf_init(&b, ANSWER_TEXT_MAX);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		q = parse(qs[i]);
		n = question_arity(q);
		buf_reset(&b);
		rc = answer_write(&b, q, n == 2 ? two : p, n, 0.7, 0.5);
		ok(rc >= 0 && as_json_c(&b, "answer"),
		    "answer_write (%s): as json-c writes it",
		    question_type_name(question_type(q)));
		a = answer_build(q, n == 2 ? two : p, n, 0.7, 0.5);
		is_str(a ? json_object_to_json_string_ext(a, JU_WIRE) : "",
		    b.p, "  answer_build is that text");
		json_object_put(a);
		buf_reset(&b);
		ok(answer_distribution_write(&b, q, n == 2 ? two : p, n) == 0 &&
		    as_json_c(&b, "distribution"),
		    "  the distribution: as json-c writes it");
		json_object_put(q);
	}
	/* What a round trip through json-c cannot tell: a label cut at its
	 * NUL would read back the same. */
	q = parse(qs[1]);
	buf_reset(&b);
	ok(answer_write(&b, q, p, 4, 1, 0) == 0 &&
	    strstr(b.p, "\"0\":\"lo\\u0000w\",\"1\":\"m/id\"") != NULL,
	    "a label's NUL and slash as json-c writes them: %s", b.p);
	json_object_put(q);
	/* Levels past 9: their keys have two digits. */
	q = parse("{\"type\":\"score\",\"criteria\":[\"a\",\"b\",\"c\","
	    "\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\"]}");
	for (i = 0; i < 12; i++)
		p12[i] = 1.0 / 12;
	buf_reset(&b);
	ok(answer_write(&b, q, p12, 12, 1, 0) == 0 && as_json_c(&b, "12") &&
	    strstr(b.p, ",\"10\":\"k\",\"11\":\"l\"}") != NULL &&
	    strstr(b.p, ",\"11\":0.08333333333333333}") != NULL,
	    "twelve levels: keys 0 to 11");
	json_object_put(q);
	q = parse(qs[2]);
	buf_reset(&b);
	ok(answer_write(&b, q, two, 2, 1, 0.71) == 1 &&
	    strstr(b.p, "\"x_abstain\":true") != NULL, "abstains: 1");
	buf_reset(&b);
	ok(answer_write(&b, q, two, 2, 1, 0.7) == 0 &&
	    strstr(b.p, "\"x_abstain\":false") != NULL, "does not: 0");
	ok(answer_write(&b, q, two, 3, 1, 0.7) == -1 &&
	    answer_distribution_write(&b, q, two, 3) == -1,
	    "n not the arity: -1");
	json_object_put(q);
	buf_free(&b);
}

/* answer_write_both(): what answer_write(), a NUL,
 * answer_distribution_write() and a NUL write, byte for byte, for each
 * type, with a temperature that leaves p as it is and one that does
 * not, for 2 to 40 options (past the texts kept on the stack), the
 * abstention the same. */
static void
test_write_both(void)
{
	static const double	 temps[] = { 1, 0.7, 2, 0 };
	struct buf		 one, both;
	json_object		*q;
	double			 p[40], sum;
	char			 text[1024];
	size_t			 n, i, t, tries = 0, bad = 0;
	int			 a, a2, type;

	buf_init(&one, 1 << 20);
	buf_init(&both, 1 << 20);
	for (type = 0; type < 3; type++)
		for (n = 2; n <= 40; n++) {
			if (type == 2 && n > 2)
				break;
			if (type == 0) {
				strcpy(text, "{\"type\":\"choice\","
				    "\"criteria\":{");
				for (i = 0; i < n; i++)
					snprintf(text + strlen(text), 20,
					    "%s\"o%zu\":\"\"", i ? "," : "",
					    i);
				strcat(text, "}}");
			} else if (type == 1) {
				strcpy(text, "{\"type\":\"score\","
				    "\"criteria\":[");
				for (i = 0; i < n; i++)
					snprintf(text + strlen(text), 20,
					    "%s\"l%zu\"", i ? "," : "", i);
				strcat(text, "]}");
			} else
				strcpy(text, "{\"type\":\"noul\"}");
			q = parse(text);
			for (i = 0, sum = 0; i < n; i++)
				sum += p[i] = (double)((i * 7 + n) % 11 + 1);
			for (i = 0; i < n; i++)
				p[i] /= sum;
			for (t = 0; t < sizeof(temps) / sizeof(temps[0]);
			    t++, tries++) {
				buf_reset(&one);
				buf_reset(&both);
				a = answer_write(&one, q, p, n, temps[t], 0.3);
				buf_add(&one, "", 1);
				answer_distribution_write(&one, q, p, n);
				buf_add(&one, "", 1);
				a2 = answer_write_both(&both, q, p, n,
				    temps[t], 0.3);
				if (a != a2 || a == -1 || one.len !=
				    both.len || memcmp(one.p, both.p,
				    one.len) != 0) {
					if (bad++ == 0)
						printf("# %s T %g: %s\n", text,
						    temps[t], both.p ?
						    both.p : "(none)");
				}
			}
			json_object_put(q);
		}
	ok(bad == 0, "answer_write_both: answer_write and "
	    "answer_distribution_write's bytes (%zu of %zu not)", bad, tries);
	q = parse("{\"type\":\"noul\"}");
	ok(answer_write_both(&both, q, p, 3, 1, 0) == -1,
	    "answer_write_both: n not the arity: -1");
	json_object_put(q);
	buf_free(&one);
	buf_free(&both);
}

int
main(void)
{
	test_normalise();
	test_temper();
	test_choice();
	test_score();
	test_noul();
	test_extreme();
	test_write();
	test_write_both();
	return tap_done();
}
