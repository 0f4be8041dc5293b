/* compare.c: the comparison of compare.h — each arm's calibration figures
 * (calibration.c's), latency and tokens, and the paired bootstrap of the
 * log loss and accuracy differences with its verdict — and the hash that
 * sends a share of the decisions to a challenger.  Pure. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibration.h"
#include "compare.h"

#define T_DIGITS	1e4	/* a fitted T's precision, as the calibration
				 * report (ops_calibration.c) has it */

static const char *const verdicts[CMP_VERDICT__MAX] = {
	[CMP_UNDECIDED] = "undecided",
	[CMP_BETTER] = "better",
	[CMP_WORSE] = "worse",
};

const char *
cmp_verdict_name(enum cmp_verdict v)
{
	return v < CMP_VERDICT__MAX ? verdicts[v] : NULL;
}

/* splitmix64 (Steele, Lea and Flood): the bootstrap's generator, its
 * state the caller's. */
static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform index below n (n > 0), without the bias of a bare modulo:
 * draws below 2^64 mod n are drawn again. */
static size_t
draw(uint64_t *state, size_t n)
{
	uint64_t x, low = (0 - (uint64_t)n) % n;

	do
		x = splitmix64(state);
	while (x < low);
	return (size_t)(x % n);
}

static int
by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The nearest-rank p-quantile of sorted v[0..n-1]: v[ceil(p n) - 1]. */
static double
nearest_rank(const double *v, size_t n, double p)
{
	double	 rank;
	size_t	 k;

	if (n == 0)
		return NAN;
	rank = ceil(p * (double)n);
	k = rank < 1 ? 0 : (size_t)rank - 1;
	return v[k < n ? k : n - 1];
}

static int
known(double d)
{
	return isfinite(d) && d >= 0;
}

/* Whether s can be compared: classes, outcome, both distributions. */
static int
usable(const struct cmp_sample *s)
{
	size_t a, i;

	if (s->n == 0 || s->n > CAL_MAX_CLASSES || s->y >= s->n)
		return 0;
	for (a = 0; a < CMP_ARMS; a++) {
		if (s->p[a] == NULL)
			return 0;
		for (i = 0; i < s->n; i++)
			if (!known(s->p[a][i]))
				return 0;
	}
	return 1;
}

/* Scratch memory of one comparison, sized by its samples. */
struct scratch {
	struct cal_sample	*cs[CMP_ARMS];	/* each arm's samples */
	size_t			*at;		/* their index in s */
	double			*v;		/* values to sort */
	double			*dll;		/* per-sample differences */
	signed char		*dok;
	double			*boot[2];	/* CMP_RESAMPLES means each */
};

static void
scratch_free(struct scratch *w)
{
	free(w->cs[CMP_CURRENT]);
	free(w->cs[CMP_CHALLENGER]);
	free(w->at);
	free(w->v);
	free(w->dll);
	free(w->dok);
	free(w->boot[0]);
	free(w->boot[1]);
}

static int
scratch_alloc(struct scratch *w, size_t n)
{
	memset(w, 0, sizeof(*w));
	n++;		/* never malloc(0) */
	w->cs[CMP_CURRENT] = malloc(n * sizeof(struct cal_sample));
	w->cs[CMP_CHALLENGER] = malloc(n * sizeof(struct cal_sample));
	w->at = malloc(n * sizeof(*w->at));
	w->v = malloc(n * sizeof(*w->v));
	w->dll = malloc(n * sizeof(*w->dll));
	w->dok = malloc(n * sizeof(*w->dok));
	w->boot[0] = malloc(CMP_RESAMPLES * sizeof(double));
	w->boot[1] = malloc(CMP_RESAMPLES * sizeof(double));
	if (w->cs[CMP_CURRENT] == NULL || w->cs[CMP_CHALLENGER] == NULL ||
	    w->at == NULL || w->v == NULL || w->dll == NULL ||
	    w->dok == NULL || w->boot[0] == NULL || w->boot[1] == NULL) {
		scratch_free(w);
		return -1;
	}
	return 0;
}

/* Which figure of an arm spread() reads. */
enum field {
	F_MS,
	F_TOKENS
};

/* The known values of one arm's latency or tokens over the compared
 * samples, sorted into v: their count, p50 and p99, mean and total. */
static void
spread(const struct cmp_sample *s, const struct scratch *w, size_t n,
    enum cmp_arm_id a, enum field f, double *v, size_t *count,
    double q[2], double *mean, double *total)
{
	const struct cmp_sample	*x;
	double			 sum = 0, d;
	size_t			 i, m = 0;

	for (i = 0; i < n; i++) {
		x = &s[w->at[i]];
		d = f == F_MS ? x->ms[a] : x->tokens[a];
		if (known(d)) {
			v[m++] = d;
			sum += d;
		}
	}
	qsort(v, m, sizeof(*v), by_value);
	*count = m;
	q[0] = nearest_rank(v, m, 0.50);
	q[1] = nearest_rank(v, m, 0.99);
	*mean = m ? sum / (double)m : NAN;
	*total = m ? sum : NAN;
}

static void
arm_figures(const struct cmp_sample *s, struct scratch *w, size_t n,
    enum cmp_arm_id a, double T, double threshold, struct cmp_arm *r)
{
	const struct cal_sample	*cs = w->cs[a];
	double			 q[2], mean, total;

	cal_metrics(cs, n, T, threshold, &r->at_version);
	r->fitted = cal_fit_temperature(cs, n, T);
	if (isfinite(r->fitted))
		r->fitted = round(r->fitted * T_DIGITS) / T_DIGITS;
	r->at_bound = cal_at_bound(r->fitted);
	cal_metrics(cs, n, isfinite(r->fitted) ? r->fitted : T, threshold,
	    &r->at_fitted);
	spread(s, w, n, a, F_MS, w->v, &r->latency_count, q, &mean, &total);
	r->latency_p50 = q[0];
	r->latency_p99 = q[1];
	spread(s, w, n, a, F_TOKENS, w->v, &r->tokens_count, q,
	    &r->tokens_mean, &r->tokens_total);
}

/* Per sample, challenger minus current: the log loss at each arm's
 * fitted T and being right (cal_metrics() of the one sample). */
static void
differences(struct scratch *w, size_t n, const struct cmp_result *r)
{
	struct cal_metrics	 m[CMP_ARMS];
	double			 ll[CMP_ARMS];
	size_t			 i, a;

	for (i = 0; i < n; i++) {
		for (a = 0; a < CMP_ARMS; a++) {
			ll[a] = cal_log_loss(&w->cs[a][i], 1,
			    r->arm[a].fitted);
			cal_metrics(&w->cs[a][i], 1, r->arm[a].fitted,
			    r->threshold, &m[a]);
		}
		w->dll[i] = ll[CMP_CHALLENGER] - ll[CMP_CURRENT];
		w->dok[i] = (signed char)(m[CMP_CHALLENGER].accuracy -
		    m[CMP_CURRENT].accuracy);
	}
}

static void
mean_sd(const double *v, size_t n, struct cmp_diff *d)
{
	double	 sum = 0, ss = 0;
	size_t	 i;

	for (i = 0; i < n; i++)
		sum += v[i];
	d->mean = n ? sum / (double)n : NAN;
	for (i = 0; i < n; i++)
		ss += (v[i] - d->mean) * (v[i] - d->mean);
	d->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
}

/* The paired bootstrap: CMP_RESAMPLES resamples of n decisions with
 * replacement, the same indices for both differences, and the
 * percentile interval of each mean. */
static void
bootstrap(struct scratch *w, size_t n, struct cmp_result *r)
{
	uint64_t	 state = CMP_SEED;
	double		 sll, sok, tail = (1 - CMP_LEVEL) / 2;
	size_t		 b, i, j;

	for (i = 0; i < n; i++)
		w->v[i] = w->dok[i];
	mean_sd(w->dll, n, &r->log_loss);
	mean_sd(w->v, n, &r->accuracy);
	if (n == 0) {
		r->log_loss.low = r->log_loss.high = NAN;
		r->accuracy.low = r->accuracy.high = NAN;
		return;
	}
	for (b = 0; b < CMP_RESAMPLES; b++) {
		for (sll = 0, sok = 0, i = 0; i < n; i++) {
			j = draw(&state, n);
			sll += w->dll[j];
			sok += w->dok[j];
		}
		w->boot[0][b] = sll / (double)n;
		w->boot[1][b] = sok / (double)n;
	}
	qsort(w->boot[0], CMP_RESAMPLES, sizeof(double), by_value);
	qsort(w->boot[1], CMP_RESAMPLES, sizeof(double), by_value);
	r->log_loss.low = nearest_rank(w->boot[0], CMP_RESAMPLES, tail);
	r->log_loss.high = nearest_rank(w->boot[0], CMP_RESAMPLES, 1 - tail);
	r->accuracy.low = nearest_rank(w->boot[1], CMP_RESAMPLES, tail);
	r->accuracy.high = nearest_rank(w->boot[1], CMP_RESAMPLES, 1 - tail);
}

/* The verdict of compare.h and, undecided, the samples still needed. */
static void
verdict(struct cmp_result *r)
{
	const struct cmp_diff	*d = &r->log_loss;
	double			 need;

	r->verdict = CMP_UNDECIDED;
	if (r->count >= CMP_MIN_PAIRS && d->high < 0)
		r->verdict = CMP_BETTER;
	else if (r->count >= CMP_MIN_PAIRS && d->low > 0)
		r->verdict = CMP_WORSE;
	if (r->verdict != CMP_UNDECIDED) {
		r->more = 0;
		return;
	}
	r->more = -1;
	if (r->count < 2 || !isfinite(d->sd) || !isfinite(d->mean) ||
	    d->mean == 0)
		return;
	need = ceil(pow(CMP_Z * d->sd / d->mean, 2));
	if (!(need <= CMP_MORE_MAX))
		return;
	if (need < CMP_MIN_PAIRS)
		need = CMP_MIN_PAIRS;
	r->more = (int64_t)need - (int64_t)r->count;
	if (r->more < 1)
		r->more = 1;
}

int
cmp_question(const struct cmp_sample *s, size_t n, double T,
    double threshold, struct cmp_result *r)
{
	struct scratch	 w;
	size_t		 i, a, m = 0;

	if (n > CMP_MAX_SAMPLES)
		return -2;
	if (scratch_alloc(&w, n) == -1)
		return -1;
	memset(r, 0, sizeof(*r));
	r->temperature = T;
	r->threshold = threshold;
	for (i = 0; i < n; i++) {
		if (!usable(&s[i])) {
			r->skipped++;
			continue;
		}
		for (a = 0; a < CMP_ARMS; a++) {
			w.cs[a][m].p = s[i].p[a];
			w.cs[a][m].n = s[i].n;
			w.cs[a][m].y = s[i].y;
		}
		w.at[m++] = i;
	}
	r->count = m;
	for (a = 0; a < CMP_ARMS; a++)
		arm_figures(s, &w, m, (enum cmp_arm_id)a, T, threshold,
		    &r->arm[a]);
	differences(&w, m, r);
	bootstrap(&w, m, r);
	verdict(r);
	scratch_free(&w);
	return 0;
}

/* The share hash. */

double
cmp_share_point(const char *id, const char *backend)
{
	const unsigned char	*c;
	uint64_t		 h = 14695981039346656037ULL;	/* FNV-1a */

	for (c = (const unsigned char *)id; *c != '\0'; c++) {
		h ^= *c;
		h *= 1099511628211ULL;
	}
	h *= 1099511628211ULL;		/* the 0 byte between: h ^= 0 */
	for (c = (const unsigned char *)backend; *c != '\0'; c++) {
		h ^= *c;
		h *= 1099511628211ULL;
	}
	h ^= h >> 33;			/* fmix64 */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (double)(h >> 11) * 0x1.0p-53;
}

int
cmp_to_challenger(const char *id, const char *backend, double share)
{
	if (!(share > 0))
		return 0;
	if (share >= 1)
		return 1;
	return cmp_share_point(id, backend) < share;
}
