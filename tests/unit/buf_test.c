/* buf_test.c: TAP tests of the capped growable buffer (src/buf.c): the
 * cap is never passed, a refused add leaves the buffer as it was, text
 * stays NUL-terminated, arrays of structs grow through buf_extend(). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tap.h"

struct pair {
	int	a;
	double	b;
};

int
main(void)
{
	struct buf	 b;
	struct pair	*p;
	enum buf_rc	 rc;
	char		*s, big[1000];
	size_t		 len, i;

	buf_init(&b, 8);
	ok(b.p == NULL && b.len == 0, "a new buffer holds nothing");
	ok(buf_adds(&b, "abc") == BUF_OK && b.len == 3, "adds 3 bytes");
	is_str(b.p, "abc", "NUL-terminated");
	ok(buf_adds(&b, "defgh") == BUF_OK && b.len == 8, "fills to the cap");
	ok(buf_add(&b, "i", 1) == BUF_TOO_LARGE, "one byte over the cap");
	is_str(b.p, "abcdefgh", "a refused add changes nothing");
	ok(b.cap <= 9, "never allocates beyond the cap and its NUL");
	buf_reset(&b);
	ok(b.len == 0 && b.p != NULL && b.p[0] == '\0', "reset empties");
	buf_free(&b);
	ok(b.p == NULL && b.max == 8, "free keeps the cap");

	buf_init(&b, sizeof(big) * 4);
	memset(big, 'x', sizeof(big));
	for (i = 0; i < 4; i++)
		rc = buf_add(&b, big, sizeof(big));
	ok(rc == BUF_OK && b.len == 4000 && b.p[4000] == '\0',
	    "grows past the first allocation");
	ok(buf_add(&b, "", 0) == BUF_OK, "an empty add at the cap is fine");
	s = buf_take(&b, &len);
	ok(s != NULL && len == 4000 && b.p == NULL && b.len == 0,
	    "take hands the bytes over");
	free(s);
	s = buf_take(&b, &len);
	ok(s != NULL && len == 0 && s[0] == '\0', "take of nothing is \"\"");
	free(s);

	buf_init(&b, 100 * sizeof(struct pair));
	for (i = 0; i < 100; i++) {
		if ((p = buf_extend(&b, sizeof(*p), &rc)) == NULL)
			break;
		p->a = (int)i;
		p->b = (double)i / 2;
	}
	p = (struct pair *)b.p;
	ok(i == 100 && b.len == 100 * sizeof(*p) && p[99].a == 99 &&
	    p[50].b == 25.0, "an array of structs grows by extend");
	ok(buf_extend(&b, sizeof(*p), &rc) == NULL && rc == BUF_TOO_LARGE,
	    "and stops at its cap");
	buf_free(&b);

	buf_init(&b, SIZE_MAX);
	ok(buf_add(&b, "a", SIZE_MAX - 1) == BUF_TOO_LARGE ||
	    buf_add(&b, "a", SIZE_MAX - 1) == BUF_NO_MEMORY,
	    "an impossible size is refused, not wrapped");
	buf_free(&b);
	return tap_done();
}
