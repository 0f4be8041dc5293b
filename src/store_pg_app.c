/* store_pg_app.c: applications and API keys on PostgreSQL, as the
 * SQLite engine keeps them (store_sqlite_app.c): the same rows, the same
 * errors, the same kept rows, checked against the same bounds. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "store_pg.h"

static void
read_app(const PGresult *r, int row, void *out)
{
	struct app *a = out;

	memset(a, 0, sizeof(*a));
	a->id = pg_int(r, row, 0);
	pg_copy(r, row, 1, a->name, sizeof(a->name));
	a->log_state = (int)pg_int(r, row, 2);
	a->is_admin = (int)pg_int(r, row, 3);
	a->rate_per_minute = pg_int(r, row, 4);
	a->daily_quota = pg_int(r, row, 5);
	a->created_at = pg_int(r, row, 6);
	a->retention_days = pg_is_null(r, row, 7) ? -1 : pg_int(r, row, 7);
}

int
pg_app_insert(struct store *pg, struct app *a, struct error *e)
{
	struct pg_params	 p;
	PGresult		*r;

	pg_params_init(&p);
	pg_bind_text(&p, 1, a->name);
	pg_bind_int(&p, 2, a->log_state);
	pg_bind_int(&p, 3, a->is_admin);
	pg_bind_optional(&p, 4, a->rate_per_minute);
	pg_bind_optional(&p, 5, a->daily_quota);
	pg_bind_int(&p, 6, a->created_at);
	if ((r = pg_exec(pg, PG_APP_INSERT, &p, e,
	    "insert application")) == NULL) {
		if (pg_unique_violation(pg))
			return error_set(e, ERR_CONFLICT, "name",
			    "an application named '%s' exists", a->name);
		return -1;
	}
	a->id = pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int
pg_app_update(struct store *pg, const struct app *a, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_int(&p, 1, a->id);
	pg_bind_int(&p, 2, a->log_state);
	pg_bind_optional(&p, 3, a->rate_per_minute);
	pg_bind_optional(&p, 4, a->daily_quota);
	if (a->retention_days >= 0)
		pg_bind_int(&p, 5, a->retention_days);
	else
		pg_bind_null(&p, 5);
	return pg_run(pg, PG_APP_UPDATE, &p, e, "update application") ==
	    -1 ? -1 : 0;
}

int
pg_app_by_name(struct store *pg, const char *name, struct app *a,
    struct error *e)
{
	struct pg_params	p;
	int			rc;

	pg_params_init(&p);
	pg_bind_text(&p, 1, name);
	rc = pg_lookup(pg, PG_APP_BY_NAME, &p, e, "application", read_app, a);
	return store_bad_row(rc, rc == 1 ? bound_app(a, e) : 0, e);
}

int
pg_app_by_id(struct store *pg, int64_t id, struct app *a, struct error *e)
{
	struct pg_params	p;
	char			key[24];
	int			rc;

	snprintf(key, sizeof(key), "%lld", (long long)id);
	if (kept_get(pg->kept, KEPT_APP, key, a))
		return 1;
	pg_params_init(&p);
	pg_bind_int(&p, 1, id);
	rc = pg_lookup(pg, PG_APP_BY_ID, &p, e, "application", read_app, a);
	if ((rc = store_bad_row(rc, rc == 1 ? bound_app(a, e) : 0, e)) == 1)
		kept_put(pg->kept, KEPT_APP, key, a);
	return rc;
}

int
pg_app_each(struct store *pg, void (*fn)(const struct app *, void *),
    void *arg, struct error *e)
{
	PGresult	*r = pg_exec(pg, PG_APP_ALL, NULL, e, "applications");
	struct app	 a;
	int		 i, rc = 0;

	if (r == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		read_app(r, i, &a);
		if (store_bad_row(1, bound_app(&a, e), e) == -1) {
			rc = -1;
			break;
		}
		fn(&a, arg);
	}
	PQclear(r);
	return rc;
}

static void
read_key(const PGresult *r, int row, void *out)
{
	struct key_row *k = out;

	memset(k, 0, sizeof(*k));
	pg_copy(r, row, 0, k->prefix, sizeof(k->prefix));
	k->app_id = pg_int(r, row, 1);
	pg_copy(r, row, 2, k->hash, sizeof(k->hash));
	k->created_at = pg_int(r, row, 3);
	k->expires_at = pg_int(r, row, 4);
	k->revoked_at = pg_int(r, row, 5);
	k->has_check = pg_blob(r, row, 6, k->check, sizeof(k->check));
}

int
pg_key_insert(struct store *pg, const struct key_row *k, struct error *e)
{
	struct pg_params p;

	pg_params_init(&p);
	pg_bind_text(&p, 1, k->prefix);
	pg_bind_int(&p, 2, k->app_id);
	pg_bind_text(&p, 3, k->hash);
	pg_bind_int(&p, 4, k->created_at);
	pg_bind_optional(&p, 5, k->expires_at);
	if (k->has_check)
		pg_bind_blob(&p, 6, k->check, sizeof(k->check));
	else
		pg_bind_null(&p, 6);
	return pg_run(pg, PG_KEY_INSERT, &p, e, "insert key") == -1 ? -1 : 0;
}

int
pg_key_set_check(struct store *pg, const char *prefix,
    const unsigned char check[32], struct error *e)
{
	struct pg_params p;

	if (pg_begin(pg, e) == -1)
		return -1;
	pg_params_init(&p);
	pg_bind_text(&p, 1, prefix);
	pg_bind_blob(&p, 2, check, 32);
	/* BEGIN, the update and COMMIT: one round trip. */
	if (pg_run_at_commit(pg, PG_KEY_SET_CHECK, &p, e) == 0 &&
	    pg_commit(pg, e) == 0)
		return 0;
	pg_rollback(pg);
	return -1;
}

int
pg_key_by_prefix(struct store *pg, const char *prefix, struct key_row *k,
    struct error *e)
{
	struct pg_params	p;
	int			rc;

	if (kept_get(pg->kept, KEPT_KEY, prefix, k))
		return 1;
	pg_params_init(&p);
	pg_bind_text(&p, 1, prefix);
	rc = pg_lookup(pg, PG_KEY_BY_PREFIX, &p, e, "key", read_key, k);
	if ((rc = store_bad_row(rc, rc == 1 ? bound_key(k, e) : 0, e)) == 1)
		kept_put(pg->kept, KEPT_KEY, prefix, k);
	return rc;
}

int
pg_key_revoke(struct store *pg, const char *prefix, int64_t now,
    struct error *e)
{
	struct pg_params	p;
	int64_t			changed;

	pg_params_init(&p);
	pg_bind_text(&p, 1, prefix);
	pg_bind_int(&p, 2, now);
	if ((changed = pg_run(pg, PG_KEY_REVOKE, &p, e, "revoke key")) == -1)
		return -1;
	return changed > 0;
}

int
pg_key_each(struct store *pg, int64_t app_id,
    void (*fn)(const struct key_row *, const char *, void *), void *arg,
    struct error *e)
{
	struct pg_params	 p;
	struct key_row		 k;
	PGresult		*r;
	int			 i;

	pg_params_init(&p);
	pg_bind_int(&p, 1, app_id);
	if ((r = pg_exec(pg, PG_KEY_ALL, &p, e, "keys")) == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		read_key(r, i, &k);
		fn(&k, pg_str(r, i, 7), arg);
	}
	PQclear(r);
	return 0;
}
