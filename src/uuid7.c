/* uuid7.c: UUIDv7 with a 12-bit counter in rand_a for monotonicity.
 *
 * Layout (RFC 9562 section 5.7, method 1 of 6.2): 48 bits of Unix ms,
 * version 7, 12 bits counter (seeded at random each new ms, incremented
 * within one), variant 10, 62 random bits.  When the clock stands still
 * or steps back, the last timestamp is reused and the counter advances;
 * on counter overflow the timestamp is advanced by one.
 *
 * The random bytes come from a per-process pool that libsodium fills
 * from the kernel (getrandom) once every POOL_BYTES / 18 ids, rather than
 * a system call per id: each byte is used once and wiped, and a forked
 * child discards what it inherited, so no two processes share bits. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <string.h>

#include <sodium.h>

#include "uuid7.h"

static int64_t	last_ms = -1;	/* per process: workers are single-threaded */
static uint16_t	counter;

#define POOL_BYTES 512
static uint8_t	pool[POOL_BYTES];	/* per process: bytes not yet used */
static size_t	pool_used = POOL_BYTES;	/* from pool_used on */
static int	pool_forks;		/* whether the fork hook is set */

/* In a child after fork(): the parent's unused bytes are the parent's. */
static void
pool_discard(void)
{
	sodium_memzero(pool, sizeof(pool));
	pool_used = POOL_BYTES;
}

/* n bytes (at most POOL_BYTES) of the pool into out, wiped there. */
static void
pool_take(void *out, size_t n)
{
	if (!pool_forks) {
		if (pthread_atfork(NULL, NULL, pool_discard) != 0) {
			randombytes_buf(out, n);	/* no pool then */
			return;
		}
		pool_forks = 1;
	}
	if (POOL_BYTES - pool_used < n) {
		randombytes_buf(pool, sizeof(pool));
		pool_used = 0;
	}
	memcpy(out, pool + pool_used, n);
	sodium_memzero(pool + pool_used, n);
	pool_used += n;
}

void
uuid7_new(int64_t now_ms, char out[UUID7_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t		b[16];
	uint16_t	seed;
	size_t		i;

	if (now_ms > last_ms) {
		last_ms = now_ms;
		pool_take(&seed, sizeof(seed));
		counter = seed & 0x7ff;	/* leave room to count up */
	} else if (++counter > 0xfff) {
		last_ms++;
		counter = 0;
	}
	pool_take(b, sizeof(b));
	b[0] = (uint8_t)(last_ms >> 40);
	b[1] = (uint8_t)(last_ms >> 32);
	b[2] = (uint8_t)(last_ms >> 24);
	b[3] = (uint8_t)(last_ms >> 16);
	b[4] = (uint8_t)(last_ms >> 8);
	b[5] = (uint8_t)last_ms;
	b[6] = (uint8_t)(0x70 | (counter >> 8));
	b[7] = (uint8_t)counter;
	b[8] = (uint8_t)(0x80 | (b[8] & 0x3f));
	for (i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*out++ = '-';
		*out++ = hex[b[i] >> 4];
		*out++ = hex[b[i] & 0xf];
	}
	*out = '\0';
}

int
uuid7_valid(const char *s)
{
	size_t i;

	if (strlen(s) != UUID7_LEN)
		return 0;
	for (i = 0; i < UUID7_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i]))
			return 0;
	}
	return s[14] == '7' && strchr("89abAB", s[19]) != NULL;
}

int64_t
uuid7_key(const char *s)
{
	/* The hex digits of the timestamp and the counter: 8, 4, then 3
	 * after the version digit (s[14]). */
	static const unsigned char at[15] = { 0, 1, 2, 3, 4, 5, 6, 7,
	    9, 10, 11, 12, 15, 16, 17 };
	int64_t	key = 0;
	size_t	i;
	int	c;

	if (!uuid7_valid(s))
		return -1;
	for (i = 0; i < sizeof(at); i++) {
		c = tolower((unsigned char)s[at[i]]);
		key = key << 4 | (c <= '9' ? c - '0' : c - 'a' + 10);
	}
	return key;
}
