/* kept.h: the catalog rows a worker keeps between requests, whatever
 * the storage engine.
 *
 * An evaluation looks up its key, its application, the schema version
 * its questions match, that version's backend and its challengers: rows
 * that change only when an administrator changes them.  Each worker
 * keeps the ones it has read, and uses them while the catalog's
 * generation is the one they were read at.  Triggers on every catalog
 * table bump the generation in the database, whoever writes: the
 * console, /admin/v1, or a database shell by hand, on any host.  An
 * engine reads the generation as the first statement of a request's
 * read snapshot and hands it to kept_begin(); the rows are used only
 * inside that snapshot, so a row kept_get() gives is one the snapshot
 * would have read.  Only rows that were found are kept; a version's
 * list of challengers is found when it is empty too (most versions have
 * none: kept, their evaluations read nothing for it).  (SQLite can tell
 * without a read that nothing moved the generation since:
 * store_sqlite.c then begins the snapshot with the rows it still has,
 * and opens it at its first statement.) */
#ifndef EVALGATE_KEPT_H
#define EVALGATE_KEPT_H

#include <stdint.h>

#include "model.h"

enum kept_kind { KEPT_KEY, KEPT_APP, KEPT_MATCH, KEPT_BACKEND,
    KEPT_CHALLENGERS, KEPT__MAX };
#define KEPT_KEY_MAX	96

struct kept;

/* Owned by the caller; kept_free() releases it and every row. */
struct kept	*kept_new(void);
void		 kept_free(struct kept *m);
/* At the start of a read snapshot of the given generation (-1: it could
 * not be read, nothing is given until the next one): drops the rows of
 * an older one, and gives rows until kept_end(). */
void		 kept_begin(struct kept *m, int64_t generation);
void		 kept_end(struct kept *m);
/* The generation of the rows kept; -1 none. */
int64_t		 kept_generation(const struct kept *m);
/* 1 with the row kept under key copied into out (sharing what it owns
 * by reference; of a backend, what it uses: the room past the options'
 * NUL and past its nurls URLs is left as out had it; of a list of
 * challengers, its n rows), or 0: not kept, or not inside a snapshot. */
int		 kept_get(struct kept *m, enum kept_kind k, const char *key,
		    void *out);
/* Keeps a copy of row under key, inside a snapshot only. */
void		 kept_put(struct kept *m, enum kept_kind k, const char *key,
		    const void *row);

#endif
