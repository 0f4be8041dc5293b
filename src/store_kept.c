/* store_kept.c: the catalog rows a worker keeps between requests.
 *
 * An evaluation looks up its key, its application, the schema version
 * its questions match and that version's backend: rows that change only
 * when an administrator changes them.  Each worker keeps the ones it has
 * read, and uses them while the catalog's generation is the one they
 * were read at.  Triggers on every catalog table bump the generation
 * (sql/migrate-3.sql), whoever writes: the console, /admin/v1, or
 * sqlite3 by hand.  A request reads the generation as the first
 * statement of its read snapshot (store_read_begin); the rows are used
 * only inside that snapshot, so a row it gives is one the snapshot would
 * have read.  Only rows that were found are kept. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "xalloc.h"

#define KEPT_SLOTS	32	/* per kind: direct-mapped on the key */

static void
hold_version(void *row)
{
	json_object_get(((struct schema_version *)row)->questions);
}

static void
release_version(void *row)
{
	json_object_put(((struct schema_version *)row)->questions);
}

/* What each kind keeps, and how a copy shares what the row owns. */
static const struct {
	size_t	  size;
	void	(*hold)(void *row);	/* a copy takes a reference */
	void	(*release)(void *row);	/* the kept row drops its own */
} kinds[KEPT__MAX] = {
	[KEPT_KEY] = { sizeof(struct key_row), NULL, NULL },
	[KEPT_APP] = { sizeof(struct app), NULL, NULL },
	[KEPT_MATCH] = { sizeof(struct schema_version), hold_version,
	    release_version },
	[KEPT_BACKEND] = { sizeof(struct backend), NULL, NULL },
};

struct kept {
	int64_t	 generation;	/* of the rows kept; -1 none */
	int	 valid;		/* inside a snapshot of that generation */
	struct {
		char	 key[KEPT_KEY_MAX];
		void	*row;	/* owned: kinds[].size bytes, or NULL */
	} slots[KEPT__MAX][KEPT_SLOTS];
};

/* Drops every row. */
static void
flush(struct kept *m)
{
	size_t k, i;

	for (k = 0; k < KEPT__MAX; k++)
		for (i = 0; i < KEPT_SLOTS; i++) {
			if (m->slots[k][i].row != NULL && kinds[k].release)
				kinds[k].release(m->slots[k][i].row);
			free(m->slots[k][i].row);
			m->slots[k][i].row = NULL;
		}
	m->generation = -1;
}

void
store_kept_check(struct store *st)
{
	struct error	 e = { 0 };
	sqlite3_stmt	*stmt;
	int64_t		 n;

	if (st->kept == NULL) {
		st->kept = xmalloc(sizeof(*st->kept));
		memset(st->kept, 0, sizeof(*st->kept));
		st->kept->generation = -1;
	}
	st->kept->valid = 0;
	if ((stmt = store_stmt(st, STMT_GENERATION, &e)) == NULL) {
		error_clear(&e);
		return;
	}
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		n = sqlite3_column_int64(stmt, 0);
		if (n != st->kept->generation)
			flush(st->kept);
		st->kept->generation = n;
		st->kept->valid = 1;
	}
	sqlite3_reset(stmt);
}

void
store_kept_end(struct store *st)
{
	if (st->kept != NULL)
		st->kept->valid = 0;
}

void
store_kept_free(struct store *st)
{
	if (st->kept == NULL)
		return;
	flush(st->kept);
	free(st->kept);
	st->kept = NULL;
}

/* FNV-1a of the key, for its slot. */
static size_t
slot(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h % KEPT_SLOTS;
}

int
store_kept_get(struct store *st, enum kept_kind k, const char *key,
    void *out)
{
	struct kept	*m = st->kept;
	size_t		 i = slot(key);

	if (m == NULL || !m->valid || m->slots[k][i].row == NULL ||
	    strcmp(m->slots[k][i].key, key) != 0)
		return 0;
	memcpy(out, m->slots[k][i].row, kinds[k].size);
	if (kinds[k].hold)
		kinds[k].hold(out);
	return 1;
}

void
store_kept_put(struct store *st, enum kept_kind k, const char *key,
    const void *row)
{
	struct kept	*m = st->kept;
	size_t		 i = slot(key);
	void		*copy;

	if (m == NULL || !m->valid || strlen(key) >= KEPT_KEY_MAX)
		return;
	copy = xmalloc(kinds[k].size);
	if (m->slots[k][i].row != NULL && kinds[k].release)
		kinds[k].release(m->slots[k][i].row);
	free(m->slots[k][i].row);
	memcpy(copy, row, kinds[k].size);
	if (kinds[k].hold)
		kinds[k].hold(copy);
	m->slots[k][i].row = copy;
	snprintf(m->slots[k][i].key, sizeof(m->slots[k][i].key), "%s", key);
}
