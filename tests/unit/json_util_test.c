/* json_util_test: ju_lossy(), what json-c accepts but would not keep as
 * sent, and the place it names; ju_parse_body() refusing it; and the
 * getters reading members by path ("x_schema.id"), refusals naming the
 * whole path as the field; ju_num()'s text against
 * printf's; ju_write_str() and ju_write_int() against json-c's own
 * text. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_util.h"
#include "xalloc.h"
#include "tap.h"

static const struct {
	const char	*text;
	const char	*path;	/* NULL: nothing to find */
} cases[] = {
	{ "{\"a\": 1, \"b\": [1.5, -0, -0.0, 1e308, \"NaN\"]}", NULL },
	{ "{\"n\": 18446744073709551615, \"m\": -9223372036854775808}", NULL },
	{ "{\"s\": \"a\\u0000b\", \"t\": \"\\\\u0000\"}", NULL },
	{ "{\"\\\\u0000\": 1}", NULL },		/* a backslash, then u0000 */
	{ "{\"k\\u0000x\": 1}", "k\\u0000x" },
	{ "{\"a\": {\"b\\u0000\" : 1}}", "a.b\\u0000" },
	{ "{\"n\": 18446744073709551616}", "n" },
	{ "{\"n\": -9223372036854775809}", "n" },
	{ "{\"n\": 123456789012345678901234567890}", "n" },
	{ "{\"a\": [0, {\"b\": 1e999}]}", "a[1].b" },
	{ "{\"a\": [0, 1, -1e999]}", "a[2]" },
	{ "{\"a\": NaN}", "a" },
	{ "{\"a\": {\"b\": [Infinity]}}", "a.b[0]" },
	{ "{\"a\": -Infinity}", "a" },
	{ "{\"x\": {\"y\": 1}, \"z\": [[1], 1e400]}", "z[1]" },
	{ "{\"it's\": \"it's fine\"}", NULL },	/* quotes inside strings */
	{ "{'a': 1}", "" },			/* json-c's strict mode takes it */
	{ "{\"q\": {'\"t': 1, \"x[[\": 1e400}}", "q" },	/* fuzz_request */
	{ "{\"a\\\"b\": 1e999}", "a\\\"b" },	/* an escaped quote */
	{ "{\"s\": \"x\\\"y\\\\\", \"n\": 1e999}", "n" },
	{ "{\"s\": \"\\\"\\\"\\\"\", \"k\\u0000\": 1}", "k\\u0000" },
	{ "{\"s\": \"a\\ud83d\\ude00b\"}", NULL },	/* a pair */
	{ "{\"s\": \"\\\\ud800\"}", NULL },	/* a backslash, then ud800 */
	{ "{\"s\": \"a\\ud800b\"}", "s" },	/* lone high */
	{ "{\"s\": [\"\\udfff\"]}", "s[0]" },	/* lone low */
	{ "{\"s\": \"\\ude00\\ud83d\"}", "s" },	/* a pair reversed */
	{ "{\"k\\udbff\": 1}", "k\\udbff" },	/* in a key */
	/* strings past eight bytes, skipped eight at a time */
	{ "{\"a key of some length \\\" quoted\": 1e999}",
	  "a key of some length \\\" quoted" },
	{ "{\"s\": \"0123456789abcdef\\\\\", \"n01234567\": 1e999}",
	  "n01234567" },
	{ "{\"a long key: 0123456789\\u0000x\": 1}",
	  "a long key: 0123456789\\u0000x" },
	{ "{\"s\": \"0123456789abcdefgh\\ud800 lone\"}", "s" },
	{ "{\"s\": \"01234567\\\"01234567\\\"0123\", \"t\": [1e999]}",
	  "t[0]" },
	{ "{\"a\": 0.000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000001"
	  "e1000}", "a" },
};

/* 1 if e is a validation refusal of field with reason. */
static int
refused(struct error *e, const char *field, const char *reason)
{
	json_object	*f, *r;
	int		 yes;

	yes = e->code == ERR_VALIDATION &&
	    json_object_object_get_ex(e->details, "field", &f) &&
	    json_object_object_get_ex(e->details, "reason", &r) &&
	    strcmp(json_object_get_string(f), field) == 0 &&
	    strcmp(json_object_get_string(r), reason) == 0;
	error_clear(e);
	return yes;
}

static void
test_paths(void)
{
	struct error	 e = { 0 };
	json_object	*o, *v;
	const char	*s = NULL;
	int64_t		 n = 0;
	double		 d = 0;
	int		 b = 0, null = 0;

	o = parse("{\"x\": {\"id\": \"t\", \"v\": 2, \"n\": null, \"d\": 0.5,"
	    " \"b\": true, \"o\": {\"k\": \"deep\"}, \"e\": \"\"},"
	    " \"s\": \"str\", \"a.b\": 1}");
	ok(ju_get(o, "x.id", &v) == 1 && strcmp(json_object_get_string(v),
	    "t") == 0, "ju_get: a member of a member");
	ok(ju_get(o, "x.n", &v) == 1 && v == NULL, "ju_get: null is there");
	ok(ju_get(o, "x.none", &v) == 0 && ju_get(o, "y.id", &v) == 0,
	    "ju_get: absent, or its parent absent");
	ok(ju_get(o, "s.id", &v) == 0 && ju_get(o, "x.n.k", &v) == 0,
	    "ju_get: a parent not an object is absent");
	ok(ju_get(o, "a.b", &v) == 0, "ju_get: a name with a dot is a path");
	ok(ju_str(o, "x.o.k") != NULL && strcmp(ju_str(o, "x.o.k"),
	    "deep") == 0 && ju_str(o, "x.v") == NULL, "ju_str: by path");
	ok(ju_get(o, "s", &v) == 1 && ju_str(o, "s") != NULL,
	    "one name is still a member");

	ok(ju_req_str(o, "x.id", 8, &s, &e) == 0 && strcmp(s, "t") == 0,
	    "ju_req_str: by path");
	ok(ju_req_str(o, "x.none", 8, &s, &e) == -1 &&
	    refused(&e, "x.none", "is required"),
	    "ju_req_str: absent, named by its path");
	ok(ju_req_str(o, "x.v", 8, &s, &e) == -1 &&
	    refused(&e, "x.v", "must be a string"), "ju_req_str: not a string");
	ok(ju_req_str(o, "x.e", 8, &s, &e) == -1 &&
	    refused(&e, "x.e", "must be 1 to 8 characters"),
	    "ju_req_str: empty");
	ok(ju_req_str(o, "s.id", 8, &s, &e) == -1 &&
	    refused(&e, "s", "must be an object"),
	    "a parent not an object is refused, naming the parent");
	ok(ju_opt_str(o, "x.n.k", 8, &s, &e) == -1 &&
	    refused(&e, "x.n", "must be an object"), "so is a null parent");
	s = NULL;
	ok(ju_opt_str(o, "y.id", 8, &s, &e) == 0 && s == NULL,
	    "ju_opt_str: an absent parent leaves it absent");

	ok(ju_opt_int(o, "x.v", 1, 10, &n, NULL, &e) == 0 && n == 2,
	    "ju_opt_int: by path");
	ok(ju_opt_int(o, "x.v", 3, 10, &n, NULL, &e) == -1 &&
	    refused(&e, "x.v", "must be from 3 to 10"),
	    "ju_opt_int: out of range, named by its path");
	ok(ju_opt_int(o, "x.n", 1, 10, &n, &null, &e) == 0 && null == 1,
	    "ju_opt_int: null where null is taken");
	ok(ju_opt_int(o, "x.n", 1, 10, &n, NULL, &e) == -1 &&
	    refused(&e, "x.n", "must be an integer"),
	    "ju_opt_int: null where it is not");
	ok(ju_opt_num(o, "x.d", 0, 1, &d, &e) == 0 && d == 0.5,
	    "ju_opt_num: by path");
	ok(ju_opt_num(o, "x.id", 0, 1, &d, &e) == -1 &&
	    refused(&e, "x.id", "must be a number"), "ju_opt_num: refused");
	ok(ju_opt_bool(o, "x.b", &b, &e) == 0 && b == 1,
	    "ju_opt_bool: by path");
	ok(ju_opt_bool(o, "x.d", &b, &e) == -1 &&
	    refused(&e, "x.d", "must be a boolean"), "ju_opt_bool: refused");

	v = NULL;
	ok(ju_opt_obj(o, "x.o", &v, &e) == 0 && v != NULL,
	    "ju_opt_obj: an object");
	v = NULL;
	ok(ju_opt_obj(o, "x.p", &v, &e) == 0 && v == NULL,
	    "ju_opt_obj: absent");
	ok(ju_opt_obj(o, "x.n", &v, &e) == -1 &&
	    refused(&e, "x.n", "must be an object"),
	    "ju_opt_obj: null refused");
	ok(ju_opt_obj(o, "s", &v, &e) == -1 &&
	    refused(&e, "s", "must be an object"), "ju_opt_obj: a string");
	json_object_put(o);
}

/* ju_write_str(): the bytes json-c writes for the same string with
 * JU_WIRE, each byte alone (NUL too) and all of them in one string;
 * ju_write_num() as ju_num(), ju_write_int() as ju_int(). */
static void
test_write(void)
{
	struct buf	 b;
	json_object	*s;
	char		 all[256];
	int		 c, same = 1;

	buf_init(&b, 1 << 16);
	for (c = 0; c < 256; c++) {
		all[c] = (char)c;
		buf_reset(&b);
		s = json_object_new_string_len(all + c, 1);
		if (ju_write_str(&b, all + c, 1) == -1 || strcmp(b.p,
		    json_object_to_json_string_ext(s, JU_WIRE)) != 0) {
			printf("# byte 0x%02x: %s\n", c, b.p ? b.p : "(none)");
			same = 0;
		}
		json_object_put(s);
	}
	ok(same, "ju_write_str: each byte as json-c writes it");
	buf_reset(&b);
	s = json_object_new_string_len(all, (int)sizeof(all));
	ok(ju_write_str(&b, all, sizeof(all)) == 0 && b.len == strlen(
	    json_object_to_json_string_ext(s, JU_WIRE)) && memcmp(b.p,
	    json_object_to_json_string_ext(s, JU_WIRE), b.len) == 0,
	    "  and all 256 in one string");
	json_object_put(s);
	/* Strings of 0 to 40 bytes, each byte plain, escaped or UTF-8's
	 * high bytes, at every place within and across eight-byte words
	 * (ju_write_str() skips eight plain bytes at a time). */
	{
		static const char pick[] = "ab\"\\\n\x01\x1f \x7f"
		    "\x80\xc3\xa9\xff~";
		uint64_t	 x = 2463534242ULL;
		char		 t[40];
		size_t		 i, j, n;

		same = 1;
		for (i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			n = x % (sizeof(t) + 1);
			for (j = 0; j < n; j++)
				t[j] = pick[(x >> (j % 16 * 4) ^ j * 7) %
				    (sizeof(pick) - 1)];
			/* mostly plain: one escape at most in many */
			if (x & 0x100)
				for (j = 0; j < n; j++)
					t[j] = (char)('a' + (x + j) % 26);
			if (x & 0x100 && n > 0)
				t[(x >> 20) % n] = pick[(x >> 30) %
				    (sizeof(pick) - 1)];
			buf_reset(&b);
			s = json_object_new_string_len(t, (int)n);
			if (ju_write_str(&b, t, n) == -1 || b.p == NULL ||
			    strcmp(b.p, json_object_to_json_string_ext(s,
			    JU_WIRE)) != 0) {
				if (same)
					printf("# %zu bytes: %s\n", n,
					    b.p ? b.p : "(none)");
				same = 0;
			}
			json_object_put(s);
		}
		ok(same, "ju_write_str as json-c, escapes anywhere in 0 to"
		    " 40 bytes");
	}
	buf_reset(&b);
	s = ju_num(0.1 + 0.2);
	ok(ju_write_num(&b, 0.1 + 0.2) == 0 && strcmp(b.p,
	    json_object_to_json_string_ext(s, JU_WIRE)) == 0,
	    "ju_write_num as ju_num: %s", b.p);
	json_object_put(s);
	{
		static const int64_t ints[] = { 0, 7, -1, 10, 1234567890123,
		    INT64_MAX, INT64_MIN };
		size_t i;

		same = 1;
		for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
			buf_reset(&b);
			s = ju_int(ints[i]);
			if (ju_write_int(&b, ints[i]) == -1 || strcmp(b.p,
			    json_object_to_json_string_ext(s, JU_WIRE)) != 0) {
				printf("# %s\n", b.p ? b.p : "(none)");
				same = 0;
			}
			json_object_put(s);
		}
		ok(same, "ju_write_int as json-c, INT64_MIN and MAX too");
	}
	buf_free(&b);
}

/* ju_write_json(): the bytes json-c writes under JU_WIRE, for values as
 * parsed (numbers keep the text they were read from), as built, and
 * nested. */
static void
test_write_json(void)
{
	static const char *const texts[] = {
		"{}", "[]", "null", "true", "false", "\"\"", "0", "-0",
		"1.50", "1e2", "-0.0", "18446744073709551615",
		"-9223372036854775808", "9223372036854775808", "3.25E-7",
		"{\"a\":[1,2.0,{\"b\":null,\"c\":[[],{}]}],\"d\":\"x/y\"}",
		"{ \"s\" : \"\\u00e9\\u0000\\n\\\"\\\\\\/\\u001f"
		"\\ud83d\\ude00\" ,"
		" \"k\\\"ey\\u007f\": [ true , false , null ] }",
		"{\"state\":\"The checkout page is broken\",\"questions\":"
		"{\"q\":{\"type\":\"choice\",\"criteria\":{\"a\":\"\",\"b\":"
		"\"x\"}},\"r\":{\"type\":\"score\",\"criteria\":[\"lo\","
		"\"hi\"]}}}",
	};
	struct buf	 b;
	json_object	*o;
	const char	*want;
	size_t		 i;
	int		 same = 1;

	buf_init(&b, 1 << 16);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		o = parse(texts[i]);
		buf_reset(&b);
		want = json_object_to_json_string_ext(o, JU_WIRE);
		if (ju_write_json(&b, o) == -1 || b.p == NULL ||
		    strcmp(b.p, want) != 0) {
			printf("# %s: %s, json-c %s\n", texts[i],
			    b.p ? b.p : "(none)", want);
			same = 0;
		}
		json_object_put(o);
	}
	o = ju_obj();
	ju_add(o, "n", ju_num(0.1 + 0.2));
	ju_add(o, "i", ju_int(-42));
	ju_add(o, "z", NULL);
	ju_add(o, "s", json_object_new_string_len("a\0b", 3));
	buf_reset(&b);
	want = json_object_to_json_string_ext(o, JU_WIRE);
	if (ju_write_json(&b, o) == -1 || b.p == NULL ||
	    strcmp(b.p, want) != 0) {
		printf("# built: %s, json-c %s\n", b.p ? b.p : "(none)", want);
		same = 0;
	}
	json_object_put(o);
	ok(same, "ju_write_json as json-c under JU_WIRE");
	buf_free(&b);
	buf_init(&b, 4);
	o = parse("[1,2,3]");
	ok(ju_write_json(&b, o) == -1, "ju_write_json: -1 past the cap");
	json_object_put(o);
	buf_free(&b);
}

/* What ju_num() writes, by printf and strtod alone: the first of %.15g,
 * %.16g and %.17g that reads back as d, with ".0" after an integer. */
static void
num_printf(double d, char *buf, size_t size)
{
	int	 prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (strspn(buf, "-0123456789") == strlen(buf))
		strncat(buf, ".0", size - strlen(buf) - 1);
}

/* 1 if ju_num(d) writes what printf would; says the first that does
 * not. */
static int
num_same(double d, size_t *bad)
{
	json_object	*o = ju_num(d);
	char		 want[64];
	int		 same;

	num_printf(d == 0 ? 0 : d, want, sizeof(want));
	same = strcmp(json_object_to_json_string_ext(o, JU_WIRE), want) == 0;
	if (!same && (*bad)++ == 0)
		printf("# %.17g: ju_num %s, printf %s\n", d,
		    json_object_to_json_string_ext(o, JU_WIRE), want);
	json_object_put(o);
	return same;
}

/* ju_num(): multiples of powers of 2, short decimals, probabilities,
 * ratios and any bits, at the edges of the range written without an
 * exponent, of 15 digits and of each power of 10, each as printf writes
 * it. */
static void
test_num(void)
{
	static const double edges[] = {
		0, -0.0, 1, -1, 0.5, 0.25, 0.75, 1.5, 0.1, 0.2, 0.7,
		1.0 / 3, 2.0 / 3, 1e-4, 0.0001220703125, 0.00006103515625,
		9.99999999999999e14, 999999999999999, 1e15, 1e15 + 2,
		562949953421311.5, 281474976710655.75, 123456789012345,
		1234567890123456, 0.123456789012345, 0.1234567890123456,
		3.0517578125e-05, 4503599627370495.5, 1e300, 1e-300, 5e-324,
		0.000244140625, 0.0009765625, 1099511627776.0009765625,
		9.9999999999999995e-5, 0.099999999999999992,
		999999999999999.94, 9999999999999998, 1e16, 1e17, 1e21,
		1e-5, 123456789012345680000.0, 0.30000000000000004,
		1.7976931348623157e308, 2.2250738585072014e-308,
		9.1071e-09, 9.999e-9, 1.0000001e-8, 9.87654321098765e14,
		9.9e-9, 9.99999e-9, 0.000099, 0.0099999,
	};
	size_t	 i, j, bad = 0, n = 0;
	uint64_t x = 88172645463325252ULL;	/* xorshift64 */
	double	 d, lo, hi;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++, n++) {
		num_same(edges[i], &bad);
		num_same(-edges[i], &bad);
	}
	/* Near each power of 10, where rounding carries into a new
	 * exponent and %g changes notation. */
	for (i = 0; i < 80; i++) {
		lo = hi = pow(10, (double)i - 40);
		for (j = 0; j < 4; j++, n += 2) {
			num_same(lo, &bad);
			num_same(hi, &bad);
			lo = nextafter(lo, 0);
			hi = nextafter(hi, HUGE_VAL);
		}
	}
	for (i = 0; i < 200000; i++, n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % 5;
		if (j == 4)		/* a short decimal: k / 10^s */
			d = (double)(x >> 44) / pow(10, (double)(x >> 4 & 15));
		else if (j == 0)	/* k / 2^s */
			d = ldexp((double)(x >> 40), -(int)(x >> 8 & 63));
		else if (j == 1)	/* a probability */
			d = (double)(x >> 11) / 9007199254740992.0;
		else if (j == 2)	/* k / n */
			d = (double)(x >> 50) / (double)((x >> 20 & 1023) + 1);
		else			/* any bits */
			memcpy(&d, &x, sizeof(d));
		if (isfinite(d))
			num_same(x & 1 ? -d : d, &bad);
	}
	ok(bad == 0, "ju_num writes what printf writes (%zu of %zu not)",
	    bad, n);
	/* Where whether %.15g reads back is decided without strtod(): the
	 * double nearest a decimal of 15 digits, from 1e-8 to 1e15, and
	 * the two beside it (which that decimal may or may not name), and
	 * the powers of 2, whose ulp below is half the one above. */
	bad = n = 0;
	for (i = 0; i < 100000; i++) {
		char	 text[40];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		snprintf(text, sizeof(text), "%llu.%014llue%d",
		    (unsigned long long)(x % 9 + 1),
		    (unsigned long long)(x >> 8) % 100000000000000ULL,
		    (int)(x >> 59 & 31) % 23 - 8);
		d = strtod(text, NULL);
		lo = nextafter(d, 0);
		hi = nextafter(d, HUGE_VAL);
		num_same(d, &bad);
		num_same(lo, &bad);
		num_same(-hi, &bad);
		n += 3;
	}
	for (i = 0; i < 80; i++, n += 3) {
		d = ldexp(1, (int)i - 30);
		num_same(d, &bad);
		num_same(nextafter(d, 0), &bad);
		num_same(nextafter(d, HUGE_VAL), &bad);
	}
	ok(bad == 0, "ju_num beside 15-digit decimals and powers of 2 as"
	    " printf (%zu of %zu not)", bad, n);
}

int
main(void)
{
	struct error	 e = { 0 };
	json_object	*o;
	const char	*why, *text;
	char		 path[64];
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(path, "?");
		why = ju_lossy(cases[i].text, strlen(cases[i].text), path,
		    sizeof(path));
		if (cases[i].path == NULL)
			ok(why == NULL, "kept as sent: %s", cases[i].text);
		else
			ok(why != NULL && strcmp(path, cases[i].path) == 0,
			    "%s: at %s (%s)", cases[i].text, path,
			    why ? why : "not found");
		o = ju_parse_body(cases[i].text, strlen(cases[i].text), &e);
		ok((o != NULL) == (cases[i].path == NULL),
		    "ju_parse_body %s it", o ? "takes" : "refuses");
		json_object_put(o);
		error_clear(&e);
	}
	/* One tokener parses every body: one cut short, nested, leaves
	 * nothing behind for the next. */
	o = ju_parse_body("{\"a\": [{\"b\": [1,", 16, &e);
	ok(o == NULL && e.code == ERR_VALIDATION, "a body cut short: refused");
	error_clear(&e);
	o = ju_parse_body("{\"c\": 2}", 8, &e);
	ok(o != NULL && json_object_object_length(o) == 1 &&
	    json_object_object_get_ex(o, "c", NULL), "  the next body whole");
	json_object_put(o);
	/* Nor one cut after half of a surrogate pair: the next body's
	 * escape is its own character, not a pair's second half. */
	o = ju_parse_body("{\"a\": \"\\ud83d", 13, &e);
	ok(o == NULL && e.code == ERR_VALIDATION,
	    "a body cut after \\ud83d: refused");
	error_clear(&e);
	o = ju_parse_body("{\"b\": \"\\u00e9\"}", 15, &e);
	ok(o != NULL && strcmp(ju_str(o, "b"), "\xc3\xa9") == 0,
	    "  the next body's \\u00e9 is \u00e9 alone");
	json_object_put(o);
	error_clear(&e);
	/* A path longer than the buffer is cut, never overrun. */
	text = "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaa\": {\"b\": NaN}}";
	why = ju_lossy(text, strlen(text), path, 16);
	ok(why != NULL && strlen(path) == 15, "a long path is cut: %s", path);
	/* Decimals without an exponent: 296 digits before the point are
	 * finite, 320 are beyond DBL_MAX (json-c would keep infinity). */
	{
		char	big[400];
		size_t	digits[] = { 296, 320 };

		for (i = 0; i < 2; i++) {
			memset(big, '0', sizeof(big));
			memcpy(big, "{\"n\": 9", 7);
			memcpy(big + 6 + digits[i], ".5}", 4);
			why = ju_lossy(big, strlen(big), path, sizeof(path));
			ok((why == NULL) == (i == 0), "%zu digits and a point:"
			    " %s", digits[i], why ? why : "kept");
		}
	}
	/* Text that ends inside a token is not read past its length. */
	ok(ju_lossy("{\"a\": 1e999", 8, NULL, 0) == NULL,
	    "only len bytes are read");
	{
		static const char	 cut[] = "{\"s\": \"x\\";
		char			*copy = xmalloc(sizeof(cut) - 1);

		/* Without its NUL, where ASan sees a byte read beyond. */
		memcpy(copy, cut, sizeof(cut) - 1);
		ok(ju_lossy(copy, sizeof(cut) - 1, NULL, 0) == NULL,
		    "a string cut short after a backslash is not read past");
		free(copy);
	}
	test_paths();
	test_write();
	test_num();
	test_write_json();
	return tap_done();
}
