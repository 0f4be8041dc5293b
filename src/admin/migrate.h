/* migrate.h: the console's migrate command (migrate.c), run from its
 * command table instead of an operation: it works on a whole SQLite
 * file and a PostgreSQL database, not through a connection of the
 * store. */
#ifndef EVALGATE_ADMIN_MIGRATE_H
#define EVALGATE_ADMIN_MIGRATE_H

#include <json-c/json.h>

struct settings;

/* in: {from, to} (borrowed), as the command table parses them.  Exit
 * status: 0 done, 1 refused with one line on stderr. */
int	cmd_migrate(const struct settings *s, json_object *in);

/* Whether v names a PostgreSQL database (a postgres:// or
 * postgresql:// URL, or a key=value conninfo) rather than a file. */
int	admin_is_db_url(const char *v);

#endif
