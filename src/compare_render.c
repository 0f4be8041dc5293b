/* compare_render.c: a comparison report (compare_render.h) built from the
 * results of compare.c and written as JSON, text or HTML.  The writers
 * read everything back from the report's JSON, so that the three formats
 * show the same figures. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "calibration_render.h"
#include "compare.h"
#include "compare_render.h"
#include "html.h"
#include "json_util.h"
#include "question.h"

/* Building the report. */

static const char rule[] = "each backend at its own fitted temperature: "
    "better when the 95% interval of the log loss difference (challenger "
    "minus current, paired bootstrap over the decisions) lies below 0, "
    "worse when above, otherwise, or on fewer decisions than min_pairs, "
    "not yet decided";

json_object *
compare_report(const char *schema, int64_t version, const char *backend,
    double temperature, double threshold)
{
	json_object *o = ju_obj(), *m = ju_obj();

	ju_add_str(o, "schema", schema);
	ju_add(o, "version", ju_int(version));
	ju_add_str(o, "backend", backend);
	ju_add_figure(o, "temperature", temperature);
	ju_add_figure(o, "abstain_threshold", threshold);
	ju_add(m, "resamples", ju_int(CMP_RESAMPLES));
	ju_add(m, "seed", ju_int((int64_t)CMP_SEED));
	ju_add_figure(m, "level", CMP_LEVEL);
	ju_add(m, "min_pairs", ju_int(CMP_MIN_PAIRS));
	ju_add_str(m, "rule", rule);
	ju_add(o, "method", m);
	ju_add(o, "questions", ju_obj());
	return o;
}

static json_object *
figures_json(const struct cal_metrics *m, enum qtype type)
{
	json_object *o = ju_obj();

	ju_add_figure(o, "accuracy", m->accuracy);
	ju_add_figure(o, "brier", m->brier);
	ju_add_figure(o, "log_loss", m->log_loss);
	ju_add_figure(o, "ece", m->ece);
	ju_add_figure(o, "abstain_rate", m->abstain_rate);
	if (type == Q_SCORE)
		ju_add_figure(o, "mean_abs_error", m->mean_abs_error);
	return o;
}

static json_object *
arm_json(const struct cmp_arm *a, enum qtype type)
{
	json_object *o = ju_obj(), *t;

	ju_add(o, "at_version", figures_json(&a->at_version, type));
	ju_add(o, "at_fitted", figures_json(&a->at_fitted, type));
	t = ju_obj();
	ju_add_figure(t, "temperature", a->fitted);
	ju_add(t, "at_bound", ju_bool(a->at_bound));
	ju_add(o, "fitted", t);
	t = ju_obj();
	ju_add_count(t, "count", a->latency_count);
	ju_add_figure(t, "p50", a->latency_p50);
	ju_add_figure(t, "p99", a->latency_p99);
	ju_add(o, "latency_ms", t);
	t = ju_obj();
	ju_add_count(t, "count", a->tokens_count);
	ju_add_figure(t, "mean", a->tokens_mean);
	ju_add_figure(t, "total", a->tokens_total);
	ju_add(o, "tokens", t);
	return o;
}

static json_object *
diff_json(const struct cmp_diff *d)
{
	json_object *o = ju_obj();

	ju_add_figure(o, "mean", d->mean);
	ju_add_figure(o, "sd", d->sd);
	ju_add_figure(o, "low", d->low);
	ju_add_figure(o, "high", d->high);
	return o;
}

static json_object *
member(json_object *o, const char *k)
{
	json_object *v;

	return o != NULL && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* The member k of o, an object, made when it is not there. */
static json_object *
object_at(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	if (v == NULL || !json_object_is_type(v, json_type_object)) {
		v = ju_obj();
		ju_add(o, k, v);
	}
	return v;
}

void
compare_report_add(json_object *report, const char *question,
    enum qtype type, const char *challenger, const struct cmp_result *r)
{
	json_object *q, *c, *d;

	q = object_at(object_at(report, "questions"), question);
	if (member(q, "type") == NULL)
		ju_add_str(q, "type", question_type_name(type) != NULL ?
		    question_type_name(type) : "");
	c = ju_obj();
	ju_add_count(c, "count", r->count);
	ju_add_count(c, "skipped", r->skipped);
	ju_add(c, "small_sample", ju_bool(r->count < CMP_MIN_PAIRS));
	ju_add(c, "current", arm_json(&r->arm[CMP_CURRENT], type));
	ju_add(c, "challenger", arm_json(&r->arm[CMP_CHALLENGER], type));
	d = ju_obj();
	ju_add(d, "log_loss", diff_json(&r->log_loss));
	ju_add(d, "accuracy", diff_json(&r->accuracy));
	ju_add(c, "difference", d);
	ju_add_str(c, "verdict", cmp_verdict_name(r->verdict) != NULL ?
	    cmp_verdict_name(r->verdict) : "undecided");
	ju_add(c, "more_outcomes", r->more >= 0 ? ju_int(r->more) : NULL);
	ju_add(object_at(q, "challengers"), challenger, c);
}

/* Reading the report back. */

/* The member at a path of up to three names (NULL ends it early). */
static json_object *
at(json_object *o, const char *a, const char *b, const char *c)
{
	o = member(o, a);
	if (b != NULL)
		o = member(o, b);
	if (c != NULL)
		o = member(o, c);
	return o;
}

/* A figure; NAN for null, absent or not a number. */
static double
value(json_object *v)
{
	if (v == NULL || !(json_object_is_type(v, json_type_double) ||
	    json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

static double
numk(json_object *o, const char *k)
{
	return value(member(o, k));
}

static const char *
str(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	return v != NULL && json_object_is_type(v, json_type_string) ?
	    json_object_get_string(v) : "";
}

static int
flag(json_object *o, const char *k)
{
	json_object *v = member(o, k);

	return v != NULL && json_object_get_boolean(v);
}

/* How a figure is written: "-" when there is none. */
enum style {
	S_FIG,		/* 4 decimals */
	S_SIGNED,	/* 4 decimals with a sign */
	S_SHORT,	/* as short as it reads: a temperature */
	S_ONE,		/* 1 decimal: ms, tokens */
	S_INT,
	S__MAX
};

static const struct {
	int	 digits;	/* decimals, or significant ones for short */
	int	 sign;		/* a + before the positive */
	int	 shortest;	/* %g rather than %f */
} styles[S__MAX] = {
	[S_FIG] = { 4, 0, 0 },
	[S_SIGNED] = { 4, 1, 0 },
	[S_SHORT] = { 6, 0, 1 },
	[S_ONE] = { 1, 0, 0 },
	[S_INT] = { 0, 0, 0 },
};

static const char *
fmt(char buf[32], double d, enum style s)
{
	if (!isfinite(d))
		return "-";
	if (styles[s].shortest)
		snprintf(buf, 32, "%.*g", styles[s].digits, d);
	else
		snprintf(buf, 32, styles[s].sign ? "%+.*f" : "%.*f",
		    styles[s].digits, d);
	return buf;
}

/* The rows of an arm's figures, in the order shown: where each is in
 * ARM, and how it is written.  A row no arm has (mean_abs_error but for
 * scores) is left out. */
static const struct figrow {
	const char	*label;
	const char	*group, *key;
	enum style	 style;
} figrows[] = {
	{ "accuracy", "at_version", "accuracy", S_FIG },
	{ "log loss, version T", "at_version", "log_loss", S_FIG },
	{ "log loss, fitted T", "at_fitted", "log_loss", S_FIG },
	{ "Brier, version T", "at_version", "brier", S_FIG },
	{ "Brier, fitted T", "at_fitted", "brier", S_FIG },
	{ "ECE, version T", "at_version", "ece", S_FIG },
	{ "ECE, fitted T", "at_fitted", "ece", S_FIG },
	{ "abstain rate, version T", "at_version", "abstain_rate", S_FIG },
	{ "abstain rate, fitted T", "at_fitted", "abstain_rate", S_FIG },
	{ "mean abs error, version T", "at_version", "mean_abs_error",
	    S_FIG },
	{ "fitted T", "fitted", "temperature", S_SHORT },
	{ "latency p50 ms", "latency_ms", "p50", S_ONE },
	{ "latency p99 ms", "latency_ms", "p99", S_ONE },
	{ "answers with a latency", "latency_ms", "count", S_INT },
	{ "tokens, mean", "tokens", "mean", S_ONE },
	{ "tokens, total", "tokens", "total", S_INT },
};

#define NFIGROWS	(sizeof(figrows) / sizeof(figrows[0]))

static const char *const arms[CMP_ARMS] = {
	[CMP_CURRENT] = "current",
	[CMP_CHALLENGER] = "challenger",
};

/* Whether an arm has the row's member, null or not. */
static int
row_shown(json_object *c, const struct figrow *w)
{
	json_object	*g;
	size_t		 a;

	for (a = 0; a < CMP_ARMS; a++)
		if ((g = at(c, arms[a], w->group, NULL)) != NULL &&
		    json_object_object_get_ex(g, w->key, NULL))
			return 1;
	return 0;
}

static const char *
cell(char buf[32], json_object *c, enum cmp_arm_id a,
    const struct figrow *w)
{
	return fmt(buf, value(at(c, arms[a], w->group, w->key)), w->style);
}

/* The differences shown, and the words of each verdict. */
static const struct diffrow {
	const char	*label, *key;
} diffrows[] = {
	{ "log loss", "log_loss" },
	{ "accuracy", "accuracy" },
};

#define NDIFFROWS	(sizeof(diffrows) / sizeof(diffrows[0]))

static const struct verdict_words {
	const char	*name, *words, *class;
} verdict_words[] = {
	{ "better", "better: the challenger's log loss is lower", "better" },
	{ "worse", "worse: the challenger's log loss is higher", "worse" },
	{ "undecided", "not yet decided", "undecided" },
};

static const struct verdict_words *
words_of(json_object *c)
{
	size_t i;

	for (i = 0; i < sizeof(verdict_words) / sizeof(verdict_words[0]);
	    i++)
		if (strcmp(verdict_words[i].name, str(c, "verdict")) == 0)
			return &verdict_words[i];
	return &verdict_words[2];
}

/* What the estimate of outcomes still needed says, into buf; "" once
 * decided. */
static const char *
more_words(char buf[160], json_object *c)
{
	double more = numk(c, "more_outcomes");

	if (strcmp(str(c, "verdict"), "undecided") != 0)
		buf[0] = '\0';
	else if (isfinite(more))
		snprintf(buf, 160, "about %.0f more outcomes would decide it",
		    more);
	else
		snprintf(buf, 160, "how many more outcomes would decide it is "
		    "unknown (no difference seen yet)");
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

/* The width of the current arm's column: the longest of its header and
 * the arms' names, within 10..60. */
static int
text_width(json_object *r, const char *name)
{
	size_t n = strlen("challenger");

	if (strlen(str(r, "backend")) > n)
		n = strlen(str(r, "backend"));
	if (strlen(name) > n)
		n = strlen(name);
	return n > 60 ? 60 : (int)n;
}

static void
text_entry(FILE *f, json_object *r, const char *name, json_object *c)
{
	const struct figrow	*w;
	json_object		*d;
	char			 b[3][32], more[160];
	int			 cw = text_width(r, name);
	size_t			 i;

	fprintf(f, "%-26s  %-*s  %s\n", "", cw, "current", "challenger");
	fprintf(f, "%-26s  %-*s  %s\n", "backend", cw, str(r, "backend"),
	    name);
	for (i = 0; i < NFIGROWS; i++) {
		w = &figrows[i];
		if (!row_shown(c, w))
			continue;
		fprintf(f, "%-26s  %-*s  %s%s\n", w->label, cw,
		    cell(b[0], c, CMP_CURRENT, w),
		    cell(b[1], c, CMP_CHALLENGER, w),
		    strcmp(w->group, "fitted") == 0 &&
		    (flag(at(c, "current", "fitted", NULL), "at_bound") ||
		    flag(at(c, "challenger", "fitted", NULL), "at_bound")) ?
		    "  (a fit at the bound of its search)" : "");
	}
	fprintf(f, "difference (challenger - current), mean and 95%% "
	    "interval:\n");
	for (i = 0; i < NDIFFROWS; i++) {
		d = at(c, "difference", diffrows[i].key, NULL);
		fprintf(f, "  %-10s %s  [%s, %s]\n", diffrows[i].label,
		    fmt(b[0], numk(d, "mean"), S_SIGNED),
		    fmt(b[1], numk(d, "low"), S_SIGNED),
		    fmt(b[2], numk(d, "high"), S_SIGNED));
	}
	fprintf(f, "verdict: %s%s%s\n", words_of(c)->words,
	    *more_words(more, c) != '\0' ? "; " : "", more);
}

static void
render_text(FILE *f, json_object *r)
{
	char	 b[2][32];

	fprintf(f, "comparison with challengers of schema %s, version %lld "
	    "(backend %s, temperature %s, abstain threshold %s)\n",
	    str(r, "schema"), (long long)numk(r, "version"),
	    str(r, "backend"), fmt(b[0], numk(r, "temperature"), S_SHORT),
	    fmt(b[1], numk(r, "abstain_threshold"), S_SHORT));
	fprintf(f, "verdict: %s (%lld resamples, min_pairs %lld)\n",
	    str(member(r, "method"), "rule"),
	    (long long)numk(member(r, "method"), "resamples"),
	    (long long)numk(member(r, "method"), "min_pairs"));
	json_object_object_foreach(member(r, "questions"), qname, q) {
		json_object_object_foreach(member(q, "challengers"), cname, c) {
			fprintf(f, "\nquestion %s (%s), challenger %s: %lld "
			    "decisions with an outcome and both answers%s\n",
			    qname, str(q, "type"), cname,
			    (long long)numk(c, "count"),
			    flag(c, "small_sample") ? " (small sample)" : "");
			text_entry(f, r, cname, c);
		}
	}
}

/* HTML */

/* The interval chart of a question: a row per challenger, the log loss
 * difference's interval as a bar and its mean as a dot, 0 as a line. */
#define SVG_W		640
#define ROW_H		28
#define LABEL_W		180
#define PLOT_W		(SVG_W - LABEL_W - 40)

static double
span_of(json_object *q)
{
	double	 s = 0.01, v;
	int	 k;
	static const char *const ends[] = { "low", "high", "mean" };

	json_object_object_foreach(member(q, "challengers"), n, c) {
		(void)n;
		for (k = 0; k < 3; k++) {
			v = fabs(numk(at(c, "difference", "log_loss", NULL),
			    ends[k]));
			if (isfinite(v) && v > s)
				s = v;
		}
	}
	return s * 1.1;
}

static double
sx(double d, double span)
{
	return LABEL_W + (d + span) / (2 * span) * PLOT_W;
}

static void
svg_intervals(FILE *f, const char *qname, json_object *q)
{
	json_object	*d;
	double		 span = span_of(q), lo, hi, mean;
	int		 rows = json_object_object_length(member(q,
			    "challengers")), i = 0, h = (rows + 1) * ROW_H + 24;
	char		 b[3][32];

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"log loss difference of the challengers on ",
	    SVG_W, h, SVG_W, h);
	html_esc(f, qname);
	fprintf(f, "\">\n<line x1=\"%.2f\" y1=\"8\" x2=\"%.2f\" y2=\"%d\" "
	    "class=\"zero\"/>\n", sx(0, span), sx(0, span), h - 24);
	fprintf(f, "<text x=\"%.2f\" y=\"%d\" class=\"tick\" "
	    "text-anchor=\"middle\">%s</text><text x=\"%.2f\" y=\"%d\" "
	    "class=\"tick\" text-anchor=\"middle\">0</text><text x=\"%.2f\" "
	    "y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
	    sx(-span, span), h - 8, fmt(b[0], -span, S_SIGNED), sx(0, span),
	    h - 8, sx(span, span), h - 8, fmt(b[1], span, S_SIGNED));
	json_object_object_foreach(member(q, "challengers"), name, c) {
		double y = 8 + ROW_H * (i++ + 0.5);

		d = at(c, "difference", "log_loss", NULL);
		lo = numk(d, "low");
		hi = numk(d, "high");
		mean = numk(d, "mean");
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"axis\" "
		    "text-anchor=\"end\">", LABEL_W - 8, y + 4);
		html_esc(f, name);
		fputs("</text>\n", f);
		if (!isfinite(lo) || !isfinite(hi) || !isfinite(mean))
			continue;
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
		    "y2=\"%.1f\" class=\"ci %s\"><title>", sx(lo, span), y,
		    sx(hi, span), y, words_of(c)->class);
		html_esc(f, name);
		fprintf(f, ": %s [%s, %s]</title></line>\n<circle cx=\"%.2f\" "
		    "cy=\"%.1f\" r=\"4\" class=\"mean\"/>\n",
		    fmt(b[0], mean, S_SIGNED), fmt(b[1], lo, S_SIGNED),
		    fmt(b[2], hi, S_SIGNED), sx(mean, span), y);
	}
	fputs("</svg>\n", f);
}

static void
html_entry(FILE *f, json_object *r, const char *name, json_object *c)
{
	const struct verdict_words	*v = words_of(c);
	const struct figrow		*w;
	json_object			*d;
	char				 b[3][32], more[160];
	size_t				 i;

	fputs("<table class=\"list\"><tr><th></th><th>current: ", f);
	html_esc(f, str(r, "backend"));
	fputs("</th><th>challenger: ", f);
	html_esc(f, name);
	fputs("</th></tr>\n", f);
	for (i = 0; i < NFIGROWS; i++) {
		w = &figrows[i];
		if (!row_shown(c, w))
			continue;
		fprintf(f, "<tr><th>%s</th><td>%s</td><td>%s</td></tr>\n",
		    w->label, cell(b[0], c, CMP_CURRENT, w),
		    cell(b[1], c, CMP_CHALLENGER, w));
	}
	fputs("</table>\n<table class=\"list\"><tr><th>difference "
	    "(challenger &minus; current)</th><th>mean</th><th>95% interval"
	    "</th></tr>\n", f);
	for (i = 0; i < NDIFFROWS; i++) {
		d = at(c, "difference", diffrows[i].key, NULL);
		fprintf(f, "<tr><th>%s</th><td>%s</td><td>[%s, %s]</td></tr>\n",
		    diffrows[i].label, fmt(b[0], numk(d, "mean"), S_SIGNED),
		    fmt(b[1], numk(d, "low"), S_SIGNED),
		    fmt(b[2], numk(d, "high"), S_SIGNED));
	}
	fprintf(f, "</table>\n<p class=\"verdict %s\">Verdict: %s", v->class,
	    v->words);
	if (*more_words(more, c) != '\0')
		fprintf(f, "; %s", more);
	fputs(".</p>\n", f);
}

static const char html_style[] =
	"body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:28px;"
	"border-top:1px solid #ccc;padding-top:12px}h3{font-size:16px}"
	"table{border-collapse:collapse;margin:8px 0}"
	"th,td{padding:3px 10px;text-align:left;font-size:14px}"
	"table.list td,table.list th{border-bottom:1px solid #ddd}"
	"figure{margin:0}figcaption{font-size:13px;color:#555}"
	"dl{font-size:13px;color:#444}dt{font-weight:bold;margin-top:6px}";

const char compare_chart_style[] =
	".warn{color:#a33;font-weight:bold}"
	".tick{font-size:11px;fill:#555}.axis{font-size:12px;fill:#333}"
	".zero{stroke:#555;stroke-dasharray:5 4}"
	".ci{stroke-width:6;stroke-linecap:round}"
	".ci.better{stroke:#3a8f4a}.ci.worse{stroke:#d9534f}"
	".ci.undecided{stroke:#999}.mean{fill:#222}"
	".verdict{font-weight:bold}.verdict.better{color:#2a7a3a}"
	".verdict.worse{color:#a33}.verdict.undecided{color:#555}";

void
compare_render_body(FILE *f, json_object *r)
{
	char	 b[2][32];

	fputs("<p>Current backend <b>", f);
	html_esc(f, str(r, "backend"));
	fprintf(f, "</b>, temperature %s, abstain threshold %s.</p>\n",
	    fmt(b[0], numk(r, "temperature"), S_SHORT),
	    fmt(b[1], numk(r, "abstain_threshold"), S_SHORT));
	json_object_object_foreach(member(r, "questions"), qname, q) {
		fputs("<section>\n<h2>", f);
		html_esc(f, qname);
		fputs(" <small>(", f);
		html_esc(f, str(q, "type"));
		fputs(")</small></h2>\n<figure>\n", f);
		svg_intervals(f, qname, q);
		fputs("<figcaption>Log loss difference, challenger minus "
		    "current: 95% interval (bar) and mean (dot); left of the "
		    "dashed line the challenger does better</figcaption>"
		    "</figure>\n", f);
		json_object_object_foreach(member(q, "challengers"), cname,
		    c) {
			fputs("<h3>", f);
			html_esc(f, cname);
			fprintf(f, "</h3>\n<p>%lld decisions with an outcome "
			    "and both answers%s.</p>\n",
			    (long long)numk(c, "count"),
			    flag(c, "small_sample") ? " <span class=\"warn\">"
			    "small sample: not decided, ECE unreliable</span>" :
			    "");
			html_entry(f, r, cname, c);
		}
		fputs("</section>\n", f);
	}
}

static void
render_html(FILE *f, json_object *r)
{
	json_object	*m = member(r, "method");

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8"
	    "\">\n<title>Challengers of ", f);
	html_esc(f, str(r, "schema"));
	fprintf(f, " v%lld</title>\n<style>%s%s</style>\n</head><body>\n"
	    "<h1>Challengers of schema ", (long long)numk(r, "version"),
	    html_style, compare_chart_style);
	html_esc(f, str(r, "schema"));
	fprintf(f, ", version %lld</h1>\n", (long long)numk(r, "version"));
	compare_render_body(f, r);
	fputs("<h2>Definitions</h2>\n<dl><dt>Figures</dt><dd>As the "
	    "calibration report computes them, over the decisions that have "
	    "an outcome and the answers of both backends: at the version's "
	    "temperature, and at each backend's own temperature fitted on "
	    "those decisions. Latency by nearest rank.</dd>"
	    "<dt>Differences</dt><dd>Per decision, challenger minus current: "
	    "the log loss at each backend's fitted temperature, and being "
	    "right. The interval is the 2.5th to 97.5th percentile of the "
	    "mean over ", f);
	fprintf(f, "%lld resamples of the decisions with replacement (the "
	    "same resamples for both; a fixed seed, so the same data give "
	    "the same report).</dd><dt>Verdict</dt><dd>", (long long)numk(m,
	    "resamples"));
	html_esc(f, str(m, "rule"));
	fprintf(f, " (min_pairs: %lld). When not yet decided, the outcomes "
	    "still needed are estimated as (1.96 &times; sd / mean)&sup2; of "
	    "the per-decision log loss differences, at least min_pairs, less "
	    "those there are.</dd>"
	    "</dl>\n</body></html>\n", (long long)numk(m, "min_pairs"));
}

typedef void (*render_fn)(FILE *, json_object *);

static const render_fn renderers[CAL_FORMAT__MAX] = {
	[CAL_FORMAT_TEXT] = render_text,
	[CAL_FORMAT_JSON] = render_json,
	[CAL_FORMAT_HTML] = render_html,
};

int
compare_render(FILE *f, json_object *report, enum cal_format fmt)
{
	if (fmt >= CAL_FORMAT__MAX || renderers[fmt] == NULL)
		return -1;
	renderers[fmt](f, report);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
