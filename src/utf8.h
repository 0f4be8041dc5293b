/* utf8.h: strict UTF-8 (RFC 3629: shortest forms, no surrogates, nothing
 * above U+10FFFF), to check what comes in and to repair text that a
 * bounded format cut in the middle of a character.  Pure. */
#ifndef EVALGATE_UTF8_H
#define EVALGATE_UTF8_H

#include <stddef.h>

/* 1 if s[0..len) is UTF-8, else 0. */
int	 utf8_valid(const char *s, size_t len);
/* Characters (code points) in s[0..len) of valid UTF-8: the bytes that
 * do not continue a sequence.  On other bytes, an estimate. */
size_t	 utf8_count(const char *s, size_t len);
/* The first control character of the NUL-terminated UTF-8 s, or NULL:
 * C0 (U+0000..U+001F), DEL, C1 (U+0080..U+009F), and the line and
 * paragraph separators U+2028 and U+2029, which move a terminal or a
 * log as a newline would.  *len (may be NULL) gets its length in bytes. */
const char *utf8_control(const char *s, size_t *len);
/* Replaces in the NUL-terminated s every byte that is not part of a
 * well-formed sequence with '?', so that s becomes UTF-8. */
void	 utf8_scrub(char *s);

#endif
