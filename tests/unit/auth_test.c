/* auth_test: key parsing, and issued keys that verify only themselves. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "tap.h"

int
main(void)
{
	char		 prefix[AUTH_PREFIX_LEN + 1], secret[AUTH_SECRET_LEN + 1];
	char		 key[AUTH_KEY_LEN + 1], key2[AUTH_KEY_LEN + 1];
	char		 dir[] = "/tmp/evalgate-auth-XXXXXX", path[64];
	struct key_row	 row, row2;
	struct error	 e = { 0 };
	FILE		*f;
	struct stat	 sb;
	size_t		 i;
	static const char *const bad[] = {
		"",
		"svc_",
		"svc_abcd1234_",
		"svc_abcd1234_0123456789abcdefABCDEF012345678989a",	/* 33 */
		"svc_abcd1234_0123456789abcdefABCDEF01234567898",	/* 31 */
		"svc_ABCD1234_0123456789abcdefABCDEF0123456789",		/* upper */
		"svc_abcd123_x0123456789abcdefABCDEF0123456789",
		"svc-abcd1234_0123456789abcdefABCDEF0123456789",
		"sk_abcd12345_0123456789abcdefABCDEF0123456789",
		"svc_abcd1234-0123456789abcdefABCDEF0123456789",
		"svc_abcd1234_0123456789abcdef-BCDEF0123456789",
		"svc_abcd1234_0123456789abcdef\nBCDEF0123456789",
		"svc_abcd1234_0123456789abcdefABCDEF0123456789 ",
	};

	if (sodium_init() < 0)
		return 1;
	ok(auth_parse_key("svc_abcd1234_0123456789abcdefABCDEF0123456789",
	    prefix, secret) == 0, "well-formed key parses");
	is_str(prefix, "abcd1234", "prefix");
	is_str(secret, "0123456789abcdefABCDEF0123456789", "secret");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(auth_parse_key(bad[i], prefix, secret) == -1,
		    "malformed key %zu refused", i);

	umask(077);		/* as both programs set it */
	ok(mkdtemp(dir) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/pepper", dir);
	ok(auth_create_pepper(path, &e) == 1, "pepper created");
	ok(auth_create_pepper(path, &e) == 0, "pepper kept when present");
	ok(auth_init(path, 0, &e) == 0, "pepper loads");
	ok(chmod(path, 0644) == 0 && auth_init(path, 0, &e) == -1 &&
	    strstr(e.message, "chmod") != NULL,
	    "pepper readable by others refused: %s", e.message);
	chmod(path, 0600);
	f = fopen(path, "w");
	fputs("not hex\n", f);
	fclose(f);
	ok(auth_init(path, 0, &e) == -1, "pepper that is not hex refused");
	unlink(path);
	umask(007);		/* SERVICE_GROUP_WRITABLE=1 */
	ok(auth_create_pepper(path, &e) == 1 && stat(path, &sb) == 0 &&
	    (sb.st_mode & 0777) == 0640, "shared group: the pepper is 0640");
	ok(auth_init(path, 1, &e) == 0, "and loads when the group may");
	ok(auth_init(path, 0, &e) == -1, "but not when it may not");
	ok(chmod(path, 0644) == 0 && auth_init(path, 1, &e) == -1,
	    "readable by others: refused even then");
	unlink(path);
	umask(077);
	ok(auth_create_pepper(path, &e) == 1 && auth_init(path, 0, &e) == 0,
	    "fresh pepper");

	ok(auth_issue(key, &row, &e) == 0, "key issued");
	ok(auth_parse_key(key, prefix, secret) == 0, "issued key parses");
	is_str(prefix, row.prefix, "row keeps the prefix");
	ok(strncmp(row.hash, "$argon2id$", 10) == 0, "hash is argon2id");
	ok(strstr(row.hash, "m=19456,t=2") != NULL, "m=19 MiB, t=2: %s",
	    row.hash);
	ok(strstr(row.hash, secret) == NULL, "hash does not hold the secret");
	ok(auth_issue(key2, &row2, &e) == 0 && strcmp(key, key2) != 0 &&
	    strcmp(row.prefix, row2.prefix) != 0, "keys differ");
	unlink(path);
	rmdir(dir);
	error_clear(&e);
	return tap_done();
}
