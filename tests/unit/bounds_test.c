/* bounds_test.c: TAP tests of bounds.c: each field's kind, every bounded
 * integer and real at and just past its edges (and at the int64
 * extremes, NaN and the infinities), the name and slug rules, the JSON
 * fields (questions as publish takes them, objects), a backend's kind
 * options against a table of them (bound_options()), and each record
 * check (bound_app() and the like), which refuses as a 500 naming the
 * record and the field. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "tap.h"

#define TIME_MAX	253402300799LL	/* 9999-12-31T23:59:59Z */
#define LIMIT_MAX	1000000000000LL
#define BAD_CRITERIA	"{\"sentiment\":{\"type\":\"choice\"," \
			"\"criteria\":5}}"
#define NOUL		"{\"q\":{\"type\":\"noul\"}}"

/* Each field's kind. */
static const struct {
	enum bound_field	f;
	enum bound_kind		k;
} kinds[] = {
	{ BF_APP_NAME, BK_TEXT }, { BF_APP_LOG_STATE, BK_INT },
	{ BF_APP_ADMIN, BK_INT }, { BF_APP_RATE, BK_INT },
	{ BF_APP_QUOTA, BK_INT }, { BF_APP_RETENTION, BK_INT },
	{ BF_CREATED_AT, BK_INT }, { BF_EXPIRES_AT, BK_INT },
	{ BF_REVOKED_AT, BK_INT }, { BF_BACKEND_NAME, BK_TEXT },
	{ BF_BACKEND_ENABLED, BK_INT }, { BF_BACKEND_TIMEOUT, BK_INT },
	{ BF_BACKEND_IN_FLIGHT, BK_INT }, { BF_BACKEND_OPTIONS, BK_TEXT },
	{ BF_SLUG, BK_TEXT }, { BF_VERSION, BK_INT },
	{ BF_GRANT_VERSION, BK_INT }, { BF_PUBLISHED, BK_INT },
	{ BF_QUESTIONS, BK_TEXT }, { BF_TEMPERATURE, BK_REAL },
	{ BF_THRESHOLD, BK_REAL }, { BF_VARIABLES, BK_TEXT },
	{ BF_ESCAPE_HTML, BK_INT }, { BF_QUOTA_USED, BK_INT },
};

/* The integers: the lowest and the highest value each field takes. */
static const struct {
	enum bound_field	 f;
	const char		*name;
	int64_t			 min, max;
} ints[] = {
	{ BF_APP_LOG_STATE, "log_state", 0, 1 },
	{ BF_APP_ADMIN, "is_admin", 0, 1 },
	{ BF_APP_RATE, "rate_per_minute", 1, LIMIT_MAX },
	{ BF_APP_QUOTA, "daily_quota", 1, LIMIT_MAX },
	{ BF_APP_RETENTION, "retention_days", 0, 1000000 },
	{ BF_CREATED_AT, "created_at", 0, TIME_MAX },
	{ BF_EXPIRES_AT, "expires_at", 0, TIME_MAX },
	{ BF_REVOKED_AT, "revoked_at", 0, TIME_MAX },
	{ BF_BACKEND_ENABLED, "enabled", 0, 1 },
	{ BF_BACKEND_TIMEOUT, "timeout_ms", 100, 3600000 },
	{ BF_BACKEND_IN_FLIGHT, "max_in_flight", 1, 100000 },
	{ BF_VERSION, "version", 1, LIMIT_MAX },
	{ BF_GRANT_VERSION, "grant version", 0, LIMIT_MAX },
	{ BF_PUBLISHED, "published", 0, 1 },
	{ BF_ESCAPE_HTML, "escape_html", 0, 1 },
	{ BF_QUOTA_USED, "used", 0, LIMIT_MAX },
};

/* Reals, each value taken (1) or refused (0). */
static const struct {
	enum bound_field	 f;
	const char		*name;
	double			 v;
	int			 taken;
} reals[] = {
	{ BF_TEMPERATURE, "temperature 0 (above 0 only)", 0.0, 0 },
	{ BF_TEMPERATURE, "temperature -0", -0.0, 0 },
	{ BF_TEMPERATURE, "temperature the least above 0", DBL_TRUE_MIN, 1 },
	{ BF_TEMPERATURE, "temperature 1", 1.0, 1 },
	{ BF_TEMPERATURE, "temperature 100", 100.0, 1 },
	{ BF_TEMPERATURE, "temperature just above 100", 100.00000000000001,
	    0 },
	{ BF_TEMPERATURE, "temperature -1", -1.0, 0 },
	{ BF_TEMPERATURE, "temperature 1e308", 1e308, 0 },
	{ BF_THRESHOLD, "threshold 0", 0.0, 1 },
	{ BF_THRESHOLD, "threshold -0", -0.0, 1 },
	{ BF_THRESHOLD, "threshold just below 0", -DBL_TRUE_MIN, 0 },
	{ BF_THRESHOLD, "threshold 0.5", 0.5, 1 },
	{ BF_THRESHOLD, "threshold 1", 1.0, 1 },
	{ BF_THRESHOLD, "threshold just above 1", 1.0000000000000002, 0 },
	{ BF_THRESHOLD, "threshold -3", -3.0, 0 },
};

/* Values no real field takes. */
static const struct {
	const char	*name;
	double		 v;
} unreal[] = {
	{ "NaN", NAN }, { "inf", INFINITY }, { "-inf", -INFINITY },
	{ "DBL_MAX", DBL_MAX }, { "-DBL_MAX", -DBL_MAX },
};

/* The two rules of words: a name (an application's, a backend's) and a
 * slug (a schema's, a template's), and the fields that take each. */
static const struct rule {
	const char		*what;
	const char		*(*fault)(const char *);
	enum bound_field	 fields[2];
	size_t			 nfields;
} rules[] = {
	{ "name", bound_name_fault, { BF_APP_NAME, BF_BACKEND_NAME }, 2 },
	{ "slug", bound_slug_fault, { BF_SLUG }, 1 },
};

/* Words, each taken or refused by its rule (0 a name, 1 a slug). */
static const struct {
	int		 rule;
	const char	*v;
	int		 taken;
} words[] = {
	{ 0, "app", 1 }, { 0, "A", 1 }, { 0, "App-1_x.y", 1 },
	{ 0, "a:b@c", 1 }, { 0, "caf\xc3\xa9", 1 }, { 0, "", 0 },
	{ 0, "a b", 0 }, { 0, "a/b", 0 }, { 0, "/", 0 }, { 0, "a\tb", 0 },
	{ 0, "a\nb", 0 }, { 0, "a\x7f", 0 }, { 0, "\x1b[31m", 0 },
	{ 0, "a\xc2\x85" "b", 0 }, { 0, "a\xe2\x80\xa8" "b", 0 },
	{ 1, "demo", 1 }, { 1, "a", 1 }, { 1, "0", 1 }, { 1, "9lives", 1 },
	{ 1, "demo_v1.2-x", 1 }, { 1, "a-", 1 }, { 1, "a.", 1 },
	{ 1, "", 0 }, { 1, "Demo", 0 }, { 1, "dEmo", 0 }, { 1, "_demo", 0 },
	{ 1, "-demo", 0 }, { 1, ".demo", 0 }, { 1, "de mo", 0 },
	{ 1, "de/mo", 0 }, { 1, "d\xc3\xa9mo", 0 }, { 1, "demo\n", 0 },
	{ 1, "demo!", 0 },
};

/* JSON text of the fields that hold some. */
static const struct {
	enum bound_field	 f;
	const char		*v;
	int			 taken;
} texts[] = {
	{ BF_QUESTIONS, NOUL, 1 },
	{ BF_QUESTIONS, "{\"q\":{\"type\":\"choice\",\"criteria\":"
	    "{\"a\":null,\"b\":\"x\"}}}", 1 },
	{ BF_QUESTIONS, "{\"q\":{\"type\":\"score\",\"criteria\":"
	    "[\"low\",\"high\"]}}", 1 },
	{ BF_QUESTIONS, "", 0 }, { BF_QUESTIONS, "{\"sentiment\":", 0 },
	{ BF_QUESTIONS, "not json", 0 }, { BF_QUESTIONS, "[]", 0 },
	{ BF_QUESTIONS, "{}", 0 }, { BF_QUESTIONS, "null", 0 },
	{ BF_QUESTIONS, "5", 0 }, { BF_QUESTIONS, BAD_CRITERIA, 0 },
	{ BF_QUESTIONS, "{\"q\":{\"type\":\"choice\"}}", 0 },
	{ BF_QUESTIONS, "{\"q\":{\"type\":\"multi\"}}", 0 },
	{ BF_BACKEND_OPTIONS, "{}", 1 },
	{ BF_BACKEND_OPTIONS, "{\"a\":1}", 1 },
	{ BF_BACKEND_OPTIONS, "", 0 }, { BF_BACKEND_OPTIONS, "[]", 0 },
	{ BF_BACKEND_OPTIONS, "1", 0 }, { BF_BACKEND_OPTIONS, "null", 0 },
	{ BF_BACKEND_OPTIONS, "{", 0 },
	{ BF_VARIABLES, "{\"name\":\"string\"}", 1 },
	{ BF_VARIABLES, "\"s\"", 0 }, { BF_VARIABLES, "nope", 0 },
	/* Not a text field: refused whatever the text. */
	{ BF_APP_RATE, "5", 0 }, { BF_TEMPERATURE, "1", 0 },
};

/* s as a test's name shows it: bytes outside printable ASCII as \xNN. */
static const char *
shown(const char *s, char *out, size_t size)
{
	size_t len = 0;

	for (; *s != '\0' && len + 5 < size; s++)
		len += (size_t)snprintf(out + len, size - len,
		    *s > 0x20 && *s < 0x7f ? "%c" : "\\x%02x",
		    (unsigned char)*s);
	out[len] = '\0';
	return out;
}

/* A field check's answer: 0, or -1 with ERR_VALIDATION and a message. */
static void
verdict(int rc, struct error *e, int taken, const char *what)
{
	if (taken)
		ok(rc == 0 && e->code == ERR_NONE, "%s: taken", what);
	else
		ok(rc == -1 && e->code == ERR_VALIDATION &&
		    e->message[0] != '\0', "%s: refused", what);
	error_clear(e);
}

static void
int_is(int i, int64_t v, int taken)
{
	struct error	e = { 0 };
	char		what[96];

	snprintf(what, sizeof(what), "%s %lld", ints[i].name, (long long)v);
	verdict(bound_int(ints[i].f, v, &e), &e, taken, what);
}

static void
test_kinds(void)
{
	size_t i;

	ok(sizeof(kinds) / sizeof(kinds[0]) == BF__MAX, "every field listed");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ok(bound_kind(kinds[i].f) == kinds[i].k, "field %d: kind %d",
		    (int)kinds[i].f, (int)kinds[i].k);
}

static void
test_ints(void)
{
	struct error	e = { 0 };
	size_t		i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int_is((int)i, ints[i].min, 1);
		int_is((int)i, ints[i].max, 1);
		int_is((int)i, ints[i].min - 1, 0);
		int_is((int)i, ints[i].max + 1, 0);
		int_is((int)i, INT64_MIN, 0);
		int_is((int)i, INT64_MAX, 0);
	}
	verdict(bound_int(BF_APP_NAME, 0, &e), &e, 0, "an integer for a name");
	verdict(bound_int(BF_TEMPERATURE, 1, &e), &e, 0,
	    "an integer for a real");
}

static void
test_reals(void)
{
	struct error	e = { 0 };
	char		what[96];
	size_t		i, j;

	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		verdict(bound_real(reals[i].f, reals[i].v, &e), &e,
		    reals[i].taken, reals[i].name);
	for (i = 0; i < sizeof(unreal) / sizeof(unreal[0]); i++)
		for (j = 0; j < 2; j++) {
			snprintf(what, sizeof(what), "%s %s", j == 0 ?
			    "temperature" : "threshold", unreal[i].name);
			verdict(bound_real(j == 0 ? BF_TEMPERATURE :
			    BF_THRESHOLD, unreal[i].v, &e), &e, 0, what);
		}
	verdict(bound_real(BF_APP_RATE, 5.0, &e), &e, 0,
	    "a real for an integer");
}

/* n bytes of 'x'; the caller frees them. */
static char *
xs(size_t n)
{
	char *p = malloc(n + 1);

	if (p == NULL)
		abort();
	memset(p, 'x', n);
	p[n] = '\0';
	return p;
}

/* word by its rule, and by bound_text() on each field that takes it. */
static void
word_is(const struct rule *r, const char *word, int taken)
{
	struct error	e = { 0 };
	char		what[96], buf[64];
	size_t		i;

	snprintf(what, sizeof(what), "%s '%.24s' (%zu bytes)", r->what,
	    shown(word, buf, sizeof(buf)), strlen(word));
	ok((r->fault(word) == NULL) == taken, "%s: %s by the rule", what,
	    taken ? "taken" : "refused");
	for (i = 0; i < r->nfields; i++)
		verdict(bound_text(r->fields[i], word, &e), &e, taken, what);
}

static void
test_words(void)
{
	char	*s;
	size_t	 i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		word_is(&rules[words[i].rule], words[i].v, words[i].taken);
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		s = xs(100);
		word_is(&rules[i], s, 1);
		s[99] = '\0';
		word_is(&rules[i], s, 1);
		free(s);
		s = xs(101);
		word_is(&rules[i], s, 0);
		free(s);
	}
	/* Bytes, not characters: 50 two-byte characters and one more. */
	s = xs(101);
	for (i = 0; i < 50; i++)
		memcpy(s + 2 * i, "\xc3\xa9", 2);
	s[100] = '\0';
	word_is(&rules[0], s, 1);
	s[100] = 'x';
	word_is(&rules[0], s, 0);
	free(s);
}

/* n noul questions, as JSON text; the caller frees it. */
static char *
questions(int n)
{
	size_t	 size = 32 + (size_t)n * 32, len = 1;
	char	*s = malloc(size);
	int	 i;

	if (s == NULL)
		abort();
	strcpy(s, "{");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, size - len,
		    "%s\"q%d\":{\"type\":\"noul\"}", i > 0 ? "," : "", i);
	strcpy(s + len, "}");
	return s;
}

static void
test_texts(void)
{
	struct error	 e = { 0 };
	char		 what[96];
	char		*s;
	size_t		 i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		snprintf(what, sizeof(what), "field %d text '%.60s'",
		    (int)texts[i].f, texts[i].v);
		verdict(bound_text(texts[i].f, texts[i].v, &e), &e,
		    texts[i].taken, what);
	}
	s = questions(1000);
	verdict(bound_text(BF_QUESTIONS, s, &e), &e, 1, "1000 questions");
	free(s);
	s = questions(1001);
	verdict(bound_text(BF_QUESTIONS, s, &e), &e, 0, "1001 questions");
	free(s);
}

/* A record check's answer: 0 (field NULL), or -1 with a 500 naming
 * the record (kind 'who') and the field. */
static void
record(int rc, struct error *e, const char *kind, const char *who,
    const char *field, const char *name)
{
	char what[160];

	snprintf(what, sizeof(what), "%s '%s'", kind, who);
	if (field == NULL) {
		if (!ok(rc == 0 && e->code == ERR_NONE, "%s %s: taken", kind,
		    name))
			printf("#   %s\n", e->message);
	} else if (!ok(rc == -1 && e->code == ERR_INTERNAL &&
	    strstr(e->message, what) != NULL &&
	    strstr(e->message, field) != NULL, "%s %s: a 500 naming %s and "
	    "%s", kind, name, what, field))
		printf("#   %s\n", e->message);
	error_clear(e);
}

/* Applications: APP(name, rate, quota, retention, created_at); 0 is
 * the default rate and quota, a retention of -1 SERVICE_RETENTION_DAYS's,
 * 0 keeps every decision. */
#define APP(n, r, q, d, c)	{ .name = n, .rate_per_minute = r, \
				    .daily_quota = q, .retention_days = d, \
				    .created_at = c }
static const struct {
	const char	*name, *field;
	struct app	 a;
} apps[] = {
	{ "defaults", NULL, APP("app", 0, 0, -1, 1700000000) },
	{ "at the maxima", NULL, APP("app", LIMIT_MAX, LIMIT_MAX, 1000000,
	    TIME_MAX) },
	{ "keeping every decision", NULL, APP("app", 1, 1, 0, 1) },
	{ "rate INT64_MAX", "rate_per_minute", APP("app", INT64_MAX, 0, -1,
	    0) },
	{ "rate INT64_MIN", "rate_per_minute", APP("app", INT64_MIN, 0, -1,
	    0) },
	{ "rate -1", "rate_per_minute", APP("app", -1, 0, -1, 0) },
	{ "rate past the maximum", "rate_per_minute", APP("app",
	    LIMIT_MAX + 1, 0, -1, 0) },
	{ "quota INT64_MAX", "daily_quota", APP("app", 0, INT64_MAX, -1,
	    0) },
	{ "quota -1", "daily_quota", APP("app", 0, -1, -1, 0) },
	{ "retention -2", "retention_days", APP("app", 0, 0, -2, 0) },
	{ "retention past the maximum", "retention_days", APP("app", 0, 0,
	    1000001, 0) },
	{ "retention INT64_MAX", "retention_days", APP("app", 0, 0,
	    INT64_MAX, 0) },
	{ "created_at -1", "created_at", APP("app", 0, 0, -1, -1) },
	{ "created_at past 9999", "created_at", APP("app", 0, 0, -1,
	    TIME_MAX + 1) },
	{ "named 'a b/c'", "name", APP("a b/c", 0, 0, -1, 0) },
};

/* Keys: KEY(created_at, expires_at, revoked_at); 0 is never expiring,
 * not revoked. */
#define KEY(c, x, r)	{ .prefix = "abcd1234", .created_at = c, \
			    .expires_at = x, .revoked_at = r }
static const struct {
	const char	*name, *field;
	struct key_row	 k;
} keys[] = {
	{ "never expiring, not revoked", NULL, KEY(1700000000, 0, 0) },
	{ "at the maxima", NULL, KEY(TIME_MAX, TIME_MAX, TIME_MAX) },
	{ "created_at -5", "created_at", KEY(-5, 0, 0) },
	{ "expires_at INT64_MIN", "expires_at", KEY(1, INT64_MIN, 0) },
	{ "expires_at INT64_MAX", "expires_at", KEY(1, INT64_MAX, 0) },
	{ "revoked_at past 9999", "revoked_at", KEY(1, 0, TIME_MAX + 1) },
};

static void
test_apps_keys(void)
{
	struct error	e = { 0 };
	size_t		i;

	for (i = 0; i < sizeof(apps) / sizeof(apps[0]); i++)
		record(bound_app(&apps[i].a, &e), &e, "application",
		    apps[i].a.name, apps[i].field, apps[i].name);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		record(bound_key(&keys[i].k, &e), &e, "key", keys[i].k.prefix,
		    keys[i].field, keys[i].name);
}

/* A kind's table of options, as a kind's file defines one. */
static const struct backend_option opts[] = {
	{ "max_options", BOPT_LONG, 2, 26, 20, "labels" },
	{ "concurrency", BOPT_LONG, 1, 64, 8, "calls in flight" },
	{ "extra", BOPT_JSON, 0, 0, 0, "merged into requests" },
	{ NULL, BOPT__MAX, 0, 0, 0, NULL },
};

static void
test_backend(void)
{
	static const struct {
		const char	*name, *field;
		int64_t		 timeout, in_flight;
		const char	*options;
	} cases[] = {
		/* 0 and "" are the defaults. */
		{ "defaults", NULL, 0, 0, "" },
		{ "at the minima", NULL, 100, 1, "{\"max_options\":2,"
		    "\"concurrency\":1,\"extra\":{}}" },
		{ "at the maxima", NULL, 3600000, 100000, "{\"max_options\":"
		    "26,\"concurrency\":64,\"extra\":{\"top_p\":1}}" },
		{ "no options set", NULL, 0, 0, "{}" },
		{ "timeout 99", "timeout_ms", 99, 0, "" },
		{ "timeout past an hour", "timeout_ms", 3600001, 0, "" },
		{ "timeout INT64_MAX", "timeout_ms", INT64_MAX, 0, "" },
		{ "in flight -1", "max_in_flight", 0, -1, "" },
		{ "in flight 100001", "max_in_flight", 0, 100001, "" },
		{ "1 option", "max_options", 0, 0, "{\"max_options\":1}" },
		{ "27 options", "max_options", 0, 0, "{\"max_options\":27}" },
		{ "options 2.5", "max_options", 0, 0,
		    "{\"max_options\":2.5}" },
		{ "options \"8\"", "max_options", 0, 0,
		    "{\"max_options\":\"8\"}" },
		{ "concurrency -1", "concurrency", 0, 0,
		    "{\"concurrency\":-1}" },
		{ "concurrency 65", "concurrency", 0, 0,
		    "{\"concurrency\":65}" },
		{ "extra an array", "extra", 0, 0, "{\"extra\":[]}" },
		{ "an option of no kind", "'seed'", 0, 0, "{\"seed\":1}" },
		{ "options not JSON", "kind option", 0, 0, "{" },
		{ "options an array", "kind option", 0, 0, "[]" },
	};
	static struct backend	b;	/* 13 KiB: not on the stack */
	struct error		e = { 0 };
	int64_t			vals[BACKEND_OPTIONS_MAX];
	char			*big;
	size_t			i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&b, 0, sizeof(b));
		strcpy(b.name, "lex");
		b.timeout_ms = cases[i].timeout;
		b.max_in_flight = cases[i].in_flight;
		strcpy(b.options, cases[i].options);
		record(bound_backend(&b, opts, &e), &e, "backend", b.name,
		    cases[i].field, cases[i].name);
	}

	/* The integers parsed by their row in the table, once. */
	memset(&b, 0, sizeof(b));
	strcpy(b.options, "{\"concurrency\":5,\"max_options\":3}");
	ok(bound_backend(&b, opts, &e) == 0 && b.optval[0] == 3 &&
	    b.optval[1] == 5 && b.optval[2] == 0, "options parsed by their "
	    "row: max_options 3, concurrency 5, extra none");
	strcpy(b.options, "");
	ok(bound_backend(&b, opts, &e) == 0 && b.optval[0] == 0 &&
	    b.optval[1] == 0, "no options: every value 0, the default");

	/* A kind without options (NULL table) takes none. */
	ok(bound_options(NULL, "", vals, &e) == 0 &&
	    bound_options(NULL, "{}", vals, &e) == 0, "a kind without "
	    "options: none taken");
	ok(bound_options(NULL, "{\"max_options\":8}", vals, &e) == -1 &&
	    strstr(e.message, "max_options") != NULL, "a kind without "
	    "options: max_options refused (%s)", e.message);
	error_clear(&e);

	/* A JSON option of BACKEND_OPTION_JSON_MAX bytes, and one more:
	 * {"extra":{"a":"xx...x"}}, its value from offset 9 to the '}'
	 * before the last: "}} at offset n, n - 7 bytes. */
	big = malloc(BACKEND_OPTIONS_SIZE);
	memset(big, 'x', BACKEND_OPTIONS_SIZE - 1);
	big[BACKEND_OPTIONS_SIZE - 1] = '\0';
	memcpy(big, "{\"extra\":{\"a\":\"", 15);
	snprintf(big + BACKEND_OPTION_JSON_MAX + 7, 4, "\"}}");
	ok(bound_options(opts, big, vals, &e) == 0, "extra of %d bytes "
	    "taken (%s)", BACKEND_OPTION_JSON_MAX, e.message);
	error_clear(&e);
	big[BACKEND_OPTION_JSON_MAX + 7] = 'x';
	snprintf(big + BACKEND_OPTION_JSON_MAX + 8, 4, "\"}}");
	ok(bound_options(opts, big, vals, &e) == -1 &&
	    strstr(e.message, "extra") != NULL, "extra over %d bytes "
	    "refused (%s)", BACKEND_OPTION_JSON_MAX, e.message);
	error_clear(&e);
	free(big);
}

/* Versions: a schema's (its questions) and a template's (its
 * variables), as published and out of bounds. */
static const struct {
	int		 template;	/* 1: a template's, 0: a schema's */
	const char	*name, *field;
	const char	*json;		/* questions, or variables */
	double		 temperature, threshold;
	int64_t		 version, created_at;
} versions[] = {
	{ 0, "as published", NULL, NOUL, 1.0, 0.5, 1, 1 },
	{ 0, "at the edges", NULL, NOUL, 100.0, 1.0, LIMIT_MAX, TIME_MAX },
	{ 0, "malformed criteria", "questions", BAD_CRITERIA, 1.0, 0.5, 1,
	    1 },
	{ 0, "no questions", "questions", "{}", 1.0, 0.5, 1, 1 },
	{ 0, "questions an array", "questions", "[]", 1.0, 0.5, 1, 1 },
	{ 0, "temperature 0", "temperature", NOUL, 0.0, 0.5, 1, 1 },
	{ 0, "temperature NaN", "temperature", NOUL, NAN, 0.5, 1, 1 },
	{ 0, "temperature 1e308", "temperature", NOUL, 1e308, 0.5, 1, 1 },
	{ 0, "threshold -3", "abstain_threshold", NOUL, 1.0, -3.0, 1, 1 },
	{ 0, "threshold inf", "abstain_threshold", NOUL, 1.0, INFINITY, 1,
	    1 },
	{ 0, "version -1", "version", NOUL, 1.0, 0.5, -1, 1 },
	{ 0, "version past the maximum", "version", NOUL, 1.0, 0.5,
	    LIMIT_MAX + 1, 1 },
	{ 0, "created_at INT64_MAX", "created_at", NOUL, 1.0, 0.5, 1,
	    INT64_MAX },
	{ 1, "as published", NULL, "{\"name\":\"string\"}", 0, 0, 1, 1 },
	{ 1, "no variables", NULL, "{}", 0, 0, LIMIT_MAX, TIME_MAX },
	{ 1, "variables an array", "variables", "[]", 0, 0, 1, 1 },
	{ 1, "variables null", "variables", "null", 0, 0, 1, 1 },
	{ 1, "version -1", "version", "{}", 0, 0, -1, 1 },
	{ 1, "created_at INT64_MIN", "created_at", "{}", 0, 0, 1,
	    INT64_MIN },
};

static void
test_versions(void)
{
	struct error		 e = { 0 };
	struct schema_version	 v = { .slug = "demo" };
	struct template_version	 t = { .slug = "mail" };
	json_object		*json;
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		json = parse(versions[i].json);
		if (versions[i].template) {
			t.variables = json;
			t.version = versions[i].version;
			t.created_at = versions[i].created_at;
			rc = bound_template(&t, &e);
		} else {
			v.questions = json;
			v.temperature = versions[i].temperature;
			v.abstain_threshold = versions[i].threshold;
			v.version = versions[i].version;
			v.created_at = versions[i].created_at;
			rc = bound_version(&v, &e);
		}
		record(rc, &e, versions[i].template ? "template" : "schema",
		    versions[i].template ? t.slug : v.slug, versions[i].field,
		    versions[i].name);
		json_object_put(json);
	}
}

static void
test_decision(void)
{
	static const struct {
		const char	*name, *field, *questions;
	} cases[] = {
		{ "with its version's questions", NULL, NOUL },
		{ "with malformed criteria", "questions", BAD_CRITERIA },
		{ "with questions null", "questions", "null" },
		{ "with questions a number", "questions", "5" },
	};
	struct error		e = { 0 };
	struct decision_row	d = {
		.id = "0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b" };
	size_t			i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d.questions = parse(cases[i].questions);
		record(bound_decision(&d, &e), &e, "decision", d.id,
		    cases[i].field, cases[i].name);
		json_object_put(d.questions);
	}
}

int
main(void)
{
	test_kinds();
	test_ints();
	test_reals();
	test_words();
	test_texts();
	test_apps_keys();
	test_backend();
	test_versions();
	test_decision();
	return tap_done();
}
