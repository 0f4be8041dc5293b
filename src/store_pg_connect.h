/* store_pg_connect.h: opening a PostgreSQL connection (store_pg.c), for
 * the engine's files and for store_pg_import.c, which includes
 * store_sqlite.h and so cannot include store_pg.h (each engine's header
 * defines its own struct store). */
#ifndef EVALGATE_STORE_PG_CONNECT_H
#define EVALGATE_STORE_PG_CONNECT_H

#include <libpq-fe.h>

#include "error.h"

#define PG_CONNECT_TIMEOUT_S 5		/* to open a connection */

/* A connection to url, opened within timeout_s seconds, owned by the
 * caller (PQfinish), or NULL with e set: ERR_UNAVAILABLE, retry_after_ms
 * PG_RETRY_MS, "cannot connect to PostgreSQL at SERVER: WHY", the
 * server named by its socket's path or host:port, never by the URL,
 * the role, the database name or the password. */
PGconn	*pg_connect(const char *url, int timeout_s, struct error *e);

#endif
