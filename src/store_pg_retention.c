/* store_pg_retention.c: what keeps the PostgreSQL database bounded
 * (doc/design.md, section 11.1), as the SQLite engine's
 * store_sqlite_retention.c does: pruning decisions in steps of
 * STORE_PRUNE_BATCH, each its own short transaction, so that an
 * interrupted prune can simply be run again; the statements of the
 * workers' automatic retention (its policy is store_retention.c's):
 * clearing old kept states.
 *
 * Several hosts' workers may prune at once: automatic retention never
 * waits for a row another holds (it skips it, and sees it again on its
 * next round), so that no worker queues behind another.  The space
 * deleted rows leave is PostgreSQL's autovacuum's to make reusable; a
 * prune from the console vacuums the three tables itself once it is
 * done (pg_vacuum). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "store_pg.h"

/* Locks the decisions of ids (waiting for them, or skipping those
 * another transaction holds) and gives the ids locked to *locked. */
static int
lock_ids(struct store *pg, const char *ids, int skip,
    struct pg_array *locked, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;
	int			 i, n;

	pg_params_init(&p);
	pg_bind_text(&p, 1, ids);
	if ((r = pg_exec(pg, skip ? PG_PRUNE_LOCK_SKIP : PG_PRUNE_LOCK, &p, e,
	    "lock decisions to prune")) == NULL)
		return -1;
	n = PQntuples(r);
	for (i = 0; i < n; i++)
		pg_array_add(locked, pg_str(r, i, 0));
	PQclear(r);
	return 0;
}

/* One prune step (store.h: store_prune_step) in a transaction of its
 * own; skip: automatic retention's. */
static int
prune_step(struct store *pg, struct prune_range *q, int64_t *deleted,
    int skip, struct error *e)
{
	struct pg_array		 ids, locked;
	struct pg_params	 p;
	PGresult		*r;
	char			 last_id[UUID7_LEN + 1];
	const char		*text;
	int64_t			 last_ms = q->cursor_ms, n = 0;
	int			 i, seen;

	snprintf(last_id, sizeof(last_id), "%s", q->cursor_id);
	pg_array_init(&ids);
	pg_array_init(&locked);
	if (pg_begin(pg, e) == -1)
		goto out;
	pg_params_init(&p);
	pg_bind_int(&p, 1, q->before_ms);
	pg_bind_int(&p, 2, q->app_id);
	pg_bind_int(&p, 3, q->cursor_ms);
	pg_bind_text(&p, 4, q->cursor_id);
	pg_bind_int(&p, 5, STORE_PRUNE_BATCH);
	if ((r = pg_exec(pg, PG_PRUNE_PICK, &p, e,
	    "pick decisions to prune")) == NULL)
		goto fail;
	seen = PQntuples(r);
	for (i = 0; i < seen; i++)
		pg_array_add(&ids, pg_str(r, i, 0));
	if (seen > 0) {
		pg_copy(r, seen - 1, 0, last_id, sizeof(last_id));
		last_ms = pg_int(r, seen - 1, 1);
	}
	PQclear(r);
	if (seen > 0) {
		if ((text = pg_array_end(&ids, e)) == NULL ||
		    lock_ids(pg, text, skip, &locked, e) == -1 ||
		    (text = pg_array_end(&locked, e)) == NULL)
			goto fail;
		pg_params_init(&p);
		pg_bind_text(&p, 1, text);
		pg_bind_int(&p, 2, q->outcome_before_ms);
		if ((r = pg_exec(pg, PG_PRUNE_DELETE, &p, e, "prune")) == NULL)
			goto fail;
		n = pg_int(r, 0, 0);
		PQclear(r);
	}
	if (pg_commit(pg, e) == -1)
		goto out;
	q->cursor_ms = last_ms;
	snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", last_id);
	*deleted += n;
	pg_array_free(&ids);
	pg_array_free(&locked);
	return seen == STORE_PRUNE_BATCH;
fail:
	pg_rollback(pg);
out:
	pg_array_free(&ids);
	pg_array_free(&locked);
	return -1;
}

int
pg_prune_step(struct store *pg, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	return prune_step(pg, q, deleted, 0, e);
}

/* PostgreSQL gives no space back to the file system short of VACUUM
 * FULL, which locks the tables for as long as it rewrites them: not
 * for a running gateway.  A plain VACUUM makes the deleted rows' space
 * reusable at once (autovacuum would, later), and cannot run inside a
 * transaction.  It is one statement however many steps are allowed. */
int
pg_vacuum(struct store *pg, int max_steps, struct error *e)
{
	if (max_steps <= 0)
		return 0;
	pg_read_end(pg);
	return pg_run(pg, PG_VACUUM, NULL, e, "vacuum") == -1 ? -1 : 0;
}

/* Automatic retention's statements (store_engine.h: STORE_HOOKS); its
 * policy is store_retention.c's. */
int
pg_retain_begin(struct store *pg)
{
	/* Without a connection there is nothing to do: store_maintain()
	 * reconnects before the next request. */
	return pg->conn == NULL || pg->stale || pg->in_tx ? -1 : 0;
}

void
pg_retain_end(struct store *pg)
{
	(void)pg;
}

/* Clears the states kept by the oldest decisions created before
 * before_ms, a batch of them: one statement, its own transaction. */
int
pg_retain_states(struct store *pg, int64_t before_ms, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, before_ms);
	pg_bind_int(&p, 2, STORE_PRUNE_BATCH);
	return pg_run(pg, PG_STATE_CLEAR, &p, e, "clear states") == -1 ?
	    -1 : 0;
}

struct next_app {
	int64_t	id, days;
};

static void
read_next_app(const PGresult *r, int row, void *out)
{
	struct next_app *a = out;

	a->id = pg_int(r, row, 0);
	a->days = pg_int(r, row, 1);
}

int
pg_retain_next_app(struct store *pg, int64_t after_id, int64_t default_days,
    int64_t *app_id, int64_t *days, struct error *e)
{
	struct pg_params	 p;
	struct next_app		 a = { 0 };
	int			 rc;

	pg_params_init(&p);
	pg_bind_int(&p, 1, after_id);
	pg_bind_int(&p, 2, default_days);
	if ((rc = pg_lookup(pg, PG_RETAIN_NEXT_APP, &p, e, "retention",
	    read_next_app, &a)) != 1)
		return rc;
	*app_id = a.id;
	*days = a.days;
	return 1;
}

/* Never waits for a row another worker holds: it skips it, and sees it
 * again on its next round. */
int
pg_retain_prune(struct store *pg, struct prune_range *q, int64_t *deleted,
    struct error *e)
{
	return prune_step(pg, q, deleted, 1, e);
}

/* The space deleted rows leave is autovacuum's to make reusable. */
void
pg_retain_freed(struct store *pg, struct error *e)
{
	(void)pg;
	(void)e;
}
