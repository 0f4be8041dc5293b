/* compare_test.c: TAP tests of compare.c and compare_render.c — simulated
 * arms drawn from a fixed generator (a calibrated backend right 80% of
 * the time against an overconfident one right 60%: better one way, worse
 * the other, reproducibly), identical arms left undecided, the estimate
 * of outcomes still needed worked out by hand, latency and tokens by
 * nearest rank, the share hash, the three formats with hostile names,
 * and edge cases that must neither crash nor print NaN. */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibration.h"
#include "compare.h"
#include "compare_render.h"
#include "tap.h"

#define EPS	1e-9
#define MAXN	400

/* The test's own generator (splitmix64), so that its data are fixed. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
uniform(void)
{
	return (double)(rng() >> 11) * 0x1.0p-53;
}

/* Three classes.  An arm right with probability right puts conf on the
 * class it names and the rest evenly on the other two. */
static double	 dist[CMP_ARMS][MAXN][3];
static struct cmp_sample samples[MAXN];

static void
arm_answer(double *p, size_t y, double right, double conf)
{
	size_t named = y, i;

	if (uniform() >= right)
		named = (y + 1 + (rng() & 1)) % 3;
	for (i = 0; i < 3; i++)
		p[i] = i == named ? conf : (1 - conf) / 2;
}

/* n decisions: arm a right 80% and calibrated (confidence .8), the
 * other right 60% and overconfident (.97). */
static void
simulate(size_t n, enum cmp_arm_id good)
{
	enum cmp_arm_id	 bad = good == CMP_CURRENT ? CMP_CHALLENGER :
			    CMP_CURRENT;
	size_t		 i;

	rng_state = 42;
	for (i = 0; i < n; i++) {
		size_t y = rng() % 3;

		arm_answer(dist[good][i], y, 0.8, 0.8);
		arm_answer(dist[bad][i], y, 0.6, 0.97);
		samples[i].n = 3;
		samples[i].y = y;
		samples[i].p[CMP_CURRENT] = dist[CMP_CURRENT][i];
		samples[i].p[CMP_CHALLENGER] = dist[CMP_CHALLENGER][i];
		samples[i].ms[CMP_CURRENT] = 100 + (double)(i % 50);
		samples[i].ms[CMP_CHALLENGER] = 300 + (double)(i % 50);
		samples[i].tokens[CMP_CURRENT] = 10;
		samples[i].tokens[CMP_CHALLENGER] = 20;
	}
}

static void
test_better_and_worse(void)
{
	struct cmp_result	r, again;

	simulate(300, CMP_CHALLENGER);
	ok(cmp_question(samples, 300, 1.0, 0.5, &r) == 0, "300 decisions");
	ok(r.count == 300 && r.skipped == 0, "all compared");
	ok(r.verdict == CMP_BETTER, "calibrated 80%% challenger: better (%s)",
	    cmp_verdict_name(r.verdict));
	ok(r.log_loss.high < 0 && r.log_loss.low <= r.log_loss.mean &&
	    r.log_loss.mean <= r.log_loss.high,
	    "log loss interval [%g, %g] below 0, around its mean %g",
	    r.log_loss.low, r.log_loss.high, r.log_loss.mean);
	ok(r.accuracy.low > 0 && r.accuracy.mean > 0.1 &&
	    r.accuracy.mean < 0.3, "accuracy difference %g in [%g, %g] "
	    "above 0, near +.2", r.accuracy.mean, r.accuracy.low,
	    r.accuracy.high);
	ok(r.more == 0, "decided: no more outcomes needed");
	is_num(r.arm[CMP_CHALLENGER].at_version.accuracy -
	    r.arm[CMP_CURRENT].at_version.accuracy, r.accuracy.mean, EPS,
	    "the accuracy difference is the arms' accuracies apart");
	ok(fabs(r.arm[CMP_CHALLENGER].fitted - 1) < 0.3,
	    "the calibrated arm's fitted T is near 1 (%g)",
	    r.arm[CMP_CHALLENGER].fitted);
	ok(r.arm[CMP_CURRENT].fitted > 1.5,
	    "the overconfident arm's fitted T is above 1 (%g)",
	    r.arm[CMP_CURRENT].fitted);
	ok(r.arm[CMP_CURRENT].at_fitted.log_loss <
	    r.arm[CMP_CURRENT].at_version.log_loss,
	    "its fitted T lowers its log loss");
	is_num(r.log_loss.mean, r.arm[CMP_CHALLENGER].at_fitted.log_loss -
	    r.arm[CMP_CURRENT].at_fitted.log_loss, 1e-9,
	    "the mean difference is the fitted log losses apart");
	is_num(r.arm[CMP_CURRENT].latency_p50, 124, EPS,
	    "current latency p50 by nearest rank");
	is_num(r.arm[CMP_CHALLENGER].latency_p99, 349, EPS,
	    "challenger latency p99 by nearest rank");
	is_num(r.arm[CMP_CHALLENGER].tokens_mean, 20, EPS, "tokens mean");
	is_num(r.arm[CMP_CHALLENGER].tokens_total, 6000, EPS, "tokens total");

	ok(cmp_question(samples, 300, 1.0, 0.5, &again) == 0 &&
	    again.log_loss.low == r.log_loss.low &&
	    again.log_loss.high == r.log_loss.high &&
	    again.accuracy.low == r.accuracy.low,
	    "the same samples give the same interval (fixed seed)");

	simulate(300, CMP_CURRENT);
	ok(cmp_question(samples, 300, 1.0, 0.5, &r) == 0, "swapped");
	ok(r.verdict == CMP_WORSE && r.log_loss.low > 0 && r.more == 0,
	    "the arms swapped: worse, interval [%g, %g] above 0",
	    r.log_loss.low, r.log_loss.high);
}

static void
test_identical(void)
{
	struct cmp_result	r;
	size_t			i;

	simulate(300, CMP_CHALLENGER);
	for (i = 0; i < 300; i++)
		samples[i].p[CMP_CHALLENGER] = samples[i].p[CMP_CURRENT];
	ok(cmp_question(samples, 300, 1.0, 0.5, &r) == 0 &&
	    r.verdict == CMP_UNDECIDED, "identical arms: not yet decided");
	ok(r.log_loss.mean == 0 && r.log_loss.low == 0 &&
	    r.log_loss.high == 0, "identical arms: difference 0, [0, 0]");
	ok(r.more == -1, "identical arms: outcomes needed unknown");
}

/* One-hot distributions: the loss is flat in T, so both fits keep the
 * version's, and a wrong answer costs -ln 1e-15 = c.  The current arm
 * is always right; the challenger wrong on one of n: mean c / n, sd
 * c / sqrt(n), need (1.96 sqrt(n))^2. */
static void
test_estimate(void)
{
	static const double	 hot[3][3] = { { 1, 0, 0 }, { 0, 1, 0 },
	    { 0, 0, 1 } };
	struct cmp_result	 r;
	double			 c = -log(1e-15);
	size_t			 i;

	for (i = 0; i < 40; i++) {
		memset(&samples[i], 0, sizeof(samples[i]));
		samples[i].n = 3;
		samples[i].y = i % 3;
		samples[i].p[CMP_CURRENT] = hot[i % 3];
		samples[i].p[CMP_CHALLENGER] = hot[i == 0 ? 1 : i % 3];
		samples[i].ms[CMP_CURRENT] = samples[i].ms[CMP_CHALLENGER] =
		    NAN;
		samples[i].tokens[CMP_CURRENT] = -1;
		samples[i].tokens[CMP_CHALLENGER] = NAN;
	}
	ok(cmp_question(samples, 10, 1.0, 0, &r) == 0, "10 decisions");
	is_num(r.log_loss.mean, c / 10, 1e-9, "mean c / 10");
	is_num(r.log_loss.sd, c / sqrt(10), 1e-9, "sd c / sqrt(10)");
	ok(r.verdict == CMP_UNDECIDED, "fewer than 30: undecided");
	ok(r.more == 29, "need ceil(1.96^2 10) = 39, less 10: 29 (%lld)",
	    (long long)r.more);
	ok(r.arm[CMP_CURRENT].latency_count == 0 &&
	    isnan(r.arm[CMP_CURRENT].latency_p50) &&
	    r.arm[CMP_CHALLENGER].tokens_count == 0 &&
	    isnan(r.arm[CMP_CHALLENGER].tokens_mean),
	    "unknown latency and tokens: none counted, NAN figures");
	/* Half of 10 wrong: nearly every resample holds one, so the
	 * interval clears 0, but 10 decisions decide nothing. */
	for (i = 0; i < 10; i++)
		samples[i].p[CMP_CHALLENGER] = hot[i < 5 ? (i + 1) % 3 : i % 3];
	ok(cmp_question(samples, 10, 1.0, 0, &r) == 0 && r.log_loss.low > 0 &&
	    r.verdict == CMP_UNDECIDED && r.more == 20, "5 wrong in 10: "
	    "interval above 0, undecided below 30 decisions, 20 more");
	for (i = 0; i < 10; i++) {
		samples[i].p[CMP_CHALLENGER] = samples[i].p[CMP_CURRENT];
		samples[i].p[CMP_CURRENT] = hot[i < 5 ? (i + 1) % 3 : i % 3];
	}
	ok(cmp_question(samples, 10, 1.0, 0, &r) == 0 &&
	    r.log_loss.high < 0 && r.verdict == CMP_UNDECIDED,
	    "the other way: interval below 0, undecided all the same");
	for (i = 0; i < 10; i++) {
		samples[i].p[CMP_CURRENT] = hot[i % 3];
		samples[i].p[CMP_CHALLENGER] = hot[i == 0 ? 1 : i % 3];
	}
	ok(cmp_question(samples, 40, 1.0, 0, &r) == 0 &&
	    r.verdict == CMP_UNDECIDED && r.log_loss.low == 0,
	    "one wrong in 40: resamples without it, interval from 0");
	ok(r.more == 154 - 40, "need ceil(1.96^2 40) = 154, less 40 (%lld)",
	    (long long)r.more);
	is_num(r.arm[CMP_CHALLENGER].fitted, 1, EPS,
	    "a flat loss keeps the version's T");
}

static void
test_edges(void)
{
	static const double	 even[3] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	static const double	 good[3] = { .1, .1, .8 }, neg[3] = { -1, 1,
	    1 }, nan3[3] = { NAN, .5, .5 };
	struct cmp_sample	 s[6];
	struct cmp_result	 r;
	size_t			 i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 6; i++) {
		s[i].n = 3;
		s[i].y = 2;
		s[i].p[CMP_CURRENT] = good;
		s[i].p[CMP_CHALLENGER] = even;
	}
	ok(cmp_question(s, 0, 1.0, 0.5, &r) == 0 && r.count == 0 &&
	    isnan(r.arm[CMP_CURRENT].at_version.log_loss) &&
	    isnan(r.log_loss.low) && r.verdict == CMP_UNDECIDED &&
	    r.more == -1, "no sample: NAN figures, undecided, unknown");
	ok(cmp_question(s, 1, 1.0, 0.5, &r) == 0 && r.count == 1 &&
	    r.verdict == CMP_UNDECIDED && r.more == -1 &&
	    isnan(r.log_loss.sd) && r.log_loss.low == r.log_loss.high,
	    "one sample: undecided, sd unknown");
	is_num(r.arm[CMP_CHALLENGER].at_fitted.log_loss, log(3), 1e-12,
	    "all-equal distributions: log loss ln 3 at any T");
	ok(isfinite(r.arm[CMP_CHALLENGER].fitted) &&
	    isfinite(r.arm[CMP_CHALLENGER].at_fitted.ece),
	    "all-equal distributions: finite fit and ECE");
	s[1].y = 3;
	s[2].p[CMP_CHALLENGER] = NULL;
	s[3].p[CMP_CURRENT] = neg;
	s[4].p[CMP_CHALLENGER] = nan3;
	s[5].n = 0;
	s[5].y = 0;
	ok(cmp_question(s, 6, 1.0, 0.5, &r) == 0 && r.count == 1 &&
	    r.skipped == 5, "outcome out of range, no distribution, a "
	    "negative or NaN value, no class: left out");
	ok(cmp_question(s, CMP_MAX_SAMPLES + 1, 1.0, 0.5, &r) == -2,
	    "more than CMP_MAX_SAMPLES: refused");
}

static void
test_share(void)
{
	char	 id[64];
	size_t	 i, in = 0, both = 0, fit = 0;
	double	 x;
	int	 same = 1, range = 1;

	x = cmp_share_point("0190a1b2-0000-7000-8000-000000000001", "gpt");
	ok(x == cmp_share_point("0190a1b2-0000-7000-8000-000000000001",
	    "gpt"), "the same id and backend: the same point");
	ok(x != cmp_share_point("0190a1b2-0000-7000-8000-000000000001",
	    "gpt2"), "another backend: another point");
	ok(cmp_share_point("ab", "c") != cmp_share_point("a", "bc"),
	    "the 0 byte keeps id and name apart");
	/* The hash pinned, as an implementation of its own (in Python)
	 * computes it: FNV-1a 64 and fmix64 are fixed arithmetic. */
	is_num(cmp_share_point("", ""), (double)(0xb9034ad37056f5fbULL >>
	    11) * 0x1.0p-53, 0, "the point of (\"\", \"\") as pinned");
	is_num(x, (double)(0x67a3fbbbedc61735ULL >> 11) * 0x1.0p-53, 0,
	    "the point of (an id, \"gpt\") as pinned");
	for (i = 0; i < 10000; i++) {
		snprintf(id, sizeof(id), "0190a1b2-%04zx-7000-8000-%012zx",
		    i % 65536, i * 7919);
		x = cmp_share_point(id, "challenger-a");
		range &= x >= 0 && x < 1;
		same &= cmp_to_challenger(id, "challenger-a", .3) ==
		    cmp_to_challenger(id, "challenger-a", .3);
		if (cmp_to_challenger(id, "challenger-a", .3)) {
			in++;
			both += cmp_to_challenger(id, "challenger-b", .5);
			fit += cal_in_fit_part(id);
		}
		if (cmp_to_challenger(id, "x", 0) ||
		    cmp_to_challenger(id, "x", NAN) ||
		    !cmp_to_challenger(id, "x", 1) ||
		    !cmp_to_challenger(id, "x", 1.5))
			same = 0;
	}
	ok(range, "every point in [0, 1)");
	ok(same, "deterministic; share 0 or NAN never, 1 always");
	ok(fabs(in / 10000.0 - .3) < .02, "share .3: %zu of 10000", in);
	ok(fabs((double)both / (double)in - .5) < .04,
	    "another backend's share is independent: %zu of %zu", both, in);
	ok(fabs((double)fit / (double)in - .5) < .04,
	    "and so is the calibration's split: %zu of %zu", fit, in);
}

/* The rendered text of report in fmt; the caller frees it. */
static char *
render(json_object *report, enum cal_format fmt)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&text, &len);

	if (f == NULL || compare_render(f, report, fmt) != 0) {
		printf("# render failed\n");
		abort();
	}
	fclose(f);
	return text;
}

/* Whether text holds "nan" or "inf" as a word, in any case. */
static int
has_nan(const char *text)
{
	static const char *const bad[] = { "nan", "inf" };
	const char	*t;
	size_t		 k;

	for (k = 0; k < 2; k++)
		for (t = text; (t = strcasestr(t, bad[k])) != NULL; t++)
			if ((t == text || !isalpha((unsigned char)t[-1])) &&
			    !isalpha((unsigned char)t[3]))
				return 1;
	return 0;
}

static size_t
count(const char *text, const char *what)
{
	size_t n = 0;

	for (; (text = strstr(text, what)) != NULL; text++)
		n++;
	return n;
}

static void
test_render(void)
{
	static const char	 hostile[] = "<script>alert('x')</script>&\"";
	struct cmp_result	 r, none;
	json_object		*report, *back, *c;
	char			*html, *text, *json;
	enum cal_format		 f;

	simulate(300, CMP_CHALLENGER);
	cmp_question(samples, 300, 1.0, 0.5, &r);
	cmp_question(samples, 0, 1.0, 0.5, &none);
	report = compare_report(hostile, 3, "<b>current</b>", 1.0, 0.5);
	compare_report_add(report, hostile, Q_CHOICE, "<img src=x "
	    "onerror=alert(1)>", &r);
	compare_report_add(report, hostile, Q_CHOICE, "empty", &none);
	compare_report_add(report, "level", Q_SCORE, "empty", &none);
	compare_report_add(report, "level", Q_SCORE, "empty", &r);

	html = render(report, CAL_FORMAT_HTML);
	ok(strstr(html, "<script") == NULL && strstr(html, "<img") == NULL &&
	    strstr(html, "<b>current") == NULL, "HTML: no name unescaped");
	ok(strstr(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
	    "&amp;&quot;") != NULL && strstr(html, "&lt;img src=x "
	    "onerror=alert(1)&gt;") != NULL, "HTML: names escaped");
	ok(count(html, "http") == count(html, "xmlns=\"http://www.w3.org/"
	    "2000/svg\"") && strstr(html, "src=\"") == NULL &&
	    strstr(html, "<link") == NULL && strstr(html, "url(") == NULL,
	    "HTML: self-contained");
	ok(strstr(html, "Verdict: better") != NULL &&
	    strstr(html, "Verdict: not yet decided") != NULL,
	    "HTML: both verdicts");
	ok(count(html, "<svg") == 2, "HTML: an interval chart per question");

	text = render(report, CAL_FORMAT_TEXT);
	ok(strstr(text, "verdict: better") != NULL && strstr(text,
	    "challenger <img src=x onerror=alert(1)>: 300 decisions") != NULL,
	    "text: the verdict and the names");
	ok(count(text, "mean abs error") == 1, "text: MAE for the score only");
	ok(strstr(text, "how many more outcomes would decide it is unknown") !=
	    NULL, "text: an unknown estimate said so");

	json = render(report, CAL_FORMAT_JSON);
	back = json_tokener_parse(json);
	ok(back != NULL && json_object_object_get_ex(back, "questions", &c) &&
	    json_object_object_get_ex(c, hostile, &c) &&
	    json_object_object_get_ex(c, "challengers", &c) &&
	    json_object_object_length(c) == 2, "JSON: reads back, two "
	    "challengers on the hostile question");
	ok(json_object_object_get_ex(back, "questions", &c) &&
	    json_object_object_get_ex(c, "level", &c) &&
	    json_object_object_get_ex(c, "challengers", &c) &&
	    json_object_object_length(c) == 1 &&
	    json_object_object_get_ex(c, "empty", &c) &&
	    json_object_object_get_ex(c, "count", &c) &&
	    json_object_get_int(c) == 300, "JSON: a result added again "
	    "replaces the first");
	json_object_put(back);

	ok(!has_nan(html) && !has_nan(text) && !has_nan(json),
	    "no NaN nor Inf in any format, with an empty comparison");
	ok(compare_render(stdout, report, CAL_FORMAT__MAX) == -1,
	    "an unknown format: -1");
	for (f = 0; f < CAL_FORMAT__MAX; f++) {
		char *empty;
		json_object *e = compare_report("s", 1, "b", NAN, NAN);

		empty = render(e, f);
		ok(!has_nan(empty), "a report without questions, format %d",
		    (int)f);
		free(empty);
		json_object_put(e);
	}
	free(html);
	free(text);
	free(json);
	json_object_put(report);
}

int
main(void)
{
	test_better_and_worse();
	test_identical();
	test_estimate();
	test_edges();
	test_share();
	test_render();
	return tap_done();
}
