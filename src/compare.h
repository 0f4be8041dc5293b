/* compare.h: the comparison of the current backend with a challenger on
 * the same decisions (doc/design.md, section 15.1).  Pure: no I/O, no
 * global state; its bootstrap draws from its own generator with a fixed
 * seed, so that the same samples always give the same report.
 *
 * A sample is one question of one decision that has an outcome and the
 * answers of both arms: each arm's untempered, normalised distribution
 * over the same n classes (in the order of calibration.h), the class y
 * that happened, and each arm's latency and tokens.  For each arm the
 * figures are calibration.h's (cal_metrics(), cal_fit_temperature()),
 * at the version's temperature and at the arm's own fitted one (fitted
 * over every sample, rounded to 4 decimals as the calibration report
 * rounds it), plus latency p50/p99 by nearest rank and tokens.
 *
 * The paired differences are challenger minus current, per decision, of
 * the log loss (each arm at its own fitted temperature: a backend is
 * judged as it would serve once calibrated) and of being right.  Their
 * 95% intervals are percentile intervals of CMP_RESAMPLES bootstrap
 * resamples of the decisions (the same indices for both differences).
 * The verdict, on the log loss alone:
 *
 *   better	at least CMP_MIN_PAIRS samples and the interval's high end
 *		below 0 (the challenger's loss is lower)
 *   worse	at least CMP_MIN_PAIRS samples and its low end above 0
 *   undecided	otherwise ("not yet decided")
 *
 * and, when undecided, about how many more samples would decide it:
 * need = ceil((1.96 sd / mean)^2) from the per-decision differences'
 * mean and standard deviation, at least CMP_MIN_PAIRS, less the samples
 * there are, at least 1; unknown when the mean is 0, there are fewer
 * than 2 samples, or need passes CMP_MORE_MAX.
 *
 * Cost, for n samples of k classes: time O(n k) per log loss pass (about
 * 40 of them per arm for the fit) plus O(CMP_RESAMPLES n) for the
 * bootstrap; memory about 72 bytes per sample, freed before return.
 * n is capped at CMP_MAX_SAMPLES. */
#ifndef EVALGATE_COMPARE_H
#define EVALGATE_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "calibration.h"

#define CMP_RESAMPLES		2000	/* bootstrap resamples */
#define CMP_SEED		0x65766c67617465ULL	/* "evlgate" */
#define CMP_LEVEL		0.95	/* the intervals' coverage */
#define CMP_Z			1.96	/* its normal quantile (the estimate) */
#define CMP_MIN_PAIRS		CAL_SMALL_SAMPLE	/* fewer: undecided */
#define CMP_MAX_SAMPLES		100000	/* per question and challenger */
#define CMP_MORE_MAX		1000000000	/* a larger estimate: unknown */

enum cmp_arm_id {
	CMP_CURRENT,
	CMP_CHALLENGER,
	CMP_ARMS
};

struct cmp_sample {
	size_t		 n;		/* classes, 1..CAL_MAX_CLASSES */
	size_t		 y;		/* the outcome's class, < n */
	const double	*p[CMP_ARMS];	/* borrowed: each arm's n values */
	double		 ms[CMP_ARMS];	/* latency; < 0 or NAN: not known */
	double		 tokens[CMP_ARMS];	/* < 0 or NAN: not known */
};

/* One arm's figures.  NAN where there is none (no sample, no latency). */
struct cmp_arm {
	struct cal_metrics	 at_version;	/* at the version's T */
	double			 fitted;	/* its own fitted T */
	int			 at_bound;	/* cal_at_bound(fitted) */
	struct cal_metrics	 at_fitted;	/* at fitted */
	size_t			 latency_count;	/* samples with a latency */
	double			 latency_p50, latency_p99;	/* ms */
	size_t			 tokens_count;	/* samples with tokens */
	double			 tokens_mean, tokens_total;
};

/* A paired difference, challenger minus current: the mean over the
 * samples, the per-sample standard deviation, and the interval. */
struct cmp_diff {
	double	 mean, sd, low, high;
};

enum cmp_verdict {
	CMP_UNDECIDED,
	CMP_BETTER,
	CMP_WORSE,
	CMP_VERDICT__MAX
};

struct cmp_result {
	size_t			 count;		/* samples compared */
	size_t			 skipped;	/* left out: not as above */
	double			 temperature;	/* the version's */
	double			 threshold;	/* its abstain threshold */
	struct cmp_arm		 arm[CMP_ARMS];
	struct cmp_diff		 log_loss;	/* at the fitted Ts */
	struct cmp_diff		 accuracy;
	enum cmp_verdict	 verdict;
	int64_t			 more;		/* samples still needed: 0
						 * when decided, -1 unknown */
};

/* Compares the arms over s[0..n-1] for a version of temperature T and
 * abstain threshold threshold, into *r.  A sample with no class, an
 * outcome out of range, a missing distribution or a value that is not
 * finite and >= 0 is left out (r->skipped).  0; -1 out of memory; -2
 * for n > CMP_MAX_SAMPLES (nothing computed). */
int		 cmp_question(const struct cmp_sample *s, size_t n, double T,
		    double threshold, struct cmp_result *r);

/* "better", "worse", "undecided"; NULL out of range.  Static. */
const char	*cmp_verdict_name(enum cmp_verdict v);

/* Whether a decision also goes to a challenger: 1 when the point of
 * (decision id, backend name) in [0, 1) is below share, 0 otherwise
 * (share <= 0 or NAN: never; share >= 1: always). */
int		 cmp_to_challenger(const char *decision_id,
		    const char *backend, double share);

/* That point: the 64-bit FNV-1a hash of the id's bytes, one 0 byte and
 * the backend name's bytes, mixed by MurmurHash3's fmix64, its top 53
 * bits as a fraction.  The same on every platform; independent of the
 * calibration's split (calibration.h), which hashes the id alone. */
double		 cmp_share_point(const char *decision_id,
		    const char *backend);

#endif
