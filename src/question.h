/* question.h: typed questions of a request (doc/design.md, section 5).
 *
 * Validation of a questions map and of the state, the structural
 * fingerprint that matches inline questions to published schema versions,
 * and the check of an observed outcome value against its question.
 * Pure: no I/O, no global state.  Every function borrows its json_object
 * arguments; none keeps or releases a reference.
 *
 * Order convention shared with answer.c and the backends: for a choice,
 * index i is the i-th option key in the criteria object's iteration order
 * (json-c keeps insertion order); for a score, the level index; for a noul,
 * two outcomes, index 0 = true, index 1 = false. */
#ifndef EVALGATE_QUESTION_H
#define EVALGATE_QUESTION_H

#include <stddef.h>

#include <json-c/json.h>

#include "buf.h"
#include "error.h"

#define QUESTION_MAX_OPTIONS	255
#define QUESTION_MIN_LEVELS	2
#define QUESTION_MAX_LEVELS	10
/* Hex digits of a structural fingerprint (SHA-256). */
#define QUESTION_FINGERPRINT_LEN 64

enum qtype {
	Q_CHOICE,
	Q_SCORE,
	Q_NOUL,
	Q__MAX
};

/* Type of an already validated question object; Q__MAX if it has none. */
enum qtype	 question_type(json_object *question);
/* "choice", "score", "noul"; NULL for Q__MAX or out of range.  Static. */
const char	*question_type_name(enum qtype);

/* Validates a questions map (doc/design.md, section 5.1): 1..max_questions
 * questions, names any non-empty string, each an object with a known type
 * and criteria of its shape; instructions and descriptions may be a string,
 * an object, an array or null (numbers and booleans are refused); unknown
 * members are ignored.  0, or -1 with ERR_VALIDATION and details.field a
 * path such as "questions.mood.criteria" or "questions.level.criteria[3]". */
int		 question_validate(json_object *questions, int max_questions,
		    struct error *e);

/* Validates the state: a string, an object or an array (anything else,
 * including a missing state, is refused on field "state") of at most
 * max_chars characters, counted as Unicode code points of the string or of
 * the object's or array's compact JSON text.  0 or -1 (ERR_VALIDATION). */
int		 question_validate_state(json_object *state, long max_chars,
		    struct error *e);

/* Number of outcomes of a validated question: options of a choice, levels
 * of a score, 2 for a noul.  0 for an invalid question. */
size_t		 question_arity(json_object *question);
/* Both at once, the type looked up once: the type (Q__MAX for an
 * invalid question, *arity 0 then) and *arity. */
enum qtype	 question_shape(json_object *question, size_t *arity);

/* Writes into hex the lowercase hex SHA-256 (64 characters and a NUL) of
 * the canonical encoding of a validated questions map: names (sorted
 * bytewise), each type, choice option keys (sorted bytewise), score levels
 * (in order), nothing for noul.  Texts never enter it.  See question.c for
 * the exact encoding. */
void		 question_fingerprint(json_object *questions,
		    char hex[QUESTION_FINGERPRINT_LEN + 1]);

/* The encoding last hashed and its fingerprint, kept by the caller (one
 * per process, zeroed before first use) so that questions whose
 * encoding is the same bytes again are not hashed again. */
#define QUESTION_KEPT_MAX	(64 * 1024)	/* bytes of a kept encoding */
struct question_kept {
	struct buf	 last;		/* owned: the encoding hashed last */
	struct buf	 next;		/* owned: room for the next */
	char		 hex[QUESTION_FINGERPRINT_LEN + 1];	/* of last */
};
/* question_fingerprint(), through k: the encoding is made and compared
 * with the one last hashed; only a different one is hashed (and kept).
 * An encoding past QUESTION_KEPT_MAX, or memory run out, is hashed as
 * question_fingerprint() does, and k stays as it was. */
void		 question_fingerprint_kept(json_object *questions,
		    char hex[QUESTION_FINGERPRINT_LEN + 1],
		    struct question_kept *k);
/* Releases what k holds and forgets the fingerprint kept. */
void		 question_kept_free(struct question_kept *k);

/* Checks an observed outcome value against a validated question
 * (doc/design.md, section 14): choice, one of its option keys (a string); noul, a JSON boolean;
 * score, a JSON integer from 0 to levels - 1 (1.0 is refused).  0, or -1
 * with ERR_VALIDATION on the given field. */
int		 question_check_outcome(json_object *question,
		    json_object *value, const char *field, struct error *e);

#endif
