/* json_util.h: reading typed members out of request and console input,
 * with refusals that name the field.
 *
 * Members are named by a path: a member name, or names joined by dots
 * for a member of a member ("x_schema.id"), as refusals name fields.  A
 * name holding a dot cannot be reached so: look such names up with
 * json_object_object_get_ex().  Every value returned is borrowed from
 * obj. */
#ifndef EVALGATE_JSON_UTIL_H
#define EVALGATE_JSON_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "error.h"

#define JU_MAX_DEPTH 64	/* nesting accepted anywhere (doc/design.md, 5.1) */
#define JU_PATH_MAX 256	/* bytes of a path */

/* Parses the whole of text (NUL-terminated) as JSON nested at most
 * JU_MAX_DEPTH deep: a new object the caller puts, or NULL for text that
 * is not exactly one JSON value.  JSON null also gives NULL. */
json_object	*ju_parse(const char *text);
/* Parses a request body of len bytes (body[len] need not be a NUL) as
 * the API accepts it: valid UTF-8 without NUL bytes, strict JSON nested
 * at most JU_MAX_DEPTH deep, one object and nothing after it but
 * whitespace, and nothing ju_lossy() finds.  A new object the caller
 * puts, or NULL with e set
 * (ERR_VALIDATION on field "body"; ERR_UNAVAILABLE out of memory). */
json_object	*ju_parse_body(const char *body, size_t len, struct error *e);
/* What in len bytes of JSON text json-c accepted but would not keep as
 * sent, as a reason (a static string), or NULL for nothing: an object
 * key with \u0000 (json-c cuts keys at the NUL, so that "a\u0000b" would
 * become "a"), NaN or Infinity (not JSON, and written back as such), a
 * number that is not finite as a double (1e999) or an integer beyond
 * INT64_MIN..UINT64_MAX (saturated).  With path (may be NULL), the
 * place it is at, as a field is named ("answers.level"; keys as written,
 * escapes included; "" at the top).  ju_parse_body() refuses these. */
const char	*ju_lossy(const char *text, size_t len, char *path,
		    size_t pathsize);
/* The member at path: 1 with *v set (NULL for JSON null), or 0 when it
 * is absent or a member on the way is not an object. */
int		 ju_get(json_object *obj, const char *path, json_object **v);
/* The member at path if it is a string, else NULL. */
const char	*ju_str(json_object *obj, const char *path);
/* Requires the member at path to be a string of 1..maxlen bytes, without
 * NUL: 0 or -1. */
int		 ju_req_str(json_object *obj, const char *path, size_t maxlen,
		    const char **out, struct error *e);
/* Optional members: absent (and, but for ju_opt_obj() and ju_opt_int()
 * without is_null, null) leaves *out as is and returns 0; present with
 * the wrong type or out of range is -1, with e naming the path.  So is
 * a member on the way that is there but not an object ("x_schema: must
 * be an object" for "x_schema.id"). */
int		 ju_opt_obj(json_object *obj, const char *path,
		    json_object **out, struct error *e);
int		 ju_opt_str(json_object *obj, const char *path, size_t maxlen,
		    const char **out, struct error *e);
int		 ju_opt_bool(json_object *obj, const char *path, int *out,
		    struct error *e);
int		 ju_opt_int(json_object *obj, const char *path, int64_t min,
		    int64_t max, int64_t *out, int *is_null, struct error *e);
int		 ju_opt_num(json_object *obj, const char *path, double min,
		    double max, double *out, struct error *e);

/* Building JSON: these never return NULL nor fail, as without memory the
 * process ends (xalloc.h).  Each new object is the caller's; ju_add()
 * and ju_push() take v (NULL adds a JSON null). */
json_object	*ju_must(json_object *o);	/* o from json-c, not NULL */
json_object	*ju_obj(void);
json_object	*ju_arr(void);
json_object	*ju_int(int64_t n);
json_object	*ju_bool(int b);
json_object	*ju_string(const char *s);
json_object	*ju_string_len(const char *s, size_t len);
void		 ju_add(json_object *obj, const char *key, json_object *v);
void		 ju_push(json_object *arr, json_object *v);
/* A new JSON number for d, written as the shortest text that reads back
 * as d ("0.4", not "0.40000000000000002"; "1.0" for 1); 0 if not finite. */
json_object	*ju_num(double d);
/* Adds key: d, or null where d is not finite (a figure over nothing). */
void		 ju_add_figure(json_object *obj, const char *key, double d);
/* Adds key: the count n. */
void		 ju_add_count(json_object *obj, const char *key, size_t n);
/* Adds key: string, or null for a NULL string. */
void		 ju_add_str(json_object *obj, const char *key, const char *v);
/* Adds key: RFC 3339 time from epoch ms, or null for 0. */
void		 ju_add_time(json_object *obj, const char *key, int64_t ms);
/* A new {id, version} object, as x_schema and x_template are shown. */
json_object	*ju_ref(const char *id, int64_t version);
/* The flags every answer and stored value is serialised with. */
#define JU_WIRE (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Writing JSON text straight, for a value built once and only written
 * (an answer): the same bytes as json-c under JU_WIRE, without its
 * objects.  Each appends to b: 0, or -1 when b is full or memory ran
 * out. */
struct buf;
#define JU_NUM_MAX 40	/* bytes of ju_num_text()'s buffer */
/* ju_num()'s text for d into buf (JU_NUM_MAX bytes); its length. */
size_t		 ju_num_text(double d, char *buf);
int		 ju_write_num(struct buf *b, double d);
int		 ju_write_int(struct buf *b, int64_t n);
/* A string of len bytes (NUL bytes too), quoted and escaped. */
int		 ju_write_str(struct buf *b, const char *s, size_t len);
/* Any value (o borrowed; NULL is null), as json-c writes it under
 * JU_WIRE: the members and the strings written here, each number by
 * json-c.  No copy of the whole text is made, and no printbuf. */
int		 ju_write_json(struct buf *b, json_object *o);

#endif
