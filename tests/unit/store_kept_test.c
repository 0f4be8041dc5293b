/* store_kept_test.c: TAP tests of what a SQLite worker reads again, and
 * when (src/store_sqlite.c, src/store_sqlite_cache.c), on a real
 * database, cache and host shared memory.
 *
 * The catalog rows kept are used without a read transaction only while
 * every commit since they were read was counted by the host and left
 * the catalog alone: a decision-like commit keeps them; a catalog change
 * through the store, a commit by another program (sqlite3 by hand), one
 * the host could not count (outside a transaction), and no shared
 * memory at all each make the next request read.  A row not kept opens
 * the snapshot there.  A cool-down is looked up only while the cache may
 * hold one: a cool-down put by hand is not seen until the host writes
 * one, one that ended long ago is none, and each written is seen at
 * once.  A kept backend is copied out as far as it is used (kept.c), and
 * so is a version's list of challengers, kept when empty too: one
 * looked up from the rows kept opens no snapshot, and one added by hand
 * moves the generation (sql/migrate-9.sql's triggers), so that the next
 * request reads the list again. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "clock.h"
#include "kept.h"
#include "settings.h"
#include "shm.h"
#include "store.h"
#include "store_sqlite.h"
#include "tap.h"

static char	dir[64], db_path[128], shm_path[128], cache_path[128];

static const char *
get(const char *name)
{
	if (strcmp(name, "SERVICE_DB_PATH") == 0)
		return db_path;
	if (strcmp(name, "SERVICE_SHM_PATH") == 0)
		return shm_path;
	return NULL;
}

/* SQL on the store's own connection. */
static int
sql(struct store *st, const char *q)
{
	int rc = sqlite3_exec(st->db, q, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		printf("# %s: %s\n", q, sqlite3_errmsg(st->db));
	return rc == SQLITE_OK;
}

/* SQL by another program, on SQLite's own unix VFS. */
static int
by_hand(const char *path, const char *q)
{
	sqlite3	*db = NULL;
	int	 rc;

	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, "unix");
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, q, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		printf("# %s: %s\n", q, db ? sqlite3_errmsg(db) : "?");
	sqlite3_close(db);
	return rc == SQLITE_OK;
}

/* A write transaction through the store running q. */
static int
write_tx(struct store *st, const char *q)
{
	struct error	e = { 0 };
	int		rc;

	rc = store_begin(st, &e) == 0 && sql(st, q) &&
	    store_commit(st, &e) == 0;
	if (!rc)
		printf("# %s: %s\n", q, e.message);
	error_clear(&e);
	return rc;
}

/* 1: the request's snapshot was opened by store_read_begin(), 0: the
 * rows kept were trusted, -1: no read at all. */
static int
request(struct store *st)
{
	int opened;

	store_read_begin(st);
	opened = !st->in_read ? -1 : !st->read_lazy &&
	    !sqlite3_get_autocommit(st->db);
	store_read_end(st);
	return opened;
}

#define DECISION "INSERT INTO audit_log (at_ms, actor, action, target)" \
	" VALUES (1, 'test', 'decision', 'x')"

/* kept_get() of a backend: its fields, options and URLs as kept, and
 * the room past them left as the caller had it. */
static void
test_backend_copy(void)
{
	struct kept	*m = kept_new();
	struct backend	*b = calloc(1, sizeof(*b)), *out = malloc(sizeof(*b));

	b->id = 7;
	snprintf(b->name, sizeof(b->name), "up");
	snprintf(b->kind, sizeof(b->kind), "systemone");
	b->enabled = 1;
	b->timeout_ms = 1500;
	snprintf(b->options, sizeof(b->options), "{\"a\":1}");
	b->optval[2] = 42;
	b->nurls = 2;
	snprintf(b->urls[0], sizeof(b->urls[0]), "http://a");
	snprintf(b->urls[1], sizeof(b->urls[1]), "http://b");
	kept_begin(m, 1);
	kept_put(m, KEPT_BACKEND, "7", b);
	memset(out, 0xaa, sizeof(*out));
	ok(kept_get(m, KEPT_BACKEND, "7", out) == 1, "a kept backend");
	ok(out->id == 7 && strcmp(out->name, "up") == 0 &&
	    strcmp(out->kind, "systemone") == 0 && out->enabled == 1 &&
	    out->timeout_ms == 1500 && strcmp(out->options, "{\"a\":1}") ==
	    0 && out->optval[2] == 42 && out->optval[0] == 0 &&
	    out->nurls == 2 && strcmp(out->urls[0], "http://a") == 0 &&
	    strcmp(out->urls[1], "http://b") == 0,
	    "  its fields, options and URLs as kept");
	ok((unsigned char)out->options[8] == 0xaa &&
	    (unsigned char)out->urls[2][0] == 0xaa,
	    "  the room past them not copied");
	kept_end(m);
	ok(kept_get(m, KEPT_BACKEND, "7", out) == 0, "  none outside a "
	    "snapshot");
	kept_free(m);
	free(b);
	free(out);
}

/* kept_get() of a version's challengers: n and its rows, not the room
 * past them. */
static void
test_challengers_copy(void)
{
	struct kept		*m = kept_new();
	struct challenger_list	*l = calloc(1, sizeof(*l));
	struct challenger_list	*out = malloc(sizeof(*out));

	l->n = 2;
	l->c[0].backend_id = 3;
	snprintf(l->c[0].backend, sizeof(l->c[0].backend), "a");
	l->c[0].share = 0.5;
	l->c[1].backend_id = 4;
	snprintf(l->c[1].backend, sizeof(l->c[1].backend), "b");
	l->c[1].share = 1;
	kept_begin(m, 1);
	kept_put(m, KEPT_CHALLENGERS, "1/1", l);
	l->n = 0;
	kept_put(m, KEPT_CHALLENGERS, "1/2", l);
	memset(out, 0xaa, sizeof(*out));
	ok(kept_get(m, KEPT_CHALLENGERS, "1/1", out) == 1 && out->n == 2 &&
	    out->c[0].backend_id == 3 && strcmp(out->c[0].backend, "a") ==
	    0 && out->c[0].share == 0.5 && out->c[1].backend_id == 4 &&
	    strcmp(out->c[1].backend, "b") == 0 && out->c[1].share == 1,
	    "a version's challengers kept, as they were");
	ok(out->c[2].backend_id == (int64_t)0xaaaaaaaaaaaaaaaaULL,
	    "  the room past them not copied");
	ok(kept_get(m, KEPT_CHALLENGERS, "1/2", out) == 1 && out->n == 0,
	    "an empty list is kept too");
	ok(kept_get(m, KEPT_CHALLENGERS, "1/3", out) == 0,
	    "another version's is not");
	kept_begin(m, 2);
	ok(kept_get(m, KEPT_CHALLENGERS, "1/1", out) == 0,
	    "nor any once the generation moved");
	kept_end(m);
	kept_free(m);
	free(l);
	free(out);
}

/* A request that looks up the challengers of version 1 of schema 1
 * into *l: 1 it opened the snapshot, 0 it did not, -1 it failed. */
static int
list_request(struct store *st, struct challenger_list *l)
{
	struct error	e = { 0 };
	int		opened;

	store_read_begin(st);
	if (store_challenger_list(st, 1, 1, l, &e) == -1) {
		printf("# %s\n", e.message);
		error_clear(&e);
		store_read_end(st);
		return -1;
	}
	opened = !st->read_lazy && !sqlite3_get_autocommit(st->db);
	store_read_end(st);
	return opened;
}

int
main(void)
{
	struct settings	 s;
	struct error	 e = { 0 };
	struct shm	*m;
	struct store	*st;
	struct challenger_list *l = malloc(sizeof(*l));
	char		 err[256], q[256];
	int64_t		 now;

	test_backend_copy();
	test_challengers_copy();
	snprintf(dir, sizeof(dir), "/tmp/evalgate-kept-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(db_path, sizeof(db_path), "%s/evalgate.db", dir);
	snprintf(shm_path, sizeof(shm_path), "%s/evalgate.shm", dir);
	snprintf(cache_path, sizeof(cache_path), "%s/cache.db", dir);
	if (settings_load(&s, get, err, sizeof(err)) == -1 ||
	    store_init(&s, &e) == -1) {
		printf("# setup: %s%s\n", err, e.message);
		return 1;
	}
	m = shm_attach(shm_path, 2, 0600, &e);
	ok(m != NULL, "the host's shared memory is made");
	shm_set_host(m);
	st = store_open(&s, &e);
	ok(st != NULL, "the store opens");
	if (st == NULL || m == NULL)
		return tap_done();

	/* The catalog. */
	ok(request(st) == 1, "a first request reads");
	ok(request(st) == 1, "so does the next before any commit was counted");
	ok(write_tx(st, DECISION), "a commit that leaves the catalog alone");
	ok(request(st) == 1, "the request after it reads, in the run it began");
	ok(request(st) == 0, "the next trusts the rows kept");
	ok(write_tx(st, DECISION) && write_tx(st, DECISION),
	    "two more such commits");
	ok(request(st) == 0, "the rows kept are still trusted");

	store_read_begin(st);
	ok(st->read_lazy && sqlite3_get_autocommit(st->db),
	    "a trusted snapshot is not open");
	ok(sqlite_stmt(st, STMT_GENERATION, &e) != NULL && !st->read_lazy &&
	    !sqlite3_get_autocommit(st->db),
	    "a statement in it (a row not kept) opens it");
	store_read_end(st);
	ok(sqlite3_get_autocommit(st->db), "and its end closes it");

	ok(write_tx(st, "INSERT INTO applications (name, created_at)"
	    " VALUES ('kept', 1)"), "a catalog change through the store");
	ok(request(st) == 1, "the next request reads");
	ok(request(st) == 0, "the one after trusts the rows again");

	ok(by_hand(db_path, "UPDATE applications SET name = 'hand'"
	    " WHERE name = 'kept'"), "a catalog change by hand");
	ok(request(st) == 1, "the next request reads");
	ok(request(st) == 1, "and each until the host counts a commit");
	ok(write_tx(st, DECISION), "a counted commit");
	ok(request(st) == 1 && request(st) == 0,
	    "one more read, then the rows are trusted");

	ok(by_hand(db_path, DECISION), "a commit by hand that leaves the "
	    "catalog alone");
	ok(request(st) == 1, "reads all the same: the host did not count it");
	ok(write_tx(st, DECISION) && request(st) == 1 && request(st) == 0,
	    "until a counted commit begins a run again");

	ok(sql(st, DECISION), "a commit of the store's outside a transaction");
	ok(request(st) == 1, "reads: it was not counted");

	ok(write_tx(st, DECISION) && request(st) == 1 && request(st) == 0,
	    "trusted again");
	shm_set_host(NULL);
	ok(request(st) == 1 && request(st) == 1,
	    "without the shared memory, every request reads");
	shm_set_host(m);
	ok(request(st) == 1, "with it back, no run is trusted before a read");

	/* A version's challengers. */
	ok(by_hand(db_path, "INSERT INTO backends (id, name, kind, created_at)"
	    " VALUES (5, 'up', 'lexical', 1)") && write_tx(st, DECISION),
	    "a backend, then a counted commit");
	ok(list_request(st, l) == 1 && l->n == 0,
	    "a version without challengers: an empty list, read");
	ok(list_request(st, l) == 0 && l->n == 0,
	    "  then kept: the next request opens no snapshot for it");
	ok(by_hand(db_path, "INSERT INTO schema_challengers"
	    " VALUES (1, 1, 5, 0.5, 1)"), "a challenger added by hand");
	ok(list_request(st, l) == 1 && l->n == 1 &&
	    strcmp(l->c[0].backend, "up") == 0 && l->c[0].share == 0.5 &&
	    l->c[0].backend_id == 5, "the next request reads the list again");
	ok(write_tx(st, DECISION) && list_request(st, l) == 1 &&
	    list_request(st, l) == 0 && l->n == 1,
	    "  and after a counted commit, keeps it");
	ok(write_tx(st, "DELETE FROM schema_challengers"),
	    "the challenger removed through the store");
	ok(list_request(st, l) == 1 && l->n == 0, "  is gone at once");

	/* Cool-downs. */
	now = clock_now_ms();
	ok(store_cooldown_until(st, "http://a") == 0, "no cool-down");
	snprintf(q, sizeof(q), "INSERT INTO cooldowns VALUES ('http://b', %lld)",
	    (long long)(now + 30000));
	ok(by_hand(cache_path, q), "a cool-down put by hand");
	ok(store_cooldown_until(st, "http://b") == 0,
	    "is not looked up: the cache was found to hold none");
	store_cooldown_set(st, "http://a", now + 30000);
	ok(store_cooldown_until(st, "http://a") == now + 30000,
	    "a cool-down written is seen at once");
	ok(store_cooldown_until(st, "http://b") == now + 30000,
	    "and lookups look again");
	store_cooldown_set(st, "http://a", 0);
	ok(by_hand(cache_path, "DELETE FROM cooldowns"), "both gone");
	ok(store_cooldown_until(st, "http://a") == 0, "none found");
	ok(by_hand(cache_path, q), "one put by hand again");
	ok(store_cooldown_until(st, "http://b") == 0, "is not looked up");
	store_cooldown_set(st, "http://c", now - STORE_COOLDOWN_FORGET_MS -
	    1000);
	ok(store_cooldown_until(st, "http://c") == 0,
	    "one that ended long ago is none");
	ok(store_cooldown_until(st, "http://b") == now + 30000,
	    "the lookup saw the other");
	ok(by_hand(cache_path, "DELETE FROM cooldowns WHERE url = 'http://b'"),
	    "which goes");
	ok(store_cooldown_until(st, "http://b") == 0 &&
	    by_hand(cache_path, q) && store_cooldown_until(st, "http://b") == 0,
	    "with only one that ended long ago, none is looked up");
	store_cooldown_set(st, "http://c", now - 1000);
	ok(store_cooldown_until(st, "http://c") == now - 1000,
	    "one that ended a second ago is its replica's to probe");
	shm_set_host(NULL);
	ok(store_cooldown_until(st, "http://b") == now + 30000,
	    "without the shared memory, every call looks");
	shm_set_host(m);

	store_close(st);
	shm_detach(m);
	free(l);
	snprintf(q, sizeof(q), "rm -rf %s", dir);
	if (system(q) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
