/* answer.h: the answer math (doc/design.md, section 8), pure.
 *
 * A backend gives, per question, a distribution p over its outcomes in the
 * order of question.h (choice: option keys in iteration order; score:
 * level index; noul: index 0 = true, 1 = false).  These functions check and
 * renormalise it, apply the schema version's temperature, and build the
 * answer object and the stored form of the untempered distribution. */
#ifndef EVALGATE_ANSWER_H
#define EVALGATE_ANSWER_H

#include <stddef.h>

#include <json-c/json.h>

/* Checks p[0..n-1] (n > 0, every value finite and >= 0, some value > 0)
 * and scales it in place to sum to 1.  0, or -1 leaving p untouched. */
int		 answer_normalise(double *p, size_t n);

/* Tempers a normalised p: q_i = p_i^(1/T) / sum_j p_j^(1/T), computed
 * relative to the largest p_i so that no T underflows to 0/0; zeros stay
 * zero.  T must be > 0 (a T that is not, or NaN, is taken as 1).  q may
 * be p. */
void		 answer_temper(const double *p, size_t n, double T, double *q);

/* The answer object of the public contract (doc/design.md, section
 * 1.1) for a validated question from its
 * untempered normalised distribution p (n = question_arity), tempered
 * with T:
 *   choice {"type","choice","probabilities":{key:q},"confidence","x_abstain"}
 *   score  {"type","score","legend":{"0":label},"probabilities":{"0":q},
 *           "confidence","x_abstain"}
 *   noul   {"type","noul","x_abstain"}
 * confidence is max q (noul: max(q, 1 - q), not returned); x_abstain is
 * confidence < threshold; ties go to the first index.  Numbers are finite
 * doubles serialised in their shortest round-trip form (0.1, not
 * 0.10000000000000001).  Returns a new object the caller owns, or NULL if
 * n does not match the question or, for many options, memory ran out. */
json_object	*answer_build(json_object *question, const double *p, size_t n,
		    double T, double threshold);

/* The untempered distribution as a decision stores it: choice {key: p},
 * score [p0, ...], noul p_true (a double).  New object the caller owns,
 * or NULL if n does not match the question. */
json_object	*answer_distribution_json(json_object *question,
		    const double *p, size_t n);

/* The same two as JSON text, appended to b (the caller's), byte for byte
 * what json-c writes for the objects above with JU_WIRE (json_util.h),
 * without making them: the handler writes each answer once and keeps
 * the text.  answer_build() and answer_distribution_json() are these,
 * parsed.  answer_write() returns 1 if the answer abstains (x_abstain
 * true), 0 if not; each returns -1 if n does not match the question, b
 * is full or memory ran out. */
#define ANSWER_TEXT_MAX	(64 * 1024 * 1024)	/* a cap for b */
struct buf;
int		 answer_write(struct buf *b, json_object *question,
		    const double *p, size_t n, double T, double threshold);
int		 answer_distribution_write(struct buf *b,
		    json_object *question, const double *p, size_t n);
/* answer_write(), then a NUL, answer_distribution_write() and a NUL, as
 * the handler keeps them: each number turned into text once, where the
 * confidence is one of the probabilities and where the temperature
 * leaves the stored distribution the answer's. */
int		 answer_write_both(struct buf *b, json_object *question,
		    const double *p, size_t n, double T, double threshold);

#endif
