/* store_sqlite_check.c: whether a database file holds only what evalgate
 * makes, for restore, init on an existing file and migrate (README
 * "Backup and restore").
 *
 * The schema: every object of the file (table, index, trigger, view) is
 * compared with those of a database this program makes in memory with
 * its own steps (schema.sql, sql/migrate-N.sql): the same names of the
 * same types on the same tables, each table with the same columns
 * (name, type, NOT NULL, primary key), each index, trigger and view with
 * the same SQL text.  A trigger evalgate does not make would run inside
 * every worker's transactions; none is taken.
 *
 * The values: every stored field an operator sets is checked against
 * the bounds the operations take it within (bounds.h), each backend's
 * options against the table of its kind (store_kind_options()), and
 * each schema version's questions as `schema publish` checks them.  The
 * decisions are not walked (they are many, and a worker reads one as
 * a client's data, never computes limits from it).
 *
 * The names in the SQL of the value checks come from the table below,
 * never from the file; the file's names are bound as parameters. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "store_sqlite.h"

#define CHECK_SQL 512		/* bytes of one value check's statement */

/* How the rows of the tables keyed by numbers are named. */
#define SCHEMA_ROW	"(SELECT slug FROM schemas WHERE id = schema_id) " \
			"|| '/' || version"
#define TEMPLATE_ROW	"(SELECT slug FROM templates WHERE id = " \
			"template_id) || '/' || version"
#define GRANT_ROW	"app_id || '/' || schema_id || '/' || version"

/* Each stored field checked, where it is and how its row is named. */
static const struct stored_field {
	enum bound_field	 field;
	const char		*table;
	const char		*column;
	int			 nullable;
	const char		*row;	/* an expression naming the row */
	const char		*by;	/* a column the check reads too (a
					 * backend's kind); NULL none */
} fields[] = {
	{ BF_APP_NAME, "applications", "name", 0, "name", NULL },
	{ BF_APP_LOG_STATE, "applications", "log_state", 0, "name", NULL },
	{ BF_APP_ADMIN, "applications", "is_admin", 0, "name", NULL },
	{ BF_APP_RATE, "applications", "rate_per_minute", 1, "name", NULL },
	{ BF_APP_QUOTA, "applications", "daily_quota", 1, "name", NULL },
	{ BF_CREATED_AT, "applications", "created_at", 0, "name", NULL },
	{ BF_APP_RETENTION, "applications", "retention_days", 1, "name", NULL },
	{ BF_CREATED_AT, "api_keys", "created_at", 0, "prefix", NULL },
	{ BF_EXPIRES_AT, "api_keys", "expires_at", 1, "prefix", NULL },
	{ BF_REVOKED_AT, "api_keys", "revoked_at", 1, "prefix", NULL },
	{ BF_BACKEND_NAME, "backends", "name", 0, "name", NULL },
	{ BF_BACKEND_ENABLED, "backends", "enabled", 0, "name", NULL },
	{ BF_BACKEND_TIMEOUT, "backends", "timeout_ms", 1, "name", NULL },
	{ BF_BACKEND_IN_FLIGHT, "backends", "max_in_flight", 1, "name", NULL },
	{ BF_BACKEND_OPTIONS, "backends", "options", 1, "name", "kind" },
	{ BF_CREATED_AT, "backends", "created_at", 0, "name", NULL },
	{ BF_SLUG, "schemas", "slug", 0, "slug", NULL },
	{ BF_CREATED_AT, "schemas", "created_at", 0, "slug", NULL },
	{ BF_VERSION, "schema_versions", "version", 0, SCHEMA_ROW, NULL },
	{ BF_QUESTIONS, "schema_versions", "questions", 0, SCHEMA_ROW, NULL },
	{ BF_TEMPERATURE, "schema_versions", "temperature", 0, SCHEMA_ROW,
	    NULL },
	{ BF_THRESHOLD, "schema_versions", "abstain_threshold", 0,
	    SCHEMA_ROW, NULL },
	{ BF_PUBLISHED, "schema_versions", "published", 0, SCHEMA_ROW, NULL },
	{ BF_CREATED_AT, "schema_versions", "created_at", 0, SCHEMA_ROW, NULL },
	{ BF_GRANT_VERSION, "grants", "version", 0, GRANT_ROW, NULL },
	{ BF_CREATED_AT, "grants", "created_at", 0, GRANT_ROW, NULL },
	{ BF_SLUG, "templates", "slug", 0, "slug", NULL },
	{ BF_CREATED_AT, "templates", "created_at", 0, "slug", NULL },
	{ BF_VERSION, "template_versions", "version", 0, TEMPLATE_ROW, NULL },
	{ BF_VARIABLES, "template_versions", "variables", 0, TEMPLATE_ROW,
	    NULL },
	{ BF_ESCAPE_HTML, "template_versions", "escape_html", 0,
	    TEMPLATE_ROW, NULL },
	{ BF_PUBLISHED, "template_versions", "published", 0, TEMPLATE_ROW,
	    NULL },
	{ BF_CREATED_AT, "template_versions", "created_at", 0, TEMPLATE_ROW,
	    NULL },
	{ BF_QUOTA_USED, "quota_days", "used", 0, "app_id || '/' || day",
	    NULL },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* The statements on sqlite_schema and the tables' columns; the names
 * looked up are parameters. */
static const char *const objects_sql =
    "SELECT type, name, tbl_name, sql FROM sqlite_schema "
    "WHERE name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\' ORDER BY type, name";
static const char *const object_sql =
    "SELECT tbl_name, sql FROM sqlite_schema WHERE type = ?1 AND name = ?2";
static const char *const columns_sql =
    "SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1)";
static const char *const column_sql =
    "SELECT type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?1) "
    "WHERE name = ?2";

/* The one way a file is refused: "PATH: refused: WHAT".  Returns -1. */
static int
refuse(struct error *e, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
refuse(struct error *e, const char *path, const char *fmt, ...)
{
	char	what[400];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return error_set(e, ERR_CONFLICT, NULL, "%s: refused: %s", path,
	    what);
}

static int
failed(sqlite3 *db, struct error *e, const char *path)
{
	return error_set(e, ERR_UNAVAILABLE, NULL, "%s: cannot check: %s",
	    path, sqlite3_errmsg(db));
}

static const char *
text(sqlite3_stmt *stmt, int i)
{
	const char *t = (const char *)sqlite3_column_text(stmt, i);

	return t != NULL ? t : "";
}

/* Whether two SQL texts are the same but for runs of white space. */
static int
same_sql(const char *a, const char *b)
{
	for (;;) {
		while (isspace((unsigned char)*a) && isspace((unsigned char)*b))
			a++, b++;
		if (isspace((unsigned char)*a) != isspace((unsigned char)*b))
			return 0;
		while (isspace((unsigned char)*a))
			a++;
		while (isspace((unsigned char)*b))
			b++;
		if (*a != *b)
			return 0;
		if (*a == '\0')
			return 1;
		a++, b++;
	}
}

/* "trigger 'x' on table 'y'", or "table 'x'". */
static void
object_name(char *buf, size_t size, sqlite3_stmt *o)
{
	if (strcmp(text(o, 0), "table") == 0)
		snprintf(buf, size, "table '%.100s'", text(o, 1));
	else
		snprintf(buf, size, "%.10s '%.100s' on table '%.100s'",
		    text(o, 0), text(o, 1), text(o, 2));
}

/* Prepares a walk over db and a lookup in other: 0, or -1 with e set
 * and neither left. */
static int
prepare_pair(sqlite3 *db, const char *walk_sql, sqlite3_stmt **walk,
    sqlite3 *other, const char *look_sql, sqlite3_stmt **look,
    const char *path, struct error *e)
{
	*walk = *look = NULL;
	if (sqlite3_prepare_v2(db, walk_sql, -1, walk, NULL) != SQLITE_OK)
		return failed(db, e, path);
	if (sqlite3_prepare_v2(other, look_sql, -1, look, NULL) !=
	    SQLITE_OK) {
		sqlite3_finalize(*walk);
		*walk = NULL;
		return failed(other, e, path);
	}
	return 0;
}

/* The end of a walk left at step: 0 when it was done; -1 when it
 * stopped at a row (e was set there) or failed.  Both are finalized. */
static int
walked(sqlite3 *db, int step, sqlite3_stmt *walk, sqlite3_stmt *look,
    const char *path, struct error *e)
{
	int rc = step == SQLITE_DONE ? 0 : step == SQLITE_ROW ? -1 :
	    failed(db, e, path);

	sqlite3_finalize(walk);
	sqlite3_finalize(look);
	return rc;
}

/* The columns of table in db, each looked up in other's: 0, or -1
 * naming the first of db's that other has not (or has otherwise).
 * theirs: db is the file (a column of its own is not evalgate's), or
 * the one made here (a column missing from the file). */
static int
columns(sqlite3 *db, sqlite3 *other, const char *table, int theirs,
    const char *path, struct error *e)
{
	sqlite3_stmt	*c, *l;
	int		 step, same, i;

	if (prepare_pair(db, columns_sql, &c, other, column_sql, &l, path,
	    e) == -1)
		return -1;
	sqlite3_bind_text(c, 1, table, -1, SQLITE_TRANSIENT);
	while ((step = sqlite3_step(c)) == SQLITE_ROW) {
		sqlite3_reset(l);
		sqlite3_bind_text(l, 1, table, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(l, 2, text(c, 0), -1, SQLITE_TRANSIENT);
		if (sqlite3_step(l) != SQLITE_ROW) {
			if (theirs)
				refuse(e, path, "column '%.100s' of table "
				    "'%.100s' is not one evalgate makes",
				    text(c, 0), table);
			else
				refuse(e, path, "table '%.100s' has no column "
				    "'%.100s'", table, text(c, 0));
			break;
		}
		same = strcmp(text(c, 1), text(l, 0)) == 0;
		for (i = 1; i < 4; i++)
			same &= sqlite3_column_int(c, i + 1) ==
			    sqlite3_column_int(l, i);
		if (!same) {
			refuse(e, path, "column '%.100s' of table '%.100s' "
			    "differs from the one evalgate makes", text(c, 0),
			    table);
			break;
		}
	}
	return walked(db, step, c, l, path, e);
}

/* db's objects, each looked up in other's, as columns() does. */
static int
objects(sqlite3 *db, sqlite3 *other, int theirs, const char *path,
    struct error *e)
{
	sqlite3_stmt	*o, *l;
	char		 name[256];
	int		 step;

	if (prepare_pair(db, objects_sql, &o, other, object_sql, &l, path,
	    e) == -1)
		return -1;
	while ((step = sqlite3_step(o)) == SQLITE_ROW) {
		object_name(name, sizeof(name), o);
		sqlite3_reset(l);
		sqlite3_bind_text(l, 1, text(o, 0), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(l, 2, text(o, 1), -1, SQLITE_TRANSIENT);
		if (sqlite3_step(l) != SQLITE_ROW ||
		    strcmp(text(o, 2), text(l, 0)) != 0) {
			refuse(e, path, theirs ? "%s is not one evalgate "
			    "makes" : "%s is missing", name);
			break;
		}
		if (strcmp(text(o, 0), "table") == 0 ? columns(db, other,
		    text(o, 1), theirs, path, e) == -1 :
		    !same_sql(text(o, 3), text(l, 1)) && refuse(e, path,
		    "%s differs from the one evalgate makes", name) == -1)
			break;
	}
	return walked(db, step, o, l, path, e);
}

/* The schema of db against the one this program makes. */
static int
check_schema(sqlite3 *db, const char *path, struct error *e)
{
	const char	*sql;
	sqlite3		*made = NULL;
	int		 v, rc = -1;

	if (sqlite3_open_v2(":memory:", &made, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite_rid_register(made) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "%s: cannot check: out of "
		    "memory", path);
		goto out;
	}
	for (v = 0; (sql = sqlite_schema_step(v)) != NULL; v++)
		if (sqlite3_exec(made, sql, NULL, NULL, NULL) != SQLITE_OK) {
			error_set(e, ERR_INTERNAL, NULL, "%s: cannot check: "
			    "step %d of the schema: %s", path, v + 1,
			    sqlite3_errmsg(made));
			goto out;
		}
	rc = objects(db, made, 1, path, e) == -1 ||
	    objects(made, db, 0, path, e) == -1 ? -1 : 0;
out:
	sqlite3_close(made);
	return rc;
}

/* One stored value against its field's bounds: 0, or -1 with e set
 * (its message the reason alone). */
static int
check_value(const struct stored_field *f, sqlite3_stmt *stmt,
    struct error *e)
{
	const char	*t;
	int		 type = sqlite3_column_type(stmt, 1);

	if (type == SQLITE_NULL)
		return f->nullable ? 0 : error_set(e, ERR_VALIDATION, NULL,
		    "is NULL");
	switch (bound_kind(f->field)) {
	case BK_INT:
		if (type != SQLITE_INTEGER)
			return error_set(e, ERR_VALIDATION, NULL, "is not an "
			    "integer");
		return bound_int(f->field, sqlite3_column_int64(stmt, 1), e);
	case BK_REAL:
		if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
			return error_set(e, ERR_VALIDATION, NULL, "is not a "
			    "number");
		return bound_real(f->field, sqlite3_column_double(stmt, 1),
		    e);
	case BK_TEXT:
		t = (const char *)sqlite3_column_text(stmt, 1);
		if (type != SQLITE_TEXT || t == NULL)
			return error_set(e, ERR_VALIDATION, NULL, "is not "
			    "text");
		if (strlen(t) != (size_t)sqlite3_column_bytes(stmt, 1))
			return error_set(e, ERR_VALIDATION, NULL, "holds a "
			    "NUL");
		if (f->by != NULL)	/* the options of the row's kind */
			return bound_options(store_kind_options(text(stmt,
			    2)), t, NULL, e);
		return bound_text(f->field, t, e);
	}
	return error_set(e, ERR_VALIDATION, NULL, "is of no known kind");
}

/* Every row's value of field f. */
static int
check_field(sqlite3 *db, const struct stored_field *f, const char *path,
    struct error *e)
{
	sqlite3_stmt	*stmt = NULL;
	char		 sql[CHECK_SQL], row[128], why[sizeof(e->message)];
	int		 rc = 0, step;

	snprintf(sql, sizeof(sql), "SELECT %s, %s, %s FROM %s", f->row,
	    f->column, f->by != NULL ? f->by : "NULL", f->table);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return failed(db, e, path);
	while (rc == 0 && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (check_value(f, stmt, e) == 0)
			continue;
		snprintf(why, sizeof(why), "%s", e->message);
		snprintf(row, sizeof(row), "%s", text(stmt, 0));
		rc = refuse(e, path, "table '%s', row '%.100s', column '%s': "
		    "%.200s", f->table, row, f->column, why);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = failed(db, e, path);
	sqlite3_finalize(stmt);
	return rc;
}

int
sqlite_check_file(sqlite3 *db, const char *path, struct error *e)
{
	size_t i;

	if (check_schema(db, path, e) == -1)
		return -1;
	for (i = 0; i < NFIELDS; i++)
		if (check_field(db, &fields[i], path, e) == -1)
			return -1;
	return 0;
}
