/* question.c: validation of questions and state, the structural
 * fingerprint, and outcome value checks (doc/design.md, sections 5 and
 * 14).
 *
 * Each question type is one row of the types[] table: its wire name, the
 * validator of its criteria, its arity, what it feeds to the fingerprint
 * and how an outcome value is checked.  Everything here borrows its
 * arguments and keeps nothing.
 *
 * Fingerprint encoding.  Every field is an 8-byte big-endian length
 * followed by that many bytes; every count is an 8-byte big-endian
 * integer.  The hashed stream is
 *
 *	field("evalgate-fingerprint-1")  count(questions)
 *	for each question, names sorted bytewise:
 *		field(name)  field(type name)  count(items)  field(item)...
 *
 * where the items are the option keys sorted bytewise for a choice, the
 * level labels in order for a score, and nothing for a noul.  Lengths make
 * the encoding unambiguous whatever bytes the names and keys contain. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sodium.h>

#include "buf.h"
#include "error.h"
#include "question.h"
#include "utf8.h"

#define FINGERPRINT_TAG	"evalgate-fingerprint-1"
#define SORT_CAP	256	/* keys sorted on the stack; beyond, by selection */

/* The fingerprint's encoding goes to SHA-256 through a buffer: one
 * update per buffer filled rather than two per field, the same bytes
 * hashed; or, with enc set, whole into enc, to be compared with the
 * one last hashed (question_fingerprint_kept()). */
typedef struct {
	crypto_hash_sha256_state	 sha;
	size_t				 len;
	unsigned char			 buf[1024];
	struct buf			*enc;	/* borrowed, or NULL */
	int				 failed;	/* enc full */
} hashst;

struct kv {
	const char	*key;
	json_object	*val;
};

/* One question type.  criteria is NULL when the question has none. */
struct qtype_ops {
	const char	*name;
	int		(*validate)(json_object *criteria, const char *qname,
			    struct error *e);
	size_t		(*arity)(json_object *criteria);
	void		(*fingerprint)(hashst *st, json_object *criteria);
	int		(*check)(json_object *criteria, json_object *value,
			    const char *field, struct error *e);
};

static int	 choice_validate(json_object *, const char *, struct error *);
static int	 score_validate(json_object *, const char *, struct error *);
static int	 noul_validate(json_object *, const char *, struct error *);
static size_t	 choice_arity(json_object *);
static size_t	 score_arity(json_object *);
static size_t	 noul_arity(json_object *);
static void	 choice_fingerprint(hashst *, json_object *);
static void	 score_fingerprint(hashst *, json_object *);
static void	 noul_fingerprint(hashst *, json_object *);
static int	 choice_check(json_object *, json_object *, const char *,
		    struct error *);
static int	 score_check(json_object *, json_object *, const char *,
		    struct error *);
static int	 noul_check(json_object *, json_object *, const char *,
		    struct error *);

static const struct qtype_ops types[Q__MAX] = {
	[Q_CHOICE] = { "choice", choice_validate, choice_arity,
	    choice_fingerprint, choice_check },
	[Q_SCORE] = { "score", score_validate, score_arity,
	    score_fingerprint, score_check },
	[Q_NOUL] = { "noul", noul_validate, noul_arity,
	    noul_fingerprint, noul_check },
};

/*
 * Errors with a field path built from the question and key names, which
 * may be of any length: the path is formatted into an allocated buffer and
 * copied by error_set().  Without memory the path falls back to "questions".
 */
static int __attribute__((format(printf, 3, 4)))
refuse(struct error *e, const char *reason, const char *pathfmt, ...)
{
	va_list	 ap;
	char	*path;
	int	 len;

	va_start(ap, pathfmt);
	len = vsnprintf(NULL, 0, pathfmt, ap);
	va_end(ap);
	/* The path holds the client's keys, of any length: checked, and
	 * without memory the field is "questions". */
	if (len < 0 || (path = malloc((size_t)len + 1)) == NULL)
		return error_set(e, ERR_VALIDATION, "questions", "%s", reason);
	va_start(ap, pathfmt);
	vsnprintf(path, (size_t)len + 1, pathfmt, ap);
	va_end(ap);
	error_set(e, ERR_VALIDATION, path, "%s", reason);
	free(path);
	return -1;
}

/* Descriptions and instructions: free text of any JSON shape but scalars. */
static int
is_text(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
	case json_type_string:
	case json_type_object:
	case json_type_array:
		return 1;
	default:
		return 0;
	}
}

/* The type a JSON string names; Q__MAX for anything else, including a
 * name followed by a NUL ("choice\u0000x" is not "choice"). */
static enum qtype
type_lookup(json_object *name)
{
	const char	*s;
	int		 t;

	if (!json_object_is_type(name, json_type_string))
		return Q__MAX;
	s = json_object_get_string(name);
	if (strlen(s) != (size_t)json_object_get_string_len(name))
		return Q__MAX;
	for (t = 0; t < Q__MAX; t++)
		if (strcmp(types[t].name, s) == 0)
			return (enum qtype)t;
	return Q__MAX;
}

static json_object *
criteria_of(json_object *question)
{
	json_object	*c;

	return json_object_object_get_ex(question, "criteria", &c) ? c : NULL;
}

static void
hash_bytes(hashst *st, const void *p, size_t n)
{
	if (st->enc != NULL) {
		if (buf_add(st->enc, p, n) != BUF_OK)
			st->failed = 1;
		return;
	}
	if (n > sizeof(st->buf) - st->len) {
		crypto_hash_sha256_update(&st->sha, st->buf, st->len);
		st->len = 0;
		if (n >= sizeof(st->buf)) {
			crypto_hash_sha256_update(&st->sha, p, n);
			return;
		}
	}
	memcpy(st->buf + st->len, p, n);
	st->len += n;
}

/* Length-prefixed field and count of the fingerprint encoding. */
static void
hash_count(hashst *st, uint64_t n)
{
	unsigned char	 b[8];
	int		 i;

	for (i = 7; i >= 0; i--) {
		b[i] = (unsigned char)(n & 0xff);
		n >>= 8;
	}
	hash_bytes(st, b, sizeof(b));
}

static void
hash_field(hashst *st, const char *s, size_t len)
{
	hash_count(st, len);
	hash_bytes(st, s, len);
}

static int
kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

/*
 * Calls fn for every member of obj in bytewise order of the keys (strcmp
 * compares as unsigned char).  Up to SORT_CAP members are sorted in a stack
 * array; larger objects are walked by repeated selection of the next
 * larger key, which needs no memory and gives the same order.
 */
static void
sorted_foreach(json_object *obj, hashst *st,
    void (*fn)(hashst *, const char *, json_object *))
{
	struct kv	 kvs[SORT_CAP];
	const char	*prev = NULL, *best;
	json_object	*bestval;
	size_t		 i, n = 0, len;

	len = (size_t)json_object_object_length(obj);
	if (len <= SORT_CAP) {
		json_object_object_foreach(obj, k, v) {
			kvs[n].key = k;
			kvs[n].val = v;
			n++;
		}
		qsort(kvs, n, sizeof(kvs[0]), kv_cmp);
		for (i = 0; i < n; i++)
			fn(st, kvs[i].key, kvs[i].val);
		return;
	}
	for (i = 0; i < len; i++) {
		best = NULL;
		bestval = NULL;
		json_object_object_foreach(obj, k, v) {
			if (prev != NULL && strcmp(k, prev) <= 0)
				continue;
			if (best == NULL || strcmp(k, best) < 0) {
				best = k;
				bestval = v;
			}
		}
		if (best == NULL)
			break;
		fn(st, best, bestval);
		prev = best;
	}
}

/* choice */

static int
choice_validate(json_object *c, const char *q, struct error *e)
{
	size_t	 n;

	if (!json_object_is_type(c, json_type_object))
		return refuse(e, "must be an object of option keys",
		    "questions.%s.criteria", q);
	n = (size_t)json_object_object_length(c);
	if (n == 0)
		return refuse(e, "must have at least one option",
		    "questions.%s.criteria", q);
	if (n > QUESTION_MAX_OPTIONS)
		return refuse(e, "must have at most 255 options",
		    "questions.%s.criteria", q);
	json_object_object_foreach(c, k, v) {
		if (*k == '\0')
			return refuse(e, "option keys must be non-empty",
			    "questions.%s.criteria", q);
		if (!is_text(v))
			return refuse(e, "option description must be a string,"
			    " an object, an array or null",
			    "questions.%s.criteria.%s", q, k);
	}
	return 0;
}

static size_t
choice_arity(json_object *c)
{
	return json_object_is_type(c, json_type_object) ?
	    (size_t)json_object_object_length(c) : 0;
}

static void
hash_key(hashst *st, const char *key, json_object *val)
{
	(void)val;
	hash_field(st, key, strlen(key));
}

static void
choice_fingerprint(hashst *st, json_object *c)
{
	hash_count(st, choice_arity(c));
	if (json_object_is_type(c, json_type_object))
		sorted_foreach(c, st, hash_key);
}

static int
choice_check(json_object *c, json_object *v, const char *field,
    struct error *e)
{
	const char	*s;

	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		if (strlen(s) == (size_t)json_object_get_string_len(v) &&
		    json_object_object_get_ex(c, s, NULL))
			return 0;
	}
	return error_set(e, ERR_VALIDATION, field,
	    "must be one of the option keys of the question");
}

/* score */

static int
score_validate(json_object *c, const char *q, struct error *e)
{
	size_t	 i, n;

	if (json_object_is_type(c, json_type_object))
		return refuse(e, "must be an array of level labels (the object"
		    " form of levels is not accepted)",
		    "questions.%s.criteria", q);
	if (!json_object_is_type(c, json_type_array))
		return refuse(e, "must be an array of level labels",
		    "questions.%s.criteria", q);
	n = json_object_array_length(c);
	if (n < QUESTION_MIN_LEVELS || n > QUESTION_MAX_LEVELS)
		return refuse(e, "must have from 2 to 10 levels",
		    "questions.%s.criteria", q);
	for (i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(c, i),
		    json_type_string))
			return refuse(e, "level label must be a string",
			    "questions.%s.criteria[%zu]", q, i);
	return 0;
}

static size_t
score_arity(json_object *c)
{
	return json_object_is_type(c, json_type_array) ?
	    json_object_array_length(c) : 0;
}

static void
score_fingerprint(hashst *st, json_object *c)
{
	json_object	*l;
	size_t		 i, n;

	n = score_arity(c);
	hash_count(st, n);
	for (i = 0; i < n; i++) {
		l = json_object_array_get_idx(c, i);
		hash_field(st, json_object_get_string(l),
		    (size_t)json_object_get_string_len(l));
	}
}

static int
score_check(json_object *c, json_object *v, const char *field,
    struct error *e)
{
	int64_t	 i;
	size_t	 n;

	n = score_arity(c);
	if (json_object_is_type(v, json_type_int)) {
		i = json_object_get_int64(v);
		if (i >= 0 && (uint64_t)i < n)
			return 0;
	}
	return error_set(e, ERR_VALIDATION, field,
	    "must be an integer level index from 0 to %zu",
	    n > 0 ? n - 1 : 0);
}

/* noul */

static int
noul_validate(json_object *c, const char *q, struct error *e)
{
	if (c == NULL || json_object_is_type(c, json_type_null))
		return 0;
	if (!json_object_is_type(c, json_type_object))
		return refuse(e, "must be an object with the keys true and"
		    " false, or null", "questions.%s.criteria", q);
	json_object_object_foreach(c, k, v) {
		if (strcmp(k, "true") != 0 && strcmp(k, "false") != 0)
			return refuse(e, "only the keys true and false are"
			    " allowed", "questions.%s.criteria.%s", q, k);
		if (!is_text(v))
			return refuse(e, "description must be a string, an"
			    " object, an array or null",
			    "questions.%s.criteria.%s", q, k);
	}
	return 0;
}

static size_t
noul_arity(json_object *c)
{
	(void)c;
	return 2;
}

static void
noul_fingerprint(hashst *st, json_object *c)
{
	(void)c;
	hash_count(st, 0);
}

static int
noul_check(json_object *c, json_object *v, const char *field,
    struct error *e)
{
	(void)c;
	if (json_object_is_type(v, json_type_boolean))
		return 0;
	return error_set(e, ERR_VALIDATION, field, "must be a boolean");
}

/* Public interface */

enum qtype
question_type(json_object *question)
{
	json_object	*t;

	if (!json_object_object_get_ex(question, "type", &t))
		return Q__MAX;
	return type_lookup(t);
}

const char *
question_type_name(enum qtype t)
{
	return (unsigned)t < Q__MAX ? types[t].name : NULL;
}

static int
validate_one(const char *name, json_object *q, struct error *e)
{
	json_object	*t, *instr;
	enum qtype	 type;

	if (!json_object_is_type(q, json_type_object))
		return refuse(e, "must be an object", "questions.%s", name);
	if (!json_object_object_get_ex(q, "type", &t) ||
	    json_object_is_type(t, json_type_null))
		return refuse(e, "is required", "questions.%s.type", name);
	if ((type = type_lookup(t)) == Q__MAX)
		return refuse(e, "must be one of choice, score, noul",
		    "questions.%s.type", name);
	if (json_object_object_get_ex(q, "instructions", &instr) &&
	    !is_text(instr))
		return refuse(e, "must be a string, an object, an array or"
		    " null", "questions.%s.instructions", name);
	return types[type].validate(criteria_of(q), name, e);
}

int
question_validate(json_object *questions, int max_questions, struct error *e)
{
	int	 n;

	if (!json_object_is_type(questions, json_type_object))
		return error_set(e, ERR_VALIDATION, "questions",
		    "must be an object of question names to questions");
	n = json_object_object_length(questions);
	if (n == 0)
		return error_set(e, ERR_VALIDATION, "questions",
		    "must not be empty");
	if (n > max_questions)
		return error_set(e, ERR_VALIDATION, "questions",
		    "at most %d questions are allowed", max_questions);
	json_object_object_foreach(questions, name, q) {
		if (*name == '\0')
			return error_set(e, ERR_VALIDATION, "questions",
			    "question names must be non-empty");
		if (validate_one(name, q, e) == -1)
			return -1;
	}
	return 0;
}

int
question_validate_state(json_object *state, long max_chars, struct error *e)
{
	const char	*s;
	size_t		 len;

	switch (json_object_get_type(state)) {
	case json_type_string:
		s = json_object_get_string(state);
		len = (size_t)json_object_get_string_len(state);
		break;
	case json_type_object:
	case json_type_array:
		s = json_object_to_json_string_length(state,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &len);
		if (s == NULL)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
		break;
	default:
		return error_set(e, ERR_VALIDATION, "state",
		    "must be a string, an object or an array");
	}
	if (max_chars < 0 || utf8_count(s, len) > (size_t)max_chars)
		return error_set(e, ERR_VALIDATION, "state",
		    "must be at most %ld characters", max_chars);
	return 0;
}

size_t
question_arity(json_object *question)
{
	enum qtype	 t;

	if ((t = question_type(question)) == Q__MAX)
		return 0;
	return types[t].arity(criteria_of(question));
}

enum qtype
question_shape(json_object *question, size_t *arity)
{
	enum qtype	 t;

	*arity = (t = question_type(question)) == Q__MAX ? 0 :
	    types[t].arity(criteria_of(question));
	return t;
}

static void
hash_question(hashst *st, const char *name, json_object *q)
{
	enum qtype	 t;
	const char	*tname;

	t = question_type(q);
	tname = t == Q__MAX ? "" : types[t].name;
	hash_field(st, name, strlen(name));
	hash_field(st, tname, strlen(tname));
	if (t == Q__MAX)
		hash_count(st, 0);
	else
		types[t].fingerprint(st, criteria_of(q));
}

_Static_assert(QUESTION_FINGERPRINT_LEN == 2 * crypto_hash_sha256_BYTES,
    "a fingerprint is the hex of a SHA-256 digest");

/* The encoding of questions into st. */
static void
encode(hashst *st, json_object *questions)
{
	hash_field(st, FINGERPRINT_TAG, strlen(FINGERPRINT_TAG));
	if (json_object_is_type(questions, json_type_object)) {
		hash_count(st, (uint64_t)json_object_object_length(questions));
		sorted_foreach(questions, st, hash_question);
	} else
		hash_count(st, 0);
}

void
question_fingerprint(json_object *questions,
    char hex[QUESTION_FINGERPRINT_LEN + 1])
{
	hashst		 st;
	unsigned char	 digest[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_init(&st.sha);
	st.len = 0;
	st.enc = NULL;
	st.failed = 0;
	encode(&st, questions);
	crypto_hash_sha256_update(&st.sha, st.buf, st.len);
	crypto_hash_sha256_final(&st.sha, digest);
	sodium_bin2hex(hex, QUESTION_FINGERPRINT_LEN + 1, digest,
	    sizeof(digest));
}

void
question_fingerprint_kept(json_object *questions,
    char hex[QUESTION_FINGERPRINT_LEN + 1], struct question_kept *k)
{
	struct buf	 swap;
	hashst		 st;
	unsigned char	 digest[crypto_hash_sha256_BYTES];

	if (k->last.max == 0) {		/* first use */
		buf_init(&k->last, QUESTION_KEPT_MAX);
		buf_init(&k->next, QUESTION_KEPT_MAX);
		k->hex[0] = '\0';
	}
	buf_reset(&k->next);
	st.enc = &k->next;
	st.failed = 0;
	encode(&st, questions);
	if (st.failed) {		/* too large to keep, or no memory */
		question_fingerprint(questions, hex);
		return;
	}
	if (k->hex[0] != '\0' && k->next.len == k->last.len &&
	    memcmp(k->next.p, k->last.p, k->next.len) == 0) {
		memcpy(hex, k->hex, sizeof(k->hex));
		return;
	}
	crypto_hash_sha256(digest, (const unsigned char *)k->next.p,
	    k->next.len);
	sodium_bin2hex(hex, QUESTION_FINGERPRINT_LEN + 1, digest,
	    sizeof(digest));
	memcpy(k->hex, hex, sizeof(k->hex));
	swap = k->last;
	k->last = k->next;
	k->next = swap;
}

void
question_kept_free(struct question_kept *k)
{
	buf_free(&k->last);
	buf_free(&k->next);
	k->hex[0] = '\0';
}

int
question_check_outcome(json_object *question, json_object *value,
    const char *field, struct error *e)
{
	enum qtype	 t;

	if ((t = question_type(question)) == Q__MAX)
		return error_set(e, ERR_VALIDATION, field,
		    "the question has no valid type");
	return types[t].check(criteria_of(question), value, field, e);
}
