/* settings.c: one table of SERVICE_* settings, their defaults and bounds. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "settings.h"

#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif

enum kind { K_PATH, K_LONG, K_ENUM, K_LISTEN, K_DB_URL };

struct setting {
	const char	*name;
	enum kind	 kind;
	const char	*def;		/* "" for derived paths */
	long		 min, max;	/* K_LONG */
	const char	*choices[3];	/* K_ENUM: index is the value */
	size_t		 offset;
	size_t		 size;		/* of a string field */
	const char	*meaning;
};

#define STR(f)	offsetof(struct settings, f), sizeof(((struct settings *)0)->f)
#define NUM(f)	offsetof(struct settings, f), 0

static const struct setting table[] = {
	{ "SERVICE_DB_PATH", K_PATH, LOCALSTATEDIR "/lib/evalgate/evalgate.db",
	  0, 0, { NULL }, STR(db_path), "the database" },
	{ "SERVICE_DB_URL", K_DB_URL, "", 0, 0, { NULL }, STR(db_url),
	  "PostgreSQL instead of SQLite: a postgresql:// URL or a key=value "
	  "conninfo; the cache and the pepper stay local files" },
	{ "SERVICE_CACHE_PATH", K_PATH, "", 0, 0, { NULL }, STR(cache_path),
	  "the cache file (default: cache.db beside the database)" },
	{ "SERVICE_PEPPER_FILE", K_PATH, "", 0, 0, { NULL }, STR(pepper_file),
	  "server-side pepper, mode 0600 (default: pepper beside the database)" },
	{ "SERVICE_MAX_QUESTIONS", K_LONG, "32", 1, 1000, { NULL },
	  NUM(max_questions), "questions per request" },
	{ "SERVICE_MAX_STATE_CHARS", K_LONG, "32000", 1, 100000000, { NULL },
	  NUM(max_state_chars), "characters of the state" },
	{ "SERVICE_MAX_BODY_BYTES", K_LONG, "1048576", 1024, 1073741824,
	  { NULL }, NUM(max_body_bytes), "bytes of a request body" },
	{ "SERVICE_DB_SYNC", K_ENUM, "full", 0, 0, { "normal", "full", NULL },
	  NUM(db_sync), "durability of decisions and outcomes: full or normal" },
	{ "SERVICE_ADMIN_LISTEN", K_LISTEN, "", 0, 0, { NULL },
	  STR(admin_listen), "ADDR:PORT of the internal listener for /admin/v1" },
	{ "SERVICE_DEFAULT_RATE_PER_MINUTE", K_LONG, "600", 1, 100000000,
	  { NULL }, NUM(default_rate_per_minute),
	  "requests per minute per application, unless set on it" },
	{ "SERVICE_DEFAULT_DAILY_QUOTA", K_LONG, "100000", 1, 1000000000000L,
	  { NULL }, NUM(default_daily_quota),
	  "cost units per UTC day per application, unless set on it" },
	{ "SERVICE_BACKEND_TIMEOUT_MS", K_LONG, "30000", 100, 3600000,
	  { NULL }, NUM(backend_timeout_ms),
	  "per replica attempt, unless set on the backend" },
	{ "SERVICE_WORKERS", K_LONG, "0", 0, 100000, { NULL }, NUM(workers),
	  "optional cap: the most workers the default in-flight limit of a "
	  "backend counts (half of them); 0: the workers running, as they "
	  "count themselves; a pool over 4096 also gets room in the shared "
	  "memory for 2 x it + 16 processes" },
	{ "SERVICE_SHM_PATH", K_PATH, "", 0, 0, { NULL }, STR(shm_path),
	  "the host's shared memory (default: evalgate.shm beside the cache)" },
	{ "SERVICE_GROUP_WRITABLE", K_LONG, "0", 0, 1, { NULL },
	  NUM(group_writable),
	  "1: state files 0660 and directories 0770, for a web server and an "
	  "operator sharing a group; 0: 0600 and 0700; unset: 1 where the "
	  "pepper's directory is setgid and group-writable" },
	{ "SERVICE_RETENTION_DAYS", K_LONG, "0", 0, 1000000, { NULL },
	  NUM(retention_days), "days a decision is kept, unless set on its "
	  "application; the workers prune older ones in small batches; 0 "
	  "keeps everything" },
	{ "SERVICE_RETENTION_DAYS_WITH_OUTCOMES", K_LONG, "-1", -1, 1000000,
	  { NULL }, NUM(retention_days_with_outcomes), "days a decision with "
	  "an outcome is kept, if longer than the above; -1: as the above, "
	  "0: forever" },
	{ "SERVICE_STATE_RETENTION_DAYS", K_LONG, "0", 0, 1000000, { NULL },
	  NUM(state_retention_days), "days a kept state (log_state) is kept; "
	  "older ones are removed, the decision stays; 0 keeps them" },
	{ "SERVICE_METRICS", K_LONG, "1", 0, 1, { NULL }, NUM(metrics),
	  "1: count requests, backends and decisions in the shared memory "
	  "for GET /metrics on the internal listener; 0: count nothing, "
	  "/metrics is 404" },
	{ "SERVICE_METRICS_KEY_REQUIRED", K_LONG, "0", 0, 1, { NULL },
	  NUM(metrics_key_required),
	  "1: GET /metrics needs an administrator's key; 0: no key" },
	{ "SERVICE_ACCESS_LOG", K_LONG, "0", 0, 1, { NULL }, NUM(access_log),
	  "1: one logfmt line per request on stderr (the web server's "
	  "error log); 0: none" },
	{ "SERVICE_CPU_AFFINITY", K_LONG, "0", 0, 1, { NULL },
	  NUM(cpu_affinity),
	  "1: each worker keeps to one CPU, the one the fewest of the "
	  "host's workers keep to (for a host whose CPUs serve mainly the "
	  "gateway); 0: workers run where the kernel puts them" },
#ifdef EVALGATE_TEST_HOOKS
	{ "SERVICE_TEST_CLOCK_FILE", K_PATH, "", 0, 0, { NULL },
	  STR(test_clock_file),
	  "tests only: a file holding the current time in epoch ms" },
	{ "SERVICE_TEST_QUEUE_HOLD_MS", K_LONG, "0", 0, 10000, { NULL },
	  NUM(test_queue_hold_ms),
	  "tests only: ms a writer sleeps once it holds a write-lock queue" },
	{ "SERVICE_TEST_GROUP_HOLD_MS", K_LONG, "0", 0, 10000, { NULL },
	  NUM(test_group_hold_ms),
	  "tests only: ms a group commit's leader sleeps before its COMMIT, "
	  "and after it, once it holds other workers' decisions" },
#endif
};

static int
set_string(char *dst, size_t size, const char *v)
{
	return (size_t)snprintf(dst, size, "%s", v) < size ? 0 : -1;
}

#ifdef HAVE_POSTGRESQL
#define HAVE_PG	1
#else
#define HAVE_PG	0
#endif

/* SERVICE_DB_URL: empty (SQLite), or what libpq takes for a database
 * in a build that has it. */
static int
db_url_ok(const char *v)
{
	if (*v == '\0')
		return 1;
	return HAVE_PG && (strncmp(v, "postgresql://", 13) == 0 ||
	    strncmp(v, "postgres://", 11) == 0 || strchr(v, '=') != NULL);
}

static int
set_one(struct settings *s, const struct setting *t, const char *v,
    char *err, size_t errlen)
{
	char	*field = (char *)s + t->offset, *end;
	long	 n;
	size_t	 i;

	switch (t->kind) {
	case K_PATH:
	case K_LISTEN:
		if (set_string(field, t->size, v) == -1)
			goto bad;
		if (t->kind == K_LISTEN && *v != '\0' &&
		    (strrchr(v, ':') == NULL || strrchr(v, ':')[1] == '\0'))
			goto bad;
		return 0;
	case K_DB_URL:
		/* Never echoed: it may hold a password. */
		if (set_string(field, t->size, v) == -1 || !db_url_ok(v))
			goto bad;
		return 0;
	case K_LONG:
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0' ||
		    n < t->min || n > t->max)
			goto bad;
		*(long *)(void *)field = n;
		return 0;
	case K_ENUM:
		for (i = 0; t->choices[i] != NULL; i++)
			if (strcmp(v, t->choices[i]) == 0) {
				*(long *)(void *)field = (long)i;
				return 0;
			}
		goto bad;
	}
bad:
	if (t->kind == K_LONG)
		snprintf(err, errlen, "%s=%s: want an integer from %ld to %ld",
		    t->name, v, t->min, t->max);
	else if (t->kind == K_ENUM)
		snprintf(err, errlen, "%s=%s: want normal or full", t->name, v);
	else if (t->kind == K_DB_URL)
		snprintf(err, errlen, "%s: %s", t->name, HAVE_PG ?
		    "want a postgresql:// or postgres:// URL, or a key=value "
		    "conninfo (up to 1023 bytes)" : "this evalgate was built "
		    "without PostgreSQL (configure --with-postgresql)");
	else if (t->kind == K_LISTEN)
		snprintf(err, errlen, "%s=%s: want ADDR:PORT", t->name, v);
	else
		snprintf(err, errlen, "%s: path too long", t->name);
	return -1;
}

/* A file beside the database, for the derived defaults. */
static int
beside_db(char *dst, size_t size, const char *db, const char *name)
{
	const char	*slash = strrchr(db, '/');
	int		 dirlen = slash == NULL ? 0 : (int)(slash - db) + 1;

	return (size_t)snprintf(dst, size, "%.*s%s", dirlen, db, name) < size ?
	    0 : -1;
}

int
settings_load(struct settings *s, settings_getter get, char *err,
    size_t errlen)
{
	const char	*v;
	size_t		 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		v = get(table[i].name);
		if (v == NULL || *v == '\0')
			v = table[i].def;
		if (set_one(s, &table[i], v, err, errlen) == -1)
			return -1;
	}
	if (s->cache_path[0] == '\0' &&
	    beside_db(s->cache_path, sizeof(s->cache_path), s->db_path,
	    "cache.db") == -1)
		return snprintf(err, errlen, "SERVICE_DB_PATH: too long"), -1;
	if (s->pepper_file[0] == '\0' &&
	    beside_db(s->pepper_file, sizeof(s->pepper_file), s->db_path,
	    "pepper") == -1)
		return snprintf(err, errlen, "SERVICE_DB_PATH: too long"), -1;
	if (s->shm_path[0] == '\0' &&
	    beside_db(s->shm_path, sizeof(s->shm_path), s->cache_path,
	    "evalgate.shm") == -1)
		return snprintf(err, errlen, "SERVICE_CACHE_PATH: too long"),
		    -1;
	/* Unset, the state's directory says: shared-hosting-install makes
	 * it setgid and group-writable in group mode, a directory whose
	 * group may replace any file in it anyway. */
	v = get("SERVICE_GROUP_WRITABLE");
	if (v == NULL || *v == '\0')
		s->group_writable = settings_group_dir(s->pepper_file);
	return 0;
}

int
settings_group_dir(const char *path)
{
	struct stat	 sb;
	char		 dir[4096];
	const char	*slash = strrchr(path, '/');
	int		 len = slash == NULL ? 1 : (int)(slash - path);

	if (slash == NULL)
		path = ".";
	else if (len == 0)
		len = 1;		/* "/" */
	if ((size_t)snprintf(dir, sizeof(dir), "%.*s", len, path) >=
	    sizeof(dir) || stat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
		return 0;
	return (sb.st_mode & (S_ISGID | S_IRWXG)) == (S_ISGID | S_IRWXG);
}

void
settings_describe(void (*line)(const char *, const char *, const char *))
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		line(table[i].name, table[i].def, table[i].meaning);
}
