/* buf.c: a growable byte buffer with a cap (see buf.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define BUF_FIRST	256	/* bytes allocated at first */

void
buf_init(struct buf *b, size_t max)
{
	b->p = NULL;
	b->len = b->cap = 0;
	b->max = max < SIZE_MAX - 1 ? max : SIZE_MAX - 2;
}

/* Room for len + n bytes and the NUL: BUF_OK, or why not. */
static enum buf_rc
reserve(struct buf *b, size_t n)
{
	size_t	 need, cap;
	char	*p;

	if (n > b->max - b->len)
		return BUF_TOO_LARGE;
	need = b->len + n + 1;
	if (need <= b->cap)
		return BUF_OK;
	cap = b->cap != 0 ? b->cap : BUF_FIRST;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	if ((p = realloc(b->p, cap)) == NULL)
		return BUF_NO_MEMORY;
	b->p = p;
	b->cap = cap;
	return BUF_OK;
}

void *
buf_extend(struct buf *b, size_t n, enum buf_rc *rc)
{
	enum buf_rc	 r = reserve(b, n);
	char		*at;

	if (rc != NULL)
		*rc = r;
	if (r != BUF_OK)
		return NULL;
	at = b->p + b->len;
	b->len += n;
	b->p[b->len] = '\0';
	return at;
}

enum buf_rc
buf_add(struct buf *b, const void *data, size_t n)
{
	enum buf_rc	 rc;
	char		*at;

	/* Where it fits, as most small appends do: copied at once. */
	if (n < b->cap - b->len && n <= b->max - b->len) {
		memcpy(b->p + b->len, data, n);
		b->len += n;
		b->p[b->len] = '\0';
		return BUF_OK;
	}
	if ((at = buf_extend(b, n, &rc)) != NULL && n > 0)
		memcpy(at, data, n);
	return rc;
}

enum buf_rc
buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *
buf_take(struct buf *b, size_t *len)
{
	char *p;

	if (b->p == NULL && buf_extend(b, 0, NULL) == NULL)
		return NULL;
	p = b->p;
	if (len != NULL)
		*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}
