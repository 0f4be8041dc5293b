/* uuid7_test: format, version and variant, monotonic order, random bits
 * that differ id to id and between a parent and its forked child. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "uuid7.h"
#include "tap.h"

/* Whether the child's next ids share random bits with the parent's:
 * the pool it inherits must not be used. */
static int
fork_differs(void)
{
	char	 mine[UUID7_LEN + 1], theirs[UUID7_LEN + 1];
	int	 fd[2], st, differ = 1, i;
	pid_t	 pid;

	uuid7_new(1700000001000LL, mine);	/* the pool is filled */
	for (i = 0; i < 8; i++) {
		if (pipe(fd) == -1 || (pid = fork()) == -1)
			return 0;
		if (pid == 0) {
			uuid7_new(1700000002000LL, theirs);
			_exit(write(fd[1], theirs, sizeof(theirs)) ==
			    (ssize_t)sizeof(theirs) ? 0 : 1);
		}
		uuid7_new(1700000002000LL, mine);
		close(fd[1]);
		if (read(fd[0], theirs, sizeof(theirs)) !=
		    (ssize_t)sizeof(theirs))
			differ = 0;
		close(fd[0]);
		waitpid(pid, &st, 0);
		/* Variant and 62 random bits, from the 20th character. */
		if (st != 0 || strcmp(mine + 19, theirs + 19) == 0)
			differ = 0;
	}
	return differ;
}

int
main(void)
{
	char	a[UUID7_LEN + 1], b[UUID7_LEN + 1], first[UUID7_LEN + 1];
	int	ordered = 1, valid = 1, distinct = 1, i;

	if (sodium_init() < 0)
		return 1;
	uuid7_new(1700000000123LL, a);
	ok(uuid7_valid(a), "well-formed: %s", a);
	ok(strncmp(a, "018bcfe5-687b-7", 15) == 0,
	    "timestamp 1700000000123 in the first 48 bits");
	ok(strspn(a, "0123456789abcdef") == 8 && a[8] == '-' &&
	    strspn(a + 9, "0123456789abcdef") == 4 && a[13] == '-' &&
	    strspn(a + 14, "0123456789abcdef") == 4 && a[18] == '-' &&
	    strspn(a + 19, "0123456789abcdef") == 4 && a[23] == '-' &&
	    strspn(a + 24, "0123456789abcdef") == 12 && a[36] == '\0',
	    "lowercase hex in groups of 8-4-4-4-12");
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
	for (i = 0; i < 1000; i++) {
		uuid7_new(1700000000999LL, a);
		if (strcmp(a + 19, b + 19) == 0)
			distinct = 0;
		memcpy(b, a, sizeof(a));
	}
	ok(distinct, "random bits differ id to id (the pool moves on)");
	ok(fork_differs(), "a forked child's ids share no random bits with "
	    "its parent's");
	ok(!uuid7_valid("not-a-uuid"), "garbage refused");
	ok(!uuid7_valid("018bcfe5-687b-4000-8000-000000000000"),
	    "version 4 refused");
	ok(!uuid7_valid("018bcfe5-687b-7000-c000-000000000000"),
	    "wrong variant refused");
	ok(!uuid7_valid("018bcfe5-687b-7000-8000-00000000000g"),
	    "non-hex refused");
	/* The key: ms << 12 | counter, whatever the case of the digits. */
	ok(uuid7_key("018bcfe5-687b-7abc-8000-000000000000") ==
	    (1700000000123LL << 12 | 0xabc), "key of an id: ms << 12 | "
	    "counter");
	ok(uuid7_key("018BCFE5-687B-7ABC-BFFF-FFFFFFFFFFFF") ==
	    (1700000000123LL << 12 | 0xabc), "uppercase, other random bits: "
	    "the same key");
	ok(uuid7_key("018bcfe5-687b-4abc-8000-000000000000") == -1 &&
	    uuid7_key("018bcfe5") == -1, "no key for what is not a UUIDv7");
	uuid7_new(1700000005000LL, a);
	uuid7_new(1700000005000LL, b);
	ok(uuid7_key(a) >> 12 == 1700000005000LL &&
	    uuid7_key(b) == uuid7_key(a) + 1, "two ids of one ms: keys one "
	    "apart, as their counters");
	return tap_done();
}
