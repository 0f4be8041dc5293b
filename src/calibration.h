/* calibration.h: how good a question's answers were, from the untempered
 * distributions decisions keep and the outcomes recorded later
 * (doc/design.md, section 15).  Pure: no I/O, no global state.
 *
 * A sample is one answered question with a known outcome: its untempered,
 * normalised distribution p over n classes in the order of question.h
 * (choice: option keys; score: level index; noul: 0 = true, 1 = false)
 * and the class y that happened.  Every figure is taken on the tempered
 * distribution q = answer_temper(p, T):
 *
 *   confidence	max q (noul: max(q_true, q_false), as answer.c has it)
 *   correct	argmax q == y, ties to the lowest index (answer.c's choice;
 *		for a noul: q_true >= 0.5 predicts true)
 *   accuracy	mean of correct
 *   brier	mean over samples of sum over the n classes of
 *		(q_i - [i == y])^2: a noul counts as two classes, so its
 *		Brier score is 2 (q_true - [true])^2 and ranges over [0, 2]
 *   log_loss	mean of -ln(max(q_y, CAL_PROB_MIN)): never ln 0
 *   mean_abs_error  mean of |sum_i i q_i - y| (the score answer against
 *		the outcome level; meaningful for scores only)
 *   ece	sum over CAL_BINS equal-width confidence bins of
 *		count_b / count * |accuracy_b - confidence_b|; bin b holds
 *		b/15 <= confidence < (b+1)/15, the last one 1.0 too
 *   abstain_rate	share with confidence < threshold (answer.c's rule)
 *   accuracy_answered	accuracy of the others (NAN when none)
 * A figure over no sample is NAN. */
#ifndef EVALGATE_CALIBRATION_H
#define EVALGATE_CALIBRATION_H

#include <stddef.h>

#define CAL_BINS		15	/* equal-width confidence bins */
#define CAL_PROB_MIN		1e-15	/* log loss clamp */
#define CAL_SMALL_SAMPLE	30	/* fewer samples: flagged, ECE unreliable */
#define CAL_T_MIN		0.05	/* temperature search interval */
#define CAL_T_MAX		20.0
#define CAL_MAX_CLASSES		255	/* QUESTION_MAX_OPTIONS */

struct cal_sample {
	const double	*p;	/* borrowed: n untempered, normalised values */
	size_t		 n;	/* 1..CAL_MAX_CLASSES */
	size_t		 y;	/* the outcome's class, < n */
};

struct cal_bin {
	double	 low, high;	/* low <= confidence < high */
	size_t	 count;
	double	 confidence;	/* mean confidence; NAN when empty */
	double	 accuracy;	/* NAN when empty */
};

struct cal_metrics {
	size_t		 count;
	double		 accuracy;
	double		 brier;
	double		 log_loss;
	double		 mean_abs_error;
	double		 ece;
	struct cal_bin	 bins[CAL_BINS];
	double		 abstain_rate;
	size_t		 answered;	/* confidence >= threshold */
	double		 accuracy_answered;
};

/* The figures of s[0..n-1] tempered with T, abstaining below threshold. */
void	 cal_metrics(const struct cal_sample *s, size_t n, double T,
	    double threshold, struct cal_metrics *m);

/* The log loss alone (NAN for n = 0). */
double	 cal_log_loss(const struct cal_sample *s, size_t n, double T);

/* Temperature scaling: the T in [CAL_T_MIN, CAL_T_MAX] minimising
 * cal_log_loss(s, n, T), by golden-section search on ln T (the loss is
 * convex in 1/T, so unimodal in ln T).  When it does no better than
 * current (a flat loss, e.g. one-hot distributions), current is kept.
 * NAN for n = 0. */
double	 cal_fit_temperature(const struct cal_sample *s, size_t n,
	    double current);

/* 1 if T, a fit's result, lies at CAL_T_MIN or CAL_T_MAX (within the
 * precision a report gives it): the loss still fell there, so the data
 * ask for a temperature beyond the search.  0 otherwise, NAN too. */
int	 cal_at_bound(double T);

/* The lowest abstain threshold at which the answered samples (confidence
 * >= threshold at temperature T) reach accuracy >= target: 0 when every
 * sample may be answered, else the confidence of the least confident
 * sample still answered.  *share is the share of samples it abstains on.
 * 1 found, 0 unreachable (or n = 0), -1 out of memory. */
int	 cal_threshold(const struct cal_sample *s, size_t n, double T,
	    double target, double *threshold, double *share);

/* The deterministic split: 1 if the decision id falls in the part the
 * temperature is fitted on, 0 if in the held-out part every later
 * figure uses: the top bit of the 64-bit FNV-1a hash of its text, mixed
 * by MurmurHash3's fmix64, is clear in the fit part. */
int	 cal_in_fit_part(const char *decision_id);

#endif
