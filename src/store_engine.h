/* store_engine.h: what a storage engine implements, for store.c to
 * dispatch to.
 *
 * The functions of store.h are one interface with two engines behind
 * it: SQLite (store_sqlite*.c, the default) and PostgreSQL (store_pg*.c,
 * when SERVICE_DB_URL is set and the build has libpq).  Each member
 * below has the meaning and conventions of the store.h function of the
 * same name without its store_ prefix.
 *
 * Each engine defines its own struct store, privately, in its own
 * files, the way each SQLite VFS defines its own sqlite3_file: its first
 * member is always the engine, so that store.c, which sees the struct
 * incomplete, can find which engine a connection belongs to. */
#ifndef EVALGATE_STORE_ENGINE_H
#define EVALGATE_STORE_ENGINE_H

#include "store.h"

struct store_engine {
	const char	*name;		/* "sqlite", "postgresql" */
	/* Admission may be kept in the host's shared memory (design.md
	 * section 16, item 6): SQLite's, one host's.  PostgreSQL's is
	 * shared by several hosts and stays in the database. */
	int		 host_admission;

	int	 (*init)(const struct settings *, struct error *);
	struct store *(*open)(const struct settings *, struct error *);
	struct store *(*open_lazy)(const struct settings *);
	void	 (*maintain)(struct store *);
	void	 (*idle)(struct store *);
	void	 (*close)(struct store *);
	void	 (*ready)(struct store *, int *, int *);

	int	 (*begin)(struct store *, struct error *);
	void	 (*read_begin)(struct store *);
	void	 (*read_end)(struct store *);
	int	 (*begin_counters)(struct store *, struct error *);
	int	 (*commit)(struct store *, struct error *);
	void	 (*rollback)(struct store *);

	int	 (*app_insert)(struct store *, struct app *, struct error *);
	int	 (*app_update)(struct store *, const struct app *,
		    struct error *);
	int	 (*app_by_name)(struct store *, const char *, struct app *,
		    struct error *);
	int	 (*app_by_id)(struct store *, int64_t, struct app *,
		    struct error *);
	int	 (*app_each)(struct store *,
		    void (*)(const struct app *, void *), void *,
		    struct error *);

	int	 (*key_insert)(struct store *, const struct key_row *,
		    struct error *);
	int	 (*key_by_prefix)(struct store *, const char *,
		    struct key_row *, struct error *);
	int	 (*key_revoke)(struct store *, const char *, int64_t,
		    struct error *);
	int	 (*key_set_check)(struct store *, const char *,
		    const unsigned char [32], struct error *);
	int	 (*key_each)(struct store *, int64_t,
		    void (*)(const struct key_row *, const char *, void *),
		    void *, struct error *);
	int	 (*memo_has)(struct store *, const unsigned char [32],
		    const char *);
	void	 (*memo_put)(struct store *, const unsigned char [32],
		    const char *, int64_t);

	int	 (*backend_insert)(struct store *, struct backend *,
		    struct error *);
	int	 (*backend_set_enabled)(struct store *, const char *, int,
		    struct error *);
	int	 (*backend_update)(struct store *, const struct backend *,
		    struct error *);
	int	 (*backend_by_name)(struct store *, const char *,
		    struct backend *, struct error *);
	int	 (*backend_by_id)(struct store *, int64_t, struct backend *,
		    struct error *);
	int	 (*backend_each)(struct store *, int,
		    void (*)(const struct backend *, void *), void *,
		    struct error *);
	int64_t	 (*cooldown_until)(struct store *, const char *);
	void	 (*cooldown_set)(struct store *, const char *, int64_t);

	int	 (*schema_publish)(struct store *, struct schema_version *,
		    struct error *);
	int	 (*schema_get)(struct store *, const char *, int64_t,
		    struct schema_version *, struct error *);
	int	 (*schema_match)(struct store *, int64_t, const char *,
		    struct schema_version *, int *, struct error *);
	int	 (*schema_each)(struct store *, const char *,
		    void (*)(const struct schema_version *, void *), void *,
		    struct error *);
	int	 (*grant)(struct store *, int64_t, int64_t, int64_t,
		    struct error *);
	int	 (*ungrant)(struct store *, int64_t, int64_t, int64_t,
		    struct error *);
	int	 (*grant_allows)(struct store *, int64_t, int64_t, int64_t,
		    struct error *);
	int	 (*template_publish)(struct store *, struct template_version *,
		    struct error *);
	int	 (*template_get)(struct store *, const char *, int64_t,
		    struct template_version *, struct error *);
	int	 (*template_each)(struct store *,
		    void (*)(const struct template_version *, void *), void *,
		    struct error *);

	int	 (*decision_insert)(struct store *, const struct decision *,
		    json_object *, json_object *, json_object *,
		    struct error *);
	int	 (*decision_get)(struct store *, const char *, int64_t,
		    struct decision_row *, struct error *);
	int	 (*outcome_record)(struct store *, const char *, json_object *,
		    const char *, int64_t, struct error *);
	int	 (*decision_page)(struct store *, const struct decision_range *,
		    int, void (*)(const char *, int64_t, void *), void *,
		    struct error *);
	int	 (*calibration_each)(struct store *, int64_t, int64_t,
		    const char *, int64_t,
		    int (*)(const struct calibration_row *, void *,
		    struct error *), void *, struct error *);

	int	 (*admission_read)(struct store *, int64_t, const char *,
		    int64_t *, int64_t *, int64_t *, int64_t *,
		    struct error *);
	int	 (*admission_write)(struct store *, int64_t, const char *,
		    int64_t, int64_t, int64_t, int64_t, struct error *);
	int	 (*quota_used)(struct store *, int64_t, const char *,
		    int64_t *, struct error *);
	int	 (*quota_charge)(struct store *, int64_t, const char *, int64_t,
		    struct error *);

	int	 (*prune_step)(struct store *, struct prune_range *, int64_t *,
		    struct error *);
	int	 (*vacuum)(struct store *, int, struct error *);
	int	 (*audit)(struct store *, const char *, const char *,
		    const char *, json_object *, struct error *);
};

/* The engines.  store_pg_engine exists only in a build with libpq
 * (HAVE_POSTGRESQL). */
extern const struct store_engine store_sqlite_engine;
extern const struct store_engine store_pg_engine;

/* For an engine whose shared rows live elsewhere (PostgreSQL): the
 * host's cache file alone (the verified-key memo, replica cool-downs),
 * as a SQLite connection whose memo_has, memo_put, cooldown_until,
 * cooldown_set, ready (its second answer), maintain and idle serve.
 * Never NULL; owned by the caller (store_close). */
struct store	*store_sqlite_open_cache(const struct settings *s);

#endif
