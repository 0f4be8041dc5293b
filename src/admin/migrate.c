/* migrate.c: evalgate-admin migrate --from PATH --to URL: the move of
 * an install from SQLite to PostgreSQL (store_import(),
 * store_pg_import.c, does the copy), and what the operator is told:
 * what was copied, that the pepper must be the same file on every
 * host, and what to do next.
 *
 * The SQLite file is read as one snapshot, never written, and not
 * refused while a gateway has it open: what the gateway writes after the
 * snapshot is not copied, which the output says.  Stop the web server
 * first for a complete move. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "admin/console.h"
#include "admin/migrate.h"
#include "error.h"
#include "json_util.h"
#include "settings.h"
#include "store.h"

int
admin_is_db_url(const char *v)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz_");

	return strncmp(v, "postgresql://", 13) == 0 ||
	    strncmp(v, "postgres://", 11) == 0 || (n > 0 && v[n] == '=');
}

int
cmd_migrate(const struct settings *s, json_object *in)
{
	static struct settings	 to;
	struct store_import	 r;
	struct error		 e = { 0 };
	const char		*from = ju_str(in, "from");
	const char		*url = ju_str(in, "to");
	size_t			 i;
	int			 have_pepper;

	if (!admin_is_db_url(url) || strlen(url) >= sizeof(to.db_url)) {
		return console_error(1, NULL, "--to: want a postgresql:// "
		    "or postgres:// URL, or a key=value conninfo (up to %zu "
		    "bytes)", sizeof(to.db_url) - 1);
	}
	if (access(from, R_OK) == -1) {
		return console_error(1, NULL, "%s: %s", from,
		    strerror(errno));
	}
	to = *s;
	snprintf(to.db_url, sizeof(to.db_url), "%s", url);
	if (store_import(&to, from, &r, &e) == -1) {
		console_error(1, NULL, "%s", e.message);
		error_clear(&e);
		return 1;
	}
	printf("migrated %s (schema version %d) into PostgreSQL database "
	    "\"%s\", in one transaction:\n", from, r.version, r.database);
	for (i = 0; i < r.ntables; i++)
		printf("  %-18s %lld rows\n", r.table[i], (long long)r.rows[i]);
	printf("every table's rows counted in both: the same; identity "
	    "sequences set past the copied ids\n");
	if (r.in_use)
		printf("warning: process %ld had %s open: what it wrote after "
		    "the snapshot is not in PostgreSQL (stop the web server "
		    "before migrating for a complete move)\n", r.pid, from);
	have_pepper = access(s->pepper_file, F_OK) == 0;
	printf("pepper %s%s: the copied keys work only with this same "
	    "pepper: give every host that serves the database a copy of "
	    "this file (SERVICE_PEPPER_FILE)\n", s->pepper_file, have_pepper ?
	    "" : " (missing here: use the SQLite install's)");
	printf("next: set SERVICE_DB_URL on every host (each keeps its own "
	    "cache, which starts empty) and restart the web server\n");
	return 0;
}
