/* backend.h: asking a backend for probability distributions.
 *
 * One call per evaluation.  The kinds (lexical, systemone) are rows of a
 * table in backend.c; each fills one distribution per question, aligned
 * as question.h says (choice: option order of the criteria object;
 * score: level index; noul: index 0 true, 1 false), not yet normalised
 * or tempered.  No database transaction may be open during the call. */
#ifndef EVALGATE_BACKEND_H
#define EVALGATE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "error.h"
#include "store.h"

struct settings;

struct backend_answer {
	size_t	 nquestions;
	double	**dist;		/* owned: dist[i] for the i-th question of
				 * the questions object, question_arity()
				 * entries each */
	int	 has_usage;
	int64_t	 input_tokens;
	int64_t	 output_tokens;
	char	 replica[512];	/* URL that answered; "" for built-ins */
};

/* Known kinds, for validation when a backend is added: 1 or 0. */
int	backend_kind_known(const char *kind);

/* Asks b about state and questions (both borrowed, validated).  The
 * request's model is not sent: a systemone backend sends its own
 * configured upstream model.  0, or -1 with e set: 503
 * backend_unavailable (Retry-After) when no replica answered in a form
 * that fits the questions. */
int	backend_evaluate(struct store *st, const struct settings *s,
	    const struct backend *b, json_object *state,
	    json_object *questions, struct backend_answer *out,
	    struct error *e);

/* Sets a up for questions (borrowed, validated): nquestions rows of
 * question_arity() zeros, no usage, no replica.  a is overwritten (it
 * must hold nothing).  0, or -1 when memory ran out (a left empty). */
int	backend_answer_alloc(struct backend_answer *a, json_object *questions);
/* Releases what a owns and leaves it empty; safe on an empty answer. */
void	backend_answer_free(struct backend_answer *a);

/* Releases the per-process state of the kinds (the systemone curl
 * handle), at exit and before curl_global_cleanup().  Idempotent. */
void	backend_cleanup(void);

#endif
