/* uri.c: percent decoding, query parameters, route patterns, the mount
 * point and the listener check, on plain strings (see uri.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "uri.h"

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t
uri_unescape(const char *s, size_t n, int plus, char *out, size_t size)
{
	size_t	i, o = 0;
	int	hi, lo;

	if (size == 0)
		return 0;
	for (i = 0; i < n && o + 1 < size; i++) {
		if (s[i] == '%' && i + 2 < n &&
		    (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[o++] = plus && s[i] == '+' ? ' ' : s[i];
	}
	out[o] = '\0';
	return o;
}

char *
uri_decode(const char *s, size_t n, int plus)
{
	char *out = malloc(n + 1);

	if (out != NULL)
		uri_unescape(s, n, plus, out, n + 1);
	return out;
}

const char *
uri_query(const char *query, const char *name, char *buf, size_t size)
{
	const char	*p = query;
	size_t		 nlen = strlen(name), klen, vlen;

	while (p != NULL && *p != '\0') {
		klen = strcspn(p, "=&");
		vlen = strcspn(p, "&");
		if (klen == nlen && strncmp(p, name, nlen) == 0) {
			p += klen + (p[klen] == '=');
			uri_unescape(p, vlen - klen - (vlen > klen), 1, buf,
			    size);
			return buf;
		}
		p += vlen + (p[vlen] == '&');
	}
	return NULL;
}

int
uri_match(const char *pattern, const char *path, struct uri_seg *segs,
    size_t max, size_t *nsegs)
{
	size_t	np = 0, plen, slen;

	*nsegs = 0;
	while (*pattern == '/' && *path == '/') {
		pattern++;
		path++;
		plen = strcspn(pattern, "/");
		slen = strcspn(path, "/");
		if (plen == 2 && strncmp(pattern, "{}", 2) == 0) {
			if (slen == 0 || np == max)
				return 0;
			segs[np].p = path;
			segs[np++].len = slen;
		} else if (plen != slen || strncmp(pattern, path, plen) != 0)
			return 0;
		pattern += plen;
		path += slen;
	}
	if (*pattern != '\0' || *path != '\0')
		return 0;
	*nsegs = np;
	return 1;
}

/* 1 if n bytes of s percent-decode (as uri_unescape() does, without
 * '+') to a followed by b. */
static int
decodes_to(const char *s, size_t n, const char *a, const char *b)
{
	const char	*want = a;
	size_t		 i;
	int		 c, hi, lo;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			c = hi * 16 + lo;
			i += 2;
		}
		if (*want == '\0' && want != b) {
			want = b;
			b = NULL;
		}
		if (want == NULL || *want == '\0' ||
		    (unsigned char)*want != c)
			return 0;
		want++;
	}
	return *want == '\0' && (b == NULL || *b == '\0');
}

size_t
uri_mount_offset(const char *path, size_t len, const char *script_name,
    const char *path_info)
{
	size_t i;

	if (script_name == NULL || path_info == NULL || *path_info == '\0' ||
	    decodes_to(path, len, script_name, path_info))
		return 0;
	for (i = 0; i < len; i++)
		if (path[i] == '/' &&
		    decodes_to(path + i, len - i, path_info, NULL))
			return i;
	return 0;
}

int
uri_on_listener(const char *addr, const char *port, const char *listen)
{
	const char	*colon = strrchr(listen, ':');
	size_t		 alen;

	if (*listen == '\0' || colon == NULL || addr == NULL || port == NULL)
		return 0;
	alen = (size_t)(colon - listen);
	/* "[::1]:8081" names an IPv6 address in brackets. */
	if (alen >= 2 && listen[0] == '[' && listen[alen - 1] == ']')
		return strlen(addr) == alen - 2 &&
		    strncmp(addr, listen + 1, alen - 2) == 0 &&
		    strcmp(port, colon + 1) == 0;
	return strlen(addr) == alen && strncmp(addr, listen, alen) == 0 &&
	    strcmp(port, colon + 1) == 0;
}

size_t
uri_pattern_params(const char *pattern)
{
	size_t n = 0;

	for (; (pattern = strstr(pattern, "{}")) != NULL; pattern += 2)
		n++;
	return n;
}
