/* uuid7.h: UUIDv7 (RFC 9562) identifiers for decisions and requests,
 * monotonic within a process, random bits from libsodium (pooled per
 * process: one getrandom per 28 ids). */
#ifndef EVALGATE_UUID7_H
#define EVALGATE_UUID7_H

#include <stdint.h>

#define UUID7_LEN 36

/* Writes a new id, 36 characters and a NUL, at time now_ms. */
void	uuid7_new(int64_t now_ms, char out[UUID7_LEN + 1]);
/* 1 if s is a well-formed UUID of version 7 (lowercase or uppercase). */
int	uuid7_valid(const char *s);
/* The 60 bits of a well-formed id s that its time orders it by: its
 * 48-bit Unix ms, then its 12-bit counter, as ms << 12 | counter; -1
 * for anything uuid7_valid() refuses. */
int64_t	uuid7_key(const char *s);

#endif
