/* calibration.c: the calibration figures of calibration.h — accuracy,
 * Brier score, log loss, expected calibration error and its bins,
 * abstention — and temperature scaling fitted by golden-section search.
 * Pure; the tempering itself is answer.c's. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "answer.h"
#include "calibration.h"

/* One sample tempered: its distribution, confidence and verdict. */
struct tempered {
	double	 q[CAL_MAX_CLASSES];
	size_t	 best;		/* argmax q, ties to the lowest index */
	double	 confidence;
	int	 correct;
};

/* The classes of s that are looked at: a longer p is cut short. */
static size_t
classes(const struct cal_sample *s)
{
	return s->n < CAL_MAX_CLASSES ? s->n : CAL_MAX_CLASSES;
}

static void
temper(const struct cal_sample *s, double T, struct tempered *t)
{
	size_t i, n = classes(s);

	answer_temper(s->p, n, T, t->q);
	t->best = 0;
	for (i = 1; i < n; i++)
		if (t->q[i] > t->q[t->best])
			t->best = i;
	t->confidence = t->q[t->best];
	t->correct = t->best == s->y;
}

static double
clamped_ln(double q)
{
	return log(q > CAL_PROB_MIN ? q : CAL_PROB_MIN);
}

/* The bin of a confidence: b/CAL_BINS <= c < (b+1)/CAL_BINS, checked
 * against the same divisions the bins report, so that no rounding puts a
 * value outside the bin it is shown in. */
static size_t
bin_of(double c)
{
	size_t b;

	if (!(c > 0))
		return 0;
	b = c >= 1 ? CAL_BINS - 1 : (size_t)(c * CAL_BINS);
	if (b >= CAL_BINS)
		b = CAL_BINS - 1;
	while (b > 0 && c < (double)b / CAL_BINS)
		b--;
	while (b + 1 < CAL_BINS && c >= (double)(b + 1) / CAL_BINS)
		b++;
	return b;
}

void
cal_metrics(const struct cal_sample *s, size_t n, double T,
    double threshold, struct cal_metrics *m)
{
	struct tempered	 t;
	double		 sum_conf[CAL_BINS] = { 0 }, sum_ok[CAL_BINS] = { 0 };
	double		 ok = 0, brier = 0, ll = 0, mae = 0, ece = 0;
	double		 ok_answered = 0, expected, d;
	size_t		 i, j, b;

	m->count = n;
	m->answered = 0;
	for (b = 0; b < CAL_BINS; b++) {
		m->bins[b].low = (double)b / CAL_BINS;
		m->bins[b].high = (double)(b + 1) / CAL_BINS;
		m->bins[b].count = 0;
	}
	for (i = 0; i < n; i++) {
		temper(&s[i], T, &t);
		ok += t.correct;
		expected = 0;
		for (j = 0; j < classes(&s[i]); j++) {
			d = t.q[j] - (j == s[i].y);
			brier += d * d;
			expected += (double)j * t.q[j];
		}
		mae += fabs(expected - (double)s[i].y);
		ll -= clamped_ln(t.q[s[i].y]);
		b = bin_of(t.confidence);
		m->bins[b].count++;
		sum_conf[b] += t.confidence;
		sum_ok[b] += t.correct;
		if (!(t.confidence < threshold)) {
			m->answered++;
			ok_answered += t.correct;
		}
	}
	for (b = 0; b < CAL_BINS; b++) {
		struct cal_bin *bin = &m->bins[b];

		bin->confidence = bin->count ? sum_conf[b] / bin->count : NAN;
		bin->accuracy = bin->count ? sum_ok[b] / bin->count : NAN;
		if (bin->count)
			ece += (double)bin->count *
			    fabs(bin->accuracy - bin->confidence);
	}
	m->accuracy = n ? ok / n : NAN;
	m->brier = n ? brier / n : NAN;
	m->log_loss = n ? ll / n : NAN;
	m->mean_abs_error = n ? mae / n : NAN;
	m->ece = n ? ece / n : NAN;
	m->abstain_rate = n ? (double)(n - m->answered) / n : NAN;
	m->accuracy_answered = m->answered ? ok_answered / m->answered : NAN;
}

double
cal_log_loss(const struct cal_sample *s, size_t n, double T)
{
	double	 q[CAL_MAX_CLASSES], ll = 0;
	size_t	 i;

	if (n == 0)
		return NAN;
	for (i = 0; i < n; i++) {
		answer_temper(s[i].p, classes(&s[i]), T, q);
		ll -= clamped_ln(q[s[i].y]);
	}
	return ll / n;
}

#define GOLDEN	0.61803398874989484820	/* (sqrt(5) - 1) / 2 */
#define LN_T_TOLERANCE	1e-7

double
cal_fit_temperature(const struct cal_sample *s, size_t n, double current)
{
	double	 a = log(CAL_T_MIN), b = log(CAL_T_MAX), c, d, fc, fd, best;

	if (n == 0)
		return NAN;
	c = b - GOLDEN * (b - a);
	d = a + GOLDEN * (b - a);
	fc = cal_log_loss(s, n, exp(c));
	fd = cal_log_loss(s, n, exp(d));
	while (b - a > LN_T_TOLERANCE) {
		if (fc <= fd) {		/* the minimum is in [a, d] */
			b = d;
			d = c;
			fd = fc;
			c = b - GOLDEN * (b - a);
			fc = cal_log_loss(s, n, exp(c));
		} else {		/* in [c, b] */
			a = c;
			c = d;
			fc = fd;
			d = a + GOLDEN * (b - a);
			fd = cal_log_loss(s, n, exp(d));
		}
	}
	best = exp((a + b) / 2);
	if (current > 0 && isfinite(current) &&
	    cal_log_loss(s, n, current) <= cal_log_loss(s, n, best))
		return current;
	return best;
}

#define AT_BOUND_LN	1e-4	/* |ln T - ln bound|: at the bound */

int
cal_at_bound(double T)
{
	if (!(T > 0) || !isfinite(T))
		return 0;
	return fabs(log(T / CAL_T_MIN)) <= AT_BOUND_LN ||
	    fabs(log(T / CAL_T_MAX)) <= AT_BOUND_LN;
}

struct scored {
	double	 confidence;
	int	 correct;
};

static int
by_confidence(const void *x, const void *y)
{
	double a = ((const struct scored *)x)->confidence;
	double b = ((const struct scored *)y)->confidence;

	return (a > b) - (a < b);
}

int
cal_threshold(const struct cal_sample *s, size_t n, double T, double target,
    double *threshold, double *share)
{
	struct scored	*v;
	struct tempered	 t;
	size_t		 i, ok = 0;
	int		 found = 0;

	if (n == 0)
		return 0;
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		temper(&s[i], T, &t);
		v[i].confidence = t.confidence;
		v[i].correct = t.correct;
		ok += t.correct;
	}
	qsort(v, n, sizeof(*v), by_confidence);
	/* Threshold v[i].confidence answers v[i..n-1]; 0 answers all.  ok
	 * counts the correct ones among v[i..n-1]. */
	for (i = 0; i < n; ok -= v[i].correct, i++) {
		if (i > 0 && v[i].confidence == v[i - 1].confidence)
			continue;
		if ((double)ok / (double)(n - i) >= target) {
			*threshold = i == 0 ? 0 : v[i].confidence;
			*share = (double)i / n;
			found = 1;
			break;
		}
	}
	free(v);
	return found;
}

int
cal_in_fit_part(const char *id)
{
	const unsigned char	*c;
	uint64_t		 h = 14695981039346656037ULL;

	for (c = (const unsigned char *)id; *c != '\0'; c++) {
		h ^= *c;
		h *= 1099511628211ULL;
	}
	/* MurmurHash3's fmix64: every bit of the id reaches the top one. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (h >> 63) == 0;
}
