/* handler_console_schema.c: the console's page of one schema
 * (doc/design.md, section 23): its versions, its grants with an ungrant
 * each, a version's challengers (added, their share changed, removed),
 * the comparison with them as compare_render_body() writes it (the SVG
 * and figures of `evalgate-admin compare --format html`), and the
 * confirmation of a promotion, which names the version it publishes.
 * Everything comes from the operations of ops.c; every change is a form
 * posting to an action of handler_console.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "compare_render.h"
#include "handler_console.h"
#include "html.h"
#include "http.h"
#include "json_util.h"
#include "xalloc.h"

#define QUERY_MAX	256

/* A query parameter into buf ("" when absent). */
static void
query(struct req *r, const char *name, char *buf, size_t size)
{
	if (req_query(r, name, buf, size) == NULL)
		buf[0] = '\0';
}

/* The version the query names (?version=N), 0 for none or one that is
 * not a number. */
static int64_t
query_version(struct req *r)
{
	char	 v[32];

	query(r, "version", v, sizeof(v));
	if (*v == '\0' || strlen(v) > 15 || strspn(v, "0123456789") !=
	    strlen(v))
		return 0;
	return strtoll(v, NULL, 10);
}

/* Runs op on {id, version (when > 0)}: 0 with *out set, or -1 with e
 * set. */
static int
schema_op(struct console *c, enum op op, const char *id, int64_t version,
    json_object **out, struct error *e)
{
	json_object	*in = ju_obj();
	int		 rc;

	ju_add_str(in, "id", id);
	if (version > 0)
		ju_add(in, "version", ju_int(version));
	rc = console_op(c->r, op, in, out, e);
	json_object_put(in);
	return rc;
}

/* The versions of the schema (list: OP_SCHEMA_LIST's), the one shown
 * marked; the latest's number. */
static int64_t
versions(struct console *c, json_object *list, int64_t shown)
{
	json_object	*v;
	int64_t		 n, latest = 0;
	size_t		 i;

	fputs("<h2>Versions</h2>\n<table><thead><tr><th>version</th>"
	    "<th>fingerprint</th><th>backend</th><th>temperature</th>"
	    "<th>abstain threshold</th><th>published</th><th></th></tr>"
	    "</thead><tbody>\n", c->f);
	for (i = 0; i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		n = json_object_get_int64(json_object_object_get(v,
		    "version"));
		latest = n > latest ? n : latest;
		html_printf(c->f, "<tr><td class=\"n\">%D</td><td><code>%s"
		    "</code></td><td>", n, ju_str(v, "fingerprint"));
		console_cell(c->f, v, "backend");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, v, "temperature");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, v, "abstain_threshold");
		fputs("</td><td>", c->f);
		console_cell(c->f, v, "created_at");
		if (n == shown)
			fputs("</td><td>shown below", c->f);
		else
			html_printf(c->f, "</td><td><a href=\"%s/schemas/%u?"
			    "version=%D\">challengers</a>", c->root,
			    ju_str(v, "id"), n);
		html_printf(c->f, " <a href=\"%s/calibration?schema=%u&amp;"
		    "version=%D\">calibration</a></td></tr>\n", c->root,
		    ju_str(v, "id"), n);
	}
	fputs("</tbody></table>\n", c->f);
	return latest;
}

/* Its grants, each with its ungrant, and a grant to add. */
static int
grants(struct console *c, const char *id, struct error *e)
{
	json_object	*out = NULL, *list, *g, *ver;
	size_t		 i;

	if (schema_op(c, OP_GRANT_LIST, id, 0, &out, e) == -1)
		return -1;
	fputs("<h2>Grants</h2>\n<table><thead><tr><th>application</th>"
	    "<th>version</th><th>granted</th><th></th></tr></thead><tbody>\n",
	    c->f);
	json_object_object_get_ex(out, "grants", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		g = json_object_array_get_idx(list, i);
		ver = json_object_object_get(g, "version");
		html_printf(c->f, "<tr><td><a href=\"%s/applications/%u\">%s"
		    "</a></td><td>", c->root, ju_str(g, "application"),
		    ju_str(g, "application"));
		if (ver != NULL)
			html_printf(c->f, "%D", json_object_get_int64(ver));
		else
			fputs("every one", c->f);
		fputs("</td><td>", c->f);
		console_cell(c->f, g, "created_at");
		fputs("</td><td>", c->f);
		console_form(c, "ungrant", "inline");
		html_printf(c->f, "<input type=\"hidden\" name=\"application\" "
		    "value=\"%s\"><input type=\"hidden\" name=\"schema\" "
		    "value=\"%s\">", ju_str(g, "application"), id);
		if (ver != NULL)
			html_printf(c->f, "<input type=\"hidden\" "
			    "name=\"version\" value=\"%D\">",
			    json_object_get_int64(ver));
		fputs("<button type=\"submit\" class=\"danger\">Ungrant"
		    "</button></form></td></tr>\n", c->f);
	}
	if (json_object_array_length(list) == 0)
		fputs("<tr><td colspan=\"4\">none</td></tr>\n", c->f);
	json_object_put(out);
	fputs("</tbody></table>\n", c->f);
	console_form(c, "grant", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"schema\" value=\"%s\">"
	    "<label for=\"g-app\">application<input id=\"g-app\" "
	    "name=\"application\" required size=\"16\"></label><label "
	    "for=\"g-version\">version (empty: every one)<input "
	    "id=\"g-version\" name=\"version\" size=\"5\" "
	    "inputmode=\"numeric\"></label><button type=\"submit\">Grant"
	    "</button></form>\n", id);
	return 0;
}

/* The challengers of version, each with its removal, and one to add
 * (or whose share to change). */
static int
challengers(struct console *c, const char *id, int64_t version,
    struct error *e)
{
	json_object	*out = NULL, *list, *ch;
	size_t		 i;

	if (schema_op(c, OP_CHALLENGER_LIST, id, version, &out, e) == -1)
		return -1;
	html_printf(c->f, "<h2>Challengers of version %D</h2>\n<table><thead>"
	    "<tr><th>backend</th><th>share</th><th>since</th><th></th></tr>"
	    "</thead><tbody>\n", version);
	json_object_object_get_ex(out, "challengers", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		ch = json_object_array_get_idx(list, i);
		html_printf(c->f, "<tr><td>%s</td><td class=\"n\">",
		    ju_str(ch, "backend"));
		console_cell(c->f, ch, "share");
		fputs("</td><td>", c->f);
		console_cell(c->f, ch, "created_at");
		fputs("</td><td>", c->f);
		console_form(c, "challenger-remove", "inline");
		html_printf(c->f, "<input type=\"hidden\" name=\"id\" "
		    "value=\"%s\"><input type=\"hidden\" name=\"version\" "
		    "value=\"%D\"><input type=\"hidden\" name=\"backend\" "
		    "value=\"%s\"><button type=\"submit\" class=\"danger\">"
		    "Remove</button></form></td></tr>\n", id, version,
		    ju_str(ch, "backend"));
	}
	if (json_object_array_length(list) == 0)
		fputs("<tr><td colspan=\"4\">none</td></tr>\n", c->f);
	json_object_put(out);
	fputs("</tbody></table>\n", c->f);
	console_form(c, "challenger-add", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"id\" value=\"%s\">"
	    "<input type=\"hidden\" name=\"version\" value=\"%D\">", id,
	    version);
	if (console_backend_select(c, "ch-backend", e) == -1)
		return -1;
	fputs("<label for=\"ch-share\">share of its evaluations (0 to 1)"
	    "<input id=\"ch-share\" name=\"share\" required size=\"5\" "
	    "inputmode=\"decimal\" placeholder=\"0.1\"></label><button "
	    "type=\"submit\">Add or change</button></form>\n", c->f);
	return 0;
}

/* The comparison of version with its challengers, and a link to
 * promote each compared. */
static void
comparison(struct console *c, const char *id, int64_t version)
{
	struct error	 e = { 0 };
	json_object	*out = NULL, *seen;

	fputs("<h2>Comparison</h2>\n", c->f);
	if (schema_op(c, OP_COMPARE, id, version, &out, &e) == -1) {
		html_printf(c->f, "<p class=\"mute\">No comparison: %s</p>\n",
		    e.message);
		error_clear(&e);
		return;
	}
	if (json_object_object_length(json_object_object_get(out,
	    "questions")) == 0)
		fputs("<p class=\"mute\">Nothing to compare yet.</p>\n", c->f);
	compare_render_body(c->f, out);
	/* One link per challenger compared on any question (promoting
	 * one without compared decisions is refused). */
	seen = ju_obj();
	fputs("<p>", c->f);
	json_object_object_foreach(json_object_object_get(out, "questions"),
	    qname, qv) {
		(void)qname;
		json_object_object_foreach(json_object_object_get(qv,
		    "challengers"), cname, cv) {
			if (json_object_get_int64(json_object_object_get(cv,
			    "count")) == 0 ||
			    json_object_object_get_ex(seen, cname, NULL))
				continue;
			ju_add(seen, cname, NULL);
			html_printf(c->f, "<a class=\"button\" href=\"%s/"
			    "promote/%u?version=%D&amp;backend=%u\">Promote "
			    "%s&hellip;</a> ", c->root, id, version, cname,
			    cname);
		}
	}
	json_object_put(seen);
	fputs("</p>\n", c->f);
	json_object_put(out);
}

int
console_schema(struct console *c, const char *id, struct error *e)
{
	json_object	*out = NULL, *list;
	int64_t		 version = query_version(c->r), latest;
	char		 title[QUERY_MAX + 16];

	if (schema_op(c, OP_SCHEMA_LIST, id, 0, &out, e) == -1)
		return -1;
	json_object_object_get_ex(out, "schemas", &list);
	if (json_object_array_length(list) == 0) {
		json_object_put(out);
		return error_set(e, ERR_NOT_FOUND, NULL, "no schema '%s'", id);
	}
	snprintf(title, sizeof(title), "Schema %s", id);
	if (console_begin(c, c->r, title, "schemas", e) == -1) {
		json_object_put(out);
		return -1;
	}
	latest = versions(c, list, version);
	json_object_put(out);
	if (version <= 0 || version > latest)
		version = latest;
	if (grants(c, id, e) == -1 || challengers(c, id, version, e) == -1) {
		console_drop(c);
		return -1;
	}
	comparison(c, id, version);
	return console_end(c, 200, e);
}

int
console_promote(struct console *c, const char *id, struct error *e)
{
	json_object	*out = NULL, *list;
	int64_t		 version = query_version(c->r), latest = 0, n;
	char		 backend[QUERY_MAX];
	size_t		 i;

	query(c->r, "backend", backend, sizeof(backend));
	if (*backend == '\0')
		return error_set(e, ERR_VALIDATION, "backend",
		    "is required");
	if (schema_op(c, OP_SCHEMA_LIST, id, 0, &out, e) == -1)
		return -1;
	json_object_object_get_ex(out, "schemas", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		n = json_object_get_int64(json_object_object_get(
		    json_object_array_get_idx(list, i), "version"));
		latest = n > latest ? n : latest;
	}
	json_object_put(out);
	if (latest == 0)
		return error_set(e, ERR_NOT_FOUND, NULL, "no schema '%s'", id);
	if (version <= 0 || version > latest)
		version = latest;
	if (console_begin(c, c->r, "Promote a challenger", "schemas", e) ==
	    -1)
		return -1;
	html_printf(c->f, "<p>Promoting <b>%s</b> publishes <b>version %D</b> "
	    "of <a href=\"%s/schemas/%u\">%s</a> with the questions and "
	    "abstain threshold of version %D, answered by %s at its "
	    "temperature fitted over the compared decisions. Evaluations of "
	    "the schema are answered by it from then on; the new version has "
	    "no challengers.</p>\n", backend, latest + 1, c->root, id, id,
	    version, backend);
	console_form(c, "promote", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"id\" value=\"%s\">"
	    "<input type=\"hidden\" name=\"version\" value=\"%D\">"
	    "<input type=\"hidden\" name=\"backend\" value=\"%s\">"
	    "<button type=\"submit\">Publish version %D</button> <a href=\""
	    "%s/schemas/%u?version=%D\">Cancel</a></form>\n", id, version,
	    backend, latest + 1, c->root, id, version);
	return console_end(c, 200, e);
}
