/* settings.h: the SERVICE_* settings, read once at start-up from the
 * environment (lighttpd bin-environment, Apache FcgidInitialEnv). */
#ifndef EVALGATE_SETTINGS_H
#define EVALGATE_SETTINGS_H

#include <stddef.h>

enum db_sync { DB_SYNC_NORMAL, DB_SYNC_FULL };

struct settings {
	char	db_path[4096];
	char	db_url[1024];		/* PostgreSQL, or "": SQLite */
	char	cache_path[4096];
	char	pepper_file[4096];
	long	max_questions;
	long	max_state_chars;
	long	max_body_bytes;
	long	db_sync;		/* enum db_sync */
	char	admin_listen[256];	/* "ADDR:PORT" or "" */
	long	default_rate_per_minute;
	long	default_daily_quota;
	long	backend_timeout_ms;
	long	workers;		/* SERVICE_WORKERS: a cap; 0 none */
	char	shm_path[4096];		/* the host's shared memory */
	long	group_writable;		/* 1: state files 0660, else 0600 */
	long	retention_days;		/* 0: keep every decision */
	long	retention_days_with_outcomes;	/* -1: as retention_days,
						 * 0: forever */
	long	state_retention_days;	/* 0: keep every kept state */
	long	metrics;		/* 1: count for GET /metrics */
	long	metrics_key_required;	/* 1: /metrics needs an admin key */
	long	access_log;		/* 1: a line per request */
	long	cpu_affinity;		/* 1: each worker keeps to a CPU */
#ifdef EVALGATE_TEST_HOOKS
	char	test_clock_file[4096];	/* --enable-test-hooks only */
	long	test_queue_hold_ms;	/* the same */
	long	test_group_hold_ms;	/* the same */
#endif
};

/* Looks a name up; getenv in production, a table in the unit tests. */
typedef const char *(*settings_getter)(const char *name);

/* Fills s from get (defaults for unset or empty names).  On a bad value
 * returns -1 with a one-line reason naming the setting in err. */
int	settings_load(struct settings *s, settings_getter get,
	    char *err, size_t errlen);

/* Whether the directory of the file at path is a shared group's: setgid
 * and group-writable, as shared-hosting-install makes the state's with
 * SERVICE_GROUP_WRITABLE=1.  With the setting unset, settings_load
 * takes 1 from such a directory of the pepper. */
int	settings_group_dir(const char *path);

/* The umask both programs set at start (doc/design.md, section 19.3):
 * 077, or 007 with SERVICE_GROUP_WRITABLE=1. */
#define SETTINGS_UMASK(s)	((s)->group_writable ? 007 : 077)

/* Prints every setting, its default and meaning (for --help and man). */
void	settings_describe(void (*line)(const char *name, const char *def,
	    const char *meaning));

#endif
