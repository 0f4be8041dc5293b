/* calibration_render.c: a calibration report as JSON, text or HTML
 * (calibration_render.h).  Everything is read back from the report's
 * JSON, so that the three formats show the same figures. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "calibration_render.h"
#include "html.h"

typedef void (*render_fn)(FILE *, json_object *);

static void	 render_text(FILE *, json_object *);
static void	 render_json(FILE *, json_object *);
static void	 render_html(FILE *, json_object *);

static const struct format_def {
	const char	*name;
	const char	*media_type;
	render_fn	 fn;
} formats[CAL_FORMAT__MAX] = {
	[CAL_FORMAT_TEXT] = { "text", "text/plain; charset=utf-8",
	    render_text },
	[CAL_FORMAT_JSON] = { "json", "application/json", render_json },
	[CAL_FORMAT_HTML] = { "html", "text/html; charset=utf-8",
	    render_html },
};

enum cal_format
calibration_format(const char *name)
{
	int i;

	for (i = 0; i < CAL_FORMAT__MAX; i++)
		if (name != NULL && strcmp(formats[i].name, name) == 0)
			return (enum cal_format)i;
	return CAL_FORMAT__MAX;
}

const char *
calibration_media_type(enum cal_format f)
{
	return f < CAL_FORMAT__MAX ? formats[f].media_type : NULL;
}

int
calibration_render(FILE *f, json_object *report, enum cal_format fmt)
{
	if (fmt >= CAL_FORMAT__MAX)
		return -1;
	formats[fmt].fn(f, report);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* Reading the report. */

static json_object *
member(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* A figure; NAN for null or absent. */
static double
num(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	if (v == NULL || !(json_object_is_type(v, json_type_double) ||
	    json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

static const char *
str(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	return v != NULL && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

/* d with 4 decimals, or "-" when there is none. */
static const char *
fig(char buf[32], double d)
{
	if (!isfinite(d))
		return "-";
	snprintf(buf, 32, "%.4f", d);
	return buf;
}

/* A temperature, as short as it reads: 1, 1.5, 2.0134. */
static const char *
temp(char buf[32], double d)
{
	if (!isfinite(d))
		return "-";
	snprintf(buf, 32, "%.6g", d);
	return buf;
}

static int
flag(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	return v != NULL && json_object_get_boolean(v);
}

/* What a fit at the bound of its search means, into buf; NULL for a fit
 * inside it. */
static const char *
bound_note(char buf[256], json_object *t)
{
	char b[32];

	if (!flag(t, "at_bound"))
		return NULL;
	snprintf(buf, 256, "the fit reached the bound of its search (T = %s): "
	    "the data ask for a temperature beyond it; more outcomes or a "
	    "check of the model are needed", temp(b, num(t, "fitted")));
	return buf;
}

/* JSON */

static void
render_json(FILE *f, json_object *report)
{
	fprintf(f, "%s\n", json_object_to_json_string_ext(report,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Text */

/* The width of the question column. */
static int
name_width(json_object *questions, int least)
{
	int w = least;

	json_object_object_foreach(questions, name, q) {
		(void)q;
		if ((int)strlen(name) > w)
			w = (int)strlen(name);
	}
	return w;
}

static void
text_figures(FILE *f, json_object *questions, int w)
{
	char	 b[8][32];

	fprintf(f, "%-*s  %-6s  %6s  %8s  %8s  %8s  %8s  %8s  %8s  %12s\n", w,
	    "question", "type", "count", "accuracy", "mae", "brier",
	    "log_loss", "ece", "abstain", "acc_answered");
	json_object_object_foreach(questions, name, q) {
		fprintf(f, "%-*s  %-6s  %6lld  %8s  %8s  %8s  %8s  %8s  %8s  "
		    "%12s%s\n", w, name, str(q, "type"),
		    (long long)num(q, "count"), fig(b[0], num(q, "accuracy")),
		    fig(b[1], num(q, "mean_abs_error")),
		    fig(b[2], num(q, "brier")), fig(b[3], num(q, "log_loss")),
		    fig(b[4], num(q, "ece")), fig(b[5], num(q, "abstain_rate")),
		    fig(b[6], num(q, "accuracy_answered")),
		    flag(q, "small_sample") ? "  (small sample)" : "");
	}
}

static void
text_fit_row(FILE *f, int w, const char *name, json_object *t)
{
	char b[4][32];

	fprintf(f, "%-*s  %8s  %8s  %15s  %14s  %5lld/%lld\n", w, name,
	    temp(b[0], num(t, "current")), temp(b[1], num(t, "fitted")),
	    fig(b[2], num(t, "log_loss_before")),
	    fig(b[3], num(t, "log_loss_after")),
	    (long long)num(t, "fit_count"), (long long)num(t, "holdout_count"));
}

static void
text_temperature(FILE *f, json_object *report, json_object *questions,
    int w)
{
	char	 note[256];

	fprintf(f, "\ntemperature: fitted on one part of the decisions, "
	    "log loss on the other (held out)\n");
	fprintf(f, "%-*s  %8s  %8s  %15s  %14s  %s\n", w, "question",
	    "current", "fitted", "log_loss_before", "log_loss_after",
	    "fit/held-out");
	json_object_object_foreach(questions, name, q)
		text_fit_row(f, w, name, member(q, "temperature"));
	text_fit_row(f, w, "(all)", member(report, "temperature"));
	json_object_object_foreach(questions, n1, q1)
		if (bound_note(note, member(q1, "temperature")) != NULL)
			fprintf(f, "%s: %s\n", n1, note);
	if (bound_note(note, member(report, "temperature")) != NULL)
		fprintf(f, "(all): %s\n", note);
}

static void
text_threshold(FILE *f, json_object *questions, int w)
{
	json_object	*t = NULL;
	char		 b[2][32];

	json_object_object_foreach(questions, n0, q0) {
		(void)n0;
		if ((t = member(q0, "threshold")) != NULL)
			break;
	}
	if (t == NULL)
		return;
	fprintf(f, "\nabstain threshold for accuracy >= %s among the answered "
	    "(held out)\n%-*s  %9s  %13s\n", fig(b[0], num(t,
	    "target_accuracy")), w, "question", "threshold", "abstain_share");
	json_object_object_foreach(questions, name, q) {
		t = member(q, "threshold");
		if (isfinite(num(t, "threshold")))
			fprintf(f, "%-*s  %9s  %13s\n", w, name,
			    fig(b[0], num(t, "threshold")),
			    fig(b[1], num(t, "abstain_share")));
		else
			fprintf(f, "%-*s  %9s\n", w, name, "unreachable");
	}
}

static void
text_bins(FILE *f, json_object *questions)
{
	json_object	*bins, *bin;
	char		 b[4][32];
	size_t		 i;

	json_object_object_foreach(questions, name, q) {
		if (num(q, "count") == 0)
			continue;
		fprintf(f, "\nreliability of %s (bins with answers)\n"
		    "%-13s  %6s  %10s  %8s\n", name, "confidence", "count",
		    "mean_conf", "accuracy");
		bins = member(q, "bins");
		for (i = 0; i < json_object_array_length(bins); i++) {
			bin = json_object_array_get_idx(bins, i);
			if (num(bin, "count") == 0)
				continue;
			snprintf(b[0], sizeof(b[0]), "%.3f-%.3f",
			    num(bin, "low"), num(bin, "high"));
			fprintf(f, "%-13s  %6lld  %10s  %8s\n", b[0],
			    (long long)num(bin, "count"),
			    fig(b[1], num(bin, "confidence")),
			    fig(b[2], num(bin, "accuracy")));
		}
	}
}

static void
render_text(FILE *f, json_object *r)
{
	json_object	*questions = member(r, "questions"), *pub;
	char		 b[2][32];
	int		 w = name_width(questions, 8);

	fprintf(f, "calibration of schema %s, version %lld (temperature %s, "
	    "abstain threshold %s)\n\n", str(r, "schema"),
	    (long long)num(r, "version"),
	    temp(b[0], num(member(r, "temperature"), "current")),
	    temp(b[1], num(r, "abstain_threshold")));
	text_figures(f, questions, w);
	text_temperature(f, r, questions, w);
	text_threshold(f, questions, w);
	text_bins(f, questions);
	fprintf(f, "\nfigures at the version's temperature over every answer "
	    "with an outcome; fewer than 30 is a small sample (ECE "
	    "unreliable)\n");
	if ((pub = member(r, "published")) != NULL)
		fprintf(f, "published version %lld with temperature %s\n",
		    (long long)num(pub, "version"),
		    temp(b[0], num(pub, "temperature")));
}

/* HTML */

/* The plot area of a chart: x and y in [0, 1] to SVG coordinates. */
#define SVG_W	360
#define SVG_H	330
#define PLOT_X	52
#define PLOT_Y	16
#define PLOT_S	270

static double
px(double x)
{
	return PLOT_X + x * PLOT_S;
}

static double
py(double y)
{
	return PLOT_Y + (1 - y) * PLOT_S;
}

/* Frame, grid, the x axis (confidence) and the y axis's title; the y
 * tick labels are the caller's (ymax: the value at the top). */
static void
svg_open(FILE *f, const char *label, const char *ytitle, double ymax,
    int yint)
{
	int k;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"", SVG_W, SVG_H, SVG_W, SVG_H);
	html_esc(f, label);
	fprintf(f, "\">\n<rect x=\"%g\" y=\"%g\" width=\"%d\" height=\"%d\" "
	    "fill=\"#fbfbfb\" stroke=\"#999\"/>\n", px(0), py(1), PLOT_S,
	    PLOT_S);
	for (k = 0; k <= 5; k++) {
		double v = k / 5.0;

		fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
		    "class=\"grid\"/><line x1=\"%g\" y1=\"%g\" x2=\"%g\" "
		    "y2=\"%g\" class=\"grid\"/>\n", px(v), py(0), px(v), py(1),
		    px(0), py(v), px(1), py(v));
		fprintf(f, "<text x=\"%g\" y=\"%g\" class=\"tick\" "
		    "text-anchor=\"middle\">%.1f</text>\n", px(v), py(0) + 16,
		    v);
		if (yint)
			fprintf(f, "<text x=\"%g\" y=\"%g\" class=\"tick\" "
			    "text-anchor=\"end\">%.0f</text>\n", px(0) - 6,
			    py(v) + 4, v * ymax);
		else
			fprintf(f, "<text x=\"%g\" y=\"%g\" class=\"tick\" "
			    "text-anchor=\"end\">%.1f</text>\n", px(0) - 6,
			    py(v) + 4, v * ymax);
	}
	fprintf(f, "<text x=\"%g\" y=\"%d\" class=\"axis\" "
	    "text-anchor=\"middle\">confidence</text>\n", px(0.5), SVG_H - 4);
	fprintf(f, "<text transform=\"translate(14 %g) rotate(-90)\" "
	    "class=\"axis\" text-anchor=\"middle\">%s</text>\n", py(0.5),
	    ytitle);
}

/* Bars of accuracy per bin, the gap to the bin's mean confidence, and
 * the diagonal of perfect calibration. */
static void
svg_reliability(FILE *f, const char *name, json_object *bins)
{
	json_object	*bin;
	double		 lo, hi, acc, conf, top, bottom;
	char		 label[512];
	size_t		 i;

	snprintf(label, sizeof(label), "reliability diagram of %s", name);
	svg_open(f, label, "accuracy", 1, 0);
	for (i = 0; i < json_object_array_length(bins); i++) {
		bin = json_object_array_get_idx(bins, i);
		if (num(bin, "count") == 0)
			continue;
		lo = num(bin, "low");
		hi = num(bin, "high");
		acc = num(bin, "accuracy");
		conf = num(bin, "confidence");
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" class=\"acc\"><title>%.3f-%.3f: %lld "
		    "answers, accuracy %.3f, confidence %.3f</title></rect>\n",
		    px(lo) + 1, py(acc), px(hi) - px(lo) - 2, py(0) - py(acc),
		    lo, hi, (long long)num(bin, "count"), acc, conf);
		top = acc > conf ? acc : conf;
		bottom = acc > conf ? conf : acc;
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" class=\"gap\"/>\n", px(lo) + 1, py(top),
		    px(hi) - px(lo) - 2, py(bottom) - py(top));
	}
	fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
	    "class=\"ideal\"/>\n</svg>\n", px(0), py(0), px(1), py(1));
}

/* How many answers fell in each bin, with the mean confidence and the
 * accuracy as vertical lines. */
static void
svg_histogram(FILE *f, const char *name, json_object *q)
{
	json_object	*bins = member(q, "bins"), *bin;
	double		 max = 0, c, sum = 0, wconf = 0, lo, hi, scale;
	char		 label[512];
	size_t		 i;

	for (i = 0; i < json_object_array_length(bins); i++) {
		bin = json_object_array_get_idx(bins, i);
		if ((c = num(bin, "count")) > max)
			max = c;
		if (c > 0) {
			sum += c;
			wconf += c * num(bin, "confidence");
		}
	}
	/* A top that the five grid lines divide into whole numbers. */
	scale = max <= 5 ? 5 : ceil(max / 5) * 5;
	snprintf(label, sizeof(label), "confidence histogram of %s", name);
	svg_open(f, label, "answers", scale, 1);
	for (i = 0; i < json_object_array_length(bins); i++) {
		bin = json_object_array_get_idx(bins, i);
		if ((c = num(bin, "count")) == 0)
			continue;
		lo = num(bin, "low");
		hi = num(bin, "high");
		fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\" class=\"hist\"><title>%.3f-%.3f: %.0f "
		    "answers</title></rect>\n", px(lo) + 1, py(c / scale),
		    px(hi) - px(lo) - 2, py(0) - py(c / scale), lo, hi, c);
	}
	if (sum > 0) {
		fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" "
		    "class=\"meanconf\"/>\n", px(wconf / sum), py(0),
		    px(wconf / sum), py(1));
		if (isfinite(num(q, "accuracy")))
			fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" "
			    "y2=\"%g\" class=\"meanacc\"/>\n",
			    px(num(q, "accuracy")), py(0),
			    px(num(q, "accuracy")), py(1));
	}
	fputs("</svg>\n", f);
}

static void
row(FILE *f, const char *name, const char *value)
{
	fprintf(f, "<tr><th>%s</th><td>%s</td></tr>\n", name, value);
}

static void
html_figures(FILE *f, json_object *r, json_object *q)
{
	json_object	*t = member(q, "temperature"), *th = member(q,
			    "threshold");
	char		 b[3][32], line[160], note[256];

	fputs("<table class=\"figures\">\n", f);
	snprintf(line, sizeof(line), "%lld%s", (long long)num(q, "count"),
	    flag(q, "small_sample") ? " <span class=\"warn\">small sample: "
	    "ECE unreliable</span>" : "");
	row(f, "answers with an outcome", line);
	row(f, "accuracy", fig(b[0], num(q, "accuracy")));
	if (member(q, "mean_abs_error") != NULL)
		row(f, "mean absolute error", fig(b[0], num(q,
		    "mean_abs_error")));
	row(f, "Brier score", fig(b[0], num(q, "brier")));
	row(f, "log loss", fig(b[0], num(q, "log_loss")));
	row(f, "expected calibration error", fig(b[0], num(q, "ece")));
	snprintf(line, sizeof(line), "%s (threshold %s)",
	    fig(b[0], num(q, "abstain_rate")),
	    temp(b[1], num(r, "abstain_threshold")));
	row(f, "abstain rate", line);
	row(f, "accuracy when answered", fig(b[0], num(q,
	    "accuracy_answered")));
	snprintf(line, sizeof(line), "%s &rarr; %s", temp(b[0], num(t,
	    "current")), temp(b[1], num(t, "fitted")));
	row(f, "temperature: current &rarr; fitted", line);
	if (bound_note(note, t) != NULL)
		fprintf(f, "<tr><th></th><td class=\"warn\">%s</td></tr>\n",
		    note);
	snprintf(line, sizeof(line), "%s &rarr; %s (fit on %lld, held out "
	    "%lld)", fig(b[0], num(t, "log_loss_before")),
	    fig(b[1], num(t, "log_loss_after")), (long long)num(t, "fit_count"),
	    (long long)num(t, "holdout_count"));
	row(f, "held-out log loss: before &rarr; after", line);
	if (th != NULL) {
		if (isfinite(num(th, "threshold")))
			snprintf(line, sizeof(line), "%s, abstaining on %s",
			    fig(b[0], num(th, "threshold")),
			    fig(b[1], num(th, "abstain_share")));
		else
			snprintf(line, sizeof(line), "unreachable");
		fprintf(f, "<tr><th>threshold for accuracy &ge; %s</th>"
		    "<td>%s</td></tr>\n", temp(b[2], num(th,
		    "target_accuracy")), line);
	}
	fputs("</table>\n", f);
}

static void
html_backends(FILE *f, json_object *q)
{
	char b[4][32];

	fputs("<table class=\"list\"><tr><th>backend</th><th>answers</th>"
	    "<th>accuracy</th><th>Brier</th><th>log loss</th><th>ECE</th>"
	    "</tr>\n", f);
	json_object_object_foreach(member(q, "backends"), name, m) {
		fputs("<tr><td>", f);
		html_esc(f, name);
		fprintf(f, "</td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td>"
		    "<td>%s</td></tr>\n", (long long)num(m, "count"),
		    fig(b[0], num(m, "accuracy")), fig(b[1], num(m, "brier")),
		    fig(b[2], num(m, "log_loss")), fig(b[3], num(m, "ece")));
	}
	fputs("</table>\n", f);
}

static void
html_summary(FILE *f, json_object *r)
{
	json_object	*t = member(r, "temperature");
	char		 b[8][32], note[256];

	fputs("<table class=\"list\"><tr><th>question</th><th>type</th>"
	    "<th>answers</th><th>accuracy</th><th>Brier</th><th>log loss</th>"
	    "<th>ECE</th><th>abstain rate</th><th>fitted T</th></tr>\n", f);
	json_object_object_foreach(member(r, "questions"), name, q) {
		fputs("<tr><td>", f);
		html_esc(f, name);
		fprintf(f, "</td><td>%s</td><td>%lld</td><td>%s</td><td>%s</td>"
		    "<td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
		    str(q, "type"), (long long)num(q, "count"),
		    fig(b[0], num(q, "accuracy")), fig(b[1], num(q, "brier")),
		    fig(b[2], num(q, "log_loss")), fig(b[3], num(q, "ece")),
		    fig(b[4], num(q, "abstain_rate")),
		    temp(b[5], num(member(q, "temperature"), "fitted")));
	}
	fputs("</table>\n", f);
	fprintf(f, "<p>Temperature fitted over every question: <b>%s</b> "
	    "(now %s); held-out log loss %s &rarr; %s, fitted on %lld "
	    "answers and reported on %lld others.</p>\n",
	    temp(b[0], num(t, "fitted")), temp(b[1], num(t, "current")),
	    fig(b[2], num(t, "log_loss_before")),
	    fig(b[3], num(t, "log_loss_after")), (long long)num(t, "fit_count"),
	    (long long)num(t, "holdout_count"));
	if (bound_note(note, t) != NULL)
		fprintf(f, "<p class=\"warn\">Over every question, %s.</p>\n",
		    note);
}

/* The page's own rules, then the charts' (which the console serves in
 * its stylesheet too). */
static const char html_style[] =
	"body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:28px;"
	"border-top:1px solid #ccc;padding-top:12px}"
	"table.list td,table.list th{border-bottom:1px solid #ddd}"
	"dl{font-size:13px;color:#444}dt{font-weight:bold;margin-top:6px}";
const char calibration_chart_style[] =
	"section.cal h2{font-size:18px;margin-top:28px;"
	"border-top:1px solid #ccc;padding-top:12px}"
	"table{border-collapse:collapse;margin:8px 0}"
	"th,td{padding:3px 10px;text-align:left;font-size:14px}"
	"table.figures th{font-weight:normal;color:#555}"
	".charts{display:flex;flex-wrap:wrap;gap:16px}"
	"figure{margin:0;width:360px;max-width:100%}"
	"figure svg{max-width:100%;height:auto}"
	"figcaption{font-size:13px;color:#555}"
	".warn{color:#a33;font-weight:bold}"
	".grid{stroke:#e4e4e4}.tick{font-size:11px;fill:#555}"
	".axis{font-size:12px;fill:#333}"
	".acc{fill:#3b6fb6}.gap{fill:#d9534f;fill-opacity:.3;stroke:#d9534f}"
	".ideal{stroke:#555;stroke-dasharray:5 4}.hist{fill:#7a9cc6}"
	".meanconf{stroke:#d9534f;stroke-width:2}"
	".meanacc{stroke:#222;stroke-width:2;stroke-dasharray:5 3}";

void
calibration_render_body(FILE *f, json_object *r)
{
	html_summary(f, r);
	json_object_object_foreach(member(r, "questions"), name, q) {
		fputs("<section class=\"cal\">\n<h2>", f);
		html_esc(f, name);
		fprintf(f, " <small>(%s)</small></h2>\n", str(q, "type"));
		html_figures(f, r, q);
		fputs("<div class=\"charts\"><figure>\n", f);
		svg_reliability(f, name, member(q, "bins"));
		fputs("<figcaption>Reliability: accuracy per confidence bin "
		    "(blue), gap to the bin's mean confidence (red), perfect "
		    "calibration (dashed)</figcaption></figure>\n<figure>\n", f);
		svg_histogram(f, name, q);
		fputs("<figcaption>Answers per confidence bin; mean confidence "
		    "(red) and accuracy (dashed)</figcaption></figure></div>\n",
		    f);
		html_backends(f, q);
		fputs("</section>\n", f);
	}
}

static void
render_html(FILE *f, json_object *r)
{
	char b[32];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8"
	    "\">\n<title>Calibration of ", f);
	html_esc(f, str(r, "schema"));
	fprintf(f, " v%lld</title>\n<style>%s%s</style>\n</head><body>\n"
	    "<h1>Calibration of schema ", (long long)num(r, "version"),
	    html_style, calibration_chart_style);
	html_esc(f, str(r, "schema"));
	fprintf(f, ", version %lld</h1>\n", (long long)num(r, "version"));
	calibration_render_body(f, r);
	fprintf(f, "<h2>Definitions</h2>\n<dl>"
	    "<dt>Figures</dt><dd>Over every answer with an outcome, at the "
	    "version's temperature %s. Confidence is the highest tempered "
	    "probability (for yes/no questions, of either side); an answer "
	    "is right when its most probable option, level or side equals "
	    "the outcome.</dd>"
	    "<dt>Brier score</dt><dd>Sum over the classes of the squared "
	    "difference between probability and outcome (yes/no counts as two "
	    "classes, so it ranges from 0 to 2).</dd>"
	    "<dt>Log loss</dt><dd>Mean of &minus;ln of the probability given "
	    "to the outcome, clamped at 1e-15.</dd>"
	    "<dt>Expected calibration error</dt><dd>Over 15 equal-width "
	    "confidence bins, the mean of |accuracy &minus; confidence| "
	    "weighted by the bin's share of answers. Unreliable on fewer "
	    "than 30 answers.</dd>"
	    "<dt>Temperature</dt><dd>The temperature minimising the log loss "
	    "on one part of the decisions (a fixed split by decision id), "
	    "with the log loss before and after on the other part.</dd>"
	    "<dt>Threshold</dt><dd>The lowest abstain threshold at which the "
	    "answers of the held-out part that do not abstain reach the "
	    "target accuracy, and the share it abstains on.</dd></dl>\n"
	    "</body></html>\n", temp(b, num(member(r, "temperature"),
	    "current")));
}
