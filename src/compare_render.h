/* compare_render.h: a comparison report (doc/design.md, section 15.1):
 * the results of compare.h for one schema version over one or more
 * questions and challengers, built as JSON and written out as JSON, as
 * readable text, or as one self-contained HTML page (inline CSS and SVG;
 * no script, font or image from elsewhere).  The formats are
 * calibration_render.h's.  Pure: writes to the FILE it is given and
 * nowhere else.
 *
 * The report:
 *   {"schema": S, "version": N, "backend": B, "temperature": T,
 *    "abstain_threshold": x,
 *    "method": {"resamples": n, "seed": n, "level": 0.95,
 *               "min_pairs": n, "rule": text},
 *    "questions": {Q: {"type": "choice"|"score"|"noul",
 *      "challengers": {C: {"count": n, "skipped": n,
 *        "small_sample": bool,
 *        "current": ARM, "challenger": ARM,
 *        "difference": {"log_loss": DIFF, "accuracy": DIFF},
 *        "verdict": "better"|"worse"|"undecided",
 *        "more_outcomes": n | null}}}}}
 *   ARM: {"at_version": FIG, "at_fitted": FIG,
 *         "fitted": {"temperature": T, "at_bound": bool},
 *         "latency_ms": {"count": n, "p50": x, "p99": x},
 *         "tokens": {"count": n, "mean": x, "total": x}}
 *   FIG: {"accuracy", "brier", "log_loss", "ece", "abstain_rate",
 *         "mean_abs_error" (scores only): x}
 *   DIFF: {"mean", "sd", "low", "high": x}
 * A figure there is none of is null. */
#ifndef EVALGATE_COMPARE_RENDER_H
#define EVALGATE_COMPARE_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "calibration_render.h"
#include "compare.h"
#include "question.h"

/* A new report without questions, the caller's to put; the strings are
 * copied.  backend: the version's (the current arm). */
json_object	*compare_report(const char *schema, int64_t version,
		    const char *backend, double temperature,
		    double threshold);
/* Adds r, the comparison of challenger with the current backend on
 * question (of type type), to report (a compare_report()); the strings
 * are copied.  A second result for the same question and challenger
 * replaces the first. */
void		 compare_report_add(json_object *report,
		    const char *question, enum qtype type,
		    const char *challenger, const struct cmp_result *r);
/* Writes report (borrowed) to f.  0, or -1 if writing failed or fmt is
 * none of calibration_format()'s. */
int		 compare_render(FILE *f, json_object *report,
		    enum cal_format fmt);
/* The HTML page's body without its frame or definitions: the current
 * backend, then per question the chart of the intervals and each
 * challenger's figures and verdict; the console's schema page shows it
 * (handler_console_schema.c).  Its classes' rules are
 * compare_chart_style. */
void		 compare_render_body(FILE *f, json_object *report);
extern const char compare_chart_style[];

#endif
