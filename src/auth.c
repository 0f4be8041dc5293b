/* auth.c: key format, argon2id of HMAC(pepper, secret), the memo. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "settings.h"
#include "shm.h"
#include "shm_budget.h"
#include "store.h"

#define MEMO_SLOTS 64

_Static_assert(MODEL_KEY_HASH_SIZE >= crypto_pwhash_STRBYTES,
    "a key_row holds crypto_pwhash_str's output");

static unsigned char	pepper[32];	/* server secret, from the file */
static unsigned char	memo_key[32];	/* derived from the pepper */
static unsigned char	check_key[32];	/* derived from the pepper */
static unsigned char	session_key[32];	/* derived from the pepper */
static int		have_pepper;
static unsigned long	hash_count;
static struct {
	unsigned char	mac[32];
	char		prefix[AUTH_PREFIX_LEN + 1];
} memo[MEMO_SLOTS];			/* verified tokens, this process */
static size_t		memo_next;

static const char base62[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

int
auth_init(const char *path, int group_ok, struct error *e)
{
	struct stat	 sb;
	char		 hex[80];
	size_t		 len;
	ssize_t		 n;
	int		 fd, bad;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL,
		    "pepper file %s: %s (run evalgate-admin init)", path,
		    strerror(errno));
	if ((bad = fstat(fd, &sb) == -1) ||
	    (sb.st_mode & (group_ok ? 007 : 077)) != 0) {
		close(fd);
		/* A group install's pepper: making it 0600 would lock the
		 * web server's workers out. */
		if (!bad && (sb.st_mode & 007) == 0 &&
		    settings_group_dir(path))
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "pepper file %s: its group may read it, as in a "
			    "group install (its directory is setgid and "
			    "group-writable), but SERVICE_GROUP_WRITABLE=0: "
			    "unset it or set it to 1", path);
		return error_set(e, ERR_UNAVAILABLE, NULL,
		    "pepper file %s: %s may access it (chmod %s it)", path,
		    group_ok ? "others" : "group or others",
		    group_ok ? "640" : "600");
	}
	n = read(fd, hex, sizeof(hex) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	hex[n] = '\0';
	if (sodium_hex2bin(pepper, sizeof(pepper), hex, (size_t)n, " \n",
	    &len, NULL) != 0 || len != sizeof(pepper)) {
		sodium_memzero(hex, sizeof(hex));
		return error_set(e, ERR_UNAVAILABLE, NULL,
		    "pepper file %s: want 64 hex digits", path);
	}
	sodium_memzero(hex, sizeof(hex));
	crypto_generichash(memo_key, sizeof(memo_key),
	    (const unsigned char *)"evalgate key memo v1", 20, pepper,
	    sizeof(pepper));
	crypto_generichash(check_key, sizeof(check_key),
	    (const unsigned char *)"evalgate key check v1", 21, pepper,
	    sizeof(pepper));
	crypto_generichash(session_key, sizeof(session_key),
	    (const unsigned char *)"evalgate console session v1", 27, pepper,
	    sizeof(pepper));
	have_pepper = 1;
	return 0;
}

int
auth_create_pepper(const char *path, struct error *e)
{
	unsigned char	 raw[32];
	char		 hex[65];
	int		 fd;
	ssize_t		 n;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0640)) == -1) {
		if (errno == EEXIST)
			return 0;
		return error_set(e, ERR_UNAVAILABLE, NULL, "%s: %s", path,
		    strerror(errno));
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
	hex[64] = '\n';
	n = write(fd, hex, 65);
	sodium_memzero(raw, sizeof(raw));
	sodium_memzero(hex, sizeof(hex));
	if (n != 65 || fsync(fd) == -1) {
		close(fd);
		unlink(path);
		return error_set(e, ERR_UNAVAILABLE, NULL, "%s: write failed",
		    path);
	}
	close(fd);
	return 1;
}

static int
all_of(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(set, s[i]) == NULL)
			return 0;
	return 1;
}

int
auth_parse_key(const char *key, char prefix[AUTH_PREFIX_LEN + 1],
    char secret[AUTH_SECRET_LEN + 1])
{
	if (strlen(key) != AUTH_KEY_LEN || strncmp(key, "svc_", 4) != 0 ||
	    key[4 + AUTH_PREFIX_LEN] != '_' ||
	    !all_of(key + 4, AUTH_PREFIX_LEN,
	    "abcdefghijklmnopqrstuvwxyz0123456789") ||
	    !all_of(key + 5 + AUTH_PREFIX_LEN, AUTH_SECRET_LEN, base62))
		return -1;
	memcpy(prefix, key + 4, AUTH_PREFIX_LEN);
	prefix[AUTH_PREFIX_LEN] = '\0';
	memcpy(secret, key + 5 + AUTH_PREFIX_LEN, AUTH_SECRET_LEN);
	secret[AUTH_SECRET_LEN] = '\0';
	return 0;
}

static void
random_chars(char *out, size_t n, const char *set, uint32_t setlen)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = set[randombytes_uniform(setlen)];
	out[n] = '\0';
}

/* The keyed hash a key row keeps of its secret, to refuse a wrong one
 * without argon2id (doc/design.md, section 6.2). */
static void
secret_check(const char *secret, unsigned char out[32])
{
	crypto_generichash(out, 32, (const unsigned char *)secret,
	    strlen(secret), check_key, sizeof(check_key));
}

/* The password given to argon2id: HMAC-SHA-256(pepper, secret). */
static void
peppered(const char *secret, unsigned char out[32])
{
	crypto_auth_hmacsha256(out, (const unsigned char *)secret,
	    strlen(secret), pepper);
}

int
auth_issue(char key[AUTH_KEY_LEN + 1], struct key_row *row, struct error *e)
{
	char		 secret[AUTH_SECRET_LEN + 1];
	unsigned char	 pw[32];
	int		 rc;

	if (!have_pepper)
		return error_set(e, ERR_INTERNAL, NULL, "no pepper loaded");
	random_chars(row->prefix, AUTH_PREFIX_LEN,
	    "abcdefghijklmnopqrstuvwxyz0123456789", 36);
	random_chars(secret, AUTH_SECRET_LEN, base62, 62);
	peppered(secret, pw);
	secret_check(secret, row->check);
	row->has_check = 1;
	rc = crypto_pwhash_str(row->hash, (const char *)pw, sizeof(pw),
	    AUTH_OPSLIMIT, AUTH_MEMLIMIT);
	snprintf(key, AUTH_KEY_LEN + 1, "svc_%s_%s", row->prefix, secret);
	sodium_memzero(secret, sizeof(secret));
	sodium_memzero(pw, sizeof(pw));
	if (rc != 0)
		return error_set(e, ERR_UNAVAILABLE, NULL,
		    "argon2id: out of memory");
	return 0;
}

static int
refuse(struct error *e, enum metrics_auth why)
{
	metrics_auth(why);
	/* One body for every cause: nothing tells a guesser which part
	 * was wrong. */
	return error_set(e, ERR_INVALID_API_KEY, NULL,
	    "the API key is missing, invalid, expired or revoked");
}

static int
memo_has(const unsigned char mac[32], const char *prefix)
{
	size_t i;

	for (i = 0; i < MEMO_SLOTS; i++)
		if (sodium_memcmp(memo[i].mac, mac, 32) == 0 &&
		    strcmp(memo[i].prefix, prefix) == 0)
			return 1;
	return 0;
}

static void
memo_put(const unsigned char mac[32], const char *prefix)
{
	memcpy(memo[memo_next].mac, mac, 32);
	memcpy(memo[memo_next].prefix, prefix, AUTH_PREFIX_LEN + 1);
	memo_next = (memo_next + 1) % MEMO_SLOTS;
}

/* Verifies the secret, once per key: 1 right, 0 wrong, -1 argon2id
 * failed (e set).  A key row with a keyed hash refuses a secret that
 * does not match it at once: a flood of wrong secrets runs no argon2id
 * and cannot crowd out the right one, which always reaches argon2id (or
 * the memo).  A row from before the keyed hash has a budget of
 * AUTH_MAX_FAILURES argon2id runs a minute for its prefix, host-wide;
 * its first success stores the keyed hash, and the budget is over. */
static int
verify(struct store *st, const char *token, const char *secret,
    const struct key_row *k, int64_t now, struct error *e)
{
	unsigned char	mac[32], pw[32], check[32];
	int		rc;

	secret_check(secret, check);
	if (k->has_check && sodium_memcmp(check, k->check, 32) != 0)
		return 0;
	crypto_generichash(mac, sizeof(mac), (const unsigned char *)token,
	    strlen(token), memo_key, sizeof(memo_key));
	if (memo_has(mac, k->prefix))
		return 1;
	if (store_memo_has(st, mac, k->prefix)) {
		memo_put(mac, k->prefix);
		return 1;
	}
	if (!k->has_check && !shm_budget_take(shm_host(), k->prefix, now,
	    AUTH_MAX_FAILURES))
		return 0;
	peppered(secret, pw);
	hash_count++;
	log_info("auth: argon2id verification for key %s", k->prefix);
	errno = 0;
	rc = crypto_pwhash_str_verify(k->hash, (const char *)pw, sizeof(pw));
	sodium_memzero(pw, sizeof(pw));
	if (rc == 0) {
		memo_put(mac, k->prefix);
		store_memo_put(st, mac, k->prefix, now);
		if (!k->has_check && store_key_set_check(st, k->prefix, check,
		    e) == -1) {
			log_warn("auth: keyed hash of key %s not stored: %s",
			    k->prefix, e->message);
			error_clear(e);
		}
		return 1;
	}
	/* libsodium sets EINVAL for a mismatch; anything else is argon2id
	 * itself failing (memory), which is ours, not the client's. */
	if (errno != EINVAL) {
		log_warn("auth: argon2id failed: %s", strerror(errno));
		error_set(e, ERR_UNAVAILABLE, NULL,
		    "cannot verify the key now; try again");
		return -1;
	}
	return 0;
}

int
auth_check(struct store *st, const char *authorization, struct app *app,
    struct error *e)
{
	char		 prefix[AUTH_PREFIX_LEN + 1], secret[AUTH_SECRET_LEN + 1];
	struct key_row	 k;
	const char	*token;
	int64_t		 now = clock_now_ms();
	int		 rc;

	if (authorization == NULL ||
	    strncasecmp(authorization, "Bearer ", 7) != 0)
		return refuse(e, MA_MISSING);
	for (token = authorization + 7; *token == ' '; token++)
		continue;
	if (auth_parse_key(token, prefix, secret) == -1)
		return refuse(e, MA_MALFORMED);
	if ((rc = store_key_by_prefix(st, prefix, &k, e)) <= 0) {
		sodium_memzero(secret, sizeof(secret));
		return rc == 0 ? refuse(e, MA_UNKNOWN) : -1;
	}
	if (k.revoked_at != 0 || (k.expires_at != 0 &&
	    k.expires_at * 1000 <= now)) {
		sodium_memzero(secret, sizeof(secret));
		return refuse(e, k.revoked_at != 0 ? MA_REVOKED : MA_EXPIRED);
	}
	rc = verify(st, token, secret, &k, now, e);
	sodium_memzero(secret, sizeof(secret));
	if (rc <= 0)
		return rc == 0 ? refuse(e, MA_WRONG_SECRET) : -1;
	if ((rc = store_app_by_id(st, k.app_id, app, e)) <= 0)
		return rc == 0 ? refuse(e, MA_UNKNOWN) : -1;
	return 0;
}

const unsigned char *
auth_session_key(void)
{
	return have_pepper ? session_key : NULL;
}

unsigned long
auth_hash_count(void)
{
	return hash_count;
}
