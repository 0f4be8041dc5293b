/* console.h: what the files of the console share: the one function
 * that writes its errors (evalgate-admin.c), which the commands on
 * whole files (backup.c, migrate.c) call too. */
#ifndef EVALGATE_ADMIN_CONSOLE_H
#define EVALGATE_ADMIN_CONSOLE_H

struct cli_cmd;

/* Writes an error of the console on stderr and returns status, its
 * exit status: with fmt, the line "evalgate-admin: " and fmt's text;
 * then for 2 (bad usage) the usage of c, or with c NULL the usage of
 * every command.  1 (refused) is fmt's line alone.  c is borrowed. */
int	console_error(int status, const struct cli_cmd *c, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));

#endif
