/* ops_calibration.c: the calibration operation (doc/design.md, section 15),
 * shared by `evalgate-admin calibration` and GET
 * /admin/v1/schemas/{id}/calibration through ops_run().
 *
 * Reads every answered question of one schema version that has an
 * outcome (store_sqlite_report.c, store_pg_report.c), computes the
 * figures of calibration.h per question and per backend at the
 * version's temperature, fits the temperature on the fit part of the
 * deterministic split and reports it, and the abstain threshold for a
 * target accuracy, on the held-out part.
 * With apply, publishes a new version with the same questions, backend
 * and abstain threshold and the temperature fitted over every reported
 * question, through OP_SCHEMA_PUBLISH (validation, transaction, audit).
 * Its reader of a stored answer and outcome, and that publication, are
 * shared with ops_compare.c (ops_internal.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "buf.h"
#include "calibration.h"
#include "calibration_render.h"
#include "clock.h"
#include "json_util.h"
#include "ops.h"
#include "ops_internal.h"
#include "question.h"
#include "store.h"
#include "xalloc.h"

#define QUESTION_MAX_LEN 4096
#define MAX_SAMPLES	1000000		/* answered questions per report */
#define MAX_VALUES	(16 * 1024 * 1024) /* their probabilities */
#define MAX_BACKENDS	32		/* distinct per report; more: "other" */
#define T_DIGITS	1e4		/* a fitted temperature's precision */

/* One answered question read, until the report: its distribution is
 * doubles off .. off + n - 1 of its question's vb (which may still
 * move). */
struct answered {
	size_t		 off, n, y;
	unsigned char	 fit;		/* in the fit part of the split */
	unsigned char	 backend;	/* index into load.backends */
};

/* One question of the version and what was read for it. */
struct qstat {
	const char		*name;		/* borrowed: version's map */
	enum qtype		 type;
	struct buf		 ab;		/* owns a */
	struct buf		 vb;		/* owns the values */
	struct answered		*a;		/* ab.p: n of them */
	size_t			 n;
	struct cal_sample	*s;		/* a[] as samples, for the
						 * report: n of them */
};

struct load {
	struct qstat	*q;
	size_t		 nq;
	size_t		 hint;			/* the last row's question */
	size_t		 samples, values;	/* totals, for the caps */
	char		*backends[MAX_BACKENDS + 1];	/* owned */
	size_t		 nbackends;
};

/* Reads a stored distribution and outcome of one type into p[0..*n-1]
 * and the outcome's class *y: 1, or 0 when they do not fit together
 * (the row is left out). */
typedef int (*read_fn)(json_object *dist, json_object *outcome, double *p,
    size_t *n, size_t *y);

static int
is_number(json_object *v)
{
	return json_object_is_type(v, json_type_double) ||
	    json_object_is_type(v, json_type_int);
}

static int
read_choice(json_object *dist, json_object *outcome, double *p, size_t *n,
    size_t *y)
{
	const char	*key;
	size_t		 i = 0;
	int		 found = 0;

	if (!json_object_is_type(dist, json_type_object) ||
	    !json_object_is_type(outcome, json_type_string))
		return 0;
	key = json_object_get_string(outcome);
	json_object_object_foreach(dist, k, v) {
		if (i == CAL_MAX_CLASSES || !is_number(v))
			return 0;
		if (strcmp(k, key) == 0) {
			*y = i;
			found = 1;
		}
		p[i++] = json_object_get_double(v);
	}
	*n = i;
	return found;
}

static int
read_score(json_object *dist, json_object *outcome, double *p, size_t *n,
    size_t *y)
{
	size_t	 i, len;
	int64_t	 level;

	if (!json_object_is_type(dist, json_type_array) ||
	    !json_object_is_type(outcome, json_type_int) ||
	    (len = json_object_array_length(dist)) > CAL_MAX_CLASSES)
		return 0;
	for (i = 0; i < len; i++) {
		if (!is_number(json_object_array_get_idx(dist, i)))
			return 0;
		p[i] = json_object_get_double(json_object_array_get_idx(dist,
		    i));
	}
	level = json_object_get_int64(outcome);
	if (level < 0 || (uint64_t)level >= len)
		return 0;
	*n = len;
	*y = (size_t)level;
	return 1;
}

static int
read_noul(json_object *dist, json_object *outcome, double *p, size_t *n,
    size_t *y)
{
	if (!is_number(dist) || !json_object_is_type(outcome,
	    json_type_boolean))
		return 0;
	p[0] = json_object_get_double(dist);
	p[1] = 1 - p[0];
	*n = 2;
	*y = json_object_get_boolean(outcome) ? 0 : 1;
	return 1;
}

static const read_fn readers[Q__MAX] = {
	[Q_CHOICE] = read_choice,
	[Q_SCORE] = read_score,
	[Q_NOUL] = read_noul,
};

int
ops_read_answer(enum qtype type, json_object *dist, json_object *outcome,
    double *p, size_t *n, size_t *y)
{
	return type < Q__MAX && dist != NULL && outcome != NULL &&
	    readers[type](dist, outcome, p, n, y) &&
	    answer_normalise(p, *n) == 0;
}

static void
load_free(struct load *l)
{
	size_t i;

	for (i = 0; i < l->nq; i++) {
		buf_free(&l->q[i].ab);
		buf_free(&l->q[i].vb);
		free(l->q[i].s);
	}
	free(l->q);
	for (i = 0; i < l->nbackends; i++)
		free(l->backends[i]);
}

static int
no_memory(struct error *e)
{
	return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
}

static int
too_many(struct error *e)
{
	return error_set(e, ERR_VALIDATION, "since", "more than %d "
	    "answered questions have outcomes: narrow the report with "
	    "since or question", MAX_SAMPLES);
}

/* Appends one answered question of n values p to q: its row, or NULL
 * with e set.  The buffers' caps are the report's, checked first by the
 * caller. */
static struct answered *
append(struct qstat *q, const double *p, size_t n, struct error *e)
{
	struct answered	*a;
	double		*v;
	enum buf_rc	 rc;

	if ((v = buf_extend(&q->vb, n * sizeof(*v), &rc)) == NULL ||
	    (a = buf_extend(&q->ab, sizeof(*a), &rc)) == NULL) {
		if (rc == BUF_TOO_LARGE)
			too_many(e);
		else
			no_memory(e);
		return NULL;
	}
	memcpy(v, p, n * sizeof(*p));
	a->off = (size_t)(v - (double *)(void *)q->vb.p);
	a->n = n;
	q->a = (struct answered *)(void *)q->ab.p;
	q->n++;
	return a;
}

static struct qstat *
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

/* The index of a backend name; past MAX_BACKENDS they share the last. */
static unsigned char
backend_index(struct load *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nbackends; i++)
		if (strcmp(l->backends[i], name) == 0)
			break;
	if (i == l->nbackends && l->nbackends <= MAX_BACKENDS)
		l->backends[l->nbackends++] = xstrdup(i < MAX_BACKENDS ?
		    name : "(other)");
	return (unsigned char)(i < MAX_BACKENDS ? i : MAX_BACKENDS);
}

static int
add_row(const struct calibration_row *row, void *arg, struct error *e)
{
	struct load	*l = arg;
	struct qstat	*q;
	json_object	*dist, *outcome;
	struct answered	*a;
	double		 p[CAL_MAX_CLASSES];
	size_t		 n = 0, y = 0;
	int		 usable;

	if ((q = question_of(l, row->question)) == NULL ||
	    strcmp(row->type, question_type_name(q->type)) != 0)
		return 0;
	dist = ju_parse(row->distribution);
	outcome = ju_parse(row->outcome);
	usable = ops_read_answer(q->type, dist, outcome, p, &n, &y);
	json_object_put(dist);
	json_object_put(outcome);
	if (!usable)
		return 0;	/* not what was validated: left out */
	if (l->samples == MAX_SAMPLES || l->values + n > MAX_VALUES)
		return too_many(e);
	if ((a = append(q, p, n, e)) == NULL)
		return -1;
	a->backend = backend_index(l, row->backend);
	a->y = y;
	a->fit = (unsigned char)cal_in_fit_part(row->decision_id);
	l->samples++;
	l->values += n;
	return 0;
}

/* The version's questions (or the one asked for), in order. */
static int
load_init(struct load *l, json_object *questions, const char *only,
    struct error *e)
{
	memset(l, 0, sizeof(*l));
	if ((l->q = calloc(json_object_object_length(questions) + 1,
	    sizeof(*l->q))) == NULL)
		return no_memory(e);
	json_object_object_foreach(questions, name, qobj) {
		if ((only != NULL && strcmp(only, name) != 0) ||
		    question_type(qobj) == Q__MAX)	/* never published */
			continue;
		l->q[l->nq].name = name;
		l->q[l->nq].type = question_type(qobj);
		buf_init(&l->q[l->nq].ab, MAX_SAMPLES *
		    sizeof(struct answered));
		buf_init(&l->q[l->nq++].vb, MAX_VALUES * sizeof(double));
	}
	if (only != NULL && l->nq == 0)
		return error_set(e, ERR_VALIDATION, "question",
		    "the version has no question named '%s'", only);
	return 0;
}

/* count, accuracy, mean_abs_error (scores), brier, log_loss, ece. */
static void
add_figures(json_object *o, const struct cal_metrics *m, enum qtype type)
{
	ju_add_count(o, "count", m->count);
	ju_add(o, "small_sample", ju_bool(m->count < CAL_SMALL_SAMPLE));
	ju_add_figure(o, "accuracy", m->accuracy);
	if (type == Q_SCORE)
		ju_add_figure(o, "mean_abs_error", m->mean_abs_error);
	ju_add_figure(o, "brier", m->brier);
	ju_add_figure(o, "log_loss", m->log_loss);
	ju_add_figure(o, "ece", m->ece);
}

static json_object *
bins_json(const struct cal_metrics *m)
{
	json_object	*a = ju_arr(), *b;
	size_t		 i;

	for (i = 0; i < CAL_BINS; i++) {
		b = ju_obj();
		ju_add_figure(b, "low", m->bins[i].low);
		ju_add_figure(b, "high", m->bins[i].high);
		ju_add_count(b, "count", m->bins[i].count);
		ju_add_figure(b, "confidence", m->bins[i].confidence);
		ju_add_figure(b, "accuracy", m->bins[i].accuracy);
		ju_push(a, b);
	}
	return a;
}

/* A temperature fit: on fit[0..nfit-1], reported on hold[0..nhold-1]. */
struct fit {
	double	 current, fitted, before, after;
	size_t	 nfit, nhold;
	int	 at_bound;	/* fitted at an end of the search */
};

static void
fit_run(struct fit *f, const struct cal_sample *fit, size_t nfit,
    const struct cal_sample *hold, size_t nhold, double current)
{
	f->current = current;
	f->nfit = nfit;
	f->nhold = nhold;
	f->fitted = cal_fit_temperature(fit, nfit, current);
	if (isfinite(f->fitted))
		f->fitted = round(f->fitted * T_DIGITS) / T_DIGITS;
	f->at_bound = cal_at_bound(f->fitted);
	f->before = cal_log_loss(hold, nhold, current);
	f->after = isfinite(f->fitted) ? cal_log_loss(hold, nhold, f->fitted) :
	    NAN;
}

static json_object *
fit_json(const struct fit *f)
{
	json_object *o = ju_obj();

	ju_add_figure(o, "current", f->current);
	ju_add_figure(o, "fitted", f->fitted);
	ju_add_figure(o, "log_loss_before", f->before);
	ju_add_figure(o, "log_loss_after", f->after);
	ju_add_count(o, "fit_count", f->nfit);
	ju_add_count(o, "holdout_count", f->nhold);
	ju_add(o, "at_bound", ju_bool(f->at_bound));
	return o;
}

/* The parts of the split: samples of q into fit and hold (each of q->n
 * room), appended after *nfit and *nhold. */
static void
split(const struct qstat *q, struct cal_sample *fit, size_t *nfit,
    struct cal_sample *hold, size_t *nhold)
{
	size_t i;

	for (i = 0; i < q->n; i++) {
		if (q->a[i].fit)
			fit[(*nfit)++] = q->s[i];
		else
			hold[(*nhold)++] = q->s[i];
	}
}

/* The per-backend breakdown of q, over all its samples. */
static int
backends_json(const struct load *l, const struct qstat *q,
    const struct schema_version *v, json_object *out, struct error *e)
{
	struct cal_sample	*sub;
	struct cal_metrics	 m;
	json_object		*o;
	size_t			 b, i, n;

	if (q->n == 0)
		return 0;
	if ((sub = malloc(q->n * sizeof(*sub))) == NULL)
		return no_memory(e);
	for (b = 0; b < l->nbackends; b++) {
		for (n = 0, i = 0; i < q->n; i++)
			if (q->a[i].backend == b)
				sub[n++] = q->s[i];
		if (n == 0)
			continue;
		cal_metrics(sub, n, v->temperature, v->abstain_threshold, &m);
		o = ju_obj();
		add_figures(o, &m, q->type);
		ju_add(out, l->backends[b], o);
	}
	free(sub);
	return 0;
}

struct request {
	const char	*slug;
	int64_t		 version;	/* 0: the latest */
	const char	*question;	/* NULL: every one */
	int64_t		 since_ms;
	double		 target;	/* NAN: none asked for */
	int		 apply;
};

/* The figures of q; its parts of the split are appended to the pooled
 * ones, fit[*nfit..] and hold[*nhold..]. */
static json_object *
question_json(const struct load *l, const struct qstat *q,
    const struct schema_version *v, const struct request *rq,
    struct cal_sample *fit, size_t *nfit, struct cal_sample *hold,
    size_t *nhold, struct error *e)
{
	struct cal_metrics	 m;
	struct fit		 f;
	json_object		*o, *t, *backends;
	double			 threshold, share;
	size_t			 fit0 = *nfit, hold0 = *nhold;
	int			 rc = 0;

	cal_metrics(q->s, q->n, v->temperature, v->abstain_threshold, &m);
	split(q, fit, nfit, hold, nhold);
	fit = fit + fit0;
	hold = hold + hold0;
	fit_run(&f, fit, *nfit - fit0, hold, *nhold - hold0, v->temperature);
	o = ju_obj();
	ju_add_str(o, "type", question_type_name(q->type));
	add_figures(o, &m, q->type);
	ju_add(o, "bins", bins_json(&m));
	ju_add_figure(o, "abstain_rate", m.abstain_rate);
	ju_add_figure(o, "accuracy_answered", m.accuracy_answered);
	ju_add(o, "temperature", fit_json(&f));
	t = NULL;
	if (isfinite(rq->target)) {
		t = ju_obj();
		ju_add_figure(t, "target_accuracy", rq->target);
		rc = cal_threshold(hold, *nhold - hold0, v->temperature,
		    rq->target,
		    &threshold, &share);
		ju_add_figure(t, "threshold", rc == 1 ? threshold : NAN);
		ju_add_figure(t, "abstain_share", rc == 1 ? share : NAN);
	}
	ju_add(o, "threshold", t);
	backends = ju_obj();
	ju_add(o, "backends", backends);
	if (rc == -1 || backends_json(l, q, v, backends, e) == -1) {
		json_object_put(o);
		if (rc == -1)
			no_memory(e);
		return NULL;
	}
	return o;
}

/* The report of doc/design.md, section 15, over what l holds; *pooled is the
 * fit over every reported question, the one apply publishes. */
static json_object *
report(struct load *l, const struct schema_version *v,
    const struct request *rq, struct fit *pooled, struct error *e)
{
	struct cal_sample	*fit, *hold;
	json_object		*out, *questions, *o;
	size_t			 i, j, nfit = 0, nhold = 0;

	for (i = 0; i < l->nq; i++) {	/* the values no longer move */
		struct qstat *q = &l->q[i];

		if ((q->s = malloc((q->n + 1) * sizeof(*q->s))) == NULL) {
			no_memory(e);
			return NULL;
		}
		for (j = 0; j < q->n; j++) {
			q->s[j].p = (double *)(void *)q->vb.p + q->a[j].off;
			q->s[j].n = q->a[j].n;
			q->s[j].y = q->a[j].y;
		}
	}
	fit = malloc((l->samples + 1) * sizeof(*fit));
	hold = malloc((l->samples + 1) * sizeof(*hold));
	if (fit == NULL || hold == NULL) {
		free(fit);
		free(hold);
		no_memory(e);
		return NULL;
	}
	questions = ju_obj();
	for (i = 0; i < l->nq; i++) {
		if ((o = question_json(l, &l->q[i], v, rq, fit, &nfit, hold,
		    &nhold, e)) == NULL) {
			json_object_put(questions);
			free(fit);
			free(hold);
			return NULL;
		}
		ju_add(questions, l->q[i].name, o);
	}
	fit_run(pooled, fit, nfit, hold, nhold, v->temperature);
	free(fit);
	free(hold);
	out = ju_obj();
	ju_add_str(out, "schema", v->slug);
	ju_add(out, "version", ju_int(v->version));
	ju_add_figure(out, "abstain_threshold", v->abstain_threshold);
	ju_add(out, "temperature", fit_json(pooled));
	ju_add(out, "questions", questions);
	return out;
}

int
ops_republish(struct op_ctx *c, const struct schema_version *v,
    const char *backend, double T, const char *from, json_object **out,
    struct error *e)
{
	struct backend	 b;
	json_object	*in;
	int		 rc;

	*out = NULL;
	if (backend == NULL) {
		if ((rc = store_backend_by_id(c->st, v->backend_id, &b,
		    e)) != 1)
			return rc == -1 ? -1 : error_set(e, ERR_INTERNAL,
			    NULL, "the version's backend is gone");
		backend = b.name;
	}
	in = ju_obj();
	ju_add_str(in, "id", v->slug);
	ju_add(in, "questions", json_object_get(v->questions));
	ju_add_str(in, "backend", backend);
	ju_add_figure(in, "temperature", T);
	ju_add_figure(in, "abstain_threshold", v->abstain_threshold);
	/* Ignored by the publication, kept by its audit row. */
	ju_add(in, from, ju_int(v->version));
	rc = ops_run(OP_SCHEMA_PUBLISH, c, in, out, e);
	json_object_put(in);
	return rc;
}

/* Publishes v again with temperature T: the new version's number. */
static int
publish(struct op_ctx *c, const struct schema_version *v, double T,
    int64_t *version, struct error *e)
{
	json_object	*out, *n;
	int		 rc;

	rc = ops_republish(c, v, NULL, T, "calibrated_from", &out, e);
	if (rc == 0 && json_object_object_get_ex(out, "version", &n))
		*version = json_object_get_int64(n);
	json_object_put(out);
	return rc;
}

static int
parse_request(json_object *in, struct request *rq, struct error *e)
{
	const char	*since = NULL, *format = NULL;

	memset(rq, 0, sizeof(*rq));
	rq->target = NAN;
	if (ju_req_str(in, "id", SLUG_MAX_LEN, &rq->slug, e) == -1 ||
	    ju_opt_int(in, "version", 1, INT64_MAX, &rq->version, NULL,
	    e) == -1 ||
	    ju_opt_str(in, "question", QUESTION_MAX_LEN, &rq->question,
	    e) == -1 ||
	    ju_opt_str(in, "since", 64, &since, e) == -1 ||
	    ju_opt_str(in, "format", 16, &format, e) == -1 ||
	    ju_opt_num(in, "target_accuracy", 0, 1, &rq->target, e) == -1 ||
	    ju_opt_bool(in, "apply", &rq->apply, e) == -1)
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

int
ops_calibration(struct op_ctx *c, json_object *in, json_object **out,
    struct error *e)
{
	struct schema_version	 v;
	struct request		 rq;
	struct load		 l;
	struct fit		 pooled;
	json_object		*o = NULL, *p;
	int64_t			 version = 0;
	int			 rc;

	if (parse_request(in, &rq, e) == -1)
		return -1;
	if ((rc = store_schema_get(c->st, rq.slug, rq.version, &v, e)) != 1) {
		if (rc == -1)
			return -1;
		return rq.version ? error_set(e, ERR_NOT_FOUND, NULL,
		    "no version %lld of a schema named '%s'",
		    (long long)rq.version, rq.slug) : error_set(e,
		    ERR_NOT_FOUND, NULL, "no schema named '%s'", rq.slug);
	}
	rc = -1;
	if (load_init(&l, v.questions, rq.question, e) == 0 &&
	    store_calibration_each(c->st, v.schema_id, v.version, rq.question,
	    rq.since_ms, add_row, &l, e) == 0 &&
	    (o = report(&l, &v, &rq, &pooled, e)) != NULL)
		rc = 0;
	if (rc == 0 && rq.apply && !isfinite(pooled.fitted))
		rc = error_set(e, ERR_VALIDATION, "apply", "no answer with an "
		    "outcome falls in the fit part: there is nothing to fit");
	if (rc == 0 && rq.apply && pooled.at_bound)
		rc = error_set(e, ERR_VALIDATION, "apply", "the fit reached "
		    "the bound of its search (T = %g): the data ask for a "
		    "temperature beyond it; more outcomes or a check of the "
		    "model are needed, or publish a temperature yourself "
		    "(schema publish --temperature)", pooled.fitted);
	if (rc == 0 && rq.apply &&
	    (rc = publish(c, &v, pooled.fitted, &version, e)) == 0) {
		p = ju_obj();
		ju_add_str(p, "id", v.slug);
		ju_add(p, "version", ju_int(version));
		ju_add_figure(p, "temperature", pooled.fitted);
		ju_add(o, "published", p);
	}
	if (rc == 0)
		*out = o;
	else
		json_object_put(o);
	load_free(&l);
	schema_version_clear(&v);
	return rc;
}
