/* calibration_test.c: TAP tests of calibration.c against figures worked
 * out by hand on a few samples — accuracy, Brier score (noul as two
 * classes), log loss and its clamp, mean absolute error, the 15 ECE bins,
 * abstention — the threshold search, the deterministic split, and a
 * temperature fit that recovers the temperature synthetic outcomes were
 * drawn with. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibration.h"
#include "tap.h"

#define EPS	1e-12

/* Four choice samples over three options (T = 1: q = p):
 *   p               y  argmax conf  Brier               -ln q_y      |E-y|
 *   .2 .3 .5        2  2 ok   .5    .04+.09+.25 = .38   ln 2         |1.3-2| = .7
 *   .6 .3 .1        1  0      .6    .36+.49+.01 = .86   -ln .3       |0.5-1| = .5
 *   1  0  0         0  0 ok   1     0                   0            0
 *   0  .4 .6        0  2      .6    1+.16+.36 = 1.52    -ln 1e-15    |1.6-0| = 1.6
 * accuracy 2/4; Brier 2.76/4 = .69; MAE 2.8/4 = .7;
 * bins: 7 [7/15, 8/15) {.5: ok}, 9 [9/15, 10/15) {.6 wrong, .6 wrong},
 * 14 [14/15, 1] {1: ok}; ECE = (1 * .5 + 2 * .6 + 1 * 0) / 4 = .425;
 * threshold .55 answers the last three, one right: abstain .25,
 * accuracy_answered 1/3. */
static const double P1[] = { .2, .3, .5 }, P2[] = { .6, .3, .1 },
    P3[] = { 1, 0, 0 }, P4[] = { 0, .4, .6 };
static const struct cal_sample FOUR[] = {
	{ P1, 3, 2 }, { P2, 3, 1 }, { P3, 3, 0 }, { P4, 3, 0 },
};

static void
test_hand_computed(void)
{
	struct cal_metrics	m;
	double			ll;
	size_t			b;
	int			others_empty = 1;

	cal_metrics(FOUR, 4, 1.0, 0.55, &m);
	ok(m.count == 4, "count");
	is_num(m.accuracy, 0.5, EPS, "accuracy 2/4");
	is_num(m.brier, 0.69, EPS, "Brier (.38 + .86 + 0 + 1.52) / 4");
	ll = (log(2) - log(.3) + 0 - log(1e-15)) / 4;
	is_num(m.log_loss, ll, EPS, "log loss, q_y = 0 clamped at 1e-15");
	ok(isfinite(m.log_loss), "log loss finite although q_y = 0");
	is_num(m.mean_abs_error, 0.7, EPS, "MAE of sum i q_i against y");
	is_num(m.ece, 0.425, EPS, "ECE (.5 + 2 * .6 + 0) / 4");
	is_num(m.abstain_rate, 0.25, EPS, "abstain rate: .5 < .55");
	ok(m.answered == 3, "three answered");
	is_num(m.accuracy_answered, 1.0 / 3, EPS, "accuracy answered 1/3");

	ok(m.bins[7].count == 1 && m.bins[9].count == 2 &&
	    m.bins[14].count == 1, "bins 7, 9 (0.6 = 9/15 on its edge), 14");
	for (b = 0; b < CAL_BINS; b++)
		if (b != 7 && b != 9 && b != 14 && (m.bins[b].count != 0 ||
		    !isnan(m.bins[b].confidence) || !isnan(m.bins[b].accuracy)))
			others_empty = 0;
	ok(others_empty, "the other 12 bins: count 0, NAN figures");
	is_num(m.bins[9].confidence, 0.6, EPS, "bin 9 mean confidence");
	is_num(m.bins[9].accuracy, 0, EPS, "bin 9 accuracy");
	is_num(m.bins[14].confidence, 1, EPS, "confidence 1 in the last bin");
	is_num(m.bins[0].low, 0, EPS, "bin 0 low");
	is_num(m.bins[7].low, 7.0 / 15, EPS, "bin 7 low = 7/15");
	is_num(m.bins[7].high, 8.0 / 15, EPS, "bin 7 high = 8/15");
	is_num(m.bins[14].high, 1, EPS, "bin 14 high = 1");

	is_num(cal_log_loss(FOUR, 4, 1.0), ll, EPS, "cal_log_loss alone");

	/* A confidence equal to the threshold answers (answer.c abstains
	 * below it only). */
	cal_metrics(FOUR, 4, 1.0, 0.6, &m);
	ok(m.answered == 3, "confidence = threshold .6: answered");
	is_num(m.abstain_rate, 0.25, EPS, "threshold .6: abstain .25");
}

/* At T = 2, q is proportional to sqrt(p): for p = (.2, .3, .5), y = 2,
 * q_2 = sqrt(.5) / (sqrt(.2) + sqrt(.3) + sqrt(.5)). */
static void
test_tempered(void)
{
	struct cal_metrics	m;
	double			s = sqrt(.2) + sqrt(.3) + sqrt(.5);
	double			q[3] = { sqrt(.2) / s, sqrt(.3) / s, sqrt(.5) / s };
	double			brier;

	brier = q[0] * q[0] + q[1] * q[1] + (1 - q[2]) * (1 - q[2]);
	cal_metrics(FOUR, 1, 2.0, 0, &m);
	is_num(m.log_loss, -log(q[2]), EPS, "log loss at T = 2");
	is_num(m.brier, brier, EPS, "Brier at T = 2");
	is_num(m.bins[(size_t)(q[2] * 15)].confidence, q[2], EPS,
	    "confidence at T = 2 in its bin (6: .415 * 15 = 6.2)");
	is_num(m.mean_abs_error, fabs(q[1] + 2 * q[2] - 2), EPS,
	    "MAE at T = 2");
}

/* A noul is two classes, index 0 = true: p_true .8 when false happened
 * gives Brier .64 + .64 = 1.28 = 2 (.8 - 0)^2, log loss -ln .2; p_true .5
 * predicts true (ties to the first index). */
static void
test_noul(void)
{
	static const double	 a[] = { .8, .2 }, b[] = { .5, .5 };
	struct cal_sample	 s[] = { { a, 2, 1 }, { b, 2, 0 } };
	struct cal_metrics	 m;

	cal_metrics(s, 1, 1.0, 0, &m);
	is_num(m.brier, 1.28, EPS, "noul Brier over two classes");
	is_num(m.log_loss, -log(.2), EPS, "noul log loss");
	is_num(m.accuracy, 0, EPS, "p_true .8, false happened: wrong");
	cal_metrics(s + 1, 1, 1.0, 0, &m);
	is_num(m.accuracy, 1, EPS, "p_true .5 predicts true");
	is_num(m.brier, 0.5, EPS, "p_true .5: Brier .25 + .25");
}

static void
test_empty(void)
{
	struct cal_metrics	m;
	double			t = -1, share = -1;

	cal_metrics(FOUR, 0, 1.0, 0.5, &m);
	ok(m.count == 0 && isnan(m.accuracy) && isnan(m.brier) &&
	    isnan(m.log_loss) && isnan(m.ece) && isnan(m.abstain_rate) &&
	    isnan(m.accuracy_answered), "no sample: every figure NAN");
	ok(isnan(cal_log_loss(FOUR, 0, 1)), "no sample: log loss NAN");
	ok(isnan(cal_fit_temperature(FOUR, 0, 1)), "no sample: no fit");
	ok(cal_threshold(FOUR, 0, 1, .5, &t, &share) == 0 && t == -1,
	    "no sample: no threshold");
	cal_metrics(FOUR, 1, 1.0, 0.9, &m);
	ok(m.answered == 0 && isnan(m.accuracy_answered) &&
	    m.abstain_rate == 1, "all abstained: accuracy_answered NAN");
}

/* Noul samples (T = 1), confidence and verdict:
 *   .55 wrong, .6 ok, .7 wrong, .8 ok, .9 ok, .95 ok: accuracy 4/6.
 * Target .75: threshold .6 answers 5 (4 ok, .8): share 1/6.
 * Target .9: .6 gives .8, .7 gives 3/4, .8 gives 3/3: share 3/6.
 * Target .5: 0, nothing abstained.  All wrong: unreachable. */
static void
test_threshold(void)
{
	static const double	 p[][2] = { { .55, .45 }, { .6, .4 },
	    { .3, .7 }, { .8, .2 }, { .1, .9 }, { .95, .05 } };
	static const size_t	 y[] = { 1, 0, 0, 0, 1, 0 };
	struct cal_sample	 s[6], tie[2];
	double			 t, share;
	size_t			 i;

	for (i = 0; i < 6; i++) {
		s[i].p = p[i];
		s[i].n = 2;
		s[i].y = y[i];
	}
	ok(cal_threshold(s, 6, 1, .75, &t, &share) == 1, "target .75 reached");
	is_num(t, .6, EPS, "target .75: threshold .6");
	is_num(share, 1.0 / 6, EPS, "target .75: abstains on 1/6");
	ok(cal_threshold(s, 6, 1, .9, &t, &share) == 1, "target .9 reached");
	is_num(t, .8, EPS, "target .9: threshold .8");
	is_num(share, .5, EPS, "target .9: abstains on half");
	ok(cal_threshold(s, 6, 1, 4.0 / 6, &t, &share) == 1 && t == 0 &&
	    share == 0, "target = overall accuracy: threshold 0");
	ok(cal_threshold(s, 6, 1, 1, &t, &share) == 1 && fabs(t - .8) < EPS,
	    "target 1: threshold .8");
	/* Equal confidences are answered or abstained together: .6 right
	 * and .6 wrong give 1/2, never 1/1, in either order. */
	tie[0] = tie[1] = s[1];
	tie[1].y = 1;
	ok(cal_threshold(tie, 2, 1, .9, &t, &share) == 0,
	    "tied confidences are not split (right, wrong)");
	tie[0].y = 1;
	tie[1].y = 0;
	ok(cal_threshold(tie, 2, 1, .9, &t, &share) == 0,
	    "tied confidences are not split (wrong, right)");
	for (i = 0; i < 6; i++)
		s[i].y = 1 - y[i];
	ok(cal_threshold(s + 1, 1, 1, .5, &t, &share) == 0,
	    "all wrong: unreachable");
}

/* splitmix64 and Box-Muller: a fixed stream of numbers. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double
uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double
gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

#define FIT_N	10000
#define FIT_K	4

static double fit_p[FIT_N][FIT_K];
static struct cal_sample fit_s[FIT_N];

/* Draws FIT_N samples: p = softmax of N(0, 2) logits, outcomes from p
 * tempered with t_true (computed here, not by answer.c). */
static void
synthesise(double t_true)
{
	double	 w[FIT_K], sum, u, acc;
	size_t	 i, k;

	for (i = 0; i < FIT_N; i++) {
		for (sum = 0, k = 0; k < FIT_K; k++)
			sum += fit_p[i][k] = exp(2 * gauss());
		for (k = 0; k < FIT_K; k++)
			fit_p[i][k] /= sum;
		for (sum = 0, k = 0; k < FIT_K; k++)
			sum += w[k] = pow(fit_p[i][k], 1 / t_true);
		u = uniform() * sum;
		fit_s[i].y = FIT_K - 1;
		for (acc = 0, k = 0; k < FIT_K; k++)
			if (u < (acc += w[k])) {
				fit_s[i].y = k;
				break;
			}
		fit_s[i].p = fit_p[i];
		fit_s[i].n = FIT_K;
	}
}

static void
test_fit(void)
{
	static const double	 truths[] = { 2.0, 0.5, 1.0 };
	double			 t;
	size_t			 i;

	for (i = 0; i < sizeof(truths) / sizeof(truths[0]); i++) {
		synthesise(truths[i]);
		t = cal_fit_temperature(fit_s, FIT_N, 1.0);
		printf("# T_true %g: fitted %.6f (%+.2f%%) on %d samples\n",
		    truths[i], t, (t / truths[i] - 1) * 100, FIT_N);
		ok(fabs(t / truths[i] - 1) < 0.05,
		    "T_true %g recovered within 5%% (%.4f)", truths[i], t);
		ok(cal_log_loss(fit_s, FIT_N, t) <=
		    cal_log_loss(fit_s, FIT_N, t * 1.01) &&
		    cal_log_loss(fit_s, FIT_N, t) <=
		    cal_log_loss(fit_s, FIT_N, t / 1.01),
		    "T_true %g: the fit is a minimum of the log loss",
		    truths[i]);
	}
}

/* One-hot distributions give the same loss at every T: keep the current. */
static void
test_flat(void)
{
	static const double	 a[] = { 1, 0 }, b[] = { 0, 1 };
	struct cal_sample	 s[] = { { a, 2, 0 }, { b, 2, 1 }, { a, 2, 1 } };

	is_num(cal_fit_temperature(s, 3, 1.5), 1.5, 0,
	    "flat loss: the current temperature is kept");
}

/* Data that push the fit to either end of its search, and data that do
 * not: cal_at_bound says which. */
static void
test_at_bound(void)
{
	static const double	 p[] = { 0.7, 0.3 }, q[] = { 0.8, 0.2 };
	struct cal_sample	 sure[] = { { p, 2, 0 }, { q, 2, 0 } };
	struct cal_sample	 even[] = { { p, 2, 0 }, { p, 2, 1 } };
	double			 t;

	t = cal_fit_temperature(sure, 2, 1.0);
	ok(fabs(t - CAL_T_MIN) < 1e-6, "always the likelier side: T at the "
	    "lower bound (%g)", t);
	ok(cal_at_bound(t), "the lower bound is flagged");
	t = cal_fit_temperature(even, 2, 1.0);
	ok(fabs(t - CAL_T_MAX) < 1e-4, "as often either side: T at the upper "
	    "bound (%g)", t);
	ok(cal_at_bound(t), "the upper bound is flagged");
	synthesise(2.0);
	t = cal_fit_temperature(fit_s, FIT_N, 1.0);
	ok(!cal_at_bound(t), "a fit inside the search is not flagged (%g)",
	    t);
	ok(!cal_at_bound(1.0) && !cal_at_bound(NAN),
	    "1 and no fit are not at a bound");
}

static void
test_split(void)
{
	char	 id[40];
	size_t	 i, fit = 0;

	/* FNV-1a 64 then fmix64, by hand in Python: "" 0xefd0..., "b"
	 * 0x6e67..., the UUID 0xd725... */
	ok(cal_in_fit_part("") == 0, "\"\": held out (top bit set)");
	ok(cal_in_fit_part("b") == 1, "\"b\": fit part (top bit clear)");
	ok(cal_in_fit_part("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b") == 0,
	    "a UUID: held out");
	ok(cal_in_fit_part("b") == cal_in_fit_part("b"), "deterministic");
	for (i = 0; i < 10000; i++) {
		snprintf(id, sizeof(id), "0190a1b2-c3d4-7%03zx-8a9b-%012zx",
		    i & 0xfff, i * 7919);
		fit += cal_in_fit_part(id);
	}
	ok(fit > 4700 && fit < 5300, "about half of 10000 ids fit (%zu)",
	    fit);
}

int
main(void)
{
	test_hand_computed();
	test_tempered();
	test_noul();
	test_empty();
	test_threshold();
	test_flat();
	test_split();
	test_fit();
	test_at_bound();
	return tap_done();
}
