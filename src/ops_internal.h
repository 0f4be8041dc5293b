/* ops_internal.h: what the ops*.c files share, and nobody else: the
 * operations of each family (the table in ops.c runs them) and the
 * checks several families make.
 *
 * Every operation takes its input object (borrowed) and, on success,
 * sets *out to a new object the caller puts; on failure it returns -1
 * with e set.  A mutating one runs inside the transaction ops_run()
 * opened, which also writes its audit row. */
#ifndef EVALGATE_OPS_INTERNAL_H
#define EVALGATE_OPS_INTERNAL_H

#include <stdint.h>

#include <json-c/json.h>

#include "bounds.h"
#include "error.h"
#include "model.h"
#include "ops.h"
#include "question.h"

#define NAME_MAX_LEN	MODEL_NAME_MAX	/* applications, backends */
#define SLUG_MAX_LEN	MODEL_NAME_MAX	/* schemas, templates */
#define UPPER_		"ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
#define DIGITS		"0123456789"

typedef int (*op_fn)(struct op_ctx *, json_object *, json_object **,
    struct error *);

/* ops_app.c */
int	op_app_create(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_app_update(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_app_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_key_issue(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_key_revoke(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_key_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
/* ops_backend.c */
int	op_backend_add(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_backend_enable(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_backend_disable(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_backend_update(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_backend_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
/* ops_schema.c */
int	op_schema_publish(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_schema_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_schema_show(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_grant(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_ungrant(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_grant_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
/* ops_template.c */
int	op_template_publish(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_template_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_template_render(struct op_ctx *, json_object *, json_object **,
	    struct error *);

/* ops_challenger.c */
int	op_challenger_add(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_challenger_list(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_challenger_remove(struct op_ctx *, json_object *, json_object **,
	    struct error *);
/* ops_console.c: a console session begun or ended, {prefix}: its
 * effect is its audit row. */
int	op_console_session(struct op_ctx *, json_object *, json_object **,
	    struct error *);

/* ops_retention.c: not one transaction, but steps of its own and then
 * its audit row (mutates 0 in the table of ops.c). */
int	op_decisions_prune(struct op_ctx *, json_object *, json_object **,
	    struct error *);

/* ops_compare.c */
int	op_compare(struct op_ctx *, json_object *, json_object **,
	    struct error *);
int	op_promote(struct op_ctx *, json_object *, json_object **,
	    struct error *);

/* Shared with ops_compare.c by ops_calibration.c. */
/* Reads a stored untempered distribution dist of a question of type and
 * the outcome recorded for it into p[0..*n-1] (at most CAL_MAX_CLASSES,
 * normalised) and the outcome's class *y: 1, or 0 when they do not fit
 * together or do not normalise (the row is left out). */
int	ops_read_answer(enum qtype type, json_object *dist,
	    json_object *outcome, double *p, size_t *n, size_t *y);
/* Publishes v again (its questions and abstain threshold) with backend
 * (NULL: v's own) and temperature T, through OP_SCHEMA_PUBLISH (its
 * validation, transaction and audit row, whose details name v's number
 * as from); *out is its output {id, version, fingerprint}, the caller's
 * to put.  0 or -1. */
int	ops_republish(struct op_ctx *c, const struct schema_version *v,
	    const char *backend, double T, const char *from,
	    json_object **out, struct error *e);

/* Shared checks and lookups (ops.c). */
/* 404: "no <what> named '<name>'".  Returns -1. */
int	ops_not_found(struct error *e, const char *what, const char *name);
/* The application called name, or 404. */
int	ops_find_app(struct op_ctx *c, const char *name, struct app *a,
	    struct error *e);
/* A name is printable and has no '/', so that it fits in a path. */
int	ops_check_name(const char *field, const char *name, struct error *e);
/* A text shown by the console and listings (a description, a model
 * name) has no control character (utf8_control()): terminal injection. */
int	ops_check_text(const char *field, const char *text, struct error *e);
/* Finishes a listing the store filled (rc from its _each function):
 * {key: list} in *out, or the list released on failure. */
int	ops_listed(int rc, const char *key, json_object *list,
	    json_object **out);
/* Whether s is one character of first, then characters of rest: slugs,
 * variable names. */
int	ops_spelled(const char *s, const char *first, const char *rest);
/* The id of a schema or template: [a-z0-9][a-z0-9_.-]{0,99}. */
int	ops_req_slug(json_object *in, const char **slug, struct error *e);
/* The optional version of a schema or template: 0 when absent. */
int	ops_opt_version(json_object *in, int64_t *version, struct error *e);

#endif
