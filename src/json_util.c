/* json_util.c: typed member access with refusals naming the field, and
 * the JSON parsing and number writing every module shares. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "json_util.h"
#include "utf8.h"
#include "xalloc.h"

json_object *
ju_parse(const char *text)
{
	json_tokener	*tok;
	json_object	*obj;
	size_t		 len = strlen(text), end;

	if (len >= INT_MAX || (tok = json_tokener_new_ex(JU_MAX_DEPTH)) == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* The NUL is passed too, so that a bare number at the end ends. */
	obj = json_tokener_parse_ex(tok, text, (int)len + 1);
	end = json_tokener_get_parse_end(tok);
	if (end > len)
		end = len;
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    text[end + strspn(text + end, " \t\r\n")] != '\0') {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/* The largest integers json-c keeps exactly, as digits: beyond them it
 * saturates silently. */
#define INT_POS_MAX	"18446744073709551615"	/* UINT64_MAX */
#define INT_NEG_MAX	"9223372036854775808"	/* -INT64_MIN */

/* 1 if the number token t (n bytes, JSON grammar) is one json-c keeps:
 * a finite double, or an integer from INT64_MIN to UINT64_MAX. */
static int
faithful_number(const char *t, size_t n)
{
	char		 buf[64], *copy = buf;
	const char	*max;
	size_t		 digits;
	int		 ok;

	if (memchr(t, '.', n) == NULL && memchr(t, 'e', n) == NULL &&
	    memchr(t, 'E', n) == NULL) {		/* an integer */
		max = *t == '-' ? INT_NEG_MAX : INT_POS_MAX;
		digits = n - (*t == '-');
		return digits < strlen(max) || (digits == strlen(max) &&
		    strncmp(t + (*t == '-'), max, digits) <= 0);
	}
	/* Without an exponent, fewer digits than DBL_MAX has before its
	 * point (309) cannot overflow: the common case needs no strtod. */
	if (n < 300 && memchr(t, 'e', n) == NULL && memchr(t, 'E', n) == NULL)
		return 1;
	if (n >= sizeof(buf) && (copy = malloc(n + 1)) == NULL)
		return 1;	/* json-c's own answer stands */
	memcpy(copy, t, n);
	copy[n] = '\0';
	ok = isfinite(strtod(copy, NULL));
	if (copy != buf)
		free(copy);
	return ok;
}

/* Where ju_lossy() is in the text: one frame per open object or array,
 * with the current key (raw, escapes as written) or index. */
struct frame {
	int		 array;
	const char	*key;
	size_t		 keylen;
	size_t		 index;
};

/* The path of the value the frames point at, as a field is named
 * ("answers.level", "state.list[2]"), into buf; cut short if need be. */
static void
frames_path(const struct frame *f, size_t n, char *buf, size_t size)
{
	size_t	 i, o = 0;
	int	 w;

	buf[0] = '\0';
	for (i = 0; i < n && o + 1 < size; i++) {
		if (!f[i].array && f[i].key == NULL)
			continue;	/* an object before its first key */
		if (f[i].array)
			w = snprintf(buf + o, size - o, "[%zu]", f[i].index);
		else
			w = snprintf(buf + o, size - o, "%s%.*s", o ? "." : "",
			    (int)f[i].keylen, f[i].key ? f[i].key : "");
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/* The code unit of the escape "\\uXXXX" at s (avail bytes), or -1. */
static long
escaped_unit(const char *s, size_t avail)
{
	long	u = 0;
	int	i, c;

	if (avail < 6 || s[0] != '\\' || s[1] != 'u')
		return -1;
	for (i = 2; i < 6; i++) {
		c = s[i] | 0x20;
		if (s[i] >= '0' && s[i] <= '9')
			u = u * 16 + (s[i] - '0');
		else if (c >= 'a' && c <= 'f')
			u = u * 16 + (c - 'a' + 10);
		else
			return -1;
	}
	return u;
}

#define ONES	0x0101010101010101ULL

/* 1 if none of the eight bytes at s is a quote or a backslash (each
 * test exact for whether any byte is one). */
static int
unquoted8(const char *s)
{
	uint64_t	 w;

	memcpy(&w, s, sizeof(w));
	return ((((w ^ ONES * '"') - ONES) | ((w ^ ONES * '\\') - ONES)) &
	    ~w & ONES * 0x80) == 0;
}

/* Where the string opened by the quote at text[i] ends: the index of its
 * closing quote, or len.  *nul is set when it holds the escape \\u0000,
 * *why when a lone surrogate.  The bytes between escapes are skipped
 * eight at a time while no quote or backslash is among them; each byte
 * is looked at once. */
static size_t
string_end(const char *text, size_t i, size_t len, int *nul,
    const char **why)
{
	size_t		 j = i + 1, next;
	long		 u, v;

	for (;;) {
		while (len - j >= 8 && unquoted8(text + j))
			j += 8;
		while (j < len && text[j] != '"' && text[j] != '\\')
			j++;
		if (j >= len || text[j] == '"')
			return j < len ? j : len;
		*nul |= len - j > 5 && memcmp(text + j, "\\u0000", 6) == 0;
		/* json-c keeps a lone surrogate as U+FFFD. */
		u = escaped_unit(text + j, len - j);
		next = j + 2;
		if (u >= 0xd800 && u <= 0xdbff &&
		    (v = escaped_unit(text + j + 6, len - j - 6)) >= 0xdc00 &&
		    v <= 0xdfff)
			next = j + 8;		/* a pair, to its last digits */
		else if (u >= 0xd800 && u <= 0xdfff)
			*why = "a string holds a lone surrogate (\\ud800 to"
			    " \\udfff unpaired)";
		j = next < len ? next : len;
	}
}

/* JSON's whitespace, and the bytes a number's token holds. */
#define IS_SPACE(c)	((c) == ' ' || (c) == '\t' || (c) == '\r' || \
			    (c) == '\n')
#define IS_NUMBER(c)	(((c) >= '0' && (c) <= '9') || (c) == '.' || \
			    (c) == 'e' || (c) == 'E' || (c) == '+' || \
			    (c) == '-')

const char *
ju_lossy(const char *text, size_t len, char *path, size_t pathsize)
{
	struct frame	 f[JU_MAX_DEPTH + 1];
	const char	*why = NULL;
	size_t		 i = 0, j, k, n = 0;
	int		 nul;

	while (i < len && why == NULL) {
		switch (text[i]) {
		case '{':
		case '[':
			if (n < JU_MAX_DEPTH + 1) {
				memset(&f[n], 0, sizeof(f[n]));
				f[n++].array = text[i] == '[';
			}
			i++;
			continue;
		case '}':
		case ']':
			n -= n > 0;
			i++;
			continue;
		case ',':
			if (n > 0 && f[n - 1].array)
				f[n - 1].index++;
			i++;
			continue;
		case '"':
			nul = 0;
			j = string_end(text, i, len, &nul, &why);
			for (k = j + 1; k < len && IS_SPACE(text[k]); k++)
				continue;
			if (k < len && text[k] == ':' && n > 0 &&
			    !f[n - 1].array) {
				f[n - 1].key = text + i + 1;
				f[n - 1].keylen = j - i - 1;
				if (nul)
					why = "an object key contains \\u0000"
					    " (NUL)";
			}
			i = j + 1;
			continue;
		case 'N':
		case 'I':
			why = "NaN and Infinity are not JSON numbers";
			continue;
		case '\'':
			/* json-c's strict mode still takes 'key': not JSON,
			 * and this scan could not follow it. */
			why = "single-quoted strings are not JSON";
			continue;
		}
		if (text[i] != '-' && (text[i] < '0' || text[i] > '9')) {
			i++;
			continue;
		}
		for (j = i + 1; j < len && IS_NUMBER(text[j]); j++)
			continue;
		if (j < len && (text[j] == 'I' || text[j] == 'N'))
			why = "NaN and Infinity are not JSON numbers";
		else if (!faithful_number(text + i, j - i))
			why = "a number is out of range (not finite, or an"
			    " integer beyond 64 bits)";
		i = j;
	}
	if (why != NULL && path != NULL && pathsize > 0)
		frames_path(f, n, path, pathsize);
	return why;
}

/* The tokener of every body the process parses, reset after each it
 * took: its levels (JU_MAX_DEPTH of them) are allocated and cleared
 * once. */
static json_tokener	*body_tok;

json_object *
ju_parse_body(const char *body, size_t len, struct error *e)
{
	const char		*lossy;
	char			 path[256];
	json_tokener		*tok;
	json_object		*obj;
	enum json_tokener_error	 jerr;

	if (len == 0) {
		error_set(e, ERR_VALIDATION, "body", "a JSON object is required");
		return NULL;
	}
	if (len >= INT_MAX) {
		error_set(e, ERR_VALIDATION, "body", "too large");
		return NULL;
	}
	if (memchr(body, '\0', len) != NULL) {
		error_set(e, ERR_VALIDATION, "body", "contains a NUL byte");
		return NULL;
	}
	/* Not JSON_TOKENER_VALIDATE_UTF8: json-c checks only the number of
	 * continuation bytes, and lets overlong forms and surrogates in. */
	if (!utf8_valid(body, len)) {
		error_set(e, ERR_VALIDATION, "body", "is not valid UTF-8");
		return NULL;
	}
	if (body_tok == NULL &&
	    (body_tok = json_tokener_new_ex(JU_MAX_DEPTH)) == NULL) {
		error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		return NULL;
	}
	tok = body_tok;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_success &&
	    json_tokener_get_parse_end(tok) != len) {
		json_object_put(obj);
		obj = NULL;
		error_set(e, ERR_VALIDATION, "body",
		    "trailing characters after the JSON value");
	} else if (jerr != json_tokener_success) {
		json_object_put(obj);
		obj = NULL;
		error_set(e, ERR_VALIDATION, "body", "malformed JSON: %s",
		    jerr == json_tokener_continue ? "unexpected end of input" :
		    json_tokener_error_desc(jerr));
	} else if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
		error_set(e, ERR_VALIDATION, "body", "must be a JSON object");
	} else if ((lossy = ju_lossy(body, len, path, sizeof(path))) !=
	    NULL) {
		json_object_put(obj);
		obj = NULL;
		error_set(e, ERR_VALIDATION, path[0] ? path : "body", "%s",
		    lossy);
	}
	/* After a body json-c did not take whole, the tokener may hold
	 * state its reset leaves (half of a surrogate pair): a new one
	 * parses the next. */
	if (jerr == json_tokener_success)
		json_tokener_reset(tok);
	else {
		json_tokener_free(tok);
		body_tok = NULL;
	}
	return obj;
}

/* Follows path from obj: 1 with *v set, 0 when a member is absent, or
 * -1 when a member on the way is there but not an object (or null): *at
 * is then the length of the path that leads to it. */
static int
walk(json_object *obj, const char *path, json_object **v, size_t *at)
{
	char		 name[JU_PATH_MAX];
	const char	*p = path, *dot;
	size_t		 n;

	*v = obj;
	for (;;) {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(name))
			return 0;
		if (p != path && !json_object_is_type(*v, json_type_object)) {
			*at = (size_t)(p - path) - 1;
			return -1;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (!json_object_object_get_ex(*v, name, v))
			return 0;
		if (dot == NULL)
			return 1;
		p = dot + 1;
	}
}

/* The member at path for a typed getter: 1 with *v set, 0 absent, or -1
 * with e set for a member on the way that is not an object. */
static int
member(json_object *obj, const char *path, json_object **v,
    struct error *e)
{
	char	 field[JU_PATH_MAX];
	size_t	 at;
	int	 rc;

	if ((rc = walk(obj, path, v, &at)) != -1)
		return rc;
	snprintf(field, sizeof(field), "%.*s", (int)at, path);
	return error_set(e, ERR_VALIDATION, field, "must be an object");
}

int
ju_get(json_object *obj, const char *path, json_object **v)
{
	json_object	*found;
	size_t		 at;

	if (walk(obj, path, &found, &at) != 1)
		return 0;
	*v = found;
	return 1;
}

const char *
ju_str(json_object *obj, const char *path)
{
	json_object *v;

	if (!ju_get(obj, path, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int
ju_opt_obj(json_object *obj, const char *path, json_object **out,
    struct error *e)
{
	json_object	*v;
	int		 rc;

	if ((rc = member(obj, path, &v, e)) != 1)
		return rc;
	if (!json_object_is_type(v, json_type_object))
		return error_set(e, ERR_VALIDATION, path, "must be an object");
	*out = v;
	return 0;
}

int
ju_opt_str(json_object *obj, const char *path, size_t maxlen,
    const char **out, struct error *e)
{
	json_object	*v;
	size_t		 len;
	int		 rc;

	if ((rc = member(obj, path, &v, e)) != 1 || v == NULL)
		return rc;
	if (!json_object_is_type(v, json_type_string))
		return error_set(e, ERR_VALIDATION, path, "must be a string");
	len = (size_t)json_object_get_string_len(v);
	if (len == 0 || len > maxlen)
		return error_set(e, ERR_VALIDATION, path,
		    "must be 1 to %zu characters", maxlen);
	if (strlen(json_object_get_string(v)) != len)
		return error_set(e, ERR_VALIDATION, path,
		    "must not contain NUL");
	*out = json_object_get_string(v);
	return 0;
}

int
ju_req_str(json_object *obj, const char *path, size_t maxlen,
    const char **out, struct error *e)
{
	*out = NULL;
	if (ju_opt_str(obj, path, maxlen, out, e) == -1)
		return -1;
	if (*out == NULL)
		return error_set(e, ERR_VALIDATION, path, "is required");
	return 0;
}

int
ju_opt_bool(json_object *obj, const char *path, int *out, struct error *e)
{
	json_object	*v;
	int		 rc;

	if ((rc = member(obj, path, &v, e)) != 1 || v == NULL)
		return rc;
	if (!json_object_is_type(v, json_type_boolean))
		return error_set(e, ERR_VALIDATION, path, "must be a boolean");
	*out = json_object_get_boolean(v);
	return 0;
}

int
ju_opt_int(json_object *obj, const char *path, int64_t min, int64_t max,
    int64_t *out, int *is_null, struct error *e)
{
	json_object	*v;
	int64_t		 n;
	int		 rc;

	if ((rc = member(obj, path, &v, e)) != 1)
		return rc;
	if (v == NULL) {
		if (is_null == NULL)
			return error_set(e, ERR_VALIDATION, path,
			    "must be an integer");
		*is_null = 1;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return error_set(e, ERR_VALIDATION, path, "must be an integer");
	n = json_object_get_int64(v);
	if (n < min || n > max || (n == INT64_MAX &&
	    json_object_get_uint64(v) > INT64_MAX))
		return error_set(e, ERR_VALIDATION, path,
		    "must be from %lld to %lld", (long long)min,
		    (long long)max);
	*out = n;
	return 0;
}

int
ju_opt_num(json_object *obj, const char *path, double min, double max,
    double *out, struct error *e)
{
	json_object	*v;
	double		 d;
	int		 rc;

	if ((rc = member(obj, path, &v, e)) != 1 || v == NULL)
		return rc;
	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return error_set(e, ERR_VALIDATION, path, "must be a number");
	d = json_object_get_double(v);
	if (!isfinite(d) || d < min || d > max)
		return error_set(e, ERR_VALIDATION, path,
		    "must be from %g to %g", min, max);
	*out = d;
	return 0;
}

json_object *
ju_must(json_object *o)
{
	if (o == NULL)
		xoom("json-c object");
	return o;
}

json_object *
ju_obj(void)
{
	return ju_must(json_object_new_object());
}

json_object *
ju_arr(void)
{
	return ju_must(json_object_new_array());
}

json_object *
ju_int(int64_t n)
{
	return ju_must(json_object_new_int64(n));
}

json_object *
ju_bool(int b)
{
	return ju_must(json_object_new_boolean(b != 0));
}

json_object *
ju_string(const char *s)
{
	return ju_must(json_object_new_string(s));
}

json_object *
ju_string_len(const char *s, size_t len)
{
	if (len > INT_MAX)
		xoom("json-c string");
	return ju_must(json_object_new_string_len(s, (int)len));
}

void
ju_add(json_object *obj, const char *key, json_object *v)
{
	if (json_object_object_add(obj, key, v) != 0)
		xoom("json-c member");
}

void
ju_push(json_object *arr, json_object *v)
{
	if (json_object_array_add(arr, v) != 0)
		xoom("json-c element");
}

/*
 * Numbers.  ju_num() writes the first of "%.15g", "%.16g" and "%.17g"
 * that reads back as d.  A printf of a double costs thousands of
 * instructions and strtod() hundreds, so the text is built from d's
 * significant digits where they are known without printf, to the byte
 * what printf writes (json_util_test compares the two):
 *  - a decimal of at most 15 digits (0.25, 1.5, 3: a multiple of a small
 *    power of 2) is its own %.15g text, exactly d;
 *  - otherwise, if %.15g reads back as d, d's 15 digits come from one
 *    multiplication by a power of 10 (num_short());
 *  - otherwise the 17 digits of one "%.16e", rounded to 16 digits, then
 *    taken as they are.
 */

#define NUM_MAX		40	/* bytes of a number's text */

/* Writes at o what "%.{p}g" writes for the number of sign neg whose p
 * significant digits are r (rounded) and whose exponent is x (as "%e"
 * writes it); returns the end. */
static char *
num_format(char *o, int neg, const char *r, int x, int p)
{
	int	 i, last;

	for (last = p - 1; last > 0 && r[last] == '0'; last--)
		;
	if (neg)
		*o++ = '-';
	if (x < -4 || x >= p) {		/* d.ddde+XX */
		*o++ = r[0];
		if (last > 0) {
			*o++ = '.';
			memcpy(o, r + 1, (size_t)last);
			o += last;
		}
		*o++ = 'e';
		*o++ = x < 0 ? '-' : '+';
		x = abs(x);
		if (x >= 100)
			*o++ = (char)('0' + x / 100);
		*o++ = (char)('0' + x / 10 % 10);
		*o++ = (char)('0' + x % 10);
	} else if (x >= 0) {		/* ddd.ddd */
		memcpy(o, r, (size_t)x + 1);
		o += x + 1;
		if (last > x) {
			*o++ = '.';
			memcpy(o, r + x + 1, (size_t)(last - x));
			o += last - x;
		}
	} else {			/* 0.000ddd */
		*o++ = '0';
		*o++ = '.';
		for (i = x + 1; i < 0; i++)
			*o++ = '0';
		memcpy(o, r, (size_t)last + 1);
		o += last + 1;
	}
	*o = '\0';
	return o;
}

/* The 15 digits of n (< 10^15) into r, with leading zeros; the number of
 * n's own digits. */
static int
num_digits15(uint64_t n, char r[15])
{
	int	 i, nd = 0;

	for (i = 14; i >= 0; i--, n /= 10) {
		r[i] = (char)('0' + n % 10);
		if (n > 0)
			nd = 15 - i;
	}
	return nd;
}

/* d as a decimal of at most 15 digits, if it is one: then that is its
 * %.15g text, and it reads back as d.  1 if written to buf, else 0. */
static int
num_exact(double d, char *buf)
{
	uint64_t	 m, n;
	char		 r[15], s[15];
	int		 e, j = 0, i, nd;

	if (fabs(d) >= 1e15)
		return 0;
	/* |d| = m * 2^e, m odd. */
	m = (uint64_t)ldexp(frexp(fabs(d), &e), 53);
	e -= 53;
	for (; (m & 0xff) == 0; e += 8)
		m >>= 8;
	for (; (m & 1) == 0; e++)
		m >>= 1;
	/* |d| = n / 10^j with n = m * 5^j for e = -j < 0. */
	if (e >= 0)
		n = m << e;		/* below 1e15 */
	else {
		j = -e;
		for (n = m, i = 0; i < j; i++) {
			if (n > 999999999999999ULL / 5)
				return 0;	/* more than 15 digits */
			n *= 5;
		}
	}
	/* n's digits first, then zeros. */
	for (nd = 0; n > 0; n /= 10)
		s[nd++] = (char)('0' + n % 10);		/* backwards */
	for (i = 0; i < nd; i++)
		r[i] = s[nd - 1 - i];
	memset(r + nd, '0', (size_t)(15 - nd));
	num_format(buf, d < 0, r, nd - 1 - j, 15);
	return 1;
}

/* Whether the decimal n / s reads back as a (positive, normal, not a
 * power of 2; s a power of 10 below 2^53, n < 2^53 the integer nearest
 * a * s, both exact): 1 yes, 0 no, -1 too near the edge to tell without
 * strtod().  It does when n is within half of a's ulp, times s, of a * s.
 * That product is hi + lo exactly (fma()); n - hi is exact, as both are
 * within 0.5 of each other; only n - hi - lo is rounded, by a relative
 * 2^-53, within the margin of 2^-50 left on either side of the bound,
 * which a power of 2 times s is exactly.  A tie, or the narrower ulp
 * below a power of 2, is left to strtod(). */
static int
num_reads_back(uint64_t n, double a, double s)
{
	uint64_t	 bits;
	double		 hi, lo, err, bound;

	memcpy(&bits, &a, sizeof(bits));
	/* half an ulp of a: 2^(exponent - 53), the exponent unbiased */
	bits = ((bits >> 52 & 0x7ff) - 53) << 52;
	memcpy(&bound, &bits, sizeof(bound));
	bound *= s;
	hi = a * s;
	lo = fma(a, s, -hi);
	err = fabs(((double)n - hi) - lo);
	if (err < bound * (1 - 0x1p-50))
		return 1;
	if (err > bound * (1 + 0x1p-50))
		return 0;
	return -1;
}

/* d's %.15g text, if it reads back as d and 1e-8 <= |d| < 1e15: then it
 * is the decimal of 15 digits nearest d, and the nearest integer to |d|
 * times 10^(14 - x) is it, since that product is off by less than 0.07
 * and d by less than 0.12 at that scale.  1 if written to buf, else 0
 * (and %.15g does not read back as d).  Whether it reads back is found
 * by num_reads_back(), strtod() only near the edge. */
static int
num_short(double d, char *buf)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
		1e21, 1e22,
	};
	double		 a = fabs(d);
	uint64_t	 n, bits;
	char		 r[15];
	int		 x, back;

	if (a < 1e-8 || a >= 1e15)
		return 0;
	x = (int)floor(log10(a));
	x = x < -8 ? -8 : x > 14 ? 14 : x;
	n = (uint64_t)llround(a * p10[14 - x]);
	if (n >= 1000000000000000ULL && x < 14)
		n = (uint64_t)llround(a * p10[14 - ++x]);
	else if (n < 100000000000000ULL && x > -8)
		n = (uint64_t)llround(a * p10[14 - --x]);
	if (n < 100000000000000ULL || n >= 1000000000000000ULL)
		return 0;
	memcpy(&bits, &a, sizeof(bits));
	back = (bits & 0xfffffffffffffULL) == 0 ? -1 :
	    num_reads_back(n, a, p10[14 - x]);
	if (back == 0)
		return 0;
	num_digits15(n, r);
	num_format(buf, d < 0, r, x, 15);
	return back == 1 || strtod(buf, NULL) == d;
}

/* The first of "%.{from}g" .. "%.17g" that reads back as d (finite, not
 * 0) into buf: the 17 digits of one "%.16e", rounded to 16 and 15 of
 * them.  Rounding them is rounding d unless they end exactly half way
 * ("5" after the last digit kept, then zeros): d may be on either side
 * of that, and printf rounds d itself. */
static void
num_printf(double d, char *buf, int from)
{
	char	 e[NUM_MAX], dig[17], r[17];
	int	 p, x, xp, i;
	const char *s = e + (d < 0);

	/* [-]d.dddddddddddddddde[+-]xx */
	snprintf(e, sizeof(e), "%.16e", d);
	dig[0] = s[0];
	memcpy(dig + 1, s + 2, 16);
	x = atoi(s + 19);
	for (p = from; p <= 16; p++) {
		memcpy(r, dig, (size_t)p);
		xp = x;
		for (i = p + 1; i < 17 && dig[i] == '0'; i++)
			;
		if (dig[p] == '5' && i == 17)
			snprintf(buf, NUM_MAX, "%.*g", p, d);	/* a tie */
		else {
			if (dig[p] >= '5') {
				for (i = p - 1; i >= 0 && r[i] == '9'; i--)
					r[i] = '0';
				if (i >= 0)
					r[i]++;
				else {
					r[0] = '1';	/* 9.99 to 10.0 */
					xp++;
				}
			}
			num_format(buf, d < 0, r, xp, p);
		}
		if (strtod(buf, NULL) == d)
			return;
	}
	num_format(buf, d < 0, dig, x, 17);
}

_Static_assert(NUM_MAX == JU_NUM_MAX, "ju_num_text()'s buffer");

/* d as ju_num() writes it, into buf; the value that text stands for (0
 * for what is not finite, and for -0). */
static double
num_text(double d, char *buf)
{
	if (!isfinite(d))
		d = 0;
	if (d == 0) {
		d = 0;		/* no "-0.0" */
		strcpy(buf, "0");
	} else if (!num_exact(d, buf) && !num_short(d, buf))
		num_printf(d, buf, fabs(d) >= 1e-8 && fabs(d) < 1e15 ? 16 :
		    15);
	if (strspn(buf, "-0123456789") == strlen(buf))
		strncat(buf, ".0", NUM_MAX - strlen(buf) - 1);
	return d;
}

size_t
ju_num_text(double d, char *buf)
{
	num_text(d, buf);
	return strlen(buf);
}

json_object *
ju_num(double d)
{
	char	 buf[NUM_MAX];

	d = num_text(d, buf);
	return ju_must(json_object_new_double_s(d, buf));
}

void
ju_add_figure(json_object *obj, const char *key, double d)
{
	ju_add(obj, key, isfinite(d) ? ju_num(d) : NULL);
}

void
ju_add_count(json_object *obj, const char *key, size_t n)
{
	ju_add(obj, key, ju_int((int64_t)n));
}

void
ju_add_str(json_object *obj, const char *key, const char *v)
{
	ju_add(obj, key, v ? ju_string(v) : NULL);
}

void
ju_add_time(json_object *obj, const char *key, int64_t ms)
{
	char buf[32];

	if (ms == 0) {
		ju_add(obj, key, NULL);
		return;
	}
	clock_rfc3339(ms, buf);
	ju_add(obj, key, ju_string(buf));
}

/* What json-c writes for each byte of a string under JU_WIRE: NULL for
 * the byte itself, else its escape. */
static const char *const escapes[0x20] = {
	"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005",
	"\\u0006", "\\u0007", "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r",
	"\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013",
	"\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
	"\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
};

/* 1 if json-c writes each of the eight bytes at s as it is: none below
 * 0x20, no quote, no backslash (each test exact for whether any byte
 * is one; bit 7 of a byte at 0x80 or above is never counted). */
static int
plain8(const char *s)
{
	uint64_t	 w;

	memcpy(&w, s, sizeof(w));
	return (((w - ONES * 0x20) | ((w ^ ONES * '"') - ONES) |
	    ((w ^ ONES * '\\') - ONES)) & ~w & ONES * 0x80) == 0;
}

/* The index of the first byte from i on that json-c escapes, or len:
 * eight bytes at a time while none is. */
static size_t
plain_span(const char *s, size_t i, size_t len)
{
	unsigned char	 c;

	for (; len - i >= 8 && plain8(s + i); i += 8)
		continue;
	for (; i < len; i++) {
		c = (unsigned char)s[i];
		if (c < 0x20 || c == '"' || c == '\\')
			break;
	}
	return i;
}

int
ju_write_str(struct buf *b, const char *s, size_t len)
{
	const char	*esc;
	char		*p;
	size_t		 i = plain_span(s, 0, len), from = 0;
	unsigned char	 c;
	int		 rc;

	if (i == len) {		/* nothing to escape: one append */
		if (len > SIZE_MAX - 2 || (p = buf_extend(b, len + 2,
		    NULL)) == NULL)
			return -1;
		p[0] = '"';
		memcpy(p + 1, s, len);
		p[len + 1] = '"';
		return 0;
	}
	rc = buf_add(b, "\"", 1);
	while (i < len && rc == BUF_OK) {
		c = (unsigned char)s[i];
		esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : escapes[c];
		if ((rc = buf_add(b, s + from, i - from)) == BUF_OK)
			rc = buf_adds(b, esc);
		from = i + 1;
		i = plain_span(s, from, len);
	}
	if (rc == BUF_OK && (rc = buf_add(b, s + from, len - from)) ==
	    BUF_OK)
		rc = buf_add(b, "\"", 1);
	return rc == BUF_OK ? 0 : -1;
}

int
ju_write_int(struct buf *b, int64_t n)
{
	char		 d[24], *p = d + sizeof(d);
	uint64_t	 u = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (n < 0)
		*--p = '-';
	return buf_add(b, p, (size_t)(d + sizeof(d) - p)) == BUF_OK ? 0 : -1;
}

int
ju_write_num(struct buf *b, double d)
{
	char	 buf[NUM_MAX];

	return buf_add(b, buf, ju_num_text(d, buf)) == BUF_OK ? 0 : -1;
}

int
ju_write_json(struct buf *b, json_object *o)
{
	const char	*text;
	size_t		 i, n, len;
	int		 rc = 0, first = 1;

	switch (json_object_get_type(o)) {
	case json_type_null:
		return buf_add(b, "null", 4) == BUF_OK ? 0 : -1;
	case json_type_boolean:
		return buf_adds(b, json_object_get_boolean(o) ? "true" :
		    "false") == BUF_OK ? 0 : -1;
	case json_type_string:
		return ju_write_str(b, json_object_get_string(o),
		    (size_t)json_object_get_string_len(o));
	case json_type_object:
		rc = buf_add(b, "{", 1) == BUF_OK ? 0 : -1;
		json_object_object_foreach(o, k, v) {
			/* json-c writes a key up to its first NUL */
			if (rc == 0 && ((!first && buf_add(b, ",", 1) !=
			    BUF_OK) || ju_write_str(b, k, strlen(k)) == -1 ||
			    buf_add(b, ":", 1) != BUF_OK ||
			    ju_write_json(b, v) == -1))
				rc = -1;
			first = 0;
		}
		return rc == 0 && buf_add(b, "}", 1) == BUF_OK ? 0 : -1;
	case json_type_array:
		rc = buf_add(b, "[", 1) == BUF_OK ? 0 : -1;
		n = json_object_array_length(o);
		for (i = 0; rc == 0 && i < n; i++)
			if ((i > 0 && buf_add(b, ",", 1) != BUF_OK) ||
			    ju_write_json(b, json_object_array_get_idx(o, i)) ==
			    -1)
				rc = -1;
		return rc == 0 && buf_add(b, "]", 1) == BUF_OK ? 0 : -1;
	default:
		/* A number: json-c's text (a parsed double keeps the text it
		 * was read from). */
		if ((text = json_object_to_json_string_length(o, JU_WIRE,
		    &len)) == NULL)
			return -1;
		return buf_add(b, text, len) == BUF_OK ? 0 : -1;
	}
}

json_object *
ju_ref(const char *id, int64_t version)
{
	json_object *o = ju_obj();

	ju_add_str(o, "id", id);
	ju_add(o, "version", ju_int(version));
	return o;
}
