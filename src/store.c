/* store.c: the storage interface of store.h, dispatched to the engine
 * the configuration chose (store_engine.h): PostgreSQL when
 * SERVICE_DB_URL is set, SQLite otherwise. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "settings.h"
#include "store_engine.h"

/* A build without libpq refuses SERVICE_DB_URL when the settings are
 * loaded (settings.c), so it never reaches here. */
static const struct store_engine *
engine_for(const struct settings *s)
{
#ifdef HAVE_POSTGRESQL
	if (s->db_url[0] != '\0')
		return &store_pg_engine;
#else
	(void)s;
#endif
	return &store_sqlite_engine;
}

static const struct store_engine *
engine(struct store *st)
{
	return store_engine_of(st);
}

int
store_host_admission(struct store *st)
{
	return engine(st)->host_admission;
}

const char *
store_engine_name(const struct settings *s)
{
	return engine_for(s)->name;
}

/* Every other function of store.h, handed to its engine: those that
 * open, by the settings s; those on a connection st, by its engine (one
 * that gives nothing does nothing on NULL, as store_close(NULL) must).
 * store.h declares them, so the compiler checks each against it. */
#define FROM_SETTINGS(type, name, params, args) \
	type store_##name params { return engine_for(s)->name args; }
#define ON_CONNECTION(type, name, params, args) \
	type store_##name params { return engine(st)->name args; }
#define ON_CONNECTION_VOID(type, name, params, args) \
	type store_##name params { if (st != NULL) engine(st)->name args; }

STORE_OPEN_OPS(FROM_SETTINGS)
STORE_OPS(ON_CONNECTION)
STORE_VOID_OPS(ON_CONNECTION_VOID)

#ifndef HAVE_POSTGRESQL
/* The move to PostgreSQL is store_pg_import.c's, in a build with libpq;
 * without it, the console's migrate says why it cannot. */
int
store_import(const struct settings *s, const char *from,
    struct store_import *r, struct error *e)
{
	(void)s;
	(void)from;
	memset(r, 0, sizeof(*r));
	return error_set(e, ERR_UNAVAILABLE, NULL, "this evalgate was built "
	    "without PostgreSQL (configure --with-postgresql)");
}
#endif
