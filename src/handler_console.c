/* handler_console.c: the operator's console on the internal listener
 * (doc/design.md, section 23): its session gate, login and logout, its
 * stylesheet and script, the layout of its pages, and the two tables
 * that route its requests: pages[] (GET) and actions[] (POST, each one
 * operation of ops.c with the form's fields as its input). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth.h"
#include "backend.h"
#include "calibration_render.h"
#include "compare_render.h"
#include "clock.h"
#include "handler_console.h"
#include "handlers.h"
#include "html.h"
#include "json_util.h"
#include "store.h"
#include "uri.h"
#include "xalloc.h"

#define COOKIE		"evalgate_console"
#define FIELD_MAX	256		/* bytes of a decoded short field */
#define PAGE_MAX	(8 << 20)	/* bytes of a page */

/* What every answer of the console carries: nothing may be loaded from
 * elsewhere or inline (the stylesheet and the copy button's script are
 * the console's own files), no frame may hold it, and no link tells
 * where it came from. */
static const char *const console_headers[][2] = {
	{ "Content-Security-Policy", "default-src 'none'; style-src 'self'; "
	    "script-src 'self'; img-src 'self'; form-action 'self'; "
	    "frame-ancestors 'none'; base-uri 'none'" },
	{ "X-Content-Type-Options", "nosniff" },
	{ "X-Frame-Options", "DENY" },
	{ "Referrer-Policy", "no-referrer" },
};
#define NCONSOLE_HEADERS (sizeof(console_headers) / sizeof(console_headers[0]))

static const char console_css[] =
	":root{color-scheme:light dark;--fg:#1d1f21;--bg:#fff;--mute:#5a5f66;"
	"--line:#d8dbe0;--accent:#2458a6;--bad:#b3261e;--ok:#1e7b34;"
	"--panel:#f4f6f9}"
	"@media (prefers-color-scheme:dark){:root{--fg:#e6e8eb;--bg:#15171a;"
	"--mute:#a0a6ad;--line:#33373d;--accent:#8ab4f8;--bad:#f28b82;"
	"--ok:#81c995;--panel:#1f2226}}"
	"body{font:15px/1.45 system-ui,sans-serif;margin:0;color:var(--fg);"
	"background:var(--bg)}"
	"header{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:center;"
	"padding:8px 16px;border-bottom:1px solid var(--line);"
	"background:var(--panel)}"
	"header b{margin-right:8px}nav a{margin-right:12px}"
	"nav a[aria-current]{font-weight:bold;text-decoration:none}"
	"header form{margin-left:auto}"
	"main{padding:8px 16px 32px;max-width:1200px}"
	"a{color:var(--accent)}a:focus,button:focus,input:focus,"
	"select:focus,textarea:focus{outline:2px solid var(--accent);"
	"outline-offset:1px}"
	"table{border-collapse:collapse;margin:8px 0;display:block;"
	"overflow-x:auto}th,td{padding:4px 10px;text-align:left;"
	"border-bottom:1px solid var(--line);vertical-align:top}"
	"th{font-weight:600}td.n{text-align:right}"
	"form.row{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:end;"
	"margin:8px 0;padding:10px;background:var(--panel);"
	"border:1px solid var(--line)}"
	"label{display:flex;flex-direction:column;font-size:13px;"
	"color:var(--mute)}"
	"input,select,textarea,button{font:inherit;color:var(--fg);"
	"background:var(--bg);border:1px solid var(--line);padding:4px 6px}"
	"button{cursor:pointer;background:var(--accent);color:var(--bg);"
	"border-color:var(--accent)}button.danger{background:var(--bad);"
	"border-color:var(--bad)}textarea{min-width:min(36em,85vw);"
	"min-height:4em;font-family:monospace}"
	".bad{color:var(--bad)}.ok{color:var(--ok)}.mute{color:var(--mute)}"
	".key{font-family:monospace;font-size:16px;padding:8px;"
	"background:var(--panel);border:1px solid var(--line);"
	"word-break:break-all}"
	"meter{width:160px}form.inline{display:inline;margin:0}"
	"fieldset{display:flex;flex-wrap:wrap;gap:8px 14px;margin:0;"
	"border:1px solid var(--line)}legend{font-size:13px}"
	"a.button{display:inline-block;padding:4px 10px;margin:4px 0;"
	"border:1px solid var(--accent);text-decoration:none}"
	"@media (max-width:600px){main{padding:8px}header form{margin-left:0}"
	"td,th{padding:3px 6px}}";

/* The copy button of a key shown once: the only script. */
static const char console_js[] =
	"document.addEventListener('click',function(ev){"
	"var b=ev.target.closest('button[data-copy]');if(!b)return;"
	"var t=document.getElementById(b.getAttribute('data-copy'));"
	"if(t&&navigator.clipboard)navigator.clipboard.writeText("
	"t.textContent).then(function(){b.textContent='Copied';},"
	"function(){b.textContent='Select and copy it';});});";

/* Its icon, so that a browser asks for no /favicon.ico. */
static const char console_icon[] =
	"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
	"<rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#2458a6\"/>"
	"<path d=\"M4 8l3 3 5-6\" stroke=\"#fff\" stroke-width=\"2\" "
	"fill=\"none\"/></svg>";

/* The console's own files, GET CONSOLE_PREFIX "/static/{name}". */
static const struct asset {
	const char	*name;
	const char	*type;
	const char	*body;
	const char	*more[2];	/* after body; NULL none */
} assets[] = {
	{ "console.css", "text/css; charset=utf-8", console_css,
	    { calibration_chart_style, compare_chart_style } },
	{ "console.js", "text/javascript; charset=utf-8", console_js,
	    { NULL, NULL } },
	{ "icon.svg", "image/svg+xml", console_icon, { NULL, NULL } },
};
#define NASSETS (sizeof(assets) / sizeof(assets[0]))

/* The menu: path below the root, and its label. */
static const struct nav_entry {
	const char	*page;
	const char	*label;
} menu[] = {
	{ "", "Overview" },
	{ "applications", "Applications" },
	{ "backends", "Backends" },
	{ "schemas", "Schemas" },
	{ "templates", "Templates" },
	{ "decisions", "Decisions" },
	{ "calibration", "Calibration" },
};
#define NMENU (sizeof(menu) / sizeof(menu[0]))

/* The console's root as the client sees it: the mount point (the part
 * of REQUEST_URI above the path the worker routes on) and
 * CONSOLE_PREFIX. */
static void
root_of(struct req *r, char out[CONSOLE_ROOT_MAX])
{
	const char	*uri = FCGX_GetParam("REQUEST_URI", r->fcgi->envp);
	size_t		 plen, mount = 0;

	if (uri != NULL) {
		plen = strcspn(uri, "?");
		if (plen >= strlen(r->path))
			mount = plen - strlen(r->path);
	}
	if (mount + sizeof(CONSOLE_PREFIX) > CONSOLE_ROOT_MAX)
		mount = 0;
	snprintf(out, CONSOLE_ROOT_MAX, "%.*s%s", (int)mount,
	    uri != NULL ? uri : "", CONSOLE_PREFIX);
}

/* The value of the console's cookie, into buf (NULL: none). */
static const char *
cookie_of(struct req *r, char *buf, size_t size)
{
	const char	*h = FCGX_GetParam("HTTP_COOKIE", r->fcgi->envp);
	size_t		 n, nlen = strlen(COOKIE);

	while (h != NULL && *h != '\0') {
		h += strspn(h, " ;");
		n = strcspn(h, ";");
		if (n > nlen && strncmp(h, COOKIE, nlen) == 0 &&
		    h[nlen] == '=') {
			if (n - nlen - 1 >= size)
				return NULL;
			memcpy(buf, h + nlen + 1, n - nlen - 1);
			buf[n - nlen - 1] = '\0';
			return buf;
		}
		h += n;
	}
	return NULL;
}

/* Whether the client reached the web server over HTTPS. */
static int
over_https(struct req *r)
{
	const char *v = FCGX_GetParam("HTTPS", r->fcgi->envp);

	if (v != NULL && strcasecmp(v, "on") == 0)
		return 1;
	v = FCGX_GetParam("REQUEST_SCHEME", r->fcgi->envp);
	return v != NULL && strcasecmp(v, "https") == 0;
}

/* A form field of the body, decoded into buf (NULL: absent). */
static const char *
field(struct req *r, const char *name, char *buf, size_t size)
{
	return r->body != NULL ? uri_query(r->body, name, buf, size) : NULL;
}

/* The session's key, or NULL before auth_init(). */
static const unsigned char *
session_key(void)
{
	return auth_session_key();
}

/* The application of the session in the request's cookie, checked
 * against the store: 0 with app set and token filled, or -1 (not
 * signed in, or no more), or -2 with e set (the store failed). */
static int
session_app(struct req *r, struct app *app, char token[SESSION_TOKEN_MAX + 1],
    struct error *e)
{
	const unsigned char	*key = session_key();
	char			 prefix[MODEL_KEY_PREFIX_LEN + 1];
	struct key_row		 k;
	int64_t			 issued, last, now = clock_now_ms();
	int			 rc;

	if (key == NULL || cookie_of(r, token, SESSION_TOKEN_MAX + 1) ==
	    NULL || session_parse(key, token, now, prefix, &issued) == -1)
		return -1;
	if ((rc = store_key_by_prefix(r->store, prefix, &k, e)) <= 0)
		return rc == 0 ? -1 : -2;
	if (k.revoked_at != 0 || (k.expires_at != 0 &&
	    k.expires_at * 1000 <= now))
		return -1;
	if ((rc = store_app_by_id(r->store, k.app_id, app, e)) <= 0)
		return rc == 0 ? -1 : -2;
	if (!app->is_admin)
		return -1;
	if (store_audit_last(r->store, OPS_CONSOLE_LOGOUT_ACTION, prefix,
	    &last, e) == -1)
		return -2;
	return issued > last ? 0 : -1;
}

/* Answers 303 to where (below the root). */
static int
redirect(struct req *r, const char *where)
{
	char root[CONSOLE_ROOT_MAX];

	root_of(r, root);
	http_header(r, "Location", "%s/%s", root, where);
	http_raw(r, 303, "text/plain; charset=utf-8", "", 0);
	return 0;
}

int
console_session(struct req *r, struct error *e)
{
	char	token[SESSION_TOKEN_MAX + 1], csrf[FIELD_MAX];
	int	rc;

	if ((rc = session_app(r, &r->app, token, e)) == -2)
		return -1;
	if (rc == -1) {
		memset(&r->app, 0, sizeof(r->app));
		/* A page asks the browser to sign in; a change is refused
		 * (nothing it asked is done). */
		if (strcmp(r->method, "POST") != 0) {
			redirect(r, "login");
			return error_set(e, ERR_INVALID_API_KEY, NULL,
			    "not signed in");
		}
		return error_set(e, ERR_FORBIDDEN, NULL,
		    "not signed in to the console");
	}
	if (strcmp(r->method, "POST") != 0)
		return 0;
	if (req_read_body(r, e) == -1)
		return -1;
	if (!session_csrf_ok(session_key(), token, field(r, "csrf", csrf,
	    sizeof(csrf)))) {
		memset(&r->app, 0, sizeof(r->app));
		return error_set(e, ERR_FORBIDDEN, "csrf",
		    "the form's CSRF token is not this session's");
	}
	return 0;
}

int
console_begin(struct console *c, struct req *r, const char *title,
    const char *nav, struct error *e)
{
	char	token[SESSION_TOKEN_MAX + 1];
	size_t	i;

	memset(c, 0, sizeof(*c));
	c->r = r;
	root_of(r, c->root);
	if (r->app.id != 0 && session_key() != NULL &&
	    cookie_of(r, token, sizeof(token)) != NULL)
		session_csrf(session_key(), token, c->csrf);
	if ((c->f = open_memstream(&c->text, &c->len)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	html_printf(c->f, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width,initial-scale=1\">\n"
	    "<title>%s - evalgate</title>\n<link rel=\"stylesheet\" "
	    "href=\"%s/static/console.css\">\n<link rel=\"icon\" "
	    "href=\"%s/static/icon.svg\">\n<script src=\"%s/static/"
	    "console.js\" defer></script>\n</head><body>\n<header><b>"
	    "evalgate</b>", title, c->root, c->root, c->root);
	if (r->app.id != 0) {
		fputs("<nav aria-label=\"console\">", c->f);
		for (i = 0; i < NMENU; i++) {
			html_printf(c->f, "<a href=\"%s/%s\"", c->root,
			    menu[i].page);
			if (strcmp(nav, menu[i].page) == 0)
				fputs(" aria-current=\"page\"", c->f);
			html_printf(c->f, ">%s</a>", menu[i].label);
		}
		fputs("</nav>", c->f);
		console_form(c, "logout", NULL);
		html_printf(c->f, "<span class=\"mute\">%s</span> "
		    "<button type=\"submit\">Log out</button></form>",
		    r->app.name);
	}
	html_printf(c->f, "</header>\n<main>\n<h1>%s</h1>\n", title);
	return 0;
}

void
console_form(struct console *c, const char *action, const char *cls)
{
	if (strcmp(action, "logout") == 0)
		html_printf(c->f, "<form method=\"post\" action=\"%s/logout\">",
		    c->root);
	else
		html_printf(c->f, "<form method=\"post\" action=\"%s/do/%u\"",
		    c->root, action);
	if (cls != NULL && strcmp(action, "logout") != 0)
		html_printf(c->f, " class=\"%s\"", cls);
	if (strcmp(action, "logout") != 0)
		fputc('>', c->f);
	html_printf(c->f, "<input type=\"hidden\" name=\"csrf\" "
	    "value=\"%s\">", c->csrf);
}

void
console_drop(struct console *c)
{
	if (c->f != NULL)
		fclose(c->f);
	free(c->text);
	c->f = NULL;
	c->text = NULL;
}

int
console_end(struct console *c, int status, struct error *e)
{
	size_t i;

	fputs("</main>\n</body></html>\n", c->f);
	if (fclose(c->f) != 0 || c->len > PAGE_MAX) {
		c->f = NULL;
		console_drop(c);
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	}
	c->f = NULL;
	for (i = 0; i < NCONSOLE_HEADERS; i++)
		http_header(c->r, console_headers[i][0], "%s",
		    console_headers[i][1]);
	http_raw(c->r, status, "text/html; charset=utf-8", c->text, c->len);
	console_drop(c);
	return 0;
}

int
console_op(struct req *r, enum op op, json_object *in, json_object **out,
    struct error *e)
{
	struct op_ctx ctx;

	ctx.st = r->store;
	ctx.settings = r->settings;
	ctx.actor = r->app.name;	/* the audit log's "who" */
	return ops_run(op, &ctx, in, out, e);
}

void
console_time(FILE *f, int64_t ms)
{
	char		buf[32];
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
		fputs("-", f);
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm);
	html_esc(f, buf);
}

void
console_cell(FILE *f, json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || v == NULL)
		fputs("-", f);
	else if (json_object_is_type(v, json_type_string))
		html_esc(f, json_object_get_string(v));
	else
		html_esc(f, json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN));
}

const char *
console_error_field(const struct error *e)
{
	json_object *f;

	if (e->details != NULL && json_object_object_get_ex(e->details,
	    "field", &f) && json_object_get_string(f) != NULL)
		return json_object_get_string(f);
	return "";
}

/* A refusal of a console page or action, as a page: the message and the
 * field it names, with the status of the error. */
static int
refused(struct req *r, const struct error *err, struct error *e)
{
	struct console c;

	if (error_status(err->code) >= 500)
		return error_set(e, err->code, NULL, "%s", err->message);
	if (console_begin(&c, r, "Refused", "", e) == -1)
		return -1;
	html_printf(c.f, "<p class=\"bad\" role=\"alert\">%s%s%s</p>\n",
	    console_error_field(err), *console_error_field(err) ? ": " : "",
	    err->message);
	fputs("<p>Go back to correct it.</p>\n", c.f);
	return console_end(&c, error_status(err->code), e);
}

/* Login */

static int
login_page(struct req *r, int status, const char *message, struct error *e)
{
	struct console c;

	if (console_begin(&c, r, "Sign in", "", e) == -1)
		return -1;
	if (message != NULL)
		html_printf(c.f, "<p class=\"bad\" role=\"alert\">%s</p>\n",
		    message);
	html_printf(c.f, "<form method=\"post\" action=\"%s/login\" "
	    "class=\"row\"><label for=\"key\">Administrator key"
	    "<input id=\"key\" name=\"key\" type=\"password\" "
	    "autocomplete=\"off\" required size=\"48\" autofocus></label>"
	    "<button type=\"submit\">Sign in</button></form>\n"
	    "<p class=\"mute\">A key of an application with the admin flag "
	    "(evalgate-admin app create NAME --admin). The session lasts "
	    "%d hours, and ends at logout or when the key is revoked.</p>\n",
	    c.root, (int)(SESSION_TTL_MS / 3600000));
	return console_end(&c, status, e);
}

int
handle_console_login_form(struct req *r, struct error *e)
{
	return login_page(r, 200, NULL, e);
}

int
handle_console_login(struct req *r, struct error *e)
{
	char		*key, *bearer, token[SESSION_TOKEN_MAX + 1];
	char		 root[CONSOLE_ROOT_MAX];
	char		 prefix[MODEL_KEY_PREFIX_LEN + 1];
	struct error	 refusal = { 0 };
	json_object	*in, *out = NULL;
	int64_t		 now, last;
	int		 rc;

	if (req_read_body(r, e) == -1)
		return -1;
	key = xmalloc(FIELD_MAX);
	bearer = xmalloc(FIELD_MAX + 8);
	if (field(r, "key", key, FIELD_MAX) == NULL)
		key[0] = '\0';
	snprintf(bearer, FIELD_MAX + 8, "Bearer %s", key);
	rc = auth_check(r->store, bearer, &r->app, &refusal);
	explicit_bzero(key, FIELD_MAX);
	explicit_bzero(bearer, FIELD_MAX + 8);
	free(key);
	free(bearer);
	if (rc == -1 && error_status(refusal.code) >= 500) {
		*e = refusal;
		return -1;
	}
	error_clear(&refusal);
	if (rc == -1 || !r->app.is_admin || session_key() == NULL) {
		memset(&r->app, 0, sizeof(r->app));
		return login_page(r, 401, "That is not the key of an "
		    "administrator application.", e);
	}
	/* Its prefix: the first of the key's parts after "svc_". */
	if (r->body == NULL || uri_query(r->body, "key", token,
	    sizeof(token)) == NULL || strlen(token) < 4 + MODEL_KEY_PREFIX_LEN)
		return login_page(r, 401, "That is not the key of an "
		    "administrator application.", e);
	memcpy(prefix, token + 4, MODEL_KEY_PREFIX_LEN);
	prefix[MODEL_KEY_PREFIX_LEN] = '\0';
	explicit_bzero(token, sizeof(token));
	in = ju_obj();
	ju_add_str(in, "prefix", prefix);
	rc = console_op(r, OP_CONSOLE_LOGIN, in, &out, e);
	json_object_put(in);
	json_object_put(out);
	if (rc == -1)
		return -1;
	/* Issued after every logout of the key written so far, even one
	 * in this millisecond. */
	if (store_audit_last(r->store, OPS_CONSOLE_LOGOUT_ACTION, prefix,
	    &last, e) == -1)
		return -1;
	now = clock_now_ms();
	session_make(session_key(), prefix, now > last ? now : last + 1,
	    token);
	root_of(r, root);
	http_header(r, "Set-Cookie", "%s=%s; Path=%s; Max-Age=%lld; "
	    "HttpOnly; SameSite=Strict%s", COOKIE, token, root,
	    (long long)(SESSION_TTL_MS / 1000), over_https(r) ? "; Secure" :
	    "");
	explicit_bzero(token, sizeof(token));
	return redirect(r, "");
}

int
handle_console_logout(struct req *r, struct error *e)
{
	char		 token[SESSION_TOKEN_MAX + 1];
	char		 root[CONSOLE_ROOT_MAX];
	json_object	*in, *out = NULL;
	int		 rc;

	/* The gate let it through: the cookie is a session of a key. */
	if (cookie_of(r, token, sizeof(token)) == NULL)
		return error_set(e, ERR_FORBIDDEN, NULL, "not signed in");
	token[MODEL_KEY_PREFIX_LEN] = '\0';
	in = ju_obj();
	ju_add_str(in, "prefix", token);
	rc = console_op(r, OP_CONSOLE_LOGOUT, in, &out, e);
	json_object_put(in);
	json_object_put(out);
	if (rc == -1)
		return -1;
	root_of(r, root);
	http_header(r, "Set-Cookie", "%s=; Path=%s; Max-Age=0; HttpOnly; "
	    "SameSite=Strict%s", COOKIE, root, over_https(r) ? "; Secure" :
	    "");
	return redirect(r, "login");
}

int
handle_console_asset(struct req *r, struct error *e)
{
	const struct asset	*a;
	size_t			 i, k, len;

	for (i = 0; i < NASSETS; i++) {
		a = &assets[i];
		if (strcmp(r->params[0], a->name) != 0)
			continue;
		for (k = 0, len = strlen(a->body); k < 2; k++)
			len += a->more[k] != NULL ? strlen(a->more[k]) : 0;
		http_header(r, "X-Content-Type-Options", "nosniff");
		http_header(r, "Content-Length", "%zu", len);
		http_begin(r, 200, a->type);
		http_write(r, a->body, strlen(a->body));
		for (k = 0; k < 2; k++)
			if (a->more[k] != NULL)
				http_write(r, a->more[k], strlen(a->more[k]));
		return 0;
	}
	return error_set(e, ERR_NOT_FOUND, NULL, "no such file");
}

/* Pages */

typedef int (*page_fn)(struct console *, const char *, struct error *);

static int
overview(struct console *c, const char *item, struct error *e)
{
	(void)item;
	return console_overview(c, e);
}

/* GET CONSOLE_PREFIX "/{page}" and "/{page}/{item}": the page's
 * function, whether it takes an item, and whether it needs one. */
static const struct page {
	const char	*name;
	page_fn		 fn;
	int		 item;	/* 0 none, 1 optional, 2 required */
} pages[] = {
	{ "", overview, 0 },
	{ "applications", console_applications, 1 },
	{ "revoke", console_revoke, 2 },
	{ "decisions", console_decisions, 1 },
	{ "schemas", console_schemas, 1 },
	{ "promote", console_promote, 2 },
	{ "backends", console_backends, 0 },
	{ "templates", console_templates, 0 },
	{ "calibration", console_calibration, 0 },
};
#define NPAGES (sizeof(pages) / sizeof(pages[0]))

int
handle_console_page(struct req *r, struct error *e)
{
	struct console	 c;
	struct error	 err = { 0 };
	const char	*name = r->params[0] != NULL ? r->params[0] : "";
	const char	*item = r->params[0] != NULL ? r->params[1] : NULL;
	size_t		 i;
	int		 rc;

	for (i = 0; i < NPAGES; i++)
		if (strcmp(pages[i].name, name) == 0)
			break;
	if (i == NPAGES || (item != NULL && pages[i].item == 0) ||
	    (item == NULL && pages[i].item == 2))
		return error_set(e, ERR_NOT_FOUND, NULL, "no such page");
	memset(&c, 0, sizeof(c));
	c.r = r;
	if ((rc = pages[i].fn(&c, item, &err)) == -1) {
		console_drop(&c);
		rc = r->responded ? 0 : refused(r, &err, e);
	}
	error_clear(&err);
	return rc;
}

/* Actions */

enum field_kind { F_TEXT, F_INT, F_NUM, F_BOOL, F_JSON, F_LINES };

struct form_field {
	const char	*name;	/* in the form and in the input */
	enum field_kind	 kind;
};

typedef int (*done_fn)(struct req *, json_object *in, json_object *out,
    struct error *);

/* After a change: back to the page of the application it names. */
static int
to_application(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	char	*where;
	const char *name = ju_str(in, "name") != NULL ? ju_str(in, "name") :
	    ju_str(in, "application") != NULL ? ju_str(in, "application") :
	    ju_str(out, "application");
	size_t	 size;
	FILE	*f;

	(void)e;
	if (name == NULL)
		return redirect(r, "applications");
	if ((f = open_memstream(&where, &size)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	fputs("applications/", f);
	html_uri_component(f, name);
	fclose(f);
	redirect(r, where);
	free(where);
	return 0;
}

/* After a publication: the list of versions. */
static int
to_schemas(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	(void)in;
	(void)out;
	(void)e;
	return redirect(r, "schemas");
}

/* After a change to a schema's grants or challengers, or a promotion:
 * the schema's page (of the version promoted to, or changed). */
static int
to_schema(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	const char	*id = ju_str(in, "id") != NULL ? ju_str(in, "id") :
			    ju_str(in, "schema");
	json_object	*v = json_object_object_get(out, "version");
	char		*where;
	size_t		 size;
	FILE		*f;

	if (id == NULL)
		return redirect(r, "schemas");
	if ((f = open_memstream(&where, &size)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	fputs("schemas/", f);
	html_uri_component(f, id);
	if (v != NULL && json_object_is_type(v, json_type_int))
		fprintf(f, "?version=%lld",
		    (long long)json_object_get_int64(v));
	fclose(f);
	redirect(r, where);
	free(where);
	return 0;
}

/* After a backend's change: the list of backends. */
static int
to_backends(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	(void)in;
	(void)out;
	(void)e;
	return redirect(r, "backends");
}

/* After a template's publication: the templates. */
static int
to_templates(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	(void)in;
	(void)out;
	(void)e;
	return redirect(r, "templates");
}

/* After a calibration applied: the report of the version published. */
static int
to_calibration(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	json_object	*p = json_object_object_get(out, "published");
	char		*where;
	size_t		 size;
	FILE		*f;

	(void)in;
	if ((f = open_memstream(&where, &size)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	fputs("calibration?schema=", f);
	html_uri_component(f, ju_str(p, "id"));
	fprintf(f, "&version=%lld", (long long)json_object_get_int64(
	    json_object_object_get(p, "version")));
	fclose(f);
	redirect(r, where);
	free(where);
	return 0;
}

/* After a key's change: back to the page of its application. */
static int
to_key_application(struct req *r, json_object *in, json_object *out,
    struct error *e)
{
	struct key_row	 k;
	struct app	 a;
	json_object	*named;
	int		 rc;

	if (store_key_by_prefix(r->store, ju_str(in, "prefix"), &k, e) != 1 ||
	    store_app_by_id(r->store, k.app_id, &a, e) != 1) {
		error_clear(e);
		return redirect(r, "applications");
	}
	named = ju_obj();
	ju_add_str(named, "name", a.name);
	rc = to_application(r, named, out, e);
	json_object_put(named);
	return rc;
}

/* A key issued: shown once, on a page of its own, never again. */
static int
key_shown(struct req *r, json_object *in, json_object *out, struct error *e)
{
	struct console c;

	(void)in;
	if (console_begin(&c, r, "Key issued", "applications", e) == -1)
		return -1;
	html_printf(c.f, "<p>The key of <a href=\"%s/applications/%u\">%s</a>"
	    ", prefix <code>%s</code>. It is shown this once: copy it now."
	    "</p>\n<p class=\"key\" id=\"newkey\">%s</p>\n<p><button "
	    "type=\"button\" data-copy=\"newkey\">Copy</button></p>\n",
	    c.root, ju_str(out, "application"), ju_str(out, "application"),
	    ju_str(out, "prefix"), ju_str(out, "key"));
	return console_end(&c, 201, e);
}

#define FIELDS_MAX 10

/* POST CONSOLE_PREFIX "/do/{action}": the operation, the form's fields
 * that make its input (absent or empty: not given), what follows its
 * success, and whether every kind's options (the tables of backend.h)
 * are fields too, each named as its option. */
static const struct action {
	const char		*name;
	enum op			 op;
	struct form_field	 fields[FIELDS_MAX];
	done_fn			 done;
	int			 kind_options;
} actions[] = {
	{ "app-create", OP_APP_CREATE, { { "name", F_TEXT },
	    { "rate_per_minute", F_INT }, { "daily_quota", F_INT },
	    { "log_state", F_BOOL }, { "admin", F_BOOL } }, to_application, 0 },
	{ "app-update", OP_APP_UPDATE, { { "name", F_TEXT },
	    { "rate_per_minute", F_INT }, { "daily_quota", F_INT },
	    { "retention_days", F_INT }, { "log_state", F_BOOL } },
	    to_application, 0 },
	{ "key-issue", OP_KEY_ISSUE, { { "application", F_TEXT },
	    { "expires", F_TEXT } }, key_shown, 0 },
	{ "key-revoke", OP_KEY_REVOKE, { { "prefix", F_TEXT } },
	    to_key_application, 0 },
	{ "backend-add", OP_BACKEND_ADD, { { "name", F_TEXT },
	    { "kind", F_TEXT }, { "urls", F_LINES }, { "model", F_TEXT },
	    { "auth_env", F_TEXT }, { "description", F_TEXT },
	    { "release_date", F_TEXT }, { "timeout_ms", F_INT },
	    { "max_in_flight", F_INT } }, to_backends, 1 },
	{ "backend-update", OP_BACKEND_UPDATE, { { "name", F_TEXT },
	    { "enabled", F_BOOL }, { "urls", F_LINES }, { "model", F_TEXT },
	    { "auth_env", F_TEXT }, { "description", F_TEXT },
	    { "release_date", F_TEXT }, { "timeout_ms", F_INT },
	    { "max_in_flight", F_INT } }, to_backends, 1 },
	{ "schema-publish", OP_SCHEMA_PUBLISH, { { "id", F_TEXT },
	    { "backend", F_TEXT }, { "questions", F_JSON },
	    { "temperature", F_NUM }, { "abstain_threshold", F_NUM } },
	    to_schemas, 0 },
	{ "grant", OP_GRANT, { { "application", F_TEXT },
	    { "schema", F_TEXT }, { "version", F_INT } }, to_application, 0 },
	{ "ungrant", OP_UNGRANT, { { "application", F_TEXT },
	    { "schema", F_TEXT }, { "version", F_INT } }, to_schema, 0 },
	{ "challenger-add", OP_CHALLENGER_ADD, { { "id", F_TEXT },
	    { "version", F_INT }, { "backend", F_TEXT }, { "share", F_NUM } },
	    to_schema, 0 },
	{ "challenger-remove", OP_CHALLENGER_REMOVE, { { "id", F_TEXT },
	    { "version", F_INT }, { "backend", F_TEXT } }, to_schema, 0 },
	{ "promote", OP_PROMOTE, { { "id", F_TEXT }, { "version", F_INT },
	    { "backend", F_TEXT } }, to_schema, 0 },
	{ "template-publish", OP_TEMPLATE_PUBLISH, { { "id", F_TEXT },
	    { "body", F_TEXT }, { "variables", F_JSON }, { "escape", F_TEXT } },
	    to_templates, 0 },
	{ "calibration-apply", OP_CALIBRATION, { { "id", F_TEXT },
	    { "version", F_INT }, { "target_accuracy", F_NUM },
	    { "apply", F_BOOL } }, to_calibration, 0 },
};
#define NACTIONS (sizeof(actions) / sizeof(actions[0]))

/* A form value as JSON into *out (a new reference; NULL is JSON null):
 * 1, or 0 for "not given" (empty; "none" clears an integer: null), or
 * -1 with e set. */
static int
form_value(const struct form_field *f, const char *v, json_object **out,
    struct error *e)
{
	char	*end;
	double	 d;

	*out = NULL;
	if (*v == '\0')
		return 0;
	switch (f->kind) {
	case F_TEXT:
		*out = ju_string(v);
		return 1;
	case F_INT:
		if (strcmp(v, "none") == 0)
			return 1;
		if (strspn(v, "0123456789") != strlen(v) || strlen(v) > 15)
			break;
		*out = ju_int(strtoll(v, NULL, 10));
		return 1;
	case F_NUM:
		d = strtod(v, &end);
		if (*end != '\0' || !isfinite(d))
			break;
		*out = ju_must(json_object_new_double(d));
		return 1;
	case F_BOOL:
		if (strcmp(v, "true") == 0 || strcmp(v, "on") == 0)
			*out = ju_bool(1);
		else if (strcmp(v, "false") == 0)
			*out = ju_bool(0);
		else
			break;
		return 1;
	case F_LINES:
		*out = ju_arr();
		while (*v != '\0') {
			size_t n = strcspn(v, "\r\n");

			if (n > 0)
				ju_push(*out, ju_string_len(v, n));
			v += n;
			v += strspn(v, "\r\n");
		}
		return 1;
	case F_JSON:
		if ((*out = ju_parse(v)) != NULL)
			return 1;
		return error_set(e, ERR_VALIDATION, f->name,
		    "is not valid JSON");
	}
	return error_set(e, ERR_VALIDATION, f->name, "'%s' is not %s", v,
	    f->kind == F_BOOL ? "yes or no" : "a number");
}

/* Adds form field f to in, if given: 0, or -1 with e set.  buf holds
 * size bytes. */
static int
form_add(struct req *r, const struct form_field *f, json_object *in,
    char *buf, size_t size, struct error *e)
{
	json_object	*v;
	int		 rc;

	if (field(r, f->name, buf, size) == NULL)
		return 0;
	if ((rc = form_value(f, buf, &v, e)) == 1)
		ju_add(in, f->name, v);
	return rc == -1 ? -1 : 0;
}

/* The operation's input from the form: a new reference, or NULL with e
 * set.  A kind's option is a field of its name: an integer, "none" for
 * its default, or a JSON object. */
static json_object *
form_input(struct req *r, const struct action *a, struct error *e)
{
	const struct backend_kind	*k;
	const struct backend_option	*o;
	struct form_field		 f;
	json_object			*in = ju_obj();
	char				*buf = xmalloc(r->body_len + 1);
	size_t				 i;
	int				 rc = 0;

	for (i = 0; rc == 0 && i < FIELDS_MAX && a->fields[i].name != NULL;
	    i++)
		rc = form_add(r, &a->fields[i], in, buf, r->body_len + 1, e);
	for (i = 0; rc == 0 && a->kind_options &&
	    (k = backend_kind_at(i)) != NULL; i++)
		for (o = k->options; rc == 0 && o != NULL && o->name != NULL;
		    o++) {
			f.name = o->name;
			f.kind = o->type == BOPT_JSON ? F_JSON : F_INT;
			rc = form_add(r, &f, in, buf, r->body_len + 1, e);
		}
	free(buf);
	if (rc == -1) {
		json_object_put(in);
		in = NULL;
	}
	return in;
}

int
handle_console_action(struct req *r, struct error *e)
{
	const struct action	*a = NULL;
	struct error		 err = { 0 };
	json_object		*in, *out = NULL;
	size_t			 i;
	int			 rc;

	for (i = 0; i < NACTIONS && a == NULL; i++)
		if (strcmp(actions[i].name, r->params[0]) == 0)
			a = &actions[i];
	if (a == NULL)
		return error_set(e, ERR_NOT_FOUND, NULL, "no such action");
	if ((in = form_input(r, a, &err)) == NULL ||
	    console_op(r, a->op, in, &out, &err) == -1)
		rc = refused(r, &err, e);
	else
		rc = a->done(r, in, out, e);
	json_object_put(in);
	json_object_put(out);
	error_clear(&err);
	return rc;
}
