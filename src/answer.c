/* answer.c: checks and renormalises a backend's distribution, applies the
 * temperature, and builds the typed answers of the public contract and
 * the stored untempered distribution (doc/design.md, sections 1.1 and
 * 8).  Pure: no I/O, no global
 * state; one row per question type in the builders[] table. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "answer.h"
#include "buf.h"
#include "json_util.h"
#include "question.h"

#define STACK_CAP	256	/* tempered values kept on the stack */
#define TEXTS_CAP	32	/* numbers' texts kept on the stack */

/* The values of a distribution and, where text is not NULL, each one's
 * text once made (ju_num_text()), for every other place it is written:
 * the confidence is one of the probabilities, and the stored
 * distribution the answer's when the temperature leaves it as it is. */
struct nums {
	const double	 *v;		/* borrowed */
	char		(*text)[JU_NUM_MAX];	/* borrowed; "" not made yet */
};

struct builder {
	/* Writes the type's members after "type" (each led by a comma);
	 * q tempered, n = arity: 1 if it abstains, 0 if not, -1. */
	int	 (*answer)(struct buf *b, json_object *criteria,
		    struct nums *q, size_t n, double threshold);
	/* Writes the stored distribution: 0 or -1. */
	int	 (*distribution)(struct buf *b, json_object *criteria,
		    struct nums *p, size_t n);
};

static int	 choice_answer(struct buf *, json_object *, struct nums *,
		    size_t, double);
static int	 score_answer(struct buf *, json_object *, struct nums *,
		    size_t, double);
static int	 noul_answer(struct buf *, json_object *, struct nums *,
		    size_t, double);
static int	 choice_distribution(struct buf *, json_object *,
		    struct nums *, size_t);
static int	 score_distribution(struct buf *, json_object *,
		    struct nums *, size_t);
static int	 noul_distribution(struct buf *, json_object *,
		    struct nums *, size_t);

static const struct builder builders[Q__MAX] = {
	[Q_CHOICE] = { choice_answer, choice_distribution },
	[Q_SCORE] = { score_answer, score_distribution },
	[Q_NOUL] = { noul_answer, noul_distribution },
};

/* The text is written as json-c would write the objects (JU_WIRE): the
 * members in the order given, no spaces.  Each writer returns 0, or -1
 * when b is full or memory ran out. */
static int
lit(struct buf *b, const char *s)
{
	return buf_adds(b, s) == BUF_OK ? 0 : -1;
}

static int
key(struct buf *b, const char *k)
{
	return ju_write_str(b, k, strlen(k)) == -1 || lit(b, ":") == -1 ?
	    -1 : 0;
}

/* Value i of m as text. */
static int
num(struct buf *b, struct nums *m, size_t i)
{
	if (m->text == NULL)
		return ju_write_num(b, m->v[i]);
	if (m->text[i][0] == '\0')
		ju_num_text(m->v[i], m->text[i]);
	return lit(b, m->text[i]);
}

/* ,"confidence":q[best],"x_abstain":bool; 1 if it abstains, 0, or -1. */
static int
confidence(struct buf *b, struct nums *q, size_t best, double threshold)
{
	int abstain = q->v[best] < threshold;

	if (lit(b, ",\"confidence\":") == -1 || num(b, q, best) == -1 ||
	    lit(b, abstain ? ",\"x_abstain\":true}" :
	    ",\"x_abstain\":false}") == -1)
		return -1;
	return abstain;
}

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
choice_answer(struct buf *b, json_object *c, struct nums *q, size_t n,
    double threshold)
{
	const char	*chosen = NULL;
	size_t		 i = 0, best;
	int		 rc;

	best = argmax(q->v, n);
	json_object_object_foreach(c, k, v) {
		(void)v;
		if (i++ == best)
			chosen = k;
	}
	if (chosen == NULL)
		return -1;
	rc = lit(b, ",\"choice\":") == -1 ||
	    ju_write_str(b, chosen, strlen(chosen)) == -1 ||
	    lit(b, ",\"probabilities\":{") == -1 ? -1 : 0;
	i = 0;
	json_object_object_foreach(c, k2, v2) {
		(void)v2;
		if (rc == 0 && ((i > 0 && lit(b, ",") == -1) ||
		    key(b, k2) == -1 || num(b, q, i) == -1))
			rc = -1;
		i++;
	}
	if (rc == -1 || lit(b, "}") == -1)
		return -1;
	return confidence(b, q, best, threshold);
}

static int
choice_distribution(struct buf *b, json_object *c, struct nums *p,
    size_t n)
{
	size_t	 i = 0;
	int	 rc = lit(b, "{");

	json_object_object_foreach(c, k, v) {
		(void)v;
		if (rc == 0 && i < n && ((i > 0 && lit(b, ",") == -1) ||
		    key(b, k) == -1 || num(b, p, i) == -1))
			rc = -1;
		i++;
	}
	return rc == -1 ? -1 : lit(b, "}");
}

/* score */

/* "i": as a key, the level's index in decimal. */
static int
index_key(struct buf *b, size_t i)
{
	char	 d[24], *p = d + sizeof(d);

	*--p = '\0';
	*--p = ':';
	*--p = '"';
	do
		*--p = (char)('0' + i % 10);
	while ((i /= 10) > 0);
	*--p = '"';
	return lit(b, p);
}

/* The level's label as json-c writes a member's value. */
static int
label(struct buf *b, json_object *l)
{
	const char *s = json_object_get_string(l);

	return ju_write_str(b, s != NULL ? s : "", s != NULL ?
	    (size_t)json_object_get_string_len(l) : 0);
}

static int
score_answer(struct buf *b, json_object *c, struct nums *q, size_t n,
    double threshold)
{
	double		 score = 0;
	size_t		 i, best;
	int		 rc;

	best = argmax(q->v, n);
	for (i = 0; i < n; i++)
		score += (double)i * q->v[i];
	rc = lit(b, ",\"score\":") == -1 || ju_write_num(b, score) == -1 ||
	    lit(b, ",\"legend\":{") == -1 ? -1 : 0;
	for (i = 0; rc == 0 && i < n; i++) {
		if ((i > 0 && lit(b, ",") == -1) || index_key(b, i) == -1 ||
		    label(b, json_object_array_get_idx(c, i)) == -1)
			rc = -1;
	}
	if (rc == -1 || lit(b, "},\"probabilities\":{") == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((i > 0 && lit(b, ",") == -1) || index_key(b, i) == -1 ||
		    num(b, q, i) == -1)
			return -1;
	}
	if (lit(b, "}") == -1)
		return -1;
	return confidence(b, q, best, threshold);
}

static int
score_distribution(struct buf *b, json_object *c, struct nums *p,
    size_t n)
{
	size_t	 i;

	(void)c;
	if (lit(b, "[") == -1)
		return -1;
	for (i = 0; i < n; i++)
		if ((i > 0 && lit(b, ",") == -1) || num(b, p, i) == -1)
			return -1;
	return lit(b, "]");
}

/* noul: q[0] = P(true), q[1] = P(false) */

static int
noul_answer(struct buf *b, json_object *c, struct nums *q, size_t n,
    double threshold)
{
	double	 t = q->v[0], conf;
	int	 abstain;

	(void)c;
	(void)n;
	conf = t > 1 - t ? t : 1 - t;
	abstain = conf < threshold;
	if (lit(b, ",\"noul\":") == -1 || num(b, q, 0) == -1 ||
	    lit(b, abstain ? ",\"x_abstain\":true}" :
	    ",\"x_abstain\":false}") == -1)
		return -1;
	return abstain;
}

static int
noul_distribution(struct buf *b, json_object *c, struct nums *p, size_t n)
{
	(void)c;
	(void)n;
	return num(b, p, 0);
}

/* Public interface */

static json_object *
criteria_of(json_object *question)
{
	json_object	*c;

	return json_object_object_get_ex(question, "criteria", &c) ? c : NULL;
}

/* The answer to question (its type t, n = its arity, both checked) and,
 * if both, a NUL, the stored distribution and a NUL: as answer_write(). */
static int
write_answer(struct buf *b, int both, json_object *question,
    enum qtype t, const double *p, size_t n, double T, double threshold)
{
	double		 stackq[STACK_CAP], *q;
	char		 stackt[TEXTS_CAP][JU_NUM_MAX];
	struct nums	 qn, pn = { p, NULL };
	json_object	*c = criteria_of(question);
	size_t		 i;
	int		 rc;

	/* Sized by the question's options: checked. */
	q = n <= STACK_CAP ? stackq : malloc(n * sizeof(*q));
	if (q == NULL)
		return -1;
	answer_temper(p, n, T, q);
	qn.v = q;
	qn.text = n <= TEXTS_CAP ? stackt : NULL;
	for (i = 0; qn.text != NULL && i < n; i++)
		stackt[i][0] = '\0';
	rc = lit(b, "{\"type\":") == -1 || ju_write_str(b,
	    question_type_name(t), strlen(question_type_name(t))) == -1 ? -1 :
	    builders[t].answer(b, c, &qn, n, threshold);
	/* untempered: the same numbers, whose texts are made */
	if (rc != -1 && both && (buf_add(b, "", 1) != BUF_OK ||
	    builders[t].distribution(b, c, memcmp(q, p, n * sizeof(*q)) ==
	    0 ? &qn : &pn, n) == -1 || buf_add(b, "", 1) != BUF_OK))
		rc = -1;
	if (q != stackq)
		free(q);
	return rc;
}

/* write_answer() of a question whose shape p fits: -1 otherwise. */
static int
write_checked(struct buf *b, int both, json_object *question,
    const double *p, size_t n, double T, double threshold)
{
	enum qtype	 t;
	size_t		 arity;

	t = question_shape(question, &arity);
	if (t == Q__MAX || n == 0 || p == NULL || n != arity)
		return -1;
	return write_answer(b, both, question, t, p, n, T, threshold);
}

int
answer_write(struct buf *b, json_object *question, const double *p,
    size_t n, double T, double threshold)
{
	return write_checked(b, 0, question, p, n, T, threshold);
}

int
answer_write_both(struct buf *b, json_object *question, const double *p,
    size_t n, double T, double threshold)
{
	return write_checked(b, 1, question, p, n, T, threshold);
}

int
answer_distribution_write(struct buf *b, json_object *question,
    const double *p, size_t n)
{
	struct nums	 pn = { p, NULL };
	enum qtype	 t;
	size_t		 arity;

	t = question_shape(question, &arity);
	if (t == Q__MAX || n == 0 || p == NULL || n != arity)
		return -1;
	return builders[t].distribution(b, criteria_of(question), &pn, n);
}

/* The text of a writer as a json-c value: NULL if it failed. */
static json_object *
parsed(struct buf *b, int rc)
{
	json_object *o = rc >= 0 && b->p != NULL ? ju_parse(b->p) : NULL;

	buf_free(b);
	return o;
}

json_object *
answer_build(json_object *question, const double *p, size_t n, double T,
    double threshold)
{
	struct buf	 b;

	buf_init(&b, ANSWER_TEXT_MAX);
	return parsed(&b, answer_write(&b, question, p, n, T, threshold));
}

json_object *
answer_distribution_json(json_object *question, const double *p, size_t n)
{
	struct buf	 b;

	buf_init(&b, ANSWER_TEXT_MAX);
	return parsed(&b, answer_distribution_write(&b, question, p, n));
}
