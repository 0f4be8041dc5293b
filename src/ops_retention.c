/* ops_retention.c: pruning decisions (evalgate-admin decisions prune;
 * POST /admin/v1/decisions/prune).
 *
 * Unlike the other mutations, a prune is not one transaction with its
 * audit row: it goes through the applications one by one (or the one
 * named), and deletes in steps of STORE_PRUNE_BATCH decisions, each a
 * short write transaction of its own (store_prune_step), so that no
 * evaluation waits long behind it and an interrupted prune loses
 * nothing but its remaining steps; run again, it goes on.  Then the
 * freed pages go back to the file system, and the audit row, in a
 * transaction of its own, says who pruned what and how many. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "buf.h"
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
#define PRUNE_APPS_MAX	(1 << 24)	/* bytes of application ids */

/* The applications a prune goes through: the one named, or all. */
struct prune_apps {
	struct buf	ids;		/* int64_t each */
	int		full;		/* one did not fit */
};

static void
app_id_add(const struct app *a, void *arg)
{
	struct prune_apps	*pa = arg;
	int64_t			*id;

	if ((id = buf_extend(&pa->ids, sizeof(*id), NULL)) == NULL)
		pa->full = 1;
	else
		*id = a->id;
}

/* Prunes q's application in steps: 1 done, -1 failed (the steps before
 * stay done).  Between steps it checkpoints what it wrote (or the
 * workers would, between their requests), and lets the writers that
 * waited for the lock in before the next step. */
static int
prune_app(struct op_ctx *c, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	struct timespec	 pause = { 0, PRUNE_PAUSE_NS };
	int		 rc;

	while ((rc = store_prune_step(c->st, q, deleted, e)) == 1) {
		store_idle(c->st);
		nanosleep(&pause, NULL);
	}
	return rc == 0 ? 1 : -1;
}

int
op_decisions_prune(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct prune_range	 q;
	struct prune_apps	 pa = { 0 };
	struct app		 a = { 0 };
	const char		*before, *name = NULL;
	const int64_t		*id;
	int64_t			 before_ms, deleted = 0;
	size_t			 i;
	int			 keep = 0, rc;

	if (ju_req_str(in, "before", 64, &before, e) == -1 ||
	    ju_opt_str(in, "application", NAME_MAX_LEN, &name, e) == -1 ||
	    ju_opt_bool(in, "keep_with_outcomes", &keep, e) == -1)
		return -1;
	if (clock_parse_rfc3339(before, &before_ms) == -1)
		return error_set(e, ERR_VALIDATION, "before", "must be a date "
		    "or an RFC 3339 time that exists, e.g. 2026-01-31 or "
		    "2026-01-31T00:00:00Z");
	buf_init(&pa.ids, PRUNE_APPS_MAX);
	if (name != NULL) {
		if ((rc = store_app_by_name(c->st, name, &a, e)) != 1) {
			rc = rc == 0 ? error_set(e, ERR_VALIDATION,
			    "application", "no application named '%s'", name) :
			    -1;
			goto out;
		}
		app_id_add(&a, &pa);
	} else if (store_app_each(c->st, app_id_add, &pa, e) == -1) {
		rc = -1;
		goto out;
	}
	if (pa.full) {
		rc = error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		goto out;
	}
	rc = 1;
	id = (const int64_t *)pa.ids.p;
	for (i = 0; i < pa.ids.len / sizeof(*id) && rc == 1; i++) {
		q = (struct prune_range){ .before_ms = before_ms,
		    .app_id = id[i], .outcome_before_ms = keep ? 0 : before_ms };
		rc = prune_app(c, &q, &deleted, e);
	}
	if (deleted > 0 || rc == 1)
		audit(c, in, deleted);
	if (rc == -1 || store_vacuum(c->st, INT_MAX, e) == -1) {
		rc = -1;
		goto out;
	}
	*out = ju_obj();
	ju_add(*out, "deleted", ju_int(deleted));
	rc = 0;
out:
	buf_free(&pa.ids);
	return rc;
}
