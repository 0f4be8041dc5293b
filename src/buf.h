/* buf.h: a growable byte buffer with a cap, after curl's dynbuf.
 *
 * Every buffer that grows with input is one of these, so that none can
 * grow without bound: the cap, given at buf_init(), is the most bytes it
 * may ever hold.  Text stays NUL-terminated (the NUL is not counted in
 * len, and fits beyond the cap).  Arrays of structs use it too, through
 * buf_extend().  On failure the buffer is left exactly as it was.
 *
 *	struct buf b;
 *	buf_init(&b, 1 << 20);
 *	if (buf_add(&b, data, n) != BUF_OK) ...
 *	use b.p, b.len; buf_free(&b);
 */
#ifndef EVALGATE_BUF_H
#define EVALGATE_BUF_H

#include <stddef.h>

struct buf {
	char	*p;		/* owned; NULL until the first byte */
	size_t	 len;		/* bytes held, p[len] == '\0' */
	size_t	 cap;		/* bytes allocated */
	size_t	 max;		/* the cap: len never passes it */
};

enum buf_rc {
	BUF_OK = 0,
	BUF_TOO_LARGE = -1,	/* the cap would be passed */
	BUF_NO_MEMORY = -2
};

/* An empty buffer that will hold at most max bytes. */
void		 buf_init(struct buf *b, size_t max);
/* Appends n bytes of data. */
enum buf_rc	 buf_add(struct buf *b, const void *data, size_t n);
/* Appends a NUL-terminated string. */
enum buf_rc	 buf_adds(struct buf *b, const char *s);
/* Makes room for n more bytes and counts them as held: a pointer to the
 * first of them (uninitialised), or NULL (*rc says why; rc may be NULL).
 * For arrays: (struct x *)b.p, b.len / sizeof(struct x) elements. */
void		*buf_extend(struct buf *b, size_t n, enum buf_rc *rc);
/* Empties it, keeping the memory for reuse. */
void		 buf_reset(struct buf *b);
/* Releases the memory; b is then empty, with the same cap. */
void		 buf_free(struct buf *b);
/* Hands the bytes (NUL-terminated; "" allocated when empty) to the
 * caller, who frees them, and leaves b empty; NULL without memory. */
char		*buf_take(struct buf *b, size_t *len);

#endif
