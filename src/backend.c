/* backend.c: the table of backend kinds and the dispatch on a backend's
 * kind; the built-in "lexical" kind.  The "systemone" kind lives in
 * backend_http.c, the answer's allocation in backend_answer.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_http.h"
#include "backend_lexical.h"
#include "question.h"

typedef int	(*evaluate_fn)(struct store *, const struct settings *,
		    const struct backend *, json_object *, json_object *,
		    struct backend_answer *, struct error *);

static int	lexical_evaluate(struct store *, const struct settings *,
		    const struct backend *, json_object *, json_object *,
		    struct backend_answer *, struct error *);

static const struct {
	const char	*name;
	evaluate_fn	 evaluate;
	void		(*cleanup)(void);	/* NULL: nothing kept */
} kinds[] = {
	{ "lexical",	lexical_evaluate,		NULL },
	{ "systemone",	backend_systemone_evaluate,	backend_systemone_cleanup },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

static size_t
kind_index(const char *kind)
{
	size_t	 i;

	for (i = 0; kind != NULL && i < NKINDS; i++)
		if (strcmp(kinds[i].name, kind) == 0)
			return i;
	return NKINDS;
}

int
backend_kind_known(const char *kind)
{
	return kind_index(kind) < NKINDS;
}

int
backend_evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, struct error *e)
{
	size_t	 k = kind_index(b->kind);

	memset(out, 0, sizeof(*out));
	if (k == NKINDS)
		return error_set(e, ERR_INTERNAL, NULL,
		    "backend '%s' has an unknown kind", b->name);
	return kinds[k].evaluate(st, s, b, state, questions, out, e);
}

void
backend_cleanup(void)
{
	size_t	 i;

	for (i = 0; i < NKINDS; i++)
		if (kinds[i].cleanup != NULL)
			kinds[i].cleanup();
}

/* The state as the lexical kind reads it: a string as is, an object or
 * an array as compact JSON text (borrowed from state). */
static const char *
state_text(json_object *state)
{
	if (state == NULL)
		return NULL;
	if (json_object_is_type(state, json_type_string))
		return json_object_get_string(state);
	return json_object_to_json_string_ext(state,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int
lexical_evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, struct error *e)
{
	const char	*text = state_text(state);
	long		 in = 0, outn = 0;
	size_t		 i = 0;

	if (backend_answer_alloc(out, questions) == -1) {
		error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
		e->retry_after_ms = 1000;
		return -1;
	}
	json_object_object_foreach(questions, name, q) {
		(void)name;
		lexical_distribution(text, q, out->dist[i], question_arity(q));
		i++;
	}
	lexical_usage(text, questions, &in, &outn);
	out->has_usage = 1;
	out->input_tokens = in;
	out->output_tokens = outn;
	return 0;
}
