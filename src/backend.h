/* backend.h: asking a backend for probability distributions.
 *
 * One call per evaluation.  Each kind of backend is one file defining one
 * const struct backend_kind (after lighttpd's mod_*.c plugins): lexical in
 * backend_lexical.c, systemone in backend_systemone.c, openai in
 * backend_openai.c.  backend.c keeps
 * the one list of kinds and, for the remote ones, the replica loop
 * (rotation, failover, cool-downs) in which a kind only turns questions
 * into distributions for one replica at a time, and says what a failure
 * was (struct backend_attempt).  A kind fills one
 * distribution per question, aligned as question.h says (choice: option
 * order of the criteria object; score: level index; noul: index 0 true,
 * 1 false), not yet normalised or tempered.  No database transaction may
 * be open during the call. */
#ifndef EVALGATE_BACKEND_H
#define EVALGATE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "bounds.h"
#include "error.h"
#include "metrics.h"
#include "store.h"

struct settings;

/* The model a System One request names when it names none, and the one
 * a systemone backend sends when it has no model configured. */
#define SYSTEMONE_DEFAULT_MODEL	"jev-latest"

/* Bounds on what an upstream's answer may hold (README, "Faults and
 * hardening"): a usage count of a reply, and an evaluation's sums;
 * the nesting of its JSON. */
#define BACKEND_USAGE_MAX	INT64_C(1000000000)
#define BACKEND_JSON_DEPTH	32

struct backend_answer {
	size_t	 nquestions;
	double	**dist;		/* owned: dist[i] for the i-th question of
				 * the questions object, question_arity()
				 * entries each */
	double	*label_mass;	/* owned: label_mass[i] for the i-th
				 * question, the mass the openai kind
				 * found on its labels; NULL: none */
	int	 has_usage;
	int64_t	 input_tokens;
	int64_t	 output_tokens;
	char	 replica[512];	/* URL that answered; "" for built-ins */
};

/* One evaluation of a remote backend, from the kind's begin() to its
 * end(); the replica loop owns it. */
struct backend_call {
	const struct backend	*b;		/* borrowed */
	json_object		*state;		/* borrowed, validated */
	json_object		*questions;	/* borrowed, validated */
	long			 timeout_ms;	/* of one replica attempt */
	void			*priv;		/* the kind's, set by begin() */
};

/* What a failed attempt says of its replica: whether it counts toward
 * the failures in a row that rest the replica (backend.c). */
enum backend_verdict {
	BV_NONE,	/* nothing: the failure is ours (out of memory, a
			 * malformed URL) */
	BV_ANSWERED,	/* it answered in HTTP, what this evaluation cannot
			 * use: an answer that does not fit the questions
			 * (or too large), a 4xx but 429.  Its transport and
			 * server work: its failures in a row end */
	BV_FAILED	/* its transport or server failed: connection,
			 * timeout, 5xx, 529, 429, a redirect, not HTTP */
};

/* How asking one replica went, when it failed. */
struct backend_attempt {
	char	 reason[160];	/* short, one line, never a key or a body */
	enum backend_verdict verdict;
	long	 hint_ms;	/* the upstream's retry hint; -1: none */
	enum metrics_outcome outcome;	/* for the metrics; MO_OK is
					 * taken for MO_ERROR */
};

/* The options of its own that a kind accepts when a backend is added or
 * updated are the rows of its table (struct backend_option, bounds.h):
 * each is the request's member of its name, and the console's --NAME
 * ('_' written '-') for a BOPT_LONG one, --NAME-json FILE for a
 * BOPT_JSON one; the console and its usage are made from the tables.
 * A backend keeps them in struct backend's options and optval (model.h),
 * stored in one column. */

/* A kind of backend.  Every member but name may be NULL or 0 where the
 * kind has nothing to do. */
struct backend_kind {
	const char	*name;		/* as stored in backends.kind */
	int		 remote;	/* has 1..BACKEND_MAX_URLS replicas */

	/* Remote kinds, per evaluation: begin() sets c->priv up (0, or -1
	 * with e set; then nothing else is called), ask() asks the one
	 * replica whose base URL is given (borrowed, without trailing '/')
	 * for the distributions of c->questions: 0 and out filled (out
	 * holds nothing on entry), or -1 with at filled and out left
	 * empty; end() releases c->priv. */
	int	(*begin)(struct backend_call *c, struct error *e);
	int	(*ask)(struct backend_call *c, const char *replica,
		    struct backend_answer *out, struct backend_attempt *at);
	void	(*end)(struct backend_call *c);

	/* Built-in kinds: answers without a replica, as backend_evaluate()
	 * says. */
	int	(*answer)(const struct backend *b, json_object *state,
		    json_object *questions, struct backend_answer *out,
		    struct error *e);

	/* Releases the kind's per-process state (a curl handle).
	 * Idempotent. */
	void	(*cleanup)(void);

	/* ops, when a backend of this kind is added, after the checks
	 * every backend gets (backend_check_replicas() among them): the
	 * kind's own checks of the request in (borrowed) and of b, filled
	 * from it.  0, or -1 with e set (a validation error). */
	int	(*check_add)(const struct backend_kind *k, json_object *in,
		    const struct backend *b, struct error *e);
	/* ops, at schema publish: may b answer these questions (borrowed,
	 * validated)?  0, or -1 with e set (a validation error). */
	int	(*check_schema)(const struct backend *b,
		    json_object *questions, struct error *e);

	const struct backend_option *options;	/* NULL: none; at most
						 * BACKEND_OPTIONS_MAX rows */
	/* The option check_schema() compares a schema with, which ops
	 * names when an update would leave a published schema unfit; NULL
	 * none. */
	const char	*schema_option;
};

/* The kind named name (NULL: none such); the i-th kind in the registry's
 * order (NULL past the last), for listing them. */
const struct backend_kind *backend_kind_find(const char *name);
const struct backend_kind *backend_kind_at(size_t i);
/* The options table of the kind named kind (NULL: none, or no such
 * kind): what the programs give the store (store_set_kind_options()). */
const struct backend_option *backend_kind_options(const char *kind);

/* ops, when a backend of kind k is added with nurls replica URLs (not
 * yet read one by one): URLs refused for built-in kinds, 1 to
 * BACKEND_MAX_URLS required for remote ones.  0, or -1 with e set (a
 * validation error on "urls"). */
int	backend_check_replicas(const struct backend_kind *k, size_t nurls,
	    struct error *e);
/* ops, then, the check_add() of b's kind k (in and b borrowed).  0, or
 * -1 with e set. */
int	backend_check_add(const struct backend_kind *k, json_object *in,
	    const struct backend *b, struct error *e);

/* ops, when a backend of kind k is added (is_update 0) or updated (1):
 * reads into b (its options and optval) the options of k present in in
 * (borrowed), each checked against its row of k's table, over those b
 * has (none on add); a null one resets it to the default.  Refuses an
 * option of another kind.  Then backend_check_add() checks them.  0, or
 * -1 with e set (a validation error naming the option). */
int	backend_read_options(const struct backend_kind *k, json_object *in,
	    int is_update, struct backend *b, struct error *e);
/* Whether in (borrowed) names an option of any kind: 1 or 0. */
int	backend_options_given(json_object *in);
/* Adds to o every kind's options (one set of members for a table of
 * backends of any kind), each as b's value, or null for the default or
 * an option of another kind. */
void	backend_options_json(const struct backend *b, json_object *o);
/* The value of the BOPT_LONG option name of b: its own (optval), or the
 * kind's default; 0 for no such option of b's kind. */
long	backend_option_long(const struct backend *b, const char *name);
/* The value of the BOPT_JSON option name of b: a new object the caller
 * puts, or NULL when b has none set (or no such option). */
json_object	*backend_option_json(const struct backend *b,
		    const char *name);

/* ops, at schema publish: the check_schema() of b's kind.  0, or -1
 * with e set. */
int	backend_check_schema(const struct backend *b, json_object *questions,
	    struct error *e);

/* Asks b about state and questions (both borrowed, validated).  The
 * request's model is not sent: a remote backend sends its own configured
 * upstream model.  s may be NULL (unit tests): the settings' defaults
 * hold.  0, or -1 with e set: 503 backend_unavailable (Retry-After, and
 * e->unavailable saying why) when no replica answered in a form that
 * fits the questions. */
int	backend_evaluate(struct store *st, const struct settings *s,
	    const struct backend *b, json_object *state,
	    json_object *questions, struct backend_answer *out,
	    struct error *e);

/* backend_evaluate() for a challenger (README, "Challengers"), after
 * the client was answered: it never waits for room among b's calls in
 * flight (refused at once when the rule gives none), probes no resting
 * replica, and is not counted in the client's backend metrics (the
 * caller counts it with metrics_challenger()).  0, or -1 with e set and
 * *shed 1 when the call was not made for want of room or of a replica
 * out of its cool-down. */
int	backend_challenge(struct store *st, const struct settings *s,
	    const struct backend *b, json_object *state,
	    json_object *questions, struct backend_answer *out, int *shed,
	    struct error *e);

/* Sets a up for questions (borrowed, validated): nquestions rows of
 * question_arity() zeros, no usage, no replica.  a is overwritten (it
 * must hold nothing).  0, or -1 when memory ran out (a left empty). */
int	backend_answer_alloc(struct backend_answer *a, json_object *questions);
/* Releases what a owns and leaves it empty; safe on an empty answer. */
void	backend_answer_free(struct backend_answer *a);
/* Writes the reason an answer does not fit into why (whylen bytes;
 * control characters made '?', so that it stays one log line), for the
 * kinds' parsers.  A reason is made of our own words and numbers only
 * (a question or option name of the schema, a byte offset, a count),
 * never of the upstream's bytes: it reaches the client's 503 and the
 * log, and an upstream may reflect the key it was sent.  Returns -1. */
int	backend_reason(char *why, size_t whylen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Parses an upstream's body (len bytes, not necessarily NUL-terminated)
 * as one strict JSON value nested at most BACKEND_JSON_DEPTH deep with
 * only whitespace after it: a new object the caller puts, or NULL with
 * why set to a fixed reason ("the body is not valid JSON (at byte N)",
 * ...; JSON null: "not an object").  What json-c takes but would not
 * keep as sent is left to ju_lossy(), called without a path. */
json_object	*backend_parse_json(const char *body, size_t len, char *why,
		    size_t whylen);
/* The usage counts in_key and out_key of the object u (borrowed; NULL
 * or not an object: none) into *in and *out: 1 read, 0 none (a count
 * missing or not a number), or -1 with why set when a count is a
 * number but not an integer from 0 to BACKEND_USAGE_MAX: the answer
 * does not fit. */
int	backend_usage_read(json_object *u, const char *in_key,
	    const char *out_key, int64_t *in, int64_t *out, char *why,
	    size_t whylen);
/* Adds one reply's usage to a's sums: 0, or -1 (a unchanged) when a sum
 * would pass BACKEND_USAGE_MAX. */
int	backend_usage_add(struct backend_answer *a, int64_t in, int64_t out);

/* Releases the per-process state of every kind, at exit and before
 * curl_global_cleanup().  Idempotent. */
void	backend_cleanup(void);

#endif
