/* session.h: the operator's console's session cookie and its CSRF
 * token (doc/design.md, section 23).
 *
 * A session is "<prefix>.<issued_ms>.<mac>": the prefix of the admin
 * key that logged in, when, and an HMAC-SHA-256 of both under a key the
 * caller derives from the pepper (auth_session_key()), base64url.  It
 * keeps nothing on the server: the gate (handler_console.c) checks the
 * MAC, the age, and then on every request the key's row (revoked,
 * expired, still an administrator's) and its last logout.  The CSRF
 * token of a session is an HMAC of its whole text under the same key, so
 * a page can carry it and a forged one cannot be made without the
 * pepper.  Pure: no I/O, no global state. */
#ifndef EVALGATE_SESSION_H
#define EVALGATE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define SESSION_TTL_MS	(8LL * 3600 * 1000)	/* a session's life */
#define SESSION_SKEW_MS	60000	/* issued this far ahead of now is
				 * still good: another host's clock, or a
				 * login in the millisecond of a logout */
#define SESSION_KEY_LEN	32
#define SESSION_MAC_B64	43	/* base64url of 32 bytes, unpadded */
#define SESSION_TOKEN_MAX (MODEL_KEY_PREFIX_LEN + 1 + 20 + 1 + \
	SESSION_MAC_B64 + 1)
#define SESSION_CSRF_LEN SESSION_MAC_B64

/* Writes the session of prefix issued at issued_ms into out. */
void	session_make(const unsigned char key[SESSION_KEY_LEN],
	    const char *prefix, int64_t issued_ms,
	    char out[SESSION_TOKEN_MAX + 1]);
/* Checks token (as the cookie carries it; NULL is none) at now_ms: 0
 * with prefix and *issued_ms set when its MAC is right and it is at
 * most SESSION_TTL_MS old (and at most SESSION_SKEW_MS ahead), else
 * -1. */
int	session_parse(const unsigned char key[SESSION_KEY_LEN],
	    const char *token, int64_t now_ms,
	    char prefix[MODEL_KEY_PREFIX_LEN + 1], int64_t *issued_ms);
/* The CSRF token of a session token. */
void	session_csrf(const unsigned char key[SESSION_KEY_LEN],
	    const char *token, char out[SESSION_CSRF_LEN + 1]);
/* 1 when given (NULL: none) is the CSRF token of token, in constant
 * time; else 0. */
int	session_csrf_ok(const unsigned char key[SESSION_KEY_LEN],
	    const char *token, const char *given);

#endif
