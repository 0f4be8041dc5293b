/* auth.h: API keys "svc_<prefix>_<secret>": issuing, parsing, verifying.
 *
 * The database keeps argon2id(HMAC-SHA-256(pepper, secret)) and a keyed
 * BLAKE2b of the secret, which refuses a wrong secret without argon2id
 * (so that a flood of them can neither cost argon2id nor lock the right
 * key out).  A verified key is remembered under a keyed BLAKE2b of the
 * whole token, in this process and in the cache file, so argon2id runs
 * once per key, not once per request; revocation and expiry are still
 * read on every request. */
#ifndef EVALGATE_AUTH_H
#define EVALGATE_AUTH_H

#include <stddef.h>

#include "error.h"
#include "model.h"

struct store;

#define AUTH_PREFIX_LEN	MODEL_KEY_PREFIX_LEN
#define AUTH_SECRET_LEN	32
#define AUTH_KEY_LEN	(4 + AUTH_PREFIX_LEN + 1 + AUTH_SECRET_LEN)
/* argon2id cost: OWASP's minimum for argon2id is m=19 MiB, t=2. */
#define AUTH_OPSLIMIT	2
#define AUTH_MEMLIMIT	(19UL * 1024 * 1024)
/* argon2id runs per minute for the prefix of a key whose row has no
 * keyed hash yet (issued before it existed), host-wide; beyond, its
 * secrets are refused without hashing.  A key with a keyed hash needs
 * no budget: a wrong secret never reaches argon2id. */
#define AUTH_MAX_FAILURES 10

/* Reads the pepper (64 hex digits; refused if others may access it, or
 * the group unless group_ok, for SERVICE_GROUP_WRITABLE=1).  Once per
 * process, before any other call. */
int	auth_init(const char *pepper_path, int group_ok, struct error *e);
/* Creates a pepper file (mode 0640 less the umask: 0600, or 0640 for
 * SERVICE_GROUP_WRITABLE=1) if there is none.  1 created, 0 it
 * existed, -1 with e set. */
int	auth_create_pepper(const char *pepper_path, struct error *e);

/* Splits "svc_<prefix>_<secret>" (no scheme).  0 or -1 if malformed. */
int	auth_parse_key(const char *key, char prefix[AUTH_PREFIX_LEN + 1],
	    char secret[AUTH_SECRET_LEN + 1]);
/* A new random key and the row to store (app_id, expiry set by the
 * caller).  The key is written to key; nothing else keeps it. */
int	auth_issue(char key[AUTH_KEY_LEN + 1], struct key_row *row,
	    struct error *e);

/* Checks an Authorization header value and loads the application.
 * 0, or -1 with e: 401 invalid_api_key for every refusal, 503 when
 * argon2id or the database fails. */
int	auth_check(struct store *st, const char *authorization,
	    struct app *app, struct error *e);

/* The key of the console's sessions (session.h), derived from the
 * pepper: 32 bytes owned here, or NULL before auth_init(). */
const unsigned char *auth_session_key(void);

/* How many argon2id verifications this process has run. */
unsigned long auth_hash_count(void);

#endif
