/* ops_retention.c: pruning decisions (evalgate-admin decisions prune;
 * POST /admin/v1/decisions/prune).
 *
 * Unlike the other mutations, a prune is not one transaction with its
 * audit row: it deletes in steps of STORE_PRUNE_BATCH decisions, each a
 * short write transaction of its own (store_prune_step), so that no
 * evaluation waits long behind it and an interrupted prune loses
 * nothing but its remaining steps; run again, it goes on.  Then the
 * freed pages go back to the file system, and the audit row, in a
 * transaction of its own, says who pruned what and how many. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "json_util.h"
#include "ops_internal.h"
#include "store.h"

/* The audit row of a prune that deleted n (also of one that failed
 * half-way, as its steps stay done). */
static void
audit(struct op_ctx *c, json_object *in, int64_t n)
{
	struct error	 e = { 0 };
	json_object	*details = ju_obj();

	json_object_object_foreach(in, k, v)
		ju_add(details, k, json_object_get(v));
	ju_add(details, "deleted", ju_int(n));
	if (store_begin(c->st, &e) == -1 ||
	    store_audit(c->st, c->actor, "decisions.prune", ju_str(in,
	    "application"), details, &e) == -1 ||
	    store_commit(c->st, &e) == -1)
		store_rollback(c->st);
	json_object_put(details);
	error_clear(&e);
}

#define PRUNE_PAUSE_NS	(2 * 1000000)	/* between steps: 2 ms */

int
op_decisions_prune(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct prune_range	 q = { 0 };
	struct app		 a = { 0 };
	const char		*before, *name = NULL;
	int64_t			 deleted = 0;
	struct timespec		 pause = { 0, PRUNE_PAUSE_NS };
	int			 keep = 0, rc;

	if (ju_req_str(in, "before", 64, &before, e) == -1 ||
	    ju_opt_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_opt_bool(in, "keep_with_outcomes", &keep, e) == -1)
		return -1;
	if (clock_parse_rfc3339(before, &q.before_ms) == -1)
		return error_set(e, ERR_VALIDATION, "before", "must be a date "
		    "or an RFC 3339 time that exists, e.g. 2026-01-31 or "
		    "2026-01-31T00:00:00Z");
	if (name != NULL && (rc = store_app_by_name(c->st, name, &a, e)) != 1)
		return rc == 0 ? error_set(e, ERR_VALIDATION, "application",
		    "no application named '%s'", name) : -1;
	q.app_id = a.id;
	q.outcome_before_ms = keep ? 0 : q.before_ms;
	/* Between steps: checkpoint what this prune wrote (or the
	 * workers would, between their requests), and let the writers
	 * that waited for the lock in before the next step. */
	while ((rc = store_prune_step(c->st, &q, &deleted, e)) == 1) {
		store_idle(c->st);
		nanosleep(&pause, NULL);
	}
	if (deleted > 0 || rc == 0)
		audit(c, in, deleted);
	if (rc == -1 || store_vacuum(c->st, INT_MAX, e) == -1)
		return -1;
	*out = ju_obj();
	ju_add(*out, "deleted", ju_int(deleted));
	return 0;
}
