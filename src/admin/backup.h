/* backup.h: the console's backup and restore commands (backup.c), run
 * from its command table instead of an operation: they work on whole
 * files, not through a connection of the store. */
#ifndef EVALGATE_ADMIN_BACKUP_H
#define EVALGATE_ADMIN_BACKUP_H

#include <json-c/json.h>

struct settings;

/* in: {file, force?} and {file, replace_pepper?} (borrowed), as the
 * command table parses them.  Exit status: 0 done, 1 refused with one
 * line on stderr. */
int	cmd_backup(const struct settings *s, json_object *in);
int	cmd_restore(const struct settings *s, json_object *in);

#endif
