/* ops_console.c: OP_CONSOLE_LOGIN and OP_CONSOLE_LOGOUT, a session of
 * the web console begun or ended (doc/design.md, section 23).  Neither
 * changes a table of its own: the audit row ops_run() writes beside it
 * is the record, and a logout's row is what ends every session of the
 * key issued before it (store_audit_last()), on every worker and host. */
#include "config.h"

#include <string.h>

#include "json_util.h"
#include "ops_internal.h"

int
op_console_session(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	const char	*prefix;

	(void)c;
	if (ju_req_str(in, "prefix", 64, &prefix, e) == -1)
		return -1;
	if (strlen(prefix) != MODEL_KEY_PREFIX_LEN ||
	    strspn(prefix, "abcdefghijklmnopqrstuvwxyz0123456789") !=
	    MODEL_KEY_PREFIX_LEN)
		return error_set(e, ERR_VALIDATION, "prefix",
		    "must be a key's prefix");
	*out = ju_obj();
	ju_add_str(*out, "prefix", prefix);
	return 0;
}
