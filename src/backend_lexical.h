/* backend_lexical.h: the built-in offline backend ("lexical" kind).
 *
 * A deterministic baseline, documented as such: it answers by word overlap
 * between the state and the texts of each outcome, for trying the gateway
 * without an upstream and for tests.  It knows nothing about meaning.
 * Pure: no I/O, no global state; every argument is borrowed. */
#ifndef EVALGATE_BACKEND_LEXICAL_H
#define EVALGATE_BACKEND_LEXICAL_H

#include <stddef.h>

#include <json-c/json.h>

#include "backend.h"

/* The kind: built in, no replicas; answers with the functions below,
 * the state read as lexical_distribution() says, and reports usage. */
extern const struct backend_kind backend_kind_lexical;

/* Fills p[0..n-1] (n = question_arity, order of question.h) with a
 * normalised distribution, every value > 0, for one validated question
 * given the state text (a string state as is, an object or array state as
 * its compact JSON text; NULL is taken as empty).  If n does not match the
 * question, p is uniform.  0, or -1 when the memory for the state's
 * words could not be had (p is then uniform). */
int	 lexical_distribution(const char *state_text, json_object *question,
	    double *p, size_t n);

/* Number of words of text (the same words as lexical_distribution, stop
 * words included); 0 for NULL.  Saturates at INT_MAX. */
int	 lexical_count_words(const char *text);

/* Usage for the response: *input_tokens, a rough word count of the state
 * and of the questions' names and texts (instructions, option keys,
 * descriptions, level labels); *output_tokens, the number of questions. */
void	 lexical_usage(const char *state_text, json_object *questions,
	    long *input_tokens, long *output_tokens);

#endif
