/* store_pg_engine.c: the PostgreSQL engine's table (store_pg_engine)
 * and the making of its connections, which point at it: opening one,
 * and init's.  Everything they call is below, in store_pg.c and the
 * engine's other files, none of which calls back here: the files of the
 * storage layer call one another without a cycle (src/README.md,
 * "Layers"). */
#include "config.h"

#include <string.h>

#include "settings.h"
#include "store_pg.h"
#include "xalloc.h"

/* An unconnected store, with the host's cache beside it. */
static struct store *
store_new(const struct settings *s)
{
	struct store *pg = xmalloc(sizeof(*pg));

	memset(pg, 0, sizeof(*pg));
	pg->engine = &store_pg_engine;
	pg->settings = s;
	pg->sync_full = s->db_sync == DB_SYNC_FULL;
	pg->at_commit.id = PG_STMT__MAX;
	pg->local = store_sqlite_open_cache(s);
	return pg;
}

struct store *
pg_open(const struct settings *s, struct error *e)
{
	struct store *pg = store_new(s);

	/* The caller (the console) says why, once. */
	if (pg_connect_store(pg, e) == -1) {
		pg_close(pg);
		return NULL;
	}
	return pg;
}

struct store *
pg_open_lazy(const struct settings *s)
{
	struct store *pg = store_new(s);

	pg_maintain(pg);
	return pg;
}

int
pg_init(const struct settings *s, struct error *e)
{
	struct store	*pg = store_new(s);
	int		 unused, none, cache_ok, found, rc = -1;

	if ((pg->conn = pg_connect(s->db_url, PG_CONNECT_TIMEOUT_S,
	    e)) == NULL)
		goto out;
	if ((found = pg_migrate(pg, e)) == -1)
		goto out;
	/* The host's cache file, made by store_new(). */
	pg_local(pg)->ready(pg->local, &unused, &cache_ok, &none);
	if (!cache_ok) {
		error_set(e, ERR_UNAVAILABLE, NULL,
		    "cannot create the cache %s", s->cache_path);
		goto out;
	}
	rc = found;
out:
	pg_close(pg);
	return rc;
}

const struct store_engine store_pg_engine = {
	.name = "postgresql",
	.host_admission = 0,
	STORE_ENTRIES
};
