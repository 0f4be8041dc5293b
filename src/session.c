/* session.c: the console's signed session and its CSRF token (see
 * session.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "session.h"

#define CSRF_LABEL	"evalgate console csrf v1"

/* base64url of the HMAC of the n bytes of msg under key. */
static void
mac64(const unsigned char key[SESSION_KEY_LEN], const void *msg, size_t n,
    char out[SESSION_MAC_B64 + 1])
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256(mac, msg, n, key);
	sodium_bin2base64(out, SESSION_MAC_B64 + 1, mac, sizeof(mac),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

void
session_make(const unsigned char key[SESSION_KEY_LEN], const char *prefix,
    int64_t issued_ms, char out[SESSION_TOKEN_MAX + 1])
{
	char	mac[SESSION_MAC_B64 + 1];
	int	n;

	n = snprintf(out, SESSION_TOKEN_MAX + 1, "%s.%lld", prefix,
	    (long long)issued_ms);
	mac64(key, out, (size_t)n, mac);
	snprintf(out + n, SESSION_TOKEN_MAX + 1 - (size_t)n, ".%s", mac);
}

int
session_parse(const unsigned char key[SESSION_KEY_LEN], const char *token,
    int64_t now_ms, char prefix[MODEL_KEY_PREFIX_LEN + 1],
    int64_t *issued_ms)
{
	char		 want[SESSION_MAC_B64 + 1];
	const char	*dot1, *dot2;
	size_t		 plen, tlen, len;

	if (token == NULL || (len = strlen(token)) > SESSION_TOKEN_MAX)
		return -1;
	plen = strspn(token, "abcdefghijklmnopqrstuvwxyz0123456789");
	dot1 = token + plen;
	if (plen != MODEL_KEY_PREFIX_LEN || *dot1 != '.')
		return -1;
	tlen = strspn(dot1 + 1, "0123456789");
	dot2 = dot1 + 1 + tlen;
	if (tlen == 0 || tlen > 15 || *dot2 != '.' ||
	    strlen(dot2 + 1) != SESSION_MAC_B64)
		return -1;
	mac64(key, token, (size_t)(dot2 - token), want);
	if (sodium_memcmp(want, dot2 + 1, SESSION_MAC_B64) != 0)
		return -1;
	*issued_ms = strtoll(dot1 + 1, NULL, 10);
	if (*issued_ms > now_ms + SESSION_SKEW_MS ||
	    now_ms - *issued_ms > SESSION_TTL_MS)
		return -1;
	memcpy(prefix, token, plen);
	prefix[plen] = '\0';
	return 0;
}

void
session_csrf(const unsigned char key[SESSION_KEY_LEN], const char *token,
    char out[SESSION_CSRF_LEN + 1])
{
	char	msg[sizeof(CSRF_LABEL) + SESSION_TOKEN_MAX + 1];
	int	n;

	n = snprintf(msg, sizeof(msg), "%s%c%s", CSRF_LABEL, '\0', token);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	mac64(key, msg, (size_t)n, out);
}

int
session_csrf_ok(const unsigned char key[SESSION_KEY_LEN], const char *token,
    const char *given)
{
	char want[SESSION_CSRF_LEN + 1];

	if (given == NULL || strlen(given) != SESSION_CSRF_LEN)
		return 0;
	session_csrf(key, token, want);
	return sodium_memcmp(want, given, SESSION_CSRF_LEN) == 0;
}
