/* store_pg_quota.c: admission's row of an application and the day's
 * quota counter, in PostgreSQL, shared by every host (doc/design.md,
 * sections 10 and 13).
 *
 * Admission reads, decides and writes inside the transaction
 * store_begin_counters() began (admission.c), the application's row
 * locked from the read to the commit: two calls on two hosts at once
 * are decided one after the other, each on what the other wrote, so
 * that a limit holds exactly across hosts.  Two round trips: the BEGIN
 * goes with the read, the write with the COMMIT (pg_exec,
 * pg_run_at_commit). */
#include "config.h"

#include "store_pg.h"

/* The arrival time, and the day's units: the larger of the row's
 * running total and the counter (store.h). */
struct admission_row {
	int64_t	tat_ms, rate, at_ms, used;
	int	found;
};

static void
read_admission(const PGresult *r, int row, void *out)
{
	struct admission_row *a = out;

	a->tat_ms = pg_int(r, row, 0);
	a->rate = pg_int(r, row, 1);
	a->at_ms = pg_int(r, row, 2);
	a->used = pg_int(r, row, 3);
	a->found = 1;
}

int
pg_admission_read(struct store *pg, int64_t app_id, const char *day,
    int64_t *tat_ms, int64_t *tat_rate, int64_t *tat_at_ms, int64_t *used,
    struct error *e)
{
	struct admission_row	 a = { 0 };
	struct pg_params	 p;
	int			 rc;

	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	pg_bind_text(&p, 2, day);
	rc = pg_lookup(pg, PG_ADMISSION_LOCK, &p, e, "admission",
	    read_admission, &a);
	/* The first call of an application: its row, then locked. */
	if (rc == 0 && (pg_run(pg, PG_ADMISSION_ENSURE, &p, e,
	    "admission") == -1 || (rc = pg_lookup(pg, PG_ADMISSION_LOCK, &p,
	    e, "admission", read_admission, &a)) == 0))
		return error_set(e, ERR_INTERNAL, NULL,
		    "the admission row of application %lld is missing",
		    (long long)app_id);
	if (rc == -1)
		return -1;
	*tat_ms = a.tat_ms;
	*tat_rate = a.rate;
	*tat_at_ms = a.at_ms;
	*used = a.used;
	return 0;
}

int
pg_admission_write(struct store *pg, int64_t app_id, const char *day,
    int64_t tat_ms, int64_t rate, int64_t at_ms, int64_t used,
    struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	pg_bind_int(&p, 2, tat_ms);
	pg_bind_text(&p, 3, day);
	pg_bind_int(&p, 4, used);
	pg_bind_int(&p, 5, rate);
	pg_bind_int(&p, 6, at_ms);
	/* With the COMMIT that follows (admission.c): one round trip. */
	return pg_run_at_commit(pg, PG_ADMISSION_SET, &p, e);
}

/* One statement: its own transaction. */
int
pg_quota_charge(struct store *pg, int64_t app_id, const char *day,
    int64_t units, struct error *e)
{
	struct pg_params p;

	if (units <= 0)
		return 0;
	pg_read_end(pg);
	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	pg_bind_text(&p, 2, day);
	pg_bind_int(&p, 3, units);
	return pg_run(pg, PG_USED_ADD, &p, e, "quota") == -1 ? -1 : 0;
}

static void
read_used(const PGresult *r, int row, void *out)
{
	*(int64_t *)out = pg_int(r, row, 0);
}

int
pg_quota_used(struct store *pg, int64_t app_id, const char *day,
    int64_t *used, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	pg_bind_text(&p, 2, day);
	*used = 0;
	return pg_lookup(pg, PG_USED_GET, &p, e, "quota", read_used, used) ==
	    -1 ? -1 : 0;
}
