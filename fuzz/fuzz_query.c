/* fuzz_query.c: libFuzzer target for the query string and percent
 * decoding as the handlers read them: uri_query() (what req_query()
 * calls for ?since=, ?cursor=, ?limit= ...) and uri_unescape().  The
 * input is a first byte, whose low 6 bits set the size of the value's
 * buffer (1 to 64, small so that values are often cut), then the query
 * NUL the parameter's name.
 *
 * Properties beyond "no crash, leak or undefined behaviour": the value
 * uri_query() finds is the one a parser written apart from it finds
 * (the first pair whose name, up to its '=', is the name; decoded, '+'
 * a space), cut to the buffer and NUL-terminated, nothing written past
 * it; uri_unescape() of any bytes escaped as %XX gives them back, and
 * never writes more than it read. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "uri.h"

#define VALUE_MAX	64

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char *
cstring(const struct fuzz_part *part)
{
	char *s = malloc(part->len + 1);

	FUZZ_ASSERT(s != NULL);
	memcpy(s, part->p, part->len);
	s[part->len] = '\0';
	return s;
}

static int
hex(int c)
{
	static const char digits[] = "0123456789abcdefABCDEF";
	const char *d = c != '\0' ? strchr(digits, c) : NULL;

	if (d == NULL)
		return -1;
	return d - digits < 16 ? (int)(d - digits) : (int)(d - digits) - 6;
}

/* The reference: decodes n bytes of s as a query value into out (n + 1
 * bytes); returns the length. */
static size_t
ref_decode(const char *s, size_t n, char *out)
{
	size_t	i = 0, o = 0;

	while (i < n) {
		if (s[i] == '%' && n - i >= 3 && hex(s[i + 1]) >= 0 &&
		    hex(s[i + 2]) >= 0) {
			out[o++] = (char)(hex(s[i + 1]) << 4 | hex(s[i + 2]));
			i += 3;
		} else if (s[i] == '+') {
			out[o++] = ' ';
			i++;
		} else
			out[o++] = s[i++];
	}
	return o;
}

/* The reference: the raw value of name in query, or NULL; *len set. */
static const char *
ref_find(const char *query, const char *name, size_t *len)
{
	const char	*pair = query, *end, *eq;
	size_t		 nlen = strlen(name);

	for (; *pair != '\0'; pair = *end == '&' ? end + 1 : end) {
		end = pair;
		while (*end != '\0' && *end != '&')
			end++;
		eq = memchr(pair, '=', (size_t)(end - pair));
		if ((size_t)((eq != NULL ? eq : end) - pair) != nlen ||
		    memcmp(pair, name, nlen) != 0)
			continue;
		if (eq == NULL) {
			*len = 0;
			return end;
		}
		*len = (size_t)(end - eq - 1);
		return eq + 1;
	}
	return NULL;
}

static void
check_query(const char *query, const char *name, size_t size)
{
	char		 buf[VALUE_MAX + 8], *want;
	const char	*got, *raw;
	size_t		 len, wlen, cut;

	memset(buf, 0x5a, sizeof(buf));
	got = uri_query(query, name, buf, size);
	raw = ref_find(query, name, &len);
	FUZZ_ASSERT((got == NULL) == (raw == NULL));
	if (got == NULL) {
		FUZZ_ASSERT(buf[0] == 0x5a);
		return;
	}
	FUZZ_ASSERT(got == buf);
	want = malloc(len + 1);
	FUZZ_ASSERT(want != NULL);
	wlen = ref_decode(raw, len, want);
	cut = wlen < size - 1 ? wlen : size - 1;
	FUZZ_ASSERT(memcmp(buf, want, cut) == 0 && buf[cut] == '\0');
	FUZZ_ASSERT(buf[size] == 0x5a);		/* nothing past the buffer */
	free(want);
}

/* Any bytes, escaped as %XX (upper or lower case), decode back. */
static void
check_roundtrip(const uint8_t *data, size_t size)
{
	static const char upper[] = "0123456789ABCDEF";
	static const char lower[] = "0123456789abcdef";
	char	*esc, *out;
	size_t	 i, n;

	esc = malloc(3 * size + 1);
	out = malloc(3 * size + 1);
	FUZZ_ASSERT(esc != NULL && out != NULL);
	for (i = 0; i < size; i++) {
		const char *digits = i % 2 ? lower : upper;

		esc[3 * i] = '%';
		esc[3 * i + 1] = digits[data[i] >> 4];
		esc[3 * i + 2] = digits[data[i] & 15];
	}
	n = uri_unescape(esc, 3 * size, (int)(size & 1), out, 3 * size + 1);
	FUZZ_ASSERT(n == size && memcmp(out, data, size) == 0 &&
	    out[n] == '\0');
	/* Unescaped, the input itself: never longer than it is. */
	n = uri_unescape((const char *)data, size, 1, out, size + 1);
	FUZZ_ASSERT(n <= size && out[n] == '\0');
	free(esc);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part	 parts[2];
	char			*query, *name;
	size_t			 bufsize;

	if (size == 0)
		return 0;
	bufsize = (size_t)(data[0] & 63) + 1;
	check_roundtrip(data + 1, size - 1);
	if (fuzz_split(data + 1, size - 1, parts, 2) < 2)
		return 0;
	query = cstring(&parts[0]);
	name = cstring(&parts[1]);	/* up to its first NUL */
	check_query(query, name, bufsize);
	free(query);
	free(name);
	return 0;
}
