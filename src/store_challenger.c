/* store_challenger.c: a schema version's challengers as an evaluation
 * looks them up (store.h, store_challenger_list()), the same on either
 * engine: kept with the catalog rows under "schema_id/version", an
 * empty list too, so that a version's is read once per catalog
 * generation; read otherwise through store_challenger_each(). */
#include "config.h"

#include <stdio.h>

#include "kept.h"
#include "store_engine.h"

static void
list_add(const struct challenger *c, void *arg)
{
	struct challenger_list *l = arg;

	if (l->n < CHALLENGER_LIST_MAX)
		l->c[l->n++] = *c;
}

int
store_challenger_list(struct store *st, int64_t schema_id, int64_t version,
    struct challenger_list *out, struct error *e)
{
	struct kept	*m = store_engine_of(st)->kept(st);
	char		 key[48];

	snprintf(key, sizeof(key), "%lld/%lld", (long long)schema_id,
	    (long long)version);
	if (kept_get(m, KEPT_CHALLENGERS, key, out))
		return 0;
	out->n = 0;
	if (store_challenger_each(st, schema_id, version, list_add, out,
	    e) == -1)
		return -1;
	kept_put(m, KEPT_CHALLENGERS, key, out);
	return 0;
}
