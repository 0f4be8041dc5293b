/* settings_test: defaults, derived paths, bounds and refusals.  With
 * --describe it prints src/settings.c's table instead, one
 * "NAME<TAB>default" line a setting (the default "" when it is derived
 * or empty, $localstatedir for the build's), for tests/docs_test.sh to
 * hold the README and doc/evalgate.fcgi.8 to. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "settings.h"
#include "tap.h"

static const char *const *vars;	/* name, value pairs, NULL-terminated */

static const char *
get(const char *name)
{
	size_t i;

	for (i = 0; vars[i] != NULL; i += 2)
		if (strcmp(vars[i], name) == 0)
			return vars[i + 1];
	return NULL;
}

static int
load(const char *const *v, struct settings *s, char *err)
{
	vars = v;
	return settings_load(s, get, err, 256);
}

static void
describe(const char *name, const char *def, const char *meaning)
{
	size_t n = strlen(LOCALSTATEDIR);

	(void)meaning;
	if (strncmp(def, LOCALSTATEDIR, n) == 0)
		printf("%s\t$localstatedir%s\n", name, def + n);
	else
		printf("%s\t%s\n", name, def);
}

int
main(int argc, char **argv)
{
	static struct settings	s;
	char			err[256];
	static const char *const none[] = { NULL };
	static const char *const db[] = { "SERVICE_DB_PATH", "/srv/eg/x.db",
	    NULL };
	static const char *const set[] = { "SERVICE_MAX_QUESTIONS", "5",
	    "SERVICE_DB_SYNC", "normal", "SERVICE_ADMIN_LISTEN",
	    "127.0.0.1:8081", "SERVICE_CACHE_PATH", "/tmp/c.db", NULL };
	static const struct {
		const char	*name, *value;
	} bad[] = {
		{ "SERVICE_MAX_QUESTIONS", "0" },
		{ "SERVICE_MAX_QUESTIONS", "abc" },
		{ "SERVICE_MAX_QUESTIONS", "12x" },
		{ "SERVICE_MAX_STATE_CHARS", "-1" },
		{ "SERVICE_MAX_BODY_BYTES", "99999999999999999999" },
		{ "SERVICE_DB_SYNC", "sometimes" },
		{ "SERVICE_ADMIN_LISTEN", "127.0.0.1" },
		{ "SERVICE_ADMIN_LISTEN", "127.0.0.1:" },
		{ "SERVICE_BACKEND_TIMEOUT_MS", "5" },
	};
	size_t i;

	if (argc == 2 && strcmp(argv[1], "--describe") == 0) {
		settings_describe(describe);
		return 0;
	}
	ok(load(none, &s, err) == 0, "defaults load");
	ok(s.max_questions == 32, "SERVICE_MAX_QUESTIONS defaults to 32");
	ok(s.max_state_chars == 32000, "SERVICE_MAX_STATE_CHARS 32000");
	ok(s.max_body_bytes == 1048576, "SERVICE_MAX_BODY_BYTES 1048576");
	ok(s.db_sync == DB_SYNC_FULL, "SERVICE_DB_SYNC defaults to full");
	ok(s.default_rate_per_minute == 600, "rate default 600");
	ok(s.default_daily_quota == 100000, "quota default 100000");
	ok(s.backend_timeout_ms == 30000, "backend timeout 30000");
	ok(s.admin_listen[0] == '\0', "no admin listener by default");
	ok(strstr(s.db_path, "/lib/evalgate/evalgate.db") != NULL,
	    "database under localstatedir: %s", s.db_path);

	ok(load(db, &s, err) == 0, "database path set");
	is_str(s.cache_path, "/srv/eg/cache.db", "cache beside the database");
	is_str(s.pepper_file, "/srv/eg/pepper", "pepper beside the database");

	ok(load(set, &s, err) == 0, "values set");
	ok(s.max_questions == 5, "max questions read");
	ok(s.db_sync == DB_SYNC_NORMAL, "normal durability read");
	is_str(s.admin_listen, "127.0.0.1:8081", "admin listener read");
	is_str(s.cache_path, "/tmp/c.db", "explicit cache path kept");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *v[] = { bad[i].name, bad[i].value, NULL };

		err[0] = '\0';
		ok(load(v, &s, err) == -1 && strstr(err, bad[i].name) != NULL,
		    "%s=%s refused, naming it: %s", bad[i].name, bad[i].value,
		    err);
	}
	return tap_done();
}
