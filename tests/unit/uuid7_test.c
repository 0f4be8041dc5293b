/* uuid7_test: format, version and variant, monotonic order. */
#include "config.h"

#include <string.h>

#include <sodium.h>

#include "uuid7.h"
#include "tap.h"

int
main(void)
{
	char	a[UUID7_LEN + 1], b[UUID7_LEN + 1], first[UUID7_LEN + 1];
	int	ordered = 1, valid = 1, i;

	if (sodium_init() < 0)
		return 1;
	uuid7_new(1700000000123LL, a);
	ok(uuid7_valid(a), "well-formed: %s", a);
	ok(strncmp(a, "018bcfe5-687b-7", 15) == 0,
	    "timestamp 1700000000123 in the first 48 bits");
	ok(a[14] == '7', "version 7");
	ok(strchr("89ab", a[19]) != NULL, "variant 10");
	memcpy(first, a, sizeof(a));
	/* Same millisecond, and a clock that steps back: still ordered. */
	for (i = 0; i < 10000; i++) {
		uuid7_new(i % 3 == 0 ? 1700000000000LL : 1700000000123LL, b);
		if (strcmp(b, a) <= 0)
			ordered = 0;
		if (!uuid7_valid(b))
			valid = 0;
		memcpy(a, b, sizeof(a));
	}
	ok(ordered, "10000 ids in one millisecond are strictly increasing");
	ok(valid, "and all well-formed");
	uuid7_new(1700000000999LL, b);
	ok(strcmp(b, a) > 0, "a later millisecond sorts after");
	ok(!uuid7_valid("not-a-uuid"), "garbage refused");
	ok(!uuid7_valid("018bcfe5-687b-4000-8000-000000000000"),
	    "version 4 refused");
	ok(!uuid7_valid("018bcfe5-687b-7000-c000-000000000000"),
	    "wrong variant refused");
	ok(!uuid7_valid("018bcfe5-687b-7000-8000-00000000000g"),
	    "non-hex refused");
	return tap_done();
}
