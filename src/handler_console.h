/* handler_console.h: what the files of the operator's console share
 * (doc/design.md, section 23): the page being written, the session's
 * CSRF token for its forms, and the layout every page has.
 *
 * The console is HTML written here, in C, from the results of the same
 * operations /admin/v1 runs (ops.h): no SQL, no script but the copy
 * button's, nothing fetched from elsewhere.  Every value is written with
 * html_printf()'s conversions or html_esc() (html.h). */
#ifndef EVALGATE_HANDLER_CONSOLE_H
#define EVALGATE_HANDLER_CONSOLE_H

#include <stdio.h>

#include <json-c/json.h>

#include "handlers.h"
#include "http.h"
#include "ops.h"
#include "session.h"

#define CONSOLE_ROOT_MAX 1024			/* bytes of root */

struct console {
	struct req	*r;		/* borrowed */
	FILE		*f;		/* the page, into text */
	char		*text;		/* owned by f, then here */
	size_t		 len;
	/* The mount and CONSOLE_PREFIX, that links start with. */
	char		 root[CONSOLE_ROOT_MAX];
	/* The session's CSRF token for the page's forms; "": none. */
	char		 csrf[SESSION_CSRF_LEN + 1];
};

/* Starts a page titled title (escaped) with the navigation, nav the
 * entry of the menu it is under ("" none).  0, or -1 with e set (no
 * memory); on -1 there is nothing to end. */
int	console_begin(struct console *c, struct req *r, const char *title,
	    const char *nav, struct error *e);
/* Ends the page and answers it with status and the console's headers
 * (the Content-Security-Policy among them).  0, or -1 with e set. */
int	console_end(struct console *c, int status, struct error *e);
/* Forgets a page begun, on a failure before console_end(). */
void	console_drop(struct console *c);
/* Opens a form posting to the action named action (handler_console.c,
 * actions[]), its CSRF token in it; the caller writes the controls and
 * "</form>". */
void	console_form(struct console *c, const char *action,
	    const char *cls);
/* Runs op with in (borrowed) as the signed-in application: 0 with *out
 * set, or -1 with e set. */
int	console_op(struct req *r, enum op op, json_object *in,
	    json_object **out, struct error *e);
/* A time (epoch milliseconds; 0 "-") as RFC 3339 in UTC. */
void	console_time(FILE *f, int64_t ms);
/* The value of member k of o as text for a cell: a string as it is, a
 * number or boolean as JSON writes it, null or absent as "-", escaped. */
void	console_cell(FILE *f, json_object *o, const char *k);

/* The pages: GET CONSOLE_PREFIX "/" and "/{page}" or "/{page}/{item}"
 * (item NULL for none); each writes its page and answers. */
int	console_overview(struct console *c, struct error *e);
int	console_applications(struct console *c, const char *item,
	    struct error *e);
int	console_revoke(struct console *c, const char *item,
	    struct error *e);
int	console_schemas(struct console *c, const char *item,
	    struct error *e);
int	console_backends(struct console *c, const char *item,
	    struct error *e);
int	console_templates(struct console *c, const char *item,
	    struct error *e);
/* A select of the backends' names, "backend", its id id. */
int	console_backend_select(struct console *c, const char *id,
	    struct error *e);
/* handler_console_schema.c: a schema's page (its versions, grants,
 * challengers and their comparison) and the confirmation of a
 * promotion. */
int	console_schema(struct console *c, const char *id, struct error *e);
int	console_promote(struct console *c, const char *id, struct error *e);
/* The field an error names ("" none), for a message. */
const char *console_error_field(const struct error *e);
/* handler_console_decisions.c */
int	console_decisions(struct console *c, const char *item,
	    struct error *e);
int	console_calibration(struct console *c, const char *item,
	    struct error *e);

#endif
