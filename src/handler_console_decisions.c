/* handler_console_decisions.c: the console's decisions and calibration
 * (doc/design.md, section 23).
 *
 * Decisions: an application's, a page at a time in (time, id) order, as
 * GET /admin/v1/applications/{name}/decisions reads them
 * (store_decision_page(), decision_json()), filtered here by schema,
 * backend, abstention and outcome; one page looks at CONSOLE_SCAN
 * decisions at most and goes on from the last one it looked at.  A
 * decision's page: its answers (probabilities as bars), its outcomes and
 * the state when one was kept.  Calibration: the report of
 * OP_CALIBRATION written by calibration_render_body(), the SVG charts
 * the HTML report has, and "apply" after a confirmation that names the
 * version it will publish. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibration_render.h"
#include "clock.h"
#include "decision.h"
#include "handler_console.h"
#include "html.h"
#include "json_util.h"
#include "store.h"
#include "xalloc.h"

#define CONSOLE_SHOWN	50	/* decisions shown on a page */
#define CONSOLE_SCAN	2000	/* decisions looked at for one page */
#define SCAN_BATCH	100
#define QUERY_MAX	256

/* The filters of the list, from the query. */
struct filter {
	char	app[QUERY_MAX];
	char	schema[QUERY_MAX];
	char	backend[QUERY_MAX];
	char	since[QUERY_MAX];
	char	until[QUERY_MAX];
	char	abstained[8];		/* "", "yes", "no" */
	char	outcome[8];		/* "", "yes", "no" */
	char	after_id[QUERY_MAX];
	int64_t	after_ms;
};

static void
query(struct req *r, const char *name, char *buf, size_t size)
{
	if (req_query(r, name, buf, size) == NULL)
		buf[0] = '\0';
}

static void
filter_read(struct req *r, struct filter *f)
{
	char n[32];

	query(r, "application", f->app, sizeof(f->app));
	query(r, "schema", f->schema, sizeof(f->schema));
	query(r, "backend", f->backend, sizeof(f->backend));
	query(r, "since", f->since, sizeof(f->since));
	query(r, "until", f->until, sizeof(f->until));
	query(r, "abstained", f->abstained, sizeof(f->abstained));
	query(r, "outcome", f->outcome, sizeof(f->outcome));
	query(r, "after_id", f->after_id, sizeof(f->after_id));
	query(r, "after_ms", n, sizeof(n));
	f->after_ms = strspn(n, "0123456789") == strlen(n) && *n != '\0' ?
	    strtoll(n, NULL, 10) : 0;
}

/* Whether some answer of d abstained. */
static int
abstained(json_object *d)
{
	json_object *answers, *x;

	if (!json_object_object_get_ex(d, "answers", &answers))
		return 0;
	json_object_object_foreach(answers, k, a) {
		(void)k;
		if (json_object_object_get_ex(a, "x_abstain", &x) &&
		    json_object_get_boolean(x))
			return 1;
	}
	return 0;
}

static int
has_outcome(json_object *d)
{
	json_object *o;

	return json_object_object_get_ex(d, "outcomes", &o) &&
	    json_object_object_length(o) > 0;
}

/* Whether decision d passes the filters. */
static int
passes(const struct filter *f, json_object *d)
{
	json_object *s;

	if (*f->schema != '\0' && (!json_object_object_get_ex(d, "x_schema",
	    &s) || ju_str(s, "id") == NULL || strcmp(ju_str(s, "id"),
	    f->schema) != 0))
		return 0;
	if (*f->backend != '\0' && (ju_str(d, "x_backend") == NULL ||
	    strcmp(ju_str(d, "x_backend"), f->backend) != 0))
		return 0;
	if (*f->abstained != '\0' && abstained(d) !=
	    (strcmp(f->abstained, "yes") == 0))
		return 0;
	if (*f->outcome != '\0' && has_outcome(d) !=
	    (strcmp(f->outcome, "yes") == 0))
		return 0;
	return 1;
}

/* A yes/no/any select. */
static void
tri_select(FILE *f, const char *id, const char *label, const char *v)
{
	static const char *const values[][2] = { { "", "any" },
	    { "yes", "yes" }, { "no", "no" } };
	size_t i;

	html_printf(f, "<label for=\"%s\">%s<select id=\"%s\" name=\"%s\">",
	    id, label, id, id);
	for (i = 0; i < 3; i++) {
		html_printf(f, "<option value=\"%s\"", values[i][0]);
		if (strcmp(v, values[i][0]) == 0)
			fputs(" selected", f);
		html_printf(f, ">%s</option>", values[i][1]);
	}
	fputs("</select></label>", f);
}

static int
filter_form(struct console *c, const struct filter *fl, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list;
	const char	*name;
	size_t		 i;

	if (console_op(c->r, OP_APP_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	html_printf(c->f, "<form method=\"get\" action=\"%s/decisions\" "
	    "class=\"row\"><label for=\"f-app\">application<select "
	    "id=\"f-app\" name=\"application\" required>", c->root);
	json_object_object_get_ex(out, "applications", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		name = ju_str(json_object_array_get_idx(list, i), "name");
		html_printf(c->f, "<option value=\"%s\"", name);
		if (strcmp(name, fl->app) == 0)
			fputs(" selected", c->f);
		html_printf(c->f, ">%s</option>", name);
	}
	html_printf(c->f, "</select></label><label for=\"f-schema\">schema"
	    "<input id=\"f-schema\" name=\"schema\" size=\"12\" value=\"%s\">"
	    "</label><label for=\"f-backend\">backend<input id=\"f-backend\" "
	    "name=\"backend\" size=\"12\" value=\"%s\"></label><label "
	    "for=\"f-since\">since<input id=\"f-since\" name=\"since\" "
	    "size=\"20\" placeholder=\"2026-11-01\" value=\"%s\"></label>"
	    "<label for=\"f-until\">until<input id=\"f-until\" name=\"until\" "
	    "size=\"20\" value=\"%s\"></label>", fl->schema, fl->backend,
	    fl->since, fl->until);
	tri_select(c->f, "abstained", "abstained", fl->abstained);
	tri_select(c->f, "outcome", "with an outcome", fl->outcome);
	fputs("<button type=\"submit\">Show</button></form>\n", c->f);
	json_object_put(out);
	return 0;
}

/* The answer of a question, whatever its type (answer.c's member). */
static void
answer_value(FILE *f, json_object *a)
{
	static const char *const members[] = { "choice", "score", "noul" };
	size_t i;

	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++)
		if (json_object_object_get(a, members[i]) != NULL) {
			console_cell(f, a, members[i]);
			return;
		}
	fputs("-", f);
}

/* One row of the list. */
static void
list_row(struct console *c, json_object *d)
{
	json_object	*s = NULL, *answers = NULL;
	int		 first = 1;

	json_object_object_get_ex(d, "x_schema", &s);
	html_printf(c->f, "<tr><td>%s</td><td><a href=\"%s/decisions/%u\">"
	    "<code>%s</code></a></td><td>%s v%D</td><td>%s</td><td>%s</td>"
	    "<td>%s</td><td>", ju_str(d, "created_at"), c->root,
	    ju_str(d, "id"), ju_str(d, "id"), ju_str(s, "id"),
	    s != NULL ? (int64_t)json_object_get_int64(json_object_object_get(
	    s, "version")) : (int64_t)0, ju_str(d, "x_backend"),
	    abstained(d) ? "yes" : "no", has_outcome(d) ? "yes" : "no");
	json_object_object_get_ex(d, "answers", &answers);
	json_object_object_foreach(answers, q, a) {
		html_printf(c->f, "%s%s: ", first ? "" : "; ", q);
		answer_value(c->f, a);
		first = 0;
	}
	fputs("</td></tr>\n", c->f);
}

/* The link to the next page: the filters, and where this one stopped. */
static void
next_link(struct console *c, const struct filter *f, int64_t ms,
    const char *id)
{
	html_printf(c->f, "<p><a href=\"%s/decisions?application=%u&amp;"
	    "schema=%u&amp;backend=%u&amp;since=%u&amp;until=%u&amp;"
	    "abstained=%u&amp;outcome=%u&amp;after_ms=%D&amp;after_id=%u\">"
	    "Next page</a></p>\n", c->root, f->app, f->schema, f->backend,
	    f->since, f->until, f->abstained, f->outcome, ms, id);
}

struct scan {
	size_t	n;
	struct {
		char	id[UUID7_LEN + 1];
		int64_t	ms;
	} rows[SCAN_BATCH];
};

static void
scan_add(const char *id, int64_t ms, void *arg)
{
	struct scan *s = arg;

	if (s->n == SCAN_BATCH)
		return;
	snprintf(s->rows[s->n].id, sizeof(s->rows[0].id), "%s", id);
	s->rows[s->n++].ms = ms;
}

/* Walks the range of q from its cursor, writing the rows that pass:
 * 0 or -1 with e set. */
static int
list_rows(struct console *c, const struct filter *f, const struct app *a,
    struct decision_range *q, struct error *e)
{
	struct scan	*s = xmalloc(sizeof(*s));
	json_object	*d;
	size_t		 looked = 0, shown = 0, i;
	int		 rc = 0, more = 1;

	while (more && shown < CONSOLE_SHOWN && looked < CONSOLE_SCAN) {
		s->n = 0;
		if ((rc = store_decision_page(c->r->store, q, SCAN_BATCH,
		    scan_add, s, e)) == -1)
			break;
		more = s->n == SCAN_BATCH;
		for (i = 0; i < s->n && shown < CONSOLE_SHOWN; i++) {
			looked++;
			q->after_ms = s->rows[i].ms;
			snprintf(q->after_id, sizeof(q->after_id), "%s",
			    s->rows[i].id);
			d = NULL;
			if ((rc = decision_json(c->r->store, s->rows[i].id,
			    a->id, 0, &d, e)) == -1)
				break;
			if (d != NULL && passes(f, d)) {
				list_row(c, d);
				shown++;
			}
			json_object_put(d);
		}
		if (rc == -1)
			break;
		if (i < s->n)
			more = 1;
	}
	free(s);
	if (rc == -1)
		return -1;
	fputs("</tbody></table>\n", c->f);
	if (shown == 0)
		fputs("<p>No decision here passes the filters.</p>\n", c->f);
	if (more)
		next_link(c, f, q->after_ms, q->after_id);
	return 0;
}

static int
decision_list(struct console *c, struct error *e)
{
	struct filter		*f = xmalloc(sizeof(*f));
	struct decision_range	 q;
	struct app		 a;
	int			 rc;

	filter_read(c->r, f);
	memset(&q, 0, sizeof(q));
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	rc = 0;
	if (*f->since != '\0' && clock_parse_rfc3339(f->since, &q.since_ms) ==
	    -1)
		rc = error_set(e, ERR_VALIDATION, "since", "must be an RFC "
		    "3339 time or a date YYYY-MM-DD");
	if (rc == 0 && *f->until != '\0' &&
	    clock_parse_rfc3339(f->until, &q.until_ms) == -1)
		rc = error_set(e, ERR_VALIDATION, "until", "must be an RFC "
		    "3339 time or a date YYYY-MM-DD");
	if (rc == 0 && *f->app != '\0' && (rc = store_app_by_name(c->r->store,
	    f->app, &a, e)) != 1)
		rc = rc == -1 ? -1 : error_set(e, ERR_NOT_FOUND, NULL,
		    "no application named '%s'", f->app);
	else if (rc == 1)
		rc = 0;
	if (rc == -1 || console_begin(c, c->r, "Decisions", "decisions",
	    e) == -1) {
		free(f);
		return -1;
	}
	if (filter_form(c, f, e) == -1) {
		free(f);
		return -1;
	}
	if (*f->app == '\0') {
		fputs("<p>Choose an application.</p>\n", c->f);
		free(f);
		return console_end(c, 200, e);
	}
	q.app_id = a.id;
	if (*f->after_id != '\0' && decision_id_canon(f->after_id,
	    q.after_id)) {
		q.after_ms = f->after_ms;
	} else
		q.after_id[0] = '\0';
	fputs("<table><thead><tr><th>created</th><th>decision</th><th>schema"
	    "</th><th>backend</th><th>abstained</th><th>outcome</th>"
	    "<th>answers</th></tr></thead><tbody>\n", c->f);
	rc = list_rows(c, f, &a, &q, e);
	free(f);
	return rc == 0 ? console_end(c, 200, e) : -1;
}

/* One probability as a labelled bar. */
static void
bar(FILE *f, const char *label, double v)
{
	html_printf(f, "<tr><th scope=\"row\">%s</th><td><meter min=\"0\" "
	    "max=\"1\" value=\"%f\" aria-label=\"%s\">%f</meter></td>"
	    "<td class=\"n\">%f</td></tr>\n", label, v, label, v, v);
}

/* The probabilities of an answer as labelled bars: each option's or
 * level's, or a yes/no question's of yes. */
static void
probabilities(FILE *f, json_object *a)
{
	json_object *p;

	fputs("<table><tbody>\n", f);
	if (json_object_object_get_ex(a, "probabilities", &p) &&
	    json_object_is_type(p, json_type_object)) {
		json_object_object_foreach(p, k, x)
			bar(f, k, json_object_get_double(x));
	} else if (json_object_object_get_ex(a, "noul", &p))
		bar(f, "yes", json_object_get_double(p));
	fputs("</tbody></table>\n", f);
}

static int
decision_page(struct console *c, const char *id, struct error *e)
{
	json_object	*d = NULL, *answers = NULL, *outcomes = NULL, *s, *o;
	const char	*text;
	int		 rc;

	if ((rc = decision_json(c->r->store, id, 0, 1, &d, e)) != 1)
		return rc == -1 ? -1 : error_set(e, ERR_NOT_FOUND, NULL,
		    "no decision '%s'", id);
	if (console_begin(c, c->r, "Decision", "decisions", e) == -1) {
		json_object_put(d);
		return -1;
	}
	s = json_object_object_get(d, "x_schema");
	html_printf(c->f, "<table><tbody><tr><th>id</th><td><code>%s</code>"
	    "</td></tr><tr><th>created</th><td>%s</td></tr><tr><th>schema"
	    "</th><td>%s version %D</td></tr><tr><th>backend</th><td>%s"
	    "</td></tr><tr><th>model</th><td>%s</td></tr></tbody></table>\n"
	    "<h2>Answers</h2>\n", ju_str(d, "id"), ju_str(d, "created_at"),
	    ju_str(s, "id"), (int64_t)json_object_get_int64(
	    json_object_object_get(s, "version")), ju_str(d, "x_backend"),
	    ju_str(d, "model"));
	json_object_object_get_ex(d, "answers", &answers);
	json_object_object_get_ex(d, "outcomes", &outcomes);
	json_object_object_foreach(answers, q, a) {
		html_printf(c->f, "<section><h3>%s</h3>\n<p>answer: <b>", q);
		answer_value(c->f, a);
		fputs("</b>, confidence ", c->f);
		console_cell(c->f, a, "confidence");
		html_printf(c->f, "%s</p>\n", json_object_get_boolean(
		    json_object_object_get(a, "x_abstain")) ? " (abstained)" :
		    "");
		probabilities(c->f, a);
		fputs("<p>outcome: ", c->f);
		if (json_object_object_get_ex(outcomes, q, &o)) {
			fputs("<b>", c->f);
			console_cell(c->f, o, "value");
			fputs("</b>, source ", c->f);
			console_cell(c->f, o, "source");
			fputs(", recorded ", c->f);
			console_cell(c->f, o, "recorded_at");
		} else
			fputs("none yet", c->f);
		fputs("</p></section>\n", c->f);
	}
	fputs("<h2>State</h2>\n", c->f);
	if ((o = json_object_object_get(d, "state")) != NULL) {
		text = json_object_is_type(o, json_type_string) ?
		    json_object_get_string(o) : json_object_to_json_string_ext(
		    o, JSON_C_TO_STRING_PRETTY);
		html_printf(c->f, "<pre>%s</pre>\n", text);
	} else
		fputs("<p class=\"mute\">Not kept (the application's "
		    "log_state is off, or it was pruned).</p>\n", c->f);
	json_object_put(d);
	return console_end(c, 200, e);
}

int
console_decisions(struct console *c, const char *item, struct error *e)
{
	return item == NULL ? decision_list(c, e) : decision_page(c, item, e);
}

/* Calibration */

/* The schema and version chooser. */
static int
cal_form(struct console *c, const char *schema, const char *version,
    const char *target, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *v;
	const char	*id, *prev = "";
	size_t		 i;

	if (console_op(c->r, OP_SCHEMA_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	html_printf(c->f, "<form method=\"get\" action=\"%s/calibration\" "
	    "class=\"row\"><label for=\"c-schema\">schema<select "
	    "id=\"c-schema\" name=\"schema\" required>", c->root);
	json_object_object_get_ex(out, "schemas", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		if ((id = ju_str(v, "id")) == NULL || strcmp(id, prev) == 0)
			continue;
		html_printf(c->f, "<option value=\"%s\"", id);
		if (strcmp(id, schema) == 0)
			fputs(" selected", c->f);
		html_printf(c->f, ">%s</option>", id);
		prev = id;
	}
	html_printf(c->f, "</select></label><label for=\"c-version\">version "
	    "(empty: the latest)<input id=\"c-version\" name=\"version\" "
	    "size=\"5\" inputmode=\"numeric\" value=\"%s\"></label><label "
	    "for=\"c-target\">target accuracy<input id=\"c-target\" "
	    "name=\"target_accuracy\" size=\"5\" placeholder=\"0.9\" "
	    "value=\"%s\"></label><button type=\"submit\">Show</button>"
	    "</form>\n", version, target);
	json_object_put(out);
	return 0;
}

/* The latest version of schema, 0 when there is none. */
static int64_t
latest_version(struct console *c, const char *schema)
{
	struct error	 e = { 0 };
	json_object	*in = ju_obj(), *out = NULL, *list;
	int64_t		 v, max = 0;
	size_t		 i;

	ju_add_str(in, "id", schema);
	if (console_op(c->r, OP_SCHEMA_LIST, in, &out, &e) == 0) {
		json_object_object_get_ex(out, "schemas", &list);
		for (i = 0; i < json_object_array_length(list); i++) {
			v = json_object_get_int64(json_object_object_get(
			    json_object_array_get_idx(list, i), "version"));
			if (v > max)
				max = v;
		}
	}
	error_clear(&e);
	json_object_put(in);
	json_object_put(out);
	return max;
}

/* What apply would publish, and its form. */
static void
cal_apply(struct console *c, json_object *report, const char *target)
{
	json_object	*t = json_object_object_get(report, "temperature");
	json_object	*fitted = json_object_object_get(t, "fitted");
	json_object	*bound = json_object_object_get(t, "at_bound");
	const char	*schema = ju_str(report, "schema");
	int64_t		 version = json_object_get_int64(
			    json_object_object_get(report, "version"));

	fputs("<h2>Apply</h2>\n", c->f);
	if (fitted == NULL || !isfinite(json_object_get_double(fitted)) ||
	    json_object_get_boolean(bound)) {
		fputs("<p class=\"mute\">Nothing to apply: no fit, or one at "
		    "the bound of its search.</p>\n", c->f);
		return;
	}
	html_printf(c->f, "<p>Applying publishes <b>version %D</b> of %s with "
	    "the questions, backend and abstain threshold of version %D and "
	    "the fitted temperature <b>%f</b>.</p>\n",
	    latest_version(c, schema) + 1, schema, version,
	    json_object_get_double(fitted));
	console_form(c, "calibration-apply", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"id\" value=\"%s\">"
	    "<input type=\"hidden\" name=\"version\" value=\"%D\">"
	    "<input type=\"hidden\" name=\"target_accuracy\" value=\"%s\">"
	    "<input type=\"hidden\" name=\"apply\" value=\"true\">"
	    "<button type=\"submit\">Publish version %D</button></form>\n",
	    schema, version, target, latest_version(c, schema) + 1);
}

int
console_calibration(struct console *c, const char *item, struct error *e)
{
	char		 schema[QUERY_MAX], version[32], target[32];
	json_object	*in, *out = NULL, *v;
	int		 rc;

	(void)item;
	query(c->r, "schema", schema, sizeof(schema));
	query(c->r, "version", version, sizeof(version));
	query(c->r, "target_accuracy", target, sizeof(target));
	in = ju_obj();
	if (*schema != '\0') {
		ju_add_str(in, "id", schema);
		if (*version != '\0') {
			if (strspn(version, "0123456789") != strlen(version)) {
				json_object_put(in);
				return error_set(e, ERR_VALIDATION, "version",
				    "must be a positive integer");
			}
			ju_add(in, "version", ju_int(strtoll(version, NULL,
			    10)));
		}
		if (*target != '\0') {
			v = ju_num(strtod(target, NULL));
			ju_add(in, "target_accuracy", v);
		}
		if (console_op(c->r, OP_CALIBRATION, in, &out, e) == -1) {
			json_object_put(in);
			return -1;
		}
	}
	json_object_put(in);
	if (console_begin(c, c->r, "Calibration", "calibration", e) == -1 ||
	    cal_form(c, schema, version, target, e) == -1) {
		json_object_put(out);
		return -1;
	}
	if (out != NULL) {
		html_printf(c->f, "<h2>%s, version %D</h2>\n", schema,
		    (int64_t)json_object_get_int64(json_object_object_get(out,
		    "version")));
		calibration_render_body(c->f, out);
		cal_apply(c, out, target);
	} else
		fputs("<p>Choose a schema.</p>\n", c->f);
	json_object_put(out);
	rc = console_end(c, 200, e);
	return rc;
}
