/* store_sqlite_engine.c: the SQLite engine's table (store_sqlite_engine)
 * and the making of its connections, which point at it.  Everything they
 * call is below, in store_sqlite.c and the engine's other files, none of
 * which calls back here: the files of the storage layer call one
 * another without a cycle (src/README.md, "Layers"). */
#include "config.h"

#include <string.h>

#include "settings.h"
#include "store_sqlite.h"
#include "xalloc.h"

/* An unconnected store. */
static struct store *
store_new(const struct settings *s)
{
	struct store *st = xmalloc(sizeof(*st));

	memset(st, 0, sizeof(*st));
	st->engine = &store_sqlite_engine;
	st->settings = s;
	st->sync_full = s->db_sync == DB_SYNC_FULL;
	st->busy_limit_ms = STORE_BUSY_TIMEOUT_MS;
	buf_init(&st->rec, STORE_RECORD_MAX);
	buf_init(&st->answers, STORE_RECORD_MAX);
	return st;
}

struct store *
sq_open(const struct settings *s, struct error *e)
{
	struct store	*st = store_new(s);

	if (sqlite_connect(st, e) == -1) {
		sq_close(st);
		return NULL;
	}
	return st;
}

struct store *
sq_open_lazy(const struct settings *s)
{
	struct store *st = store_new(s);

	sq_maintain(st);
	return st;
}

struct store *
store_sqlite_open_cache(const struct settings *s)
{
	struct store *st = store_new(s);

	st->cache_only = 1;
	sq_maintain(st);
	return st;
}

const struct store_engine store_sqlite_engine = {
	.name = "sqlite",
	.host_admission = 1,
	STORE_ENTRIES
};
