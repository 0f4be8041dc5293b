/* evalgate-admin.c: evalgate-admin, the administration console for a
 * single host.
 *
 * It works on the SQLite file directly, through the same operations
 * (ops.c) as the /admin/v1 routes.  Each command is a row of one table
 * (cmds[]): its words, its positional arguments and options, each
 * mapped to a JSON field of the input, its usage, and what runs: an
 * operation and how to print its output, or a command on whole files
 * (init, compact, backup, restore, migrate) or that runs for long on a
 * connection of its own (replay).  The options of the
 * backend kinds, and the list of kinds, are not in the table: they are
 * made from the kinds' own tables (backend_kind_at()), in the usage as
 * in what a command takes.  Exit status: 0 done, 1
 * refused (one line on stderr), 2 bad usage; console_error() writes
 * every error. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <sodium.h>

#include "admin/backup.h"
#include "admin/console.h"
#include "admin/migrate.h"
#include "admin/replay.h"
#include "auth.h"
#include "backend.h"
#include "buf.h"
#include "calibration_render.h"
#include "compare_render.h"
#include "clock.h"
#include "json_util.h"
#include "ops.h"
#include "settings.h"
#include "shm.h"
#include "store.h"
#include "utf8.h"
#include "version.h"

enum opt_kind {
	OPT_FLAG,		/* --x: true */
	OPT_ON_OFF,		/* --x on|off: boolean */
	OPT_INT,		/* --x N */
	OPT_INT_OR_DEFAULT,	/* --x N|default: integer or null */
	OPT_NUMBER,		/* --x 0.5 */
	OPT_STRING,		/* --x text */
	OPT_STRING_OR_NONE,	/* --x text|'': string, or null for '' */
	OPT_STRINGS,		/* --x text, repeatable: array */
	OPT_JSON,		/* --x '{"a":1}' */
	OPT_FILE_JSON,		/* --x FILE holding JSON */
	OPT_FILE_TEXT,		/* --x FILE: its text */
};

/* Whether a command takes the options of the backend kinds, and how:
 * backend add (an integer) or backend update (an integer or default). */
enum kind_opts { KINDOPTS_NONE, KINDOPTS_ADD, KINDOPTS_UPDATE };

/* PRINT_REPORT: a calibration report in the input's "format" (text by
 * default), or with "apply" the number of the version it published;
 * PRINT_COMPARE: the same of a comparison, "promote" for "apply". */
enum print { PRINT_OBJECT, PRINT_TABLE, PRINT_BARE, PRINT_REPORT,
	PRINT_COMPARE };

#define MAX_ARGS 3
#define MAX_OPTS 12
#define FILE_MAX_MIB 16		/* a file given to an option, at most */

struct cli_opt {
	const char	*flag;
	const char	*field;
	enum opt_kind	 kind;
	int		 required;	/* missing: bad usage, exit 2 */
};

struct cli_arg {
	const char	*field;
	int		 optional;
};

/* A command of the console on whole files (admin/backup.c,
 * admin/migrate.c, init and compact below), or one that runs for long
 * on a connection it opens itself (admin/replay.c), with no HTTP
 * route: in is what parse_args() made (borrowed); returns the exit
 * status. */
typedef int file_cmd(const struct settings *s, json_object *in);

static file_cmd cmd_init, cmd_compact;

/* The console's one table of commands; its usage (console_error()) is
 * made from it, in its order.  A row runs either an operation of ops.c
 * (op; run NULL) or a command on whole files (run; op OP__MAX).  Every
 * string is static. */
static const struct cli_cmd {
	const char	*words[3];	/* one to three; NULL after the last */
	struct cli_arg	 args[MAX_ARGS];
	struct cli_opt	 opts[MAX_OPTS];
	enum op		 op;		/* OP__MAX: run runs instead */
	file_cmd	*run;		/* NULL: op runs */
	enum print	 print;		/* of op's output */
	const char	*bare;		/* PRINT_BARE: the field printed */
	const char	*pg_instead;	/* not NULL: refused on a PostgreSQL
					 * database, which has this instead */
	int		 alone;		/* the words alone: anything after
					 * them is bad usage of every command
					 * (the whole usage), not of this one */
	const char	*usage;		/* KINDS: the kinds' names, '|'
					 * between; the kinds' options are
					 * added after it (kindopts) */
	enum kind_opts	 kindopts;
} cmds[] = {
	{ { "init", NULL }, { { NULL, 0 } }, { { NULL, NULL, 0, 0 } },
	  OP__MAX, cmd_init, PRINT_OBJECT, NULL, NULL, 1,
	  "init", KINDOPTS_NONE },
	{ { "compact", NULL }, { { NULL, 0 } }, { { NULL, NULL, 0, 0 } },
	  OP__MAX, cmd_compact, PRINT_OBJECT, NULL,
	  "PostgreSQL gives space back by itself (autovacuum); to rewrite a "
	  "database, copy it with pg_dump and pg_restore", 1,
	  "compact", KINDOPTS_NONE },
	{ { "app", "create" }, { { "name", 0 } },
	  { { "--log-state", "log_state", OPT_FLAG, 0 },
	    { "--admin", "admin", OPT_FLAG, 0 },
	    { "--rate-per-minute", "rate_per_minute", OPT_INT, 0 },
	    { "--daily-quota", "daily_quota", OPT_INT, 0 } },
	  OP_APP_CREATE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "app create NAME [--log-state] [--admin] [--rate-per-minute N] "
	  "[--daily-quota N]", KINDOPTS_NONE },
	{ { "app", "update" }, { { "name", 0 } },
	  { { "--log-state", "log_state", OPT_ON_OFF, 0 },
	    { "--rate-per-minute", "rate_per_minute", OPT_INT_OR_DEFAULT, 0 },
	    { "--daily-quota", "daily_quota", OPT_INT_OR_DEFAULT, 0 },
	    { "--retention-days", "retention_days", OPT_INT_OR_DEFAULT, 0 } },
	  OP_APP_UPDATE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "app update NAME [--log-state on|off] [--rate-per-minute N|default] "
	  "[--daily-quota N|default] [--retention-days N|default]",
	  KINDOPTS_NONE },
	{ { "decisions", "prune" }, { { NULL, 0 } },
	  { { "--before", "before", OPT_STRING, 1 },
	    { "--app", "application", OPT_STRING, 0 },
	    { "--keep-with-outcomes", "keep_with_outcomes", OPT_FLAG, 0 } },
	  OP_DECISIONS_PRUNE, NULL, PRINT_BARE, "deleted", NULL, 0,
	  "decisions prune --before DATE [--app NAME] [--keep-with-outcomes]",
	  KINDOPTS_NONE },
	{ { "app", "list" }, { { NULL, 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_APP_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "app list", KINDOPTS_NONE },
	{ { "key", "issue" }, { { "application", 0 } },
	  { { "--expires", "expires", OPT_STRING, 0 } },
	  OP_KEY_ISSUE, NULL, PRINT_BARE, "key", NULL, 0,
	  "key issue APP [--expires RFC3339]", KINDOPTS_NONE },
	{ { "key", "revoke" }, { { "prefix", 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_KEY_REVOKE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "key revoke PREFIX", KINDOPTS_NONE },
	{ { "key", "list" }, { { "application", 1 } }, { { NULL, NULL, 0, 0 } },
	  OP_KEY_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "key list [APP]", KINDOPTS_NONE },
	{ { "backend", "add" }, { { "name", 0 } },
	  { { "--kind", "kind", OPT_STRING, 1 },
	    { "--url", "urls", OPT_STRINGS, 0 },
	    { "--model", "model", OPT_STRING, 0 },
	    { "--auth-env", "auth_env", OPT_STRING, 0 },
	    { "--description", "description", OPT_STRING, 0 },
	    { "--release-date", "release_date", OPT_STRING, 0 },
	    { "--timeout-ms", "timeout_ms", OPT_INT, 0 },
	    { "--max-in-flight", "max_in_flight", OPT_INT, 0 } },
	  OP_BACKEND_ADD, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "backend add NAME --kind KINDS [--url URL]... "
	  "[--model NAME] [--auth-env VAR] [--description TEXT] "
	  "[--release-date YYYY-MM-DD] [--timeout-ms N] [--max-in-flight N]",
	  KINDOPTS_ADD },
	{ { "backend", "update" }, { { "name", 0 } },
	  { { "--url", "urls", OPT_STRINGS, 0 },
	    { "--model", "model", OPT_STRING_OR_NONE, 0 },
	    { "--auth-env", "auth_env", OPT_STRING_OR_NONE, 0 },
	    { "--description", "description", OPT_STRING_OR_NONE, 0 },
	    { "--release-date", "release_date", OPT_STRING_OR_NONE, 0 },
	    { "--timeout-ms", "timeout_ms", OPT_INT_OR_DEFAULT, 0 },
	    { "--max-in-flight", "max_in_flight", OPT_INT_OR_DEFAULT, 0 } },
	  OP_BACKEND_UPDATE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "backend update NAME [--url URL]... [--model NAME|''] "
	  "[--auth-env VAR|''] [--description TEXT|''] "
	  "[--release-date YYYY-MM-DD|''] [--timeout-ms N|default] "
	  "[--max-in-flight N|default]", KINDOPTS_UPDATE },
	{ { "backend", "enable" }, { { "name", 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_BACKEND_ENABLE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "backend enable NAME", KINDOPTS_NONE },
	{ { "backend", "disable" }, { { "name", 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_BACKEND_DISABLE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "backend disable NAME", KINDOPTS_NONE },
	{ { "backend", "list" }, { { NULL, 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_BACKEND_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "backend list", KINDOPTS_NONE },
	{ { "schema", "publish" }, { { "id", 0 } },
	  { { "--questions", "questions", OPT_FILE_JSON, 1 },
	    { "--backend", "backend", OPT_STRING, 1 },
	    { "--temperature", "temperature", OPT_NUMBER, 0 },
	    { "--abstain-threshold", "abstain_threshold", OPT_NUMBER, 0 } },
	  OP_SCHEMA_PUBLISH, NULL, PRINT_BARE, "version", NULL, 0,
	  "schema publish ID --questions FILE --backend NAME [--temperature T] "
	  "[--abstain-threshold X]", KINDOPTS_NONE },
	{ { "schema", "list" }, { { "id", 1 } }, { { NULL, NULL, 0, 0 } },
	  OP_SCHEMA_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "schema list [ID]", KINDOPTS_NONE },
	{ { "grant", NULL }, { { "application", 0 }, { "schema", 0 } },
	  { { "--version", "version", OPT_INT, 0 } },
	  OP_GRANT, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "grant APP SCHEMA [--version N]", KINDOPTS_NONE },
	{ { "ungrant", NULL }, { { "application", 0 }, { "schema", 0 } },
	  { { "--version", "version", OPT_INT, 0 } },
	  OP_UNGRANT, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "ungrant APP SCHEMA [--version N]", KINDOPTS_NONE },
	{ { "template", "publish" }, { { "id", 0 } },
	  { { "--body", "body", OPT_FILE_TEXT, 1 },
	    { "--variables", "variables", OPT_FILE_JSON, 1 },
	    { "--escape", "escape", OPT_STRING, 0 } },
	  OP_TEMPLATE_PUBLISH, NULL, PRINT_BARE, "version", NULL, 0,
	  "template publish ID --body FILE --variables FILE [--escape html]",
	  KINDOPTS_NONE },
	{ { "template", "render" }, { { "id", 0 } },
	  { { "--version", "version", OPT_INT, 0 },
	    { "--values", "values", OPT_JSON, 1 } },
	  OP_TEMPLATE_RENDER, NULL, PRINT_BARE, "state", NULL, 0,
	  "template render ID [--version N] --values JSON", KINDOPTS_NONE },
	{ { "template", "list" }, { { NULL, 0 } }, { { NULL, NULL, 0, 0 } },
	  OP_TEMPLATE_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "template list", KINDOPTS_NONE },
	{ { "calibration", NULL }, { { "id", 0 } },
	  { { "--version", "version", OPT_INT, 0 },
	    { "--question", "question", OPT_STRING, 0 },
	    { "--since", "since", OPT_STRING, 0 },
	    { "--format", "format", OPT_STRING, 0 },
	    { "--target-accuracy", "target_accuracy", OPT_NUMBER, 0 },
	    { "--apply", "apply", OPT_FLAG, 0 } },
	  OP_CALIBRATION, NULL, PRINT_REPORT, NULL, NULL, 0,
	  "calibration SCHEMA [--version N] [--question Q] [--since DATE] "
	  "[--format text|json|html] [--target-accuracy X] [--apply]",
	  KINDOPTS_NONE },
	{ { "backup", NULL }, { { "file", 0 } },
	  { { "--force", "force", OPT_FLAG, 0 } },
	  OP__MAX, cmd_backup, PRINT_OBJECT, NULL,
	  "back a PostgreSQL database up with pg_dump", 0,
	  "backup FILE [--force]", KINDOPTS_NONE },
	{ { "restore", NULL }, { { "file", 0 } },
	  { { "--replace-pepper", "replace_pepper", OPT_FLAG, 0 } },
	  OP__MAX, cmd_restore, PRINT_OBJECT, NULL,
	  "restore a PostgreSQL database with pg_restore (from pg_dump's "
	  "copy)", 0,
	  "restore FILE [--replace-pepper]", KINDOPTS_NONE },
	{ { "migrate", NULL }, { { NULL, 0 } },
	  { { "--from", "from", OPT_STRING, 1 },
	    { "--to", "to", OPT_STRING, 1 } },
	  OP__MAX, cmd_migrate, PRINT_OBJECT, NULL, NULL, 0,
	  "migrate --from PATH --to URL", KINDOPTS_NONE },
	{ { "schema", "challenger", "add" }, { { "id", 0 } },
	  { { "--backend", "backend", OPT_STRING, 1 },
	    { "--share", "share", OPT_NUMBER, 1 },
	    { "--version", "version", OPT_INT, 0 } },
	  OP_CHALLENGER_ADD, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "schema challenger add SCHEMA --backend NAME --share S "
	  "[--version N]", KINDOPTS_NONE },
	{ { "schema", "challenger", "list" }, { { "id", 0 } },
	  { { "--version", "version", OPT_INT, 0 } },
	  OP_CHALLENGER_LIST, NULL, PRINT_TABLE, NULL, NULL, 0,
	  "schema challenger list SCHEMA [--version N]", KINDOPTS_NONE },
	{ { "schema", "challenger", "remove" }, { { "id", 0 } },
	  { { "--backend", "backend", OPT_STRING, 1 },
	    { "--version", "version", OPT_INT, 0 } },
	  OP_CHALLENGER_REMOVE, NULL, PRINT_OBJECT, NULL, NULL, 0,
	  "schema challenger remove SCHEMA --backend NAME [--version N]",
	  KINDOPTS_NONE },
	{ { "replay", NULL }, { { "id", 0 } },
	  { { "--backend", "backend", OPT_STRING, 1 },
	    { "--version", "version", OPT_INT, 0 },
	    { "--since", "since", OPT_STRING, 0 },
	    { "--limit", "limit", OPT_INT, 0 },
	    { "--rate", "rate", OPT_NUMBER, 0 } },
	  OP__MAX, cmd_replay, PRINT_OBJECT, NULL, NULL, 0,
	  "replay SCHEMA --backend NAME [--version N] [--since DATE] "
	  "[--limit N] [--rate R]", KINDOPTS_NONE },
	{ { "compare", NULL }, { { "id", 0 } },
	  { { "--version", "version", OPT_INT, 0 },
	    { "--question", "question", OPT_STRING, 0 },
	    { "--since", "since", OPT_STRING, 0 },
	    { "--format", "format", OPT_STRING, 0 },
	    { "--promote", "promote", OPT_STRING, 0 } },
	  OP_COMPARE, NULL, PRINT_COMPARE, NULL, NULL, 0,
	  "compare SCHEMA [--version N] [--question Q] [--since DATE] "
	  "[--format text|json|html] [--promote BACKEND]", KINDOPTS_NONE },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char *db_arg;	/* --db PATH or URL: overrides SERVICE_DB_PATH
				 * and SERVICE_DB_URL */

/* Leaves the host's shared memory at exit (its slot freed). */
static void
leave_host(void)
{
	struct shm *m = shm_host();

	shm_set_host(NULL);
	shm_detach(m);
}

/* The console's flag of the kind option o into flag (size bytes):
 * --NAME, '_' written '-', and -json after a BOPT_JSON one's name. */
static void
kind_flag(const struct backend_option *o, char *flag, size_t size)
{
	char	*p;

	snprintf(flag, size, "--%s%s", o->name, o->type == BOPT_JSON ?
	    "-json" : "");
	for (p = flag + 2; *p != '\0'; p++)
		if (*p == '_')
			*p = '-';
}

/* The kind option named name that comes first in the kinds' order,
 * for the i-th kind's row o: whether o is it (an option two kinds share
 * is shown once). */
static int
kind_option_first(size_t i, const struct backend_option *o)
{
	const struct backend_kind	*k;
	const struct backend_option	*p;
	size_t				 j;

	for (j = 0; j < i && (k = backend_kind_at(j)) != NULL; j++)
		for (p = k->options; p != NULL && p->name != NULL; p++)
			if (strcmp(p->name, o->name) == 0)
				return 0;
	return 1;
}

/* The console option of c's kind options whose flag is arg, into o and
 * flag (the option's storage); 0 none such. */
static int
kind_option(const struct cli_cmd *c, const char *arg, struct cli_opt *o,
    char *flag, size_t size)
{
	const struct backend_kind	*k;
	const struct backend_option	*p;
	size_t				 i;

	for (i = 0; c->kindopts != KINDOPTS_NONE &&
	    (k = backend_kind_at(i)) != NULL; i++)
		for (p = k->options; p != NULL && p->name != NULL; p++) {
			kind_flag(p, flag, size);
			if (strcmp(flag, arg) != 0)
				continue;
			o->flag = flag;
			o->field = p->name;
			o->kind = p->type == BOPT_JSON ? OPT_FILE_JSON :
			    c->kindopts == KINDOPTS_UPDATE ?
			    OPT_INT_OR_DEFAULT : OPT_INT;
			o->required = 0;
			return 1;
		}
	return 0;
}

/* c's usage, with the kinds' names for KINDS and their options after
 * it. */
static void
print_usage(const struct cli_cmd *c)
{
	const struct backend_kind	*k;
	const struct backend_option	*o;
	const char			*u = c->usage, *at;
	char				 flag[64];
	size_t				 i;

	if ((at = strstr(u, "KINDS")) != NULL) {
		fprintf(stderr, "%.*s", (int)(at - u), u);
		for (i = 0; (k = backend_kind_at(i)) != NULL; i++)
			fprintf(stderr, "%s%s", i > 0 ? "|" : "", k->name);
		u = at + strlen("KINDS");
	}
	fputs(u, stderr);
	for (i = 0; c->kindopts != KINDOPTS_NONE &&
	    (k = backend_kind_at(i)) != NULL; i++)
		for (o = k->options; o != NULL && o->name != NULL; o++) {
			if (!kind_option_first(i, o))
				continue;
			kind_flag(o, flag, sizeof(flag));
			fprintf(stderr, " [%s %s]", flag, o->type == BOPT_JSON ?
			    "FILE" : c->kindopts == KINDOPTS_UPDATE ?
			    "N|default" : "N");
		}
	fputc('\n', stderr);
}

int
console_error(int status, const struct cli_cmd *c, const char *fmt, ...)
{
	va_list	ap;
	size_t	i;

	if (fmt != NULL) {
		fputs("evalgate-admin: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	if (status != 2)
		return status;
	if (c != NULL) {
		fputs("usage: evalgate-admin ", stderr);
		print_usage(c);
		return status;
	}
	fputs("usage: evalgate-admin [--db PATH|URL] COMMAND\n"
	    "or:    evalgate-admin --version\ncommands:\n", stderr);
	for (i = 0; i < NCMDS; i++) {
		fputs("  ", stderr);
		print_usage(&cmds[i]);
	}
	return status;
}

/* The whole of the file at path, NUL-terminated, for the caller to
 * free; a file that cannot be read or is over FILE_MAX_MIB ends the
 * console with one line naming it. */
static char *
slurp(const char *path)
{
	FILE		*f = fopen(path, "rb");
	struct buf	 b;
	char		 chunk[4096], *text = NULL;
	size_t		 n;
	enum buf_rc	 rc = BUF_OK;
	int		 err;

	buf_init(&b, (size_t)FILE_MAX_MIB << 20);
	if (f != NULL) {
		while (rc == BUF_OK && (n = fread(chunk, 1, sizeof(chunk),
		    f)) > 0)
			rc = buf_add(&b, chunk, n);
		if (rc == BUF_OK && !ferror(f))
			text = buf_take(&b, NULL);
		err = errno;
		fclose(f);
	} else
		err = errno;
	buf_free(&b);
	if (rc == BUF_TOO_LARGE)
		exit(console_error(1, NULL, "%s: larger than %d MiB, refused",
		    path, FILE_MAX_MIB));
	if (text == NULL)
		exit(console_error(1, NULL, "%s: %s", path,
		    strerror(rc == BUF_NO_MEMORY ? ENOMEM : err)));
	return text;
}

static json_object *
option_value(const struct cli_cmd *c, const struct cli_opt *o,
    const char *v)
{
	json_object	*j;
	char		*end, *text;
	long long	 n;
	double		 d;

	switch (o->kind) {
	case OPT_FLAG:
		return ju_bool(1);
	case OPT_ON_OFF:
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			exit(console_error(2, c, "%s takes on or off",
			    o->flag));
		return ju_bool(strcmp(v, "on") == 0);
	case OPT_INT_OR_DEFAULT:
		if (strcmp(v, "default") == 0)
			return NULL;
		/* FALLTHROUGH */
	case OPT_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0')
			exit(console_error(2, c, "%s takes an integer",
			    o->flag));
		return ju_int(n);
	case OPT_NUMBER:
		d = strtod(v, &end);
		if (end == v || *end != '\0')
			exit(console_error(2, c, "%s takes a number",
			    o->flag));
		return ju_must(json_object_new_double(d));
	case OPT_STRING_OR_NONE:
		if (*v == '\0')
			return NULL;
		/* FALLTHROUGH */
	case OPT_STRING:
	case OPT_STRINGS:
		return ju_string(v);
	case OPT_JSON:
		if ((j = ju_parse(v)) == NULL)
			exit(console_error(2, c, "%s takes JSON", o->flag));
		return j;
	case OPT_FILE_JSON:
	case OPT_FILE_TEXT:
		text = slurp(v);
		if (o->kind == OPT_FILE_TEXT) {
			/* Up to 16 MiB: checked. */
			if ((j = json_object_new_string(text)) == NULL)
				exit(console_error(1, NULL, "%s: %s", v,
				    strerror(ENOMEM)));
			free(text);
			return j;
		}
		j = ju_parse(text);
		free(text);
		if (j == NULL)
			exit(console_error(1, NULL, "%s: not JSON", v));
		return j;
	}
	return NULL;
}

/* argv (after the command words) to the operation's JSON input. */
static json_object *
parse_args(const struct cli_cmd *c, int argc, char **argv)
{
	json_object		*in = ju_obj(), *arr;
	const struct cli_opt	*o;
	struct cli_opt		 kind_opt;
	char			 flag[64];
	size_t			 nargs = 0, i;
	int			 k;

	for (k = 0; k < argc; k++) {
		if (strncmp(argv[k], "--", 2) != 0) {
			if (nargs == MAX_ARGS || c->args[nargs].field == NULL)
				exit(console_error(2, c,
				    "%s is an unexpected argument", argv[k]));
			ju_add(in, c->args[nargs++].field, ju_string(argv[k]));
			continue;
		}
		for (o = NULL, i = 0; i < MAX_OPTS && c->opts[i].flag; i++)
			if (strcmp(c->opts[i].flag, argv[k]) == 0)
				o = &c->opts[i];
		if (o == NULL && kind_option(c, argv[k], &kind_opt, flag,
		    sizeof(flag)))
			o = &kind_opt;
		if (o == NULL)
			exit(console_error(2, c, "%s is an unknown option",
			    argv[k]));
		if (o->kind != OPT_FLAG && ++k == argc)
			exit(console_error(2, c, "%s needs a value",
			    o->flag));
		if (o->kind == OPT_STRINGS) {
			if (!json_object_object_get_ex(in, o->field, &arr)) {
				arr = ju_arr();
				ju_add(in, o->field, arr);
			}
			ju_push(arr, option_value(c, o, argv[k]));
		} else
			ju_add(in, o->field, option_value(c, o, argv[k]));
	}
	if (nargs < MAX_ARGS && c->args[nargs].field != NULL &&
	    !c->args[nargs].optional)
		exit(console_error(2, c, "%s is missing",
		    c->args[nargs].field));
	for (i = 0; i < MAX_OPTS && c->opts[i].flag != NULL; i++)
		if (c->opts[i].required &&
		    !json_object_object_get_ex(in, c->opts[i].field, NULL))
			exit(console_error(2, c, "%s is missing",
			    c->opts[i].flag));
	return in;
}

/* How many words of argv name c: 0 if they do not. */
static int
cmd_words(const struct cli_cmd *c, int argc, char **argv)
{
	int i, n = 1;

	while (n < 3 && c->words[n] != NULL)
		n++;

	for (i = 0; i < n; i++)
		if (i >= argc || strcmp(c->words[i], argv[i]) != 0)
			return 0;
	return n;
}

static const char *
cell(json_object *v)
{
	if (v == NULL)
		return "-";
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* What a table or an object shows of v: cell(v) with its control
 * characters (utf8_control()) written as \xNN or \uNNNN, so that nothing
 * stored (a description written by hand into the database, say) can
 * move the terminal.  Valid until the next call. */
static const char *
shown(json_object *v)
{
	static struct buf	 b;
	const char		*s = cell(v), *c;
	char			 esc[8];
	size_t			 n;
	long			 cp;

	if (b.max == 0)
		buf_init(&b, 1 << 20);
	buf_reset(&b);
	while ((c = utf8_control(s, &n)) != NULL) {
		cp = n == 1 ? (unsigned char)c[0] : n == 2 ?
		    ((c[0] & 0x1f) << 6) | (c[1] & 0x3f) :
		    ((c[0] & 0x0f) << 12) | ((c[1] & 0x3f) << 6) |
		    (c[2] & 0x3f);
		snprintf(esc, sizeof(esc), n == 1 ? "\\x%02lx" : "\\u%04lx",
		    cp);
		if (buf_add(&b, s, (size_t)(c - s)) != BUF_OK ||
		    buf_adds(&b, esc) != BUF_OK)
			return "(too long to show)";
		s = c + n;
	}
	if (buf_adds(&b, s) != BUF_OK)
		return "(too long to show)";
	return b.p;
}

/* The first array in out, as aligned columns named by its first row. */
static void
print_table(json_object *out)
{
	json_object	*rows = NULL, *row;
	size_t		 n, i, col, ncols = 0, w[32] = { 0 }, len;

	json_object_object_foreach(out, k, val) {
		(void)k;
		if (json_object_is_type(val, json_type_array)) {
			rows = val;
			break;
		}
	}
	if (rows == NULL || (n = json_object_array_length(rows)) == 0)
		return;
	json_object_object_foreach(json_object_array_get_idx(rows, 0), name,
	    v0) {
		(void)v0;
		if (ncols < 32)
			w[ncols++] = strlen(name);
	}
	for (i = 0; i < n; i++) {
		col = 0;
		json_object_object_foreach(json_object_array_get_idx(rows, i),
		    k2, v2) {
			(void)k2;
			if (col < ncols && (len = strlen(shown(v2))) > w[col])
				w[col] = len;
			col++;
		}
	}
	col = 0;
	json_object_object_foreach(json_object_array_get_idx(rows, 0), h,
	    v1) {
		(void)v1;
		if (col < ncols)
			printf("%-*s%s", col + 1 < ncols ? (int)w[col] : 0, h,
			    col + 1 < ncols ? "  " : "\n");
		col++;
	}
	for (i = 0; i < n; i++) {
		row = json_object_array_get_idx(rows, i);
		col = 0;
		json_object_object_foreach(row, k3, v3) {
			(void)k3;
			if (col < ncols)
				printf("%-*s%s", col + 1 < ncols ?
				    (int)w[col] : 0, shown(v3),
				    col + 1 < ncols ? "  " : "\n");
			col++;
		}
	}
}

static void
print_out(const struct cli_cmd *c, json_object *in, json_object *out)
{
	json_object	*v;
	const char	*text;

	switch (c->print) {
	case PRINT_BARE:	/* a newline added unless it ends with one */
		if (json_object_object_get_ex(out, c->bare, &v)) {
			text = cell(v);
			printf("%s%s", text, *text != '\0' &&
			    text[strlen(text) - 1] == '\n' ? "" : "\n");
		}
		break;
	case PRINT_TABLE:
		print_table(out);
		break;
	case PRINT_REPORT:
		if (json_object_object_get_ex(out, "published", &v))
			printf("%s\n", cell(json_object_object_get(v,
			    "version")));
		else
			calibration_render(stdout, out, ju_str(in, "format") ?
			    calibration_format(ju_str(in, "format")) :
			    CAL_FORMAT_TEXT);
		break;
	case PRINT_COMPARE:
		if (json_object_object_get_ex(out, "promoted", &v))
			printf("%s\n", cell(json_object_object_get(v,
			    "version")));
		else
			compare_render(stdout, out, ju_str(in, "format") ?
			    calibration_format(ju_str(in, "format")) :
			    CAL_FORMAT_TEXT);
		break;
	case PRINT_OBJECT:
		json_object_object_foreach(out, k, val)
			printf("%s: %s\n", k, shown(val));
		break;
	}
}

static const char *
env(const char *name)
{
	int url = db_arg != NULL && admin_is_db_url(db_arg);

	if (db_arg != NULL && strcmp(name, "SERVICE_DB_PATH") == 0 && !url)
		return db_arg;
	if (db_arg != NULL && strcmp(name, "SERVICE_DB_URL") == 0)
		return url ? db_arg : "";
	return getenv(name);
}

/* Makes the directories above path that are missing (mkdir -p). */
static int
make_parents(const char *path, struct error *e)
{
	char	dir[4096];
	size_t	i, n;

	snprintf(dir, sizeof(dir), "%s", path);
	for (n = strlen(dir); n > 0 && dir[n - 1] != '/'; n--)
		;		/* dir[0..n) names the directory, '/' last */
	for (i = 1; i < n; i++) {
		if (dir[i] != '/')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0777) == -1 && errno != EEXIST)
			return error_set(e, ERR_UNAVAILABLE, NULL, "%s: %s",
			    dir, strerror(errno));
		dir[i] = '/';
	}
	return 0;
}

static int
cmd_init(const struct settings *s, json_object *in)
{
	struct error	e = { 0 };
	int		created, found, pg = s->db_url[0] != '\0';

	if ((!pg && make_parents(s->db_path, &e) == -1) ||
	    make_parents(s->cache_path, &e) == -1 ||
	    make_parents(s->pepper_file, &e) == -1 ||
	    (found = store_init(s, &e)) == -1 ||
	    (created = auth_create_pepper(s->pepper_file, &e)) == -1) {
		console_error(1, NULL, "%s", e.message);
		error_clear(&e);
		return 1;
	}
	/* A PostgreSQL database is named by its engine alone: its URL may
	 * hold a password. */
	printf("database %s ready\n", pg ? "PostgreSQL" : s->db_path);
	/* What an upgrade did (README, "Upgrading"). */
	if (found == 0)
		printf("created the database at schema version %d\n",
		    store_schema_version());
	else if (found < store_schema_version())
		printf("migrated the database from schema version %d to %d\n",
		    found, store_schema_version());
	else
		printf("schema version %d, nothing to migrate\n", found);
	printf("cache %s ready\npepper %s %s\n", s->cache_path,
	    s->pepper_file, created ? "created" : "kept");
	return 0;
}

/* Refuses (1) a command on whole SQLite files (pg_instead) for a
 * PostgreSQL database. */
static int
refused_on_pg(const struct settings *s, const struct cli_cmd *c)
{
	if (s->db_url[0] == '\0' || c->pg_instead == NULL)
		return 0;
	return console_error(1, NULL, "%s is for a SQLite database: %s",
	    c->words[0], c->pg_instead);
}

/* A SQLite database that is not there, nor its pepper, is likely the
 * wrong one (the default path, or a variable not set): refused with the
 * path looked at and how to name another, rather than with init's hint,
 * which would make a new, empty database there.  1 refused, 0 go on. */
static int
no_database(const struct settings *s)
{
	struct stat sb;

	if (s->db_url[0] != '\0' || stat(s->pepper_file, &sb) == 0 ||
	    errno != ENOENT || stat(s->db_path, &sb) == 0 || errno != ENOENT)
		return 0;
	return console_error(1, NULL, "no database at %s (nor its pepper "
	    "file): --db PATH or SERVICE_DB_PATH selects another; "
	    "evalgate-admin init would create a new, empty one there",
	    s->db_path);
}

/* Offline: the gateway stopped, rewrites the database with incremental
 * auto-vacuum (doc/design.md, section 11.1). */
static int
cmd_compact(const struct settings *s, json_object *in)
{
	struct error	e = { 0 };
	struct stat	before, after;

	if (stat(s->db_path, &before) == -1)
		memset(&before, 0, sizeof(before));
	if (store_compact(s, &e) == -1) {
		console_error(1, NULL, "%s", e.message);
		error_clear(&e);
		return 1;
	}
	if (stat(s->db_path, &after) == -1)
		memset(&after, 0, sizeof(after));
	printf("database %s compacted: %lld bytes, was %lld\n", s->db_path,
	    (long long)after.st_size, (long long)before.st_size);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct settings	 s;
	const struct cli_cmd	*c = NULL;
	struct op_ctx		 ctx;
	struct error		 e = { 0 };
	json_object		*in, *out = NULL;
	char			 err[512];
	int			 rc, nwords = 0;

	argc--, argv++;
	store_set_kind_options(backend_kind_options);	/* its checks */
	if (argc == 1 && strcmp(argv[0], "--version") == 0) {
		printf("evalgate-admin %s\n", EVALGATE_VERSION);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[0], "--db") == 0) {
		db_arg = argv[1];
		argc -= 2, argv += 2;
	}
	if (argc < 1 || strcmp(argv[0], "--help") == 0 ||
	    strcmp(argv[0], "-h") == 0)
		return console_error(2, NULL, NULL);
	if (settings_load(&s, env, err, sizeof(err)) == -1)
		return console_error(1, NULL, "bad setting: %s", err);
	/* What init and every write make (the database, its -wal and
	 * -shm, the cache, the pepper, directories) is the state's: 0600
	 * and 0700, or 0660 and 0770 for a shared group. */
	umask(SETTINGS_UMASK(&s));
#ifdef EVALGATE_TEST_HOOKS
	clock_use_file(s.test_clock_file);
#endif
	if (sodium_init() < 0)
		return console_error(1, NULL, "cannot initialise libsodium");
	/* Every write waits in the host's write-lock queue with the
	 * workers' (doc/design.md, section 9.3), if they made one: a
	 * console without it writes as before, on SQLite's busy wait. */
	shm_set_host(shm_join(s.shm_path, &e));
	error_clear(&e);
	atexit(leave_host);
	for (c = cmds; c < cmds + NCMDS; c++)
		if ((nwords = cmd_words(c, argc, argv)) > 0)
			break;
	if (c == cmds + NCMDS || (c->alone && argc > nwords))
		return console_error(2, NULL, NULL);
	in = parse_args(c, argc - nwords, argv + nwords);
	if (c->run != NULL) {
		rc = refused_on_pg(&s, c) ? 1 : c->run(&s, in);
		json_object_put(in);
		return rc;
	}
	if (no_database(&s)) {
		json_object_put(in);
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (auth_init(s.pepper_file, (int)s.group_writable, &e) == -1 ||
	    (ctx.st = store_open(&s, &e)) == NULL) {
		json_object_put(in);
		rc = console_error(1, NULL, "%s", e.message);
		error_clear(&e);
		return rc;
	}
	ctx.settings = &s;
	ctx.actor = "console";
	if ((rc = ops_run(c->op, &ctx, in, &out, &e)) == 0)
		print_out(c, in, out);
	else
		rc = console_error(1, NULL, "%s", e.message);
	json_object_put(in);
	json_object_put(out);
	error_clear(&e);
	store_close(ctx.st);
	curl_global_cleanup();
	return rc;
}
