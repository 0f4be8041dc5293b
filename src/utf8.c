/* utf8.c: strict UTF-8 checking and repair (see utf8.h). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

/* The well-formed multi-byte sequences (RFC 3629, section 4): a lead
 * byte, the range of the byte after it, the number of bytes after it. */
static const struct lead {
	unsigned char	 first, last;	/* lead bytes */
	unsigned char	 lo, hi;	/* the second byte */
	unsigned char	 more;		/* bytes after the lead */
} leads[] = {
	{ 0xc2, 0xdf, 0x80, 0xbf, 1 },
	{ 0xe0, 0xe0, 0xa0, 0xbf, 2 },	/* no overlong forms */
	{ 0xe1, 0xec, 0x80, 0xbf, 2 },
	{ 0xed, 0xed, 0x80, 0x9f, 2 },	/* no surrogates */
	{ 0xee, 0xef, 0x80, 0xbf, 2 },
	{ 0xf0, 0xf0, 0x90, 0xbf, 3 },	/* no overlong forms */
	{ 0xf1, 0xf3, 0x80, 0xbf, 3 },
	{ 0xf4, 0xf4, 0x80, 0x8f, 3 },	/* nothing above U+10FFFF */
};
#define NLEADS	(sizeof(leads) / sizeof(leads[0]))

/* Bytes of the well-formed sequence at p (avail bytes left, > 0), or 0. */
static size_t
sequence(const unsigned char *p, size_t avail)
{
	const struct lead	*l;
	size_t			 k;

	if (p[0] < 0x80)
		return 1;
	for (l = leads; l < leads + NLEADS; l++)
		if (p[0] >= l->first && p[0] <= l->last)
			break;
	if (l == leads + NLEADS || avail <= l->more || p[1] < l->lo ||
	    p[1] > l->hi)
		return 0;
	for (k = 2; k <= l->more; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return 1 + (size_t)l->more;
}

/* Bytes of ASCII at p (len bytes), counted eight at a time: the prefix
 * of whole words of eight below 0x80. */
static size_t
ascii_run(const unsigned char *p, size_t len)
{
	uint64_t	 w;
	size_t		 i = 0;

	for (; len - i >= sizeof(w); i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		if ((w & 0x8080808080808080ULL) != 0)
			break;
	}
	return i;
}

int
utf8_valid(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n;

	while ((i += ascii_run(p + i, len - i)) < len) {
		if ((n = sequence(p + i, len - i)) == 0)
			return 0;
		i += n;
	}
	return 1;
}

void
utf8_scrub(char *s)
{
	unsigned char	*p = (unsigned char *)s;
	size_t		 i = 0, len = strlen(s), n;

	while (i < len) {
		if ((n = sequence(p + i, len - i)) == 0)
			p[i++] = '?';
		else
			i += n;
	}
}

size_t
utf8_count(const char *s, size_t len)
{
	size_t	 i, n;

	n = i = ascii_run((const unsigned char *)s, len);
	for (; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

const char *
utf8_control(const char *s, size_t *len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	for (; *p != '\0'; p++) {
		n = *p < 0x20 || *p == 0x7f ? 1 :
		    p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f ? 2 :
		    p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 ||
		    p[2] == 0xa9) ? 3 : 0;
		if (n > 0) {
			if (len != NULL)
				*len = n;
			return (const char *)p;
		}
	}
	return NULL;
}
