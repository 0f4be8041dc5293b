/* answer.c: checks and renormalises a backend's distribution, applies the
 * temperature, and builds the typed answers of the public contract and
 * the stored untempered distribution (doc/design.md, sections 1.1 and
 * 8).  Pure: no I/O, no global
 * state; one row per question type in the builders[] table. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "answer.h"
#include "json_util.h"
#include "question.h"

#define STACK_CAP	256	/* tempered values kept on the stack */

struct builder {
	/* Adds the type's members after "type"; q tempered, n = arity. */
	int		 (*answer)(json_object *o, json_object *criteria,
			    const double *q, size_t n, double threshold);
	json_object	*(*distribution)(json_object *criteria,
			    const double *p, size_t n);
};

static int	 choice_answer(json_object *, json_object *, const double *,
		    size_t, double);
static int	 score_answer(json_object *, json_object *, const double *,
		    size_t, double);
static int	 noul_answer(json_object *, json_object *, const double *,
		    size_t, double);
static json_object *choice_distribution(json_object *, const double *,
		    size_t);
static json_object *score_distribution(json_object *, const double *,
		    size_t);
static json_object *noul_distribution(json_object *, const double *, size_t);

static const struct builder builders[Q__MAX] = {
	[Q_CHOICE] = { choice_answer, choice_distribution },
	[Q_SCORE] = { score_answer, score_distribution },
	[Q_NOUL] = { noul_answer, noul_distribution },
};

static size_t
argmax(const double *q, size_t n)
{
	size_t	 i, best = 0;

	for (i = 1; i < n; i++)
		if (q[i] > q[best])
			best = i;
	return best;
}

int
answer_normalise(double *p, size_t n)
{
	double	 max = 0, sum = 0, scale;
	size_t	 i;

	if (p == NULL || n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isfinite(p[i]) || p[i] < 0)
			return -1;
		if (p[i] > max)
			max = p[i];
	}
	if (max == 0)
		return -1;
	for (i = 0; i < n; i++)
		sum += p[i];
	if (isfinite(sum)) {
		for (i = 0; i < n; i++)
			p[i] = p[i] == 0 ? 0 : p[i] / sum;
		return 0;
	}
	/* Huge values: the sum overflowed; scale by the largest first. */
	sum = 0;
	for (i = 0; i < n; i++)
		sum += p[i] / max;
	scale = 1 / sum;
	for (i = 0; i < n; i++)
		p[i] = p[i] == 0 ? 0 : p[i] / max * scale;
	return 0;
}

void
answer_temper(const double *p, size_t n, double T, double *q)
{
	double	 a, max = 0, sum = 0;
	size_t	 i;

	for (i = 0; i < n; i++)
		if (p[i] > max)
			max = p[i];
	if (!(T > 0) || T == 1 || !(max > 0)) {
		if (q != p)
			memmove(q, p, n * sizeof(*q));
		return;
	}
	/* (p_i / max)^(1/T): the largest weight is exactly 1, so the sum is
	 * at least 1 whatever T; a tiny T sends the others to 0, a huge one
	 * to 1 (uniform over the non-zero p_i). */
	a = 1 / T;
	for (i = 0; i < n; i++) {
		q[i] = p[i] > 0 ? pow(p[i] / max, a) : 0;
		sum += q[i];
	}
	for (i = 0; i < n; i++)
		q[i] /= sum;
}

/* choice */

static int
choice_answer(json_object *o, json_object *c, const double *q, size_t n,
    double threshold)
{
	json_object	*probs = ju_obj();
	const char	*chosen = NULL;
	size_t		 i = 0, best;

	best = argmax(q, n);
	json_object_object_foreach(c, k, v) {
		(void)v;
		if (i == best)
			chosen = k;
		ju_add(probs, k, ju_num(q[i]));
		i++;
	}
	if (chosen == NULL) {
		json_object_put(probs);
		return -1;
	}
	ju_add(o, "choice", ju_string(chosen));
	ju_add(o, "probabilities", probs);
	ju_add(o, "confidence", ju_num(q[best]));
	ju_add(o, "x_abstain", ju_bool(q[best] < threshold));
	return 0;
}

static json_object *
choice_distribution(json_object *c, const double *p, size_t n)
{
	json_object	*o = ju_obj();
	size_t		 i = 0;

	json_object_object_foreach(c, k, v) {
		(void)v;
		if (i < n)
			ju_add(o, k, ju_num(p[i]));
		i++;
	}
	return o;
}

/* score */

static int
score_answer(json_object *o, json_object *c, const double *q, size_t n,
    double threshold)
{
	json_object	*legend = ju_obj(), *probs = ju_obj(), *label;
	char		 idx[24];
	double		 score = 0;
	size_t		 i, best;

	best = argmax(q, n);
	for (i = 0; i < n; i++)
		score += (double)i * q[i];
	for (i = 0; i < n; i++) {
		snprintf(idx, sizeof(idx), "%zu", i);
		label = json_object_array_get_idx(c, i);
		ju_add(legend, idx, ju_string_len(json_object_get_string(label),
		    (size_t)json_object_get_string_len(label)));
		ju_add(probs, idx, ju_num(q[i]));
	}
	ju_add(o, "score", ju_num(score));
	ju_add(o, "legend", legend);
	ju_add(o, "probabilities", probs);
	ju_add(o, "confidence", ju_num(q[best]));
	ju_add(o, "x_abstain", ju_bool(q[best] < threshold));
	return 0;
}

static json_object *
score_distribution(json_object *c, const double *p, size_t n)
{
	json_object	*a = ju_arr();
	size_t		 i;

	(void)c;
	for (i = 0; i < n; i++)
		ju_push(a, ju_num(p[i]));
	return a;
}

/* noul: q[0] = P(true), q[1] = P(false) */

static int
noul_answer(json_object *o, json_object *c, const double *q, size_t n,
    double threshold)
{
	double	 t = q[0], conf;

	(void)c;
	(void)n;
	conf = t > 1 - t ? t : 1 - t;
	ju_add(o, "noul", ju_num(t));
	ju_add(o, "x_abstain", ju_bool(conf < threshold));
	return 0;
}

static json_object *
noul_distribution(json_object *c, const double *p, size_t n)
{
	(void)c;
	(void)n;
	return ju_num(p[0]);
}

/* Public interface */

static json_object *
criteria_of(json_object *question)
{
	json_object	*c;

	return json_object_object_get_ex(question, "criteria", &c) ? c : NULL;
}

json_object *
answer_build(json_object *question, const double *p, size_t n, double T,
    double threshold)
{
	json_object	*o;
	double		 stackq[STACK_CAP], *q;
	enum qtype	 t;

	t = question_type(question);
	if (t == Q__MAX || n == 0 || p == NULL || n != question_arity(question))
		return NULL;
	/* Sized by the question's options: checked. */
	q = n <= STACK_CAP ? stackq : malloc(n * sizeof(*q));
	if (q == NULL)
		return NULL;
	answer_temper(p, n, T, q);
	o = ju_obj();
	ju_add(o, "type", ju_string(question_type_name(t)));
	if (builders[t].answer(o, criteria_of(question), q, n,
	    threshold) == -1) {
		json_object_put(o);
		o = NULL;
	}
	if (q != stackq)
		free(q);
	return o;
}

json_object *
answer_distribution_json(json_object *question, const double *p, size_t n)
{
	enum qtype	 t;

	t = question_type(question);
	if (t == Q__MAX || n == 0 || p == NULL || n != question_arity(question))
		return NULL;
	return builders[t].distribution(criteria_of(question), p, n);
}
