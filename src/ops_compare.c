/* ops_compare.c: the comparison of a schema version's backend with its
 * challengers and the promotion of one (doc/design.md, section 15.1;
 * README, "Comparing models"), shared by `evalgate-admin compare`, GET
 * /admin/v1/schemas/{id}/compare and POST /admin/v1/schemas/{id}/promote
 * through ops_run().
 *
 * Reads, in one streamed statement (store_compare_each()), each answered
 * question of the version that has an outcome, once per challenger that
 * answered the same decision; keeps, per question and challenger, both
 * arms' distributions, the outcome, latencies and tokens; and reports
 * each pair with compare.c through compare_render.c.  A promotion fits
 * the challenger's temperature over every reported question (as
 * calibration's top-level fit pools them) and publishes the version
 * again with the challenger as its backend, through ops_republish()
 * (OP_SCHEMA_PUBLISH: its validation, transaction and audit row).  A
 * comparison alone changes nothing. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "calibration.h"
#include "calibration_render.h"
#include "clock.h"
#include "compare.h"
#include "compare_render.h"
#include "json_util.h"
#include "ops_internal.h"
#include "store.h"
#include "xalloc.h"

#define QUESTION_MAX_LEN 4096
#define MAX_VALUES	(16 * 1024 * 1024)	/* both arms' probabilities */
#define MAX_PAIRS	4096	/* questions x challengers read */
#define T_DIGITS	1e4	/* a fitted temperature's precision */
#define NO_VALUES	SIZE_MAX	/* item.off[CMP_CHALLENGER]: unusable */

/* One decision's answered question, until the report: each arm's
 * distribution is doubles off[arm] .. off[arm] + n - 1 of its pair's vb
 * (which may still move). */
struct item {
	size_t	 off[CMP_ARMS];
	size_t	 n, y;
	double	 ms[CMP_ARMS], tokens[CMP_ARMS];
};

/* What was read for one question and one challenger. */
struct pair {
	size_t		 q;		/* index into load.q */
	char		*challenger;	/* owned */
	struct buf	 ib;		/* owns the items */
	struct buf	 vb;		/* owns the values */
	size_t		 n;
};

/* One question of the version. */
struct qdef {
	const char	*name;		/* borrowed: the version's map */
	enum qtype	 type;
};

struct load {
	struct qdef	*q;		/* owned */
	size_t		 nq, hint;
	struct pair	*pairs;		/* owned */
	size_t		 npairs, last;	/* last: the last row's pair */
	size_t		 values;	/* total, for the cap */
	/* The last row's challenger answers, parsed once for the rows of
	 * one decision and challenger. */
	char		 id[UUID7_LEN + 1];
	char		*ch;		/* owned */
	json_object	*answers;	/* owned */
};

struct request {
	const char	*slug;
	int64_t		 version;	/* 0: the latest */
	const char	*question;	/* NULL: every one */
	int64_t		 since_ms;
	const char	*promote;	/* NULL: none */
};

/* n zeroed objects of size bytes each (xalloc.c: allocation cannot
 * fail); n is bounded by the caps above. */
static void *
zeroed(size_t n, size_t size)
{
	void *p = xmalloc(n * size);

	memset(p, 0, n * size);
	return p;
}

static int
no_memory(struct error *e)
{
	return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
}

static int
too_many(struct error *e)
{
	return error_set(e, ERR_VALIDATION, "since", "more answered "
	    "questions with outcomes and challengers' answers than a "
	    "comparison holds (%d per question and challenger): narrow it "
	    "with since or question", CMP_MAX_SAMPLES);
}

static void
load_free(struct load *l)
{
	size_t i;

	for (i = 0; i < l->npairs; i++) {
		free(l->pairs[i].challenger);
		buf_free(&l->pairs[i].ib);
		buf_free(&l->pairs[i].vb);
	}
	free(l->pairs);
	free(l->q);
	free(l->ch);
	json_object_put(l->answers);
}

/* The version's questions (or the one asked for), in order. */
static int
load_init(struct load *l, json_object *questions, const char *only,
    struct error *e)
{
	memset(l, 0, sizeof(*l));
	l->pairs = zeroed(MAX_PAIRS, sizeof(*l->pairs));
	l->q = zeroed(json_object_object_length(questions) + 1,
	    sizeof(*l->q));
	json_object_object_foreach(questions, name, qobj) {
		if ((only != NULL && strcmp(only, name) != 0) ||
		    question_type(qobj) == Q__MAX)	/* never published */
			continue;
		l->q[l->nq].name = name;
		l->q[l->nq++].type = question_type(qobj);
	}
	if (only != NULL && l->nq == 0)
		return error_set(e, ERR_VALIDATION, "question",
		    "the version has no question named '%s'", only);
	return 0;
}

static struct qdef *
question_of(struct load *l, const char *name)
{
	size_t i, j;

	for (i = 0; i < l->nq; i++) {
		j = (l->hint + i) % l->nq;
		if (strcmp(l->q[j].name, name) == 0) {
			l->hint = j + 1;
			return &l->q[j];
		}
	}
	return NULL;
}

/* The pair of question q and challenger ch, made if new: NULL past
 * MAX_PAIRS, with e set. */
static struct pair *
pair_of(struct load *l, size_t q, const char *ch, struct error *e)
{
	struct pair	*p;
	size_t		 i, j;

	for (i = 0; i < l->npairs; i++) {
		j = (l->last + i) % l->npairs;
		if (l->pairs[j].q == q &&
		    strcmp(l->pairs[j].challenger, ch) == 0) {
			l->last = j;
			return &l->pairs[j];
		}
	}
	if (l->npairs == MAX_PAIRS) {
		error_set(e, ERR_VALIDATION, "question", "more than %d "
		    "questions and challengers to compare: narrow it with "
		    "question", MAX_PAIRS);
		return NULL;
	}
	p = &l->pairs[l->last = l->npairs++];
	p->q = q;
	p->challenger = xstrdup(ch);
	buf_init(&p->ib, CMP_MAX_SAMPLES * sizeof(struct item));
	buf_init(&p->vb, MAX_VALUES * sizeof(double));
	return p;
}

/* The challenger's answers of row, parsed once per decision and
 * challenger: borrowed from l, NULL when they are not an object. */
static json_object *
answers_of(struct load *l, const struct compare_row *row)
{
	if (l->ch == NULL || strcmp(l->id, row->decision_id) != 0 ||
	    strcmp(l->ch, row->challenger) != 0) {
		json_object_put(l->answers);
		free(l->ch);
		snprintf(l->id, sizeof(l->id), "%s", row->decision_id);
		l->ch = xstrdup(row->challenger);
		l->answers = ju_parse(row->answers);
	}
	return json_object_is_type(l->answers, json_type_object) ?
	    l->answers : NULL;
}

/* Whether two choice distributions name the same classes in the same
 * order (the order the values are read in): either type else. */
static int
same_classes(enum qtype type, json_object *a, json_object *b)
{
	struct json_object_iterator	ia, ea, ib, eb;

	if (type != Q_CHOICE)
		return 1;
	ia = json_object_iter_begin(a);
	ea = json_object_iter_end(a);
	ib = json_object_iter_begin(b);
	eb = json_object_iter_end(b);
	for (; !json_object_iter_equal(&ia, &ea) &&
	    !json_object_iter_equal(&ib, &eb); json_object_iter_next(&ia),
	    json_object_iter_next(&ib))
		if (strcmp(json_object_iter_peek_name(&ia),
		    json_object_iter_peek_name(&ib)) != 0)
			return 0;
	return json_object_iter_equal(&ia, &ea) &&
	    json_object_iter_equal(&ib, &eb);
}

/* A count the store gives (-1: unknown) as compare.h takes it. */
static double
known(int64_t v)
{
	return v < 0 ? NAN : (double)v;
}

/* Appends n values p to pr's values: their offset, or NO_VALUES with e
 * set. */
static size_t
put_values(struct load *l, struct pair *pr, const double *p, size_t n,
    struct error *e)
{
	double		*v;
	enum buf_rc	 rc;

	v = l->values + n > MAX_VALUES ? NULL : buf_extend(&pr->vb,
	    n * sizeof(*v), &rc);
	if (v == NULL) {
		if (l->values + n > MAX_VALUES)
			rc = BUF_TOO_LARGE;
		if (rc == BUF_TOO_LARGE)
			too_many(e);
		else
			no_memory(e);
		return NO_VALUES;
	}
	memcpy(v, p, n * sizeof(*p));
	l->values += n;
	return (size_t)(v - (double *)(void *)pr->vb.p);
}

static int
add_row(const struct compare_row *row, void *arg, struct error *e)
{
	struct load	*l = arg;
	struct qdef	*q;
	struct pair	*pr;
	struct item	*it;
	json_object	*dist, *outcome, *answers, *cd = NULL;
	double		 p[CAL_MAX_CLASSES], pc[CAL_MAX_CLASSES];
	size_t		 n = 0, y = 0, cn = 0, cy = 0;
	enum buf_rc	 rc;
	int		 usable, cusable;

	if ((q = question_of(l, row->question)) == NULL ||
	    strcmp(row->type, question_type_name(q->type)) != 0)
		return 0;
	dist = ju_parse(row->distribution);
	outcome = ju_parse(row->outcome);
	usable = ops_read_answer(q->type, dist, outcome, p, &n, &y);
	answers = answers_of(l, row);
	if (answers != NULL)
		json_object_object_get_ex(answers, row->question, &cd);
	cusable = usable && cd != NULL && same_classes(q->type, dist, cd) &&
	    ops_read_answer(q->type, cd, outcome, pc, &cn, &cy) &&
	    cn == n && cy == y;
	json_object_put(dist);
	json_object_put(outcome);
	if (!usable)
		return 0;	/* not what was validated: left out */
	if ((pr = pair_of(l, (size_t)(q - l->q), row->challenger, e)) ==
	    NULL)
		return -1;
	if ((it = buf_extend(&pr->ib, sizeof(*it), &rc)) == NULL)
		return rc == BUF_TOO_LARGE ? too_many(e) : no_memory(e);
	memset(it, 0, sizeof(*it));
	pr->n++;
	it->n = n;
	it->y = y;
	it->ms[CMP_CURRENT] = known(row->latency_ms);
	it->tokens[CMP_CURRENT] = known(row->tokens);
	it->ms[CMP_CHALLENGER] = known(row->challenger_latency_ms);
	it->tokens[CMP_CHALLENGER] = known(row->challenger_tokens);
	/* An unusable challenger's answer: a sample compare.c leaves out
	 * and counts as skipped. */
	it->off[CMP_CHALLENGER] = NO_VALUES;
	if ((it->off[CMP_CURRENT] = put_values(l, pr, p, n, e)) == NO_VALUES)
		return -1;
	if (cusable && (it->off[CMP_CHALLENGER] = put_values(l, pr, pc, n,
	    e)) == NO_VALUES)
		return -1;
	return 0;
}

/* pr's items as samples (the values no longer move): a new array. */
static struct cmp_sample *
samples_of(const struct pair *pr)
{
	const struct item	*it = (const struct item *)(const void *)
				    pr->ib.p;
	const double		*v = (const double *)(const void *)pr->vb.p;
	struct cmp_sample	*s = zeroed(pr->n + 1, sizeof(*s));
	size_t			 i, a;

	for (i = 0; i < pr->n; i++) {
		s[i].n = it[i].n;
		s[i].y = it[i].y;
		for (a = 0; a < CMP_ARMS; a++) {
			s[i].p[a] = it[i].off[a] == NO_VALUES ? NULL :
			    v + it[i].off[a];
			s[i].ms[a] = it[i].ms[a];
			s[i].tokens[a] = it[i].tokens[a];
		}
	}
	return s;
}

/* The challengers of the version and those that answered, sorted and
 * without repeats. */
struct names {
	char	**v;		/* owned, each owned */
	size_t	  n, cap;
};

static void
names_add(struct names *ns, const char *name)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		if (strcmp(ns->v[i], name) == 0)
			return;
	if (ns->n == ns->cap) {
		char **v = xmalloc((ns->n + 8) * sizeof(*v));

		if (ns->n > 0)
			memcpy(v, ns->v, ns->n * sizeof(*v));
		free(ns->v);
		ns->v = v;
		ns->cap = ns->n + 8;
	}
	ns->v[ns->n++] = xstrdup(name);
}

static void
names_free(struct names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
configured_add(const struct challenger *ch, void *arg)
{
	names_add(arg, ch->backend);
}

static const struct pair *
find_pair(const struct load *l, size_t q, const char *ch)
{
	size_t i;

	for (i = 0; i < l->npairs; i++)
		if (l->pairs[i].q == q &&
		    strcmp(l->pairs[i].challenger, ch) == 0)
			return &l->pairs[i];
	return NULL;
}

/* The report of compare_render.h over every question read and every
 * challenger in ns (none read for a question: a count of 0). */
static json_object *
report(const struct load *l, const struct schema_version *v,
    const char *backend, const struct names *ns, struct error *e)
{
	const struct pair	*pr;
	struct cmp_sample	*s;
	struct cmp_result	 r;
	json_object		*out;
	size_t			 q, c;
	int			 rc;

	out = compare_report(v->slug, v->version, backend, v->temperature,
	    v->abstain_threshold);
	for (q = 0; q < l->nq; q++)
		for (c = 0; c < ns->n; c++) {
			pr = find_pair(l, q, ns->v[c]);
			s = pr != NULL ? samples_of(pr) : NULL;
			rc = cmp_question(s, pr != NULL ? pr->n : 0,
			    v->temperature, v->abstain_threshold, &r);
			free(s);
			if (rc != 0) {
				json_object_put(out);
				if (rc == -2)
					too_many(e);
				else
					no_memory(e);
				return NULL;
			}
			compare_report_add(out, l->q[q].name, l->q[q].type,
			    ns->v[c], &r);
		}
	return out;
}

/* The temperature of challenger ch fitted over every question read, as
 * a report rounds it, into *T: 0, or -1 (422) when there is nothing to
 * fit or the fit reached a bound. */
static int
promotion_fit(const struct load *l, const struct schema_version *v,
    const char *ch, double *T, struct error *e)
{
	struct cal_sample	*cs;
	const struct item	*it;
	const double		*vals;
	size_t			 i, j, n = 0, total = 0;

	for (i = 0; i < l->npairs; i++)
		if (strcmp(l->pairs[i].challenger, ch) == 0)
			total += l->pairs[i].n;
	cs = zeroed(total + 1, sizeof(*cs));
	for (i = 0; i < l->npairs; i++) {
		if (strcmp(l->pairs[i].challenger, ch) != 0)
			continue;
		it = (const struct item *)(const void *)l->pairs[i].ib.p;
		vals = (const double *)(const void *)l->pairs[i].vb.p;
		for (j = 0; j < l->pairs[i].n; j++) {
			if (it[j].off[CMP_CHALLENGER] == NO_VALUES)
				continue;
			cs[n].p = vals + it[j].off[CMP_CHALLENGER];
			cs[n].n = it[j].n;
			cs[n++].y = it[j].y;
		}
	}
	*T = cal_fit_temperature(cs, n, v->temperature);
	free(cs);
	if (n == 0 || !isfinite(*T))
		return error_set(e, ERR_VALIDATION, "backend", "'%s' has no "
		    "compared decision (an outcome and its answers): there "
		    "is nothing to promote it on", ch);
	*T = round(*T * T_DIGITS) / T_DIGITS;
	if (cal_at_bound(*T))
		return error_set(e, ERR_VALIDATION, "backend", "the fit of "
		    "'%s' reached the bound of its search (T = %g): the data "
		    "ask for a temperature beyond it; more outcomes or a check "
		    "of the model are needed", ch, *T);
	return 0;
}

/* Publishes v answered by challenger ch: {id, version, fingerprint,
 * backend, temperature} into *out. */
static int
promote(struct op_ctx *c, const struct load *l,
    const struct schema_version *v, const struct names *configured,
    const char *ch, json_object **out, struct error *e)
{
	double	 T;
	size_t	 i;

	for (i = 0; i < configured->n; i++)
		if (strcmp(configured->v[i], ch) == 0)
			break;
	if (i == configured->n)
		return error_set(e, ERR_VALIDATION, "backend", "'%s' is not "
		    "a challenger of version %lld of '%s'", ch,
		    (long long)v->version, v->slug);
	if (promotion_fit(l, v, ch, &T, e) == -1 ||
	    ops_republish(c, v, ch, T, "promoted_from", out, e) == -1)
		return -1;
	ju_add_str(*out, "backend", ch);
	ju_add(*out, "temperature", ju_num(T));
	return 0;
}

static int
parse_request(json_object *in, struct request *rq, struct error *e)
{
	const char	*since = NULL, *format = NULL;

	memset(rq, 0, sizeof(*rq));
	if (ops_req_slug(in, &rq->slug, e) == -1 ||
	    ops_opt_version(in, &rq->version, e) == -1 ||
	    ju_opt_str(in, "question", QUESTION_MAX_LEN, &rq->question,
	    e) == -1 ||
	    ju_opt_str(in, "since", 64, &since, e) == -1 ||
	    ju_opt_str(in, "format", 16, &format, e) == -1 ||
	    ju_opt_str(in, "promote", NAME_MAX_LEN, &rq->promote, e) == -1)
		return -1;
	/* The format is the caller's to apply; refused here, before any
	 * work or change, when it names none. */
	if (format != NULL && calibration_format(format) == CAL_FORMAT__MAX)
		return error_set(e, ERR_VALIDATION, "format",
		    "must be text, json or html");
	rq->since_ms = INT64_MIN;
	if (since != NULL && clock_parse_rfc3339(since, &rq->since_ms) == -1)
		return error_set(e, ERR_VALIDATION, "since", "must be a date "
		    "YYYY-MM-DD or an RFC 3339 time");
	return 0;
}

/* The version rq names, or 404. */
static int
find_version(struct op_ctx *c, const struct request *rq,
    struct schema_version *v, struct error *e)
{
	int rc;

	if ((rc = store_schema_get(c->st, rq->slug, rq->version, v, e)) == 1)
		return 0;
	if (rc == -1)
		return -1;
	if (rq->version == 0)
		return ops_not_found(e, "schema", rq->slug);
	return error_set(e, ERR_NOT_FOUND, NULL, "no version %lld of a "
	    "schema named '%s'", (long long)rq->version, rq->slug);
}

/* Compares (*report, unless NULL) and, with rq->promote, promotes
 * (*promoted). */
static int
run(struct op_ctx *c, const struct request *rq, json_object **rep,
    json_object **promoted, struct error *e)
{
	struct schema_version	 v;
	struct backend		 b;
	struct load		 l;
	struct names		 configured = { 0 }, all = { 0 };
	size_t			 i;
	int			 rc;

	memset(&v, 0, sizeof(v));
	memset(&l, 0, sizeof(l));
	if (find_version(c, rq, &v, e) == -1)
		return -1;
	if ((rc = store_backend_by_id(c->st, v.backend_id, &b, e)) != 1) {
		if (rc == 0)
			error_set(e, ERR_INTERNAL, NULL,
			    "the version's backend is gone");
		rc = -1;
		goto out;
	}
	rc = -1;
	if (load_init(&l, v.questions, rq->question, e) == -1 ||
	    store_challenger_each(c->st, v.schema_id, v.version,
	    configured_add, &configured, e) == -1 ||
	    store_compare_each(c->st, v.schema_id, v.version, rq->question,
	    rq->since_ms, add_row, &l, e) == -1)
		goto out;
	for (i = 0; i < configured.n; i++)
		names_add(&all, configured.v[i]);
	for (i = 0; i < l.npairs; i++)
		names_add(&all, l.pairs[i].challenger);
	if (all.n > 1)
		qsort(all.v, all.n, sizeof(*all.v), by_name);
	if (rep != NULL && (*rep = report(&l, &v, b.name, &all, e)) == NULL)
		goto out;
	if (rq->promote != NULL && promote(c, &l, &v, &configured,
	    rq->promote, promoted, e) == -1)
		goto out;
	rc = 0;
out:
	names_free(&configured);
	names_free(&all);
	load_free(&l);
	schema_version_clear(&v);
	return rc;
}

int
op_compare(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct request	 rq;
	json_object	*rep = NULL, *promoted = NULL;

	if (parse_request(in, &rq, e) == -1)
		return -1;
	if (run(c, &rq, &rep, &promoted, e) == -1) {
		json_object_put(rep);
		json_object_put(promoted);
		return -1;
	}
	if (promoted != NULL)
		ju_add(rep, "promoted", promoted);
	*out = rep;
	return 0;
}

int
op_promote(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct request	 rq;

	memset(&rq, 0, sizeof(rq));
	rq.since_ms = INT64_MIN;
	if (ops_req_slug(in, &rq.slug, e) == -1 ||
	    ops_opt_version(in, &rq.version, e) == -1 ||
	    ju_req_str(in, "backend", NAME_MAX_LEN, &rq.promote, e) == -1)
		return -1;
	return run(c, &rq, NULL, out, e);
}
