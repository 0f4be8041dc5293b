/* bounds.h: the bounds of every stored value an operator sets (a rate,
 * a quota, a timeout, a name, a schema version's questions), defined
 * once.  The operations (ops*.c) refuse a value outside them; the store
 * refuses a record read back outside them (bound_app() and the like),
 * so that a worker never computes with one; the check of a database file
 * (store_sqlite_check.c) refuses a file holding one (README "Backup and
 * restore"). */
#ifndef EVALGATE_BOUNDS_H
#define EVALGATE_BOUNDS_H

#include <stdint.h>

#include "error.h"
#include "model.h"

#define BOUND_LIMIT_MAX		1000000000000LL	/* rates, quotas,
						 * versions */
#define BOUND_RETENTION_DAYS_MAX 1000000	/* as SERVICE_RETENTION_DAYS */
#define BOUND_TIMEOUT_MS_MIN	100		/* a backend's timeout */
#define BOUND_TIMEOUT_MS_MAX	3600000
#define BOUND_IN_FLIGHT_MAX	100000		/* evaluations in flight */
#define BOUND_TEMPERATURE_MAX	100.0
#define BOUND_QUESTIONS_MAX	1000		/* per schema version */
#define BOUND_TIME_MAX		253402300799LL	/* 9999-12-31T23:59:59Z:
						 * times in seconds */

/* Every bounded stored field. */
enum bound_field {
	BF_APP_NAME,
	BF_APP_LOG_STATE,
	BF_APP_ADMIN,
	BF_APP_RATE,
	BF_APP_QUOTA,
	BF_APP_RETENTION,
	BF_CREATED_AT,
	BF_EXPIRES_AT,
	BF_REVOKED_AT,
	BF_BACKEND_NAME,
	BF_BACKEND_ENABLED,
	BF_BACKEND_TIMEOUT,
	BF_BACKEND_IN_FLIGHT,
	BF_BACKEND_OPTIONS,
	BF_SLUG,
	BF_VERSION,
	BF_GRANT_VERSION,
	BF_PUBLISHED,
	BF_QUESTIONS,
	BF_TEMPERATURE,
	BF_THRESHOLD,
	BF_VARIABLES,
	BF_ESCAPE_HTML,
	BF_QUOTA_USED,
	BF__MAX
};

/* How a field is stored: an integer, a real, or text. */
enum bound_kind { BK_INT, BK_REAL, BK_TEXT };
enum bound_kind	 bound_kind(enum bound_field f);

/* Whether a value is within field f's bounds: 0, or -1 with e set
 * (ERR_VALIDATION; its message says what is wrong, without the field's
 * name, for the caller to put it in context). */
int	 bound_int(enum bound_field f, int64_t v, struct error *e);
int	 bound_real(enum bound_field f, double v, struct error *e);
int	 bound_text(enum bound_field f, const char *v, struct error *e);

/* Why a name (an application's, a backend's) or a slug (a schema's, a
 * template's) is not one the operations take; NULL when it is one. */
const char	*bound_name_fault(const char *name);
const char	*bound_slug_fault(const char *slug);

/* An option of its own that a kind of backend takes (backend.h): a row
 * of the kind's table, which a row with a NULL name ends.  A backend
 * keeps the options set as the text of one JSON object (struct backend's
 * options: {"name": value, ...}, only those set), checked against its
 * kind's table wherever it is read. */
enum backend_option_type {
	BOPT_LONG,		/* an integer from min to max */
	BOPT_JSON,		/* a JSON object (the console reads a file) */
	BOPT__MAX
};

struct backend_option {
	const char			*name;	/* NULL ends a table */
	enum backend_option_type	 type;
	long				 min, max, def;	/* BOPT_LONG */
	const char			*meaning;	/* one line */
};

/* The options text of a backend of a kind whose table is opts (NULL: a
 * kind without options): "" (none), or a JSON object whose every member
 * is an option of opts within its bounds, of at most
 * BACKEND_OPTIONS_SIZE - 1 bytes, a BOPT_JSON one of at most
 * BACKEND_OPTION_JSON_MAX as compact JSON.  0 and, when vals is not
 * NULL, vals[i] set to the value of opts[i] for a BOPT_LONG option (0:
 * not set, the default; every other entry of BACKEND_OPTIONS_MAX 0);
 * or -1 with e set (ERR_VALIDATION, the option's name as its field). */
int	 bound_options(const struct backend_option *opts, const char *text,
	    int64_t vals[BACKEND_OPTIONS_MAX], struct error *e);

/* A record as the store read it back: 0, or -1 with e set (500, naming
 * the record and the field).  bound_version() and bound_decision() check
 * the questions the store parsed (a decision's are its version's: its
 * outcomes are checked against them). */
int	 bound_app(const struct app *a, struct error *e);
int	 bound_key(const struct key_row *k, struct error *e);
/* bound_backend() checks b's options against opts, its kind's table
 * (NULL: none), and sets b->optval from them. */
int	 bound_backend(struct backend *b, const struct backend_option *opts,
	    struct error *e);
int	 bound_version(const struct schema_version *v, struct error *e);
int	 bound_template(const struct template_version *v, struct error *e);
int	 bound_decision(const struct decision_row *d, struct error *e);

#endif
