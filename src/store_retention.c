/* store_retention.c: the workers' automatic retention (doc/design.md,
 * section 11.1), the same on either engine: when a step is due, which
 * application it prunes next, which decisions and states are too old.
 * The statements are the engine's, through its hooks (store_engine.h:
 * STORE_HOOKS); its files keep no policy of their own. */
#include "config.h"

#include <string.h>

#include "clock.h"
#include "settings.h"
#include "store_engine.h"

#define DAY_MS		86400000LL

/* Sets up r's range on the next application (after after_id) whose
 * decisions expire: 1, or 0 when none does, -1. */
static int
next_app(struct store *st, const struct settings *s, struct store_retain *r,
    int64_t after_id, int64_t now, struct error *e)
{
	struct prune_range	*q = &r->q;
	int64_t			 app_id, days, keep;
	int			 rc;

	if ((rc = store_engine_of(st)->retain_next_app(st, after_id,
	    s->retention_days, &app_id, &days, e)) != 1)
		return rc;
	memset(q, 0, sizeof(*q));
	q->app_id = app_id;
	q->before_ms = now - days * DAY_MS;
	/* One with an outcome: as long as the others, or longer. */
	keep = s->retention_days_with_outcomes;
	q->outcome_before_ms = keep == -1 ? q->before_ms : keep == 0 ? 0 :
	    now - (keep > days ? keep : days) * DAY_MS;
	r->app_id = q->app_id;
	return 1;
}

void
store_retain(struct store *st, const struct settings *s,
    struct store_retain *r)
{
	const struct store_engine	*eng = store_engine_of(st);
	struct error			 e = { 0 };
	int64_t				 now_us = clock_mono_us(), now;
	int64_t				 app, deleted = 0;
	int				 rc;

	if (++r->requests < STORE_RETAIN_REQUESTS && now_us < r->next_us)
		return;
	r->requests = 0;
	r->next_us = now_us + STORE_RETAIN_MS * 1000LL;
	if (eng->retain_begin(st) == -1)
		return;
	now = clock_now_ms();
	if (s->state_retention_days > 0)
		(void)eng->retain_states(st,
		    now - s->state_retention_days * DAY_MS, &e);
	error_clear(&e);
	if (r->app_id == 0) {
		/* After the last application, from the first again. */
		app = r->q.app_id;
		if ((rc = next_app(st, s, r, app, now, &e)) == 0 && app != 0)
			rc = next_app(st, s, r, 0, now, &e);
		if (rc != 1)
			goto out;
	}
	if (eng->retain_prune(st, &r->q, &deleted, &e) == 0)
		r->app_id = 0;		/* done: the next one next time */
	if (deleted > 0)
		eng->retain_freed(st, &e);
out:
	error_clear(&e);
	eng->retain_end(st);
}
