/* handler_console_pages.c: the console's overview (what the host
 * counted, each backend's state, the database and its retention) and
 * its applications and keys (doc/design.md, section 23).  Everything
 * shown comes from the operations of ops.c, the host's metrics and the
 * settings; every change is a form posting to an action of
 * handler_console.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "clock.h"
#include "handler_console.h"
#include "html.h"
#include "json_util.h"
#include "metrics.h"
#include "settings.h"
#include "shm.h"
#include "shm_flight.h"
#include "store.h"
#include "xalloc.h"

/* Overview */

/* One row of the last hour: requests (or calls), 4xx (refused), 5xx
 * (failed), the mean time. */
static void
hour_row(FILE *f, const char *method, const char *name,
    const struct metrics_minute *mm)
{
	html_printf(f, "<tr><td>%s%s%s</td><td class=\"n\">%D</td>"
	    "<td class=\"n\">%D</td><td class=\"n%s\">%D</td>"
	    "<td class=\"n\">%f</td></tr>\n", method, method[0] != '\0' ?
	    " " : "", name, (int64_t)mm->n, (int64_t)mm->client,
	    mm->server > 0 ? " bad" : "", (int64_t)mm->server, mm->n > 0 ?
	    (double)mm->us / (double)mm->n / 1000.0 : 0.0);
}

/* Requests per route and calls per backend in the last hour, as the
 * host counted them minute by minute. */
static void
last_hour(FILE *f, const struct metrics_snapshot *s)
{
	const struct metrics_route	*rt;
	size_t				 i;
	int				 any = 0;

	fputs("<h2>Requests by route, last hour</h2>\n<table><thead><tr>"
	    "<th>route</th><th>requests</th><th>4xx</th><th>5xx</th>"
	    "<th>mean ms</th></tr></thead><tbody>\n", f);
	for (i = 0; i < METRICS_ROUTES; i++) {
		if (s->recent.route[i].n == 0)
			continue;
		rt = metrics_route_label(i);
		hour_row(f, rt->method, rt->pattern, &s->recent.route[i]);
		any = 1;
	}
	if (!any)
		fputs("<tr><td colspan=\"5\">none in the last hour</td>"
		    "</tr>\n", f);
	fputs("</tbody></table>\n<h2>Backend calls, last hour</h2>\n"
	    "<table><thead><tr><th>backend</th><th>calls</th><th>refused"
	    "</th><th>failed</th><th>mean ms</th></tr></thead><tbody>\n", f);
	for (i = any = 0; i < METRICS_LABELS; i++) {
		if (s->recent.backend[i].n == 0)
			continue;
		hour_row(f, "", i < s->nbackends ? s->backend[i] : "other",
		    &s->recent.backend[i]);
		any = 1;
	}
	if (!any)
		fputs("<tr><td colspan=\"5\">none in the last hour</td>"
		    "</tr>\n", f);
	fputs("</tbody></table>\n", f);
}

/* Calls per backend since the metrics began, by how they went. */
static void
backend_calls(FILE *f, const struct metrics_snapshot *s)
{
	uint64_t	n, hn;
	size_t		i, o;

	fputs("<h2>Backend calls by outcome, since the metrics began</h2>"
	    "\n<table><thead><tr><th>backend</th>", f);
	for (o = 0; o < MO__MAX; o++)
		html_printf(f, "<th>%s</th>", metrics_outcome_names[o]);
	fputs("<th>mean ms</th></tr></thead><tbody>\n", f);
	for (i = 0; i < s->nbackends; i++) {
		for (o = n = 0; o < MO__MAX; o++)
			n += s->sum.backend[i][o];
		if (n == 0)
			continue;
		html_printf(f, "<tr><td>%s</td>", s->backend[i]);
		for (o = 0; o < MO__MAX; o++)
			html_printf(f, "<td class=\"n%s\">%D</td>",
			    o != MO_OK && s->sum.backend[i][o] > 0 ? " bad" :
			    "",
			    (int64_t)s->sum.backend[i][o]);
		for (o = hn = 0; o <= METRICS_BUCKETS; o++)
			hn += s->sum.backend_us[i][o];
		html_printf(f, "<td class=\"n\">%f</td></tr>\n", hn > 0 ?
		    (double)s->sum.backend_us[i][METRICS_HIST_SUM] /
		    (double)hn / 1000.0 : 0.0);
	}
	fputs("</tbody></table>\n", f);
}

/* Each backend now: enabled, replicas resting and until when, calls in
 * flight on this host. */
static int
backend_states(struct console *c, struct error *e)
{
	struct shm_flight_view	 v;
	struct backend		*b = xmalloc(sizeof(*b));
	json_object		*in = ju_obj(), *out = NULL, *list, *bk;
	json_object		*urls;
	int64_t			 until, now = clock_now_ms();
	size_t			 i, j;
	int			 rc;

	rc = console_op(c->r, OP_BACKEND_LIST, in, &out, e);
	json_object_put(in);
	if (rc == -1) {
		free(b);
		return -1;
	}
	fputs("<h2>Backends</h2>\n<table><thead><tr><th>backend</th>"
	    "<th>kind</th><th>enabled</th><th>in flight</th><th>replicas"
	    "</th></tr></thead><tbody>\n", c->f);
	json_object_object_get_ex(out, "backends", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		bk = json_object_array_get_idx(list, i);
		memset(&v, 0, sizeof(v));
		if (store_backend_by_name(c->r->store, ju_str(bk, "name"), b,
		    e) == 1)
			shm_inflight_view(shm_host(), b->id, &v);
		error_clear(e);
		html_printf(c->f, "<tr><td>%s</td><td>%s</td><td>", ju_str(bk,
		    "name"), ju_str(bk, "kind"));
		console_cell(c->f, bk, "enabled");
		html_printf(c->f, "</td><td class=\"n\">%D%s</td><td>",
		    v.in_flight, v.failing ? " <span class=\"bad\">failing"
		    "</span>" : "");
		urls = NULL;
		json_object_object_get_ex(bk, "urls", &urls);
		for (j = 0; urls != NULL &&
		    j < json_object_array_length(urls); j++) {
			const char *u = json_object_get_string(
			    json_object_array_get_idx(urls, j));

			html_printf(c->f, "%s ", u);
			if ((until = store_cooldown_until(c->r->store, u)) >
			    now) {
				fputs("<span class=\"bad\">resting until ",
				    c->f);
				console_time(c->f, until);
				fputs("</span>", c->f);
			} else
				fputs("<span class=\"ok\">answering</span>",
				    c->f);
			fputs("<br>", c->f);
		}
		if (urls == NULL || json_object_array_length(urls) == 0)
			fputs("built in", c->f);
		fputs("</td></tr>\n", c->f);
	}
	fputs("</tbody></table>\n", c->f);
	json_object_put(out);
	free(b);
	return 0;
}

/* Size of a file, -1 when there is none. */
static int64_t
file_size(const char *path, const char *suffix)
{
	char		p[4200];
	struct stat	sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* The database, its last backup and what is kept of it. */
static void
database(struct console *c)
{
	const struct settings	*s = c->r->settings;
	struct error		 e = { 0 };
	int64_t			 main_size, wal, at = 0;
	FILE			*f = c->f;

	fputs("<h2>Database</h2>\n<table><tbody>\n", f);
	if (s->db_url[0] != '\0')
		fputs("<tr><th>engine</th><td>PostgreSQL</td></tr>\n"
		    "<tr><th>last backup</th><td>not kept here: use pg_dump"
		    "</td></tr>\n", f);
	else {
		main_size = file_size(s->db_path, "");
		wal = file_size(s->db_path, "-wal");
		html_printf(f, "<tr><th>engine</th><td>SQLite</td></tr>\n"
		    "<tr><th>file</th><td>%s</td></tr>\n<tr><th>size</th>"
		    "<td>%D bytes (write-ahead log %D)</td></tr>\n", s->db_path,
		    main_size, wal < 0 ? (int64_t)0 : wal);
		fputs("<tr><th>last backup</th><td>", f);
		if (store_audit_last(c->r->store, "backup", NULL, &at, &e) ==
		    -1)
			html_printf(f, "unknown: %s", e.message);
		else if (at == 0)
			fputs("none (evalgate-admin backup FILE)", f);
		else
			console_time(f, at);
		fputs("</td></tr>\n", f);
		error_clear(&e);
	}
	html_printf(f, "<tr><th>retention</th><td>%D days (0: keep every "
	    "decision)</td></tr>\n<tr><th>with outcomes</th><td>%D days "
	    "(-1: as above, 0: forever)</td></tr>\n<tr><th>states kept</th>"
	    "<td>%D days (0: as their decision)</td></tr>\n</tbody></table>\n",
	    (int64_t)s->retention_days,
	    (int64_t)s->retention_days_with_outcomes,
	    (int64_t)s->state_retention_days);
}

int
console_overview(struct console *c, struct error *e)
{
	struct metrics_snapshot	*s = calloc(1, sizeof(*s));
	int			 rc;

	if (s == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	if (console_begin(c, c->r, "Overview", "", e) == -1) {
		free(s);
		return -1;
	}
	if (metrics_collect(shm_host(), clock_now_ms(), s) == 0) {
		html_printf(c->f, "<p class=\"mute\">Counted by this host's "
		    "%D worker processes, minute by minute (GET /metrics "
		    "for Prometheus).</p>\n", (int64_t)s->processes);
		last_hour(c->f, s);
		backend_calls(c->f, s);
	} else
		fputs("<p class=\"mute\">No metrics: the host's shared memory "
		    "is not mapped.</p>\n", c->f);
	free(s);
	if ((rc = backend_states(c, e)) == 0)
		database(c);
	return rc == 0 ? console_end(c, 200, e) : -1;
}

/* Applications and keys */

/* An integer member of o as a form value: "" when it is not one. */
static void
int_value(FILE *f, json_object *o, const char *k)
{
	json_object *v;

	if (o != NULL && json_object_object_get_ex(o, k, &v) &&
	    json_object_is_type(v, json_type_int))
		html_printf(f, "%D", (int64_t)json_object_get_int64(v));
}

/* The form of an application's settings: empty to create one. */
static void
app_form(struct console *c, json_object *app)
{
	const char *name = app != NULL ? ju_str(app, "name") : NULL;

	console_form(c, app != NULL ? "app-update" : "app-create", "row");
	if (app != NULL)
		html_printf(c->f, "<input type=\"hidden\" name=\"name\" "
		    "value=\"%s\">", name);
	else
		fputs("<label for=\"app-name\">name<input id=\"app-name\" "
		    "name=\"name\" required maxlength=\"100\"></label>", c->f);
	fputs("<label for=\"app-rate\">rate per minute<input id=\"app-rate\" "
	    "name=\"rate_per_minute\" inputmode=\"numeric\" size=\"8\" "
	    "placeholder=\"default\" value=\"", c->f);
	int_value(c->f, app, "rate_per_minute");
	fputs("\"></label><label for=\"app-quota\">daily quota<input "
	    "id=\"app-quota\" name=\"daily_quota\" inputmode=\"numeric\" "
	    "size=\"8\" placeholder=\"default\" value=\"", c->f);
	int_value(c->f, app, "daily_quota");
	fputs("\"></label>", c->f);
	if (app != NULL) {
		fputs("<label for=\"app-days\">retention days<input "
		    "id=\"app-days\" name=\"retention_days\" "
		    "inputmode=\"numeric\" size=\"6\" placeholder=\"default\" "
		    "value=\"", c->f);
		int_value(c->f, app, "retention_days");
		html_printf(c->f, "\"></label><label for=\"app-log\">keep "
		    "states<select id=\"app-log\" name=\"log_state\">"
		    "<option value=\"true\"%s>yes</option><option "
		    "value=\"false\"%s>no</option></select></label>"
		    "<button type=\"submit\">Save</button></form>\n",
		    json_object_get_boolean(json_object_object_get(app,
		    "log_state")) ? " selected" : "",
		    json_object_get_boolean(json_object_object_get(app,
		    "log_state")) ? "" : " selected");
		fputs("<p class=\"mute\">An empty number is the default "
		    "setting's; \"none\" clears it.</p>\n", c->f);
		return;
	}
	fputs("<label for=\"app-logc\">keep states<input id=\"app-logc\" "
	    "type=\"checkbox\" name=\"log_state\" value=\"true\"></label>"
	    "<label for=\"app-admin\">administrator<input id=\"app-admin\" "
	    "type=\"checkbox\" name=\"admin\" value=\"true\"></label>"
	    "<button type=\"submit\">Create</button></form>\n", c->f);
}

static int
app_list(struct console *c, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *a;
	size_t		 i;

	if (console_op(c->r, OP_APP_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	if (console_begin(c, c->r, "Applications", "applications", e) == -1) {
		json_object_put(out);
		return -1;
	}
	fputs("<table><thead><tr><th>name</th><th>admin</th><th>keeps states"
	    "</th><th>rate/min</th><th>daily quota</th><th>retention days"
	    "</th><th>created</th></tr></thead><tbody>\n", c->f);
	json_object_object_get_ex(out, "applications", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		a = json_object_array_get_idx(list, i);
		html_printf(c->f, "<tr><td><a href=\"%s/applications/%u\">%s"
		    "</a></td><td>", c->root, ju_str(a, "name"),
		    ju_str(a, "name"));
		console_cell(c->f, a, "admin");
		fputs("</td><td>", c->f);
		console_cell(c->f, a, "log_state");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, a, "rate_per_minute");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, a, "daily_quota");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, a, "retention_days");
		fputs("</td><td>", c->f);
		console_cell(c->f, a, "created_at");
		fputs("</td></tr>\n", c->f);
	}
	fputs("</tbody></table>\n<h2>New application</h2>\n", c->f);
	app_form(c, NULL);
	json_object_put(out);
	return console_end(c, 200, e);
}

/* One application: its settings, its keys, a key to issue. */
static int
app_page(struct console *c, const char *name, struct error *e)
{
	json_object	*in, *apps = NULL, *keys = NULL, *list, *k;
	json_object	*a = NULL;
	size_t		 i;
	int		 rc;

	in = ju_obj();
	rc = console_op(c->r, OP_APP_LIST, in, &apps, e);
	json_object_put(in);
	if (rc == -1)
		return -1;
	json_object_object_get_ex(apps, "applications", &list);
	for (i = 0; i < json_object_array_length(list) && a == NULL; i++)
		if (strcmp(ju_str(json_object_array_get_idx(list, i), "name"),
		    name) == 0)
			a = json_object_array_get_idx(list, i);
	in = ju_obj();
	ju_add_str(in, "application", name);
	rc = a == NULL ? error_set(e, ERR_NOT_FOUND, NULL,
	    "no application named '%s'", name) :
	    console_op(c->r, OP_KEY_LIST, in, &keys, e);
	json_object_put(in);
	if (rc == -1 || console_begin(c, c->r, name, "applications", e) ==
	    -1) {
		json_object_put(apps);
		json_object_put(keys);
		return -1;
	}
	html_printf(c->f, "<p><a href=\"%s/applications\">All applications"
	    "</a>%s</p>\n<h2>Settings</h2>\n", c->root,
	    json_object_get_boolean(json_object_object_get(a, "admin")) ?
	    " &middot; an administrator" : "");
	app_form(c, a);
	fputs("<h2>Keys</h2>\n<table><thead><tr><th>prefix</th><th>created"
	    "</th><th>expires</th><th>revoked</th><th></th></tr></thead>"
	    "<tbody>\n", c->f);
	json_object_object_get_ex(keys, "keys", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		k = json_object_array_get_idx(list, i);
		html_printf(c->f, "<tr><td><code>%s</code></td><td>",
		    ju_str(k, "prefix"));
		console_cell(c->f, k, "created_at");
		fputs("</td><td>", c->f);
		console_cell(c->f, k, "expires");
		fputs("</td><td>", c->f);
		console_cell(c->f, k, "revoked_at");
		fputs("</td><td>", c->f);
		if (ju_str(k, "revoked_at") == NULL)
			html_printf(c->f, "<a href=\"%s/revoke/%u\">Revoke"
			    "&hellip;</a>", c->root, ju_str(k, "prefix"));
		fputs("</td></tr>\n", c->f);
	}
	fputs("</tbody></table>\n<h2>Issue a key</h2>\n", c->f);
	console_form(c, "key-issue", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"application\" "
	    "value=\"%s\"><label for=\"key-exp\">expires (RFC 3339, "
	    "optional)<input id=\"key-exp\" name=\"expires\" size=\"22\" "
	    "placeholder=\"2027-01-31T00:00:00Z\"></label><button "
	    "type=\"submit\">Issue a key</button></form>\n", name);
	json_object_put(apps);
	json_object_put(keys);
	return console_end(c, 200, e);
}

int
console_applications(struct console *c, const char *item, struct error *e)
{
	return item == NULL ? app_list(c, e) : app_page(c, item, e);
}

/* The confirmation of a key's revocation: what it belongs to, and the
 * form that revokes it. */
int
console_revoke(struct console *c, const char *prefix, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *k;
	json_object	*found = NULL;
	size_t		 i;

	if (console_op(c->r, OP_KEY_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	json_object_object_get_ex(out, "keys", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		k = json_object_array_get_idx(list, i);
		if (strcmp(ju_str(k, "prefix"), prefix) == 0)
			found = k;
	}
	if (found == NULL) {
		json_object_put(out);
		return error_set(e, ERR_NOT_FOUND, NULL, "no key '%s'", prefix);
	}
	if (console_begin(c, c->r, "Revoke a key", "applications", e) == -1) {
		json_object_put(out);
		return -1;
	}
	html_printf(c->f, "<p>Revoke key <code>%s</code> of <a href=\"%s/"
	    "applications/%u\">%s</a>? Its clients are refused from the next "
	    "request on, and this cannot be undone.</p>\n", prefix, c->root,
	    ju_str(found, "application"), ju_str(found, "application"));
	console_form(c, "key-revoke", "row");
	html_printf(c->f, "<input type=\"hidden\" name=\"prefix\" value=\"%s\">"
	    "<button type=\"submit\" class=\"danger\">Revoke</button> "
	    "<a href=\"%s/applications/%u\">Cancel</a></form>\n", prefix,
	    c->root, ju_str(found, "application"));
	json_object_put(out);
	return console_end(c, 200, e);
}

/* Schemas */

int
console_backend_select(struct console *c, const char *id, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list;
	size_t		 i;

	if (console_op(c->r, OP_BACKEND_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	html_printf(c->f, "<label for=\"%s\">backend<select id=\"%s\" "
	    "name=\"backend\" required>", id, id);
	json_object_object_get_ex(out, "backends", &list);
	for (i = 0; i < json_object_array_length(list); i++)
		html_printf(c->f, "<option>%s</option>", ju_str(
		    json_object_array_get_idx(list, i), "name"));
	fputs("</select></label>", c->f);
	json_object_put(out);
	return 0;
}

int
console_schemas(struct console *c, const char *item, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *v;
	size_t		 i;

	if (item != NULL) {
		json_object_put(in);
		return console_schema(c, item, e);
	}
	if (console_op(c->r, OP_SCHEMA_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	if (console_begin(c, c->r, "Schemas", "schemas", e) == -1) {
		json_object_put(out);
		return -1;
	}
	fputs("<table><thead><tr><th>schema</th><th>version</th>"
	    "<th>fingerprint</th><th>backend</th><th>temperature</th>"
	    "<th>abstain threshold</th><th>published</th><th></th></tr>"
	    "</thead><tbody>\n", c->f);
	json_object_object_get_ex(out, "schemas", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		html_printf(c->f, "<tr><td><a href=\"%s/schemas/%u\">%s</a>"
		    "</td><td class=\"n\">", c->root, ju_str(v, "id"),
		    ju_str(v, "id"));
		console_cell(c->f, v, "version");
		html_printf(c->f, "</td><td><code>%s</code></td><td>",
		    ju_str(v, "fingerprint"));
		console_cell(c->f, v, "backend");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, v, "temperature");
		fputs("</td><td class=\"n\">", c->f);
		console_cell(c->f, v, "abstain_threshold");
		fputs("</td><td>", c->f);
		console_cell(c->f, v, "created_at");
		html_printf(c->f, "</td><td><a href=\"%s/calibration?schema=%u"
		    "&amp;version=%D\">calibration</a></td></tr>\n", c->root,
		    ju_str(v, "id"), (int64_t)json_object_get_int64(
		    json_object_object_get(v, "version")));
	}
	json_object_put(out);
	fputs("</tbody></table>\n<h2>Publish a version</h2>\n", c->f);
	console_form(c, "schema-publish", "row");
	fputs("<label for=\"s-id\">schema<input id=\"s-id\" name=\"id\" "
	    "required size=\"16\" pattern=\"[a-z0-9][a-z0-9_.\\-]*\">"
	    "</label>", c->f);
	if (console_backend_select(c, "s-backend", e) == -1)
		return -1;
	fputs("<label for=\"s-temp\">temperature<input id=\"s-temp\" "
	    "name=\"temperature\" size=\"5\" placeholder=\"1\"></label>"
	    "<label for=\"s-thr\">abstain threshold<input id=\"s-thr\" "
	    "name=\"abstain_threshold\" size=\"5\" placeholder=\"0\">"
	    "</label><label for=\"s-q\">questions (JSON, as in a request)"
	    "<textarea id=\"s-q\" name=\"questions\" required cols=\"60\">"
	    "</textarea></label><button type=\"submit\">Publish</button>"
	    "</form>\n<h2>Grant a schema</h2>\n", c->f);
	console_form(c, "grant", "row");
	fputs("<label for=\"g-app\">application<input id=\"g-app\" "
	    "name=\"application\" required size=\"16\"></label><label "
	    "for=\"g-schema\">schema<input id=\"g-schema\" name=\"schema\" "
	    "required size=\"16\"></label><label for=\"g-version\">version "
	    "(empty: every one)<input id=\"g-version\" name=\"version\" "
	    "size=\"5\"></label><button type=\"submit\">Grant</button>"
	    "</form>\n", c->f);
	return console_end(c, 200, e);
}

/* Backends */

/* The fields of kind k's options (its table, backend.h), each named as
 * its option, with b's values (NULL: empty, to add one). */
static void
kind_options(struct console *c, const struct backend_kind *k,
    json_object *b)
{
	const struct backend_option	*o;
	json_object			*v;
	char				 def[32];

	if (k->options == NULL || k->options[0].name == NULL)
		return;
	html_printf(c->f, "<fieldset><legend>%s options</legend>", k->name);
	for (o = k->options; o->name != NULL; o++) {
		snprintf(def, sizeof(def), o->type == BOPT_LONG ?
		    "default %ld" : "none", o->def);
		html_printf(c->f, "<label for=\"b-%s-%s-%s\">%s <small>%s"
		    "</small><input id=\"b-%s-%s-%s\" name=\"%s\" size=\"%d\""
		    "%s placeholder=\"%s\" value=\"", k->name, o->name,
		    ju_str(b, "name"), o->name, o->meaning, k->name, o->name,
		    ju_str(b, "name"), o->name, o->type == BOPT_LONG ? 7 : 24,
		    o->type == BOPT_LONG ? " inputmode=\"numeric\"" : "", def);
		if (b != NULL && json_object_object_get_ex(b, o->name, &v) &&
		    v != NULL)
			html_printf(c->f, "%s", o->type == BOPT_LONG ?
			    json_object_get_string(v) :
			    json_object_to_json_string_ext(v,
			    JSON_C_TO_STRING_PLAIN));
		fputs("\"></label>", c->f);
	}
	fputs("</fieldset>", c->f);
}

/* The form of a backend's fields: empty to add one. */
static void
backend_form(struct console *c, json_object *b)
{
	const struct backend_kind	*k;
	json_object			*urls = NULL;
	size_t				 i;

	console_form(c, b != NULL ? "backend-update" : "backend-add", "row");
	if (b != NULL)
		html_printf(c->f, "<input type=\"hidden\" name=\"name\" "
		    "value=\"%s\">", ju_str(b, "name"));
	else {
		fputs("<label for=\"b-name\">name<input id=\"b-name\" "
		    "name=\"name\" required size=\"14\"></label><label "
		    "for=\"b-kind\">kind<select id=\"b-kind\" name=\"kind\">",
		    c->f);
		for (i = 0; (k = backend_kind_at(i)) != NULL; i++)
			html_printf(c->f, "<option>%s</option>", k->name);
		fputs("</select></label>", c->f);
	}
	html_printf(c->f, "<label for=\"b-model-%s\">upstream model<input "
	    "id=\"b-model-%s\" name=\"model\" size=\"14\" value=\"%s\">"
	    "</label><label for=\"b-timeout-%s\">timeout ms<input "
	    "id=\"b-timeout-%s\" name=\"timeout_ms\" size=\"7\" "
	    "inputmode=\"numeric\" placeholder=\"default\" value=\"",
	    ju_str(b, "name"), ju_str(b, "name"), ju_str(b, "model"),
	    ju_str(b, "name"), ju_str(b, "name"));
	int_value(c->f, b, "timeout_ms");
	html_printf(c->f, "\"></label><label for=\"b-max-%s\">max in flight"
	    "<input id=\"b-max-%s\" name=\"max_in_flight\" size=\"5\" "
	    "inputmode=\"numeric\" placeholder=\"none\" value=\"",
	    ju_str(b, "name"), ju_str(b, "name"));
	int_value(c->f, b, "max_in_flight");
	html_printf(c->f, "\"></label><label for=\"b-desc-%s\">description"
	    "<input id=\"b-desc-%s\" name=\"description\" size=\"24\" "
	    "value=\"%s\"></label><label for=\"b-urls-%s\">replica URLs, one "
	    "a line<textarea id=\"b-urls-%s\" name=\"urls\" rows=\"2\" "
	    "cols=\"40\">", ju_str(b, "name"), ju_str(b, "name"),
	    ju_str(b, "description"), ju_str(b, "name"), ju_str(b, "name"));
	if (b != NULL && json_object_object_get_ex(b, "urls", &urls))
		for (i = 0; i < json_object_array_length(urls); i++)
			html_printf(c->f, "%s\n", json_object_get_string(
			    json_object_array_get_idx(urls, i)));
	html_printf(c->f, "</textarea></label><label for=\"b-auth-%s\">"
	    "key's environment variable<input id=\"b-auth-%s\" "
	    "name=\"auth_env\" size=\"16\" value=\"%s\"></label><label "
	    "for=\"b-rel-%s\">release date<input id=\"b-rel-%s\" "
	    "name=\"release_date\" size=\"10\" placeholder=\"YYYY-MM-DD\" "
	    "value=\"%s\"></label>", ju_str(b, "name"), ju_str(b, "name"),
	    ju_str(b, "auth_env"), ju_str(b, "name"), ju_str(b, "name"),
	    ju_str(b, "release_date"));
	for (i = 0; (k = backend_kind_at(i)) != NULL; i++)
		if (b == NULL || strcmp(k->name, ju_str(b, "kind")) == 0)
			kind_options(c, k, b);
	html_printf(c->f, "<button type=\"submit\">%s</button></form>\n",
	    b != NULL ? "Save" : "Add");
}

int
console_backends(struct console *c, const char *item, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *b;
	size_t		 i;
	int		 enabled;

	(void)item;
	if (console_op(c->r, OP_BACKEND_LIST, in, &out, e) == -1) {
		json_object_put(in);
		return -1;
	}
	json_object_put(in);
	if (console_begin(c, c->r, "Backends", "backends", e) == -1) {
		json_object_put(out);
		return -1;
	}
	if (backend_states(c, e) == -1) {
		json_object_put(out);
		console_drop(c);
		return -1;
	}
	json_object_object_get_ex(out, "backends", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		b = json_object_array_get_idx(list, i);
		enabled = json_object_get_boolean(json_object_object_get(b,
		    "enabled"));
		html_printf(c->f, "<h2>%s <small class=\"mute\">%s%s</small>"
		    "</h2>\n", ju_str(b, "name"), ju_str(b, "kind"),
		    enabled ? "" : ", disabled");
		backend_form(c, b);
		console_form(c, "backend-update", "row");
		html_printf(c->f, "<input type=\"hidden\" name=\"name\" "
		    "value=\"%s\"><input type=\"hidden\" name=\"enabled\" "
		    "value=\"%s\"><button type=\"submit\"%s>%s</button>"
		    "</form>\n",
		    ju_str(b, "name"), enabled ? "false" : "true",
		    enabled ? " class=\"danger\"" : "", enabled ? "Disable" :
		    "Enable");
	}
	json_object_put(out);
	fputs("<h2>Add a backend</h2>\n", c->f);
	backend_form(c, NULL);
	fputs("<p class=\"mute\">A kind's own options (openai's max_options, "
	    "concurrency, extra) are set with evalgate-admin or "
	    "/admin/v1.</p>\n", c->f);
	return console_end(c, 200, e);
}

/* Templates */

/* A query parameter into buf ("" when absent). */
static void
param(struct req *r, const char *name, char *buf, size_t size)
{
	if (req_query(r, name, buf, size) == NULL)
		buf[0] = '\0';
}

#define VALUES_MAX	8192	/* bytes of a preview's values */

/* The rendered state of the template the query names, with the values
 * it gives, or why not. */
static void
preview(struct console *c, const char *id, const char *version,
    const char *values)
{
	struct error	 err = { 0 };
	json_object	*in = ju_obj(), *out = NULL, *v;

	ju_add_str(in, "id", id);
	if (*version != '\0')
		ju_add(in, "version", ju_int(strtoll(version, NULL, 10)));
	if ((v = ju_parse(values)) != NULL)
		ju_add(in, "values", v);
	fputs("<h2>Preview</h2>\n", c->f);
	if (console_op(c->r, OP_TEMPLATE_RENDER, in, &out, &err) == 0)
		html_printf(c->f, "<p>%s version %D renders:</p>\n<pre>%s</pre>"
		    "\n", ju_str(out, "id"), (int64_t)json_object_get_int64(
		    json_object_object_get(out, "version")),
		    ju_str(out, "state"));
	else
		html_printf(c->f, "<p class=\"bad\" role=\"alert\">%s%s%s"
		    "</p>\n", console_error_field(&err),
		    *console_error_field(&err) ? ": " : "", err.message);
	error_clear(&err);
	json_object_put(in);
	json_object_put(out);
}

int
console_templates(struct console *c, const char *item, struct error *e)
{
	json_object	*in = ju_obj(), *out = NULL, *list, *v;
	char		*values = xmalloc(VALUES_MAX);
	char		 id[128], version[32];
	size_t		 i;

	(void)item;
	param(c->r, "preview", id, sizeof(id));
	param(c->r, "version", version, sizeof(version));
	param(c->r, "values", values, VALUES_MAX);
	if (console_op(c->r, OP_TEMPLATE_LIST, in, &out, e) == -1 ||
	    console_begin(c, c->r, "Templates", "templates", e) == -1) {
		json_object_put(in);
		json_object_put(out);
		free(values);
		return -1;
	}
	json_object_put(in);
	fputs("<table><thead><tr><th>template</th><th>version</th>"
	    "<th>variables</th><th>escape</th><th>published</th></tr>"
	    "</thead><tbody>\n", c->f);
	json_object_object_get_ex(out, "templates", &list);
	for (i = 0; i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		html_printf(c->f, "<tr><td>%s</td><td class=\"n\">", ju_str(v,
		    "id"));
		console_cell(c->f, v, "version");
		fputs("</td><td><code>", c->f);
		console_cell(c->f, v, "variables");
		fputs("</code></td><td>", c->f);
		console_cell(c->f, v, "escape");
		fputs("</td><td>", c->f);
		console_cell(c->f, v, "created_at");
		fputs("</td></tr>\n", c->f);
	}
	json_object_put(out);
	html_printf(c->f, "</tbody></table>\n<h2>Render</h2>\n<form "
	    "method=\"get\" action=\"%s/templates\" class=\"row\"><label "
	    "for=\"t-pid\">template<input id=\"t-pid\" name=\"preview\" "
	    "required size=\"16\" value=\"%s\"></label><label "
	    "for=\"t-pver\">version<input id=\"t-pver\" name=\"version\" "
	    "size=\"5\" value=\"%s\"></label><label for=\"t-vals\">values "
	    "(a JSON object)<textarea id=\"t-vals\" name=\"values\" "
	    "rows=\"3\" cols=\"50\">%s</textarea></label><button "
	    "type=\"submit\">Preview</button></form>\n", c->root, id,
	    version, values);
	if (*id != '\0')
		preview(c, id, version, values);
	free(values);
	fputs("<h2>Publish a version</h2>\n", c->f);
	console_form(c, "template-publish", "row");
	fputs("<label for=\"t-id\">template<input id=\"t-id\" name=\"id\" "
	    "required size=\"16\"></label><label for=\"t-esc\">escape"
	    "<select id=\"t-esc\" name=\"escape\"><option value=\"\">none"
	    "</option><option>html</option></select></label><label "
	    "for=\"t-vars\">variables (a JSON object: name to type)<textarea "
	    "id=\"t-vars\" name=\"variables\" rows=\"3\" cols=\"40\">"
	    "</textarea></label><label for=\"t-body\">body<textarea "
	    "id=\"t-body\" name=\"body\" required cols=\"60\"></textarea>"
	    "</label><button type=\"submit\">Publish</button></form>\n", c->f);
	return console_end(c, 200, e);
}
