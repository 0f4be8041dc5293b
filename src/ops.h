/* ops.h: the administration operations, one implementation each, shared
 * by evalgate-admin and the /admin/v1 routes so that they cannot drift.
 *
 * Input and output are JSON objects whose field names are the console's
 * long options with '_' for '-'.  A mutation runs in one write
 * transaction together with its audit row. */
#ifndef EVALGATE_OPS_H
#define EVALGATE_OPS_H

#include <json-c/json.h>

#include "error.h"

/* The audit log's action of OP_CONSOLE_LOGOUT: a console session of a
 * key issued before the key's latest one is over (handler_console.c). */
#define OPS_CONSOLE_LOGOUT_ACTION "console.logout"

struct settings;
struct store;

enum op {
	OP_APP_CREATE,
	OP_APP_UPDATE,
	OP_APP_LIST,
	OP_KEY_ISSUE,
	OP_KEY_REVOKE,
	OP_KEY_LIST,
	OP_BACKEND_ADD,
	OP_BACKEND_ENABLE,
	OP_BACKEND_DISABLE,
	OP_BACKEND_UPDATE,	/* {name, enabled}: the HTTP form of the two */
	OP_BACKEND_LIST,
	OP_SCHEMA_PUBLISH,
	OP_SCHEMA_LIST,
	OP_SCHEMA_SHOW,
	OP_GRANT,
	OP_UNGRANT,
	OP_GRANT_LIST,		/* {id}: a schema's grants (the web console) */
	OP_TEMPLATE_PUBLISH,
	OP_TEMPLATE_LIST,
	OP_TEMPLATE_RENDER,
	OP_CALIBRATION,		/* doc/design.md, section 15: ops_calibration.c */
	OP_DECISIONS_PRUNE,	/* in steps, with its own audit row */
	OP_CHALLENGER_ADD,	/* README, "Challengers": ops_challenger.c */
	OP_CHALLENGER_LIST,
	OP_CHALLENGER_REMOVE,
	OP_COMPARE,		/* doc/design.md, section 15.1: ops_compare.c */
	OP_PROMOTE,
	OP_CONSOLE_LOGIN,	/* {prefix}: the web console's sessions, whose */
	OP_CONSOLE_LOGOUT,	/* audit rows are their record: ops_console.c */
	OP__MAX
};

struct op_ctx {
	struct store		*st;		/* borrowed */
	const struct settings	*settings;	/* borrowed */
	const char		*actor;		/* "console" or an app name */
};

/* Runs op on in (borrowed).  On success *out is a new object the caller
 * puts; on failure -1 with e set. */
int	ops_run(enum op op, struct op_ctx *ctx, json_object *in,
	    json_object **out, struct error *e);

/* OP_CALIBRATION, in its own file: {id, version?, question?, since?,
 * format?, target_accuracy?, apply?} to the report of doc/design.md,
 * section 15.  It changes nothing unless apply, which publishes the next version
 * through OP_SCHEMA_PUBLISH (its own transaction and audit row). */
int	ops_calibration(struct op_ctx *ctx, json_object *in,
	    json_object **out, struct error *e);

#endif
