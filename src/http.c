/* http.c: FastCGI params in, status/headers/body out.
 *
 * Every response carries x-service-request-id (the spec) and the same
 * value in x-typesafe-request-id (what the official SDKs read). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "clock.h"
#include "http.h"
#include "json_util.h"
#include "metrics.h"
#include "settings.h"
#include "uri.h"
#include "xalloc.h"

/* A new copy of at most n bytes of v, or NULL for NULL; a copy that
 * cannot be made is NULL and marks r out of memory (the path, query and
 * credentials are sized by the request: checked, a 503). */
static char *
copy(struct req *r, const char *v, size_t n)
{
	char *c;

	if (v == NULL)
		return NULL;
	if ((c = strndup(v, n)) == NULL)
		r->out_of_memory = 1;
	return c;
}

void
req_init(struct req *r, FCGX_Request *fcgi, const struct settings *settings,
    struct store *store)
{
	const char	*method, *uri, *auth;
	size_t		 plen, mount;

	memset(r, 0, sizeof(*r));
	r->fcgi = fcgi;
	r->settings = settings;
	r->store = store;
	r->start_us = clock_mono_us();
	r->note.schema_version = -1;
	r->note.backend_ms = -1;
	uuid7_new(clock_now_ms(), r->request_id);

	method = FCGX_GetParam("REQUEST_METHOD", fcgi->envp);
	snprintf(r->method, sizeof(r->method), "%s", method ? method : "");
	/* REQUEST_URI is what the client sent; SCRIPT_NAME/PATH_INFO split
	 * it differently on every server, so the URI is the one truth.
	 * They only say where the service is mounted when a rewrite ran
	 * the program for the path (shared hosting: the path below
	 * "/evalgate" is routed). */
	uri = FCGX_GetParam("REQUEST_URI", fcgi->envp);
	if (uri == NULL)
		uri = "/";
	plen = strcspn(uri, "?");
	mount = uri_mount_offset(uri, plen,
	    FCGX_GetParam("SCRIPT_NAME", fcgi->envp),
	    FCGX_GetParam("PATH_INFO", fcgi->envp));
	r->path = copy(r, uri + mount, plen - mount);
	r->query = uri[plen] == '?' ? copy(r, uri + plen + 1, SIZE_MAX) :
	    NULL;
	/* Without CGIPassAuth, an .htaccess passes the header with
	 * mod_rewrite's [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}], and
	 * after the rewrite's internal redirect Apache renames it
	 * REDIRECT_HTTP_AUTHORIZATION (no client header becomes that). */
	auth = FCGX_GetParam("HTTP_AUTHORIZATION", fcgi->envp);
	if (auth == NULL || *auth == '\0')
		auth = FCGX_GetParam("REDIRECT_HTTP_AUTHORIZATION",
		    fcgi->envp);
	r->authorization = copy(r, auth, SIZE_MAX);
	r->on_admin_listener = uri_on_listener(
	    FCGX_GetParam("SERVER_ADDR", fcgi->envp),
	    FCGX_GetParam("SERVER_PORT", fcgi->envp), settings->admin_listen);
}

int
req_drained(struct req *r)
{
	/* At the end of FCGI_STDIN this reads nothing; before it, one
	 * byte of what is left, which says it is not drained. */
	return FCGX_GetChar(r->fcgi->in) == EOF &&
	    FCGX_HasSeenEOF(r->fcgi->in);
}

void
req_free(struct req *r)
{
	size_t i;

	free(r->path);
	free(r->query);
	if (r->authorization != NULL) {
		explicit_bzero(r->authorization, strlen(r->authorization));
		free(r->authorization);
	}
	free(r->body);
	for (i = 0; i < HTTP_MAX_PARAMS; i++)
		free(r->params[i]);
	for (i = 0; i < r->nheaders; i++)
		free(r->headers[i]);
	memset(r, 0, sizeof(*r));
}

int
req_read_body(struct req *r, struct error *e)
{
	const char	*cl = FCGX_GetParam("CONTENT_LENGTH", r->fcgi->envp);
	char		*end;
	long long	 len = 0;
	int		 got;

	if (r->body != NULL)
		return 0;
	if (cl != NULL && *cl != '\0') {
		len = strtoll(cl, &end, 10);
		if (*end != '\0' || len < 0)
			return error_set(e, ERR_VALIDATION, NULL,
			    "Content-Length is not a number");
	}
	if (len > r->settings->max_body_bytes)
		return error_set(e, ERR_PAYLOAD_TOO_LARGE, NULL,
		    "request body of %lld bytes is over the limit of %ld",
		    len, r->settings->max_body_bytes);
	if ((r->body = malloc((size_t)len + 1)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	got = len > 0 ? FCGX_GetStr(r->body, (int)len, r->fcgi->in) : 0;
	r->body_len = got > 0 ? (size_t)got : 0;
	r->body[r->body_len] = '\0';
	return 0;
}

json_object *
req_json_object(struct req *r, struct error *e)
{
	if (req_read_body(r, e) == -1)
		return NULL;
	return ju_parse_body(r->body, r->body_len, e);
}

const char *
req_query(const struct req *r, const char *name, char *buf, size_t size)
{
	return uri_query(r->query, name, buf, size);
}

void
http_header(struct req *r, const char *name, const char *fmt, ...)
{
	char	 value[512];
	va_list	 ap;

	if (r->nheaders == HTTP_MAX_HEADERS)
		return;
	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	/* Values are ours, but a CR or LF must never split a header. */
	value[strcspn(value, "\r\n")] = '\0';
	r->headers[r->nheaders++] = xasprintf("%s: %s\r\n", name, value);
}

/* n in decimal, at the end of d (24 bytes): its first digit. */
static const char *
decimal(char d[24], int64_t n)
{
	char		*p = d + 23;
	uint64_t	 u = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;

	*p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (n < 0)
		*--p = '-';
	return p;
}

/* A header line of parts (NULL-terminated; an int64 where the part is
 * "%"), as http_header() would have written it: the two RateLimit
 * headers of every charged call, without printf. */
static void
header_line(struct req *r, const char *const *parts, const int64_t *v)
{
	struct buf	 b;
	char		 d[24];

	if (r->nheaders == HTTP_MAX_HEADERS)
		return;
	buf_init(&b, 512);
	for (; *parts != NULL; parts++)
		if (buf_adds(&b, strcmp(*parts, "%") == 0 ? decimal(d,
		    *v++) : *parts) != BUF_OK)
			xoom("a header");
	r->headers[r->nheaders++] = buf_take(&b, NULL);
	if (r->headers[r->nheaders - 1] == NULL)
		xoom("a header");
}

void
http_ratelimit(struct req *r, const struct ratelimit *rl)
{
	static const char *const policy[] = { "RateLimit-Policy: "
	    "\"minute\";q=", "%", ";w=60, \"day\";q=", "%", ";w=86400\r\n",
	    NULL };
	static const char *const left[] = { "RateLimit: \"minute\";r=", "%",
	    ";t=", "%", ", \"day\";r=", "%", ";t=", "%", "\r\n", NULL };
	const int64_t	 pv[] = { rl->rate, rl->quota };
	const int64_t	 lv[] = { rl->rate_remaining, rl->rate_reset_s,
	    rl->quota_remaining, rl->quota_reset_s };

	header_line(r, policy, pv);
	header_line(r, left, lv);
}

static const char *
reason(int status)
{
	static const struct {
		int		 status;
		const char	*text;
	} reasons[] = {
		{ 200, "OK" }, { 201, "Created" }, { 204, "No Content" },
		{ 401, "Unauthorized" }, { 403, "Forbidden" },
		{ 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 409, "Conflict" }, { 413, "Payload Too Large" },
		{ 422, "Unprocessable Content" }, { 429, "Too Many Requests" },
		{ 500, "Internal Server Error" },
		{ 503, "Service Unavailable" },
	};
	size_t i;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].status == status)
			return reasons[i].text;
	return "Unknown";
}

/* Writes the status line and headers, with a Content-Length unless
 * chunked (a body of unknown length, written by http_write). */
static void
head(struct req *r, int status, const char *type, size_t len, int chunked)
{
	FCGX_Stream	*out = r->fcgi->out;
	char		 d[24];
	size_t		 i;

	r->responded = 1;
	r->status = status;
	/* Written in pieces into libfcgi's buffer, without printf. */
	FCGX_PutS("Status: ", out);
	FCGX_PutS(decimal(d, status), out);
	FCGX_PutS(" ", out);
	FCGX_PutS(reason(status), out);
	FCGX_PutS("\r\nContent-Type: ", out);
	FCGX_PutS(type, out);
	if (!chunked) {
		FCGX_PutS("\r\nContent-Length: ", out);
		FCGX_PutS(decimal(d, (int64_t)len), out);
	}
	FCGX_PutS("\r\nCache-Control: no-store\r\nx-service-request-id: ",
	    out);
	FCGX_PutS(r->request_id, out);
	FCGX_PutS("\r\nx-typesafe-request-id: ", out);
	FCGX_PutS(r->request_id, out);
	FCGX_PutS("\r\n", out);
	for (i = 0; i < r->nheaders; i++)
		FCGX_PutS(r->headers[i], out);
	FCGX_PutS("\r\n", out);
}

void
http_raw(struct req *r, int status, const char *type, const char *body,
    size_t len)
{
	if (r->responded)
		return;
	head(r, status, type, len, 0);
	http_write(r, body, len);
}

void
http_begin(struct req *r, int status, const char *type)
{
	if (!r->responded)
		head(r, status, type, 0, 1);
}

int
http_write(struct req *r, const char *buf, size_t len)
{
	if (strcmp(r->method, "HEAD") == 0 || len == 0)
		return 0;
	return FCGX_PutStr(buf, (int)len, r->fcgi->out) == (int)len ? 0 : -1;
}

void
http_json(struct req *r, int status, json_object *body)
{
	size_t		 len;
	const char	*text;

	text = json_object_to_json_string_length(body,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	http_raw(r, status, "application/json", text, len);
}

json_object *
http_error_body(const struct error *e)
{
	json_object *body, *err;

	err = ju_obj();
	ju_add(err, "code", ju_string(error_name(e->code)));
	ju_add(err, "message", ju_string(e->message[0] ? e->message :
	    error_name(e->code)));
	ju_add(err, "details", e->details != NULL ?
	    json_object_get(e->details) : ju_obj());
	body = ju_obj();
	ju_add(body, "error", err);
	return body;
}

/* Forgets the response headers named name added so far. */
static void
unheader(struct req *r, const char *name)
{
	size_t	i, n = 0, len = strlen(name);

	for (i = 0; i < r->nheaders; i++)
		if (strncmp(r->headers[i], name, len) == 0 &&
		    r->headers[i][len] == ':')
			free(r->headers[i]);
		else
			r->headers[n++] = r->headers[i];
	r->nheaders = n;
}

void
http_error(struct req *r, const struct error *e, json_object *also)
{
	/* The fields http_ratelimit() added for an admitted call: a 503
	 * is given back its charge (README, "Rate limits and quotas": no
	 * 503 is charged), so the counts they tell are out of date, and a
	 * 503, like a 429, tells none. */
	static const char *const charged[] = { "RateLimit-Policy",
	    "RateLimit" };
	json_object	*body;
	long		 ms;
	size_t		 i;

	if (r->responded)
		return;
	if (error_status(e->code) == 503)
		for (i = 0; i < sizeof(charged) / sizeof(charged[0]); i++)
			unheader(r, charged[i]);
	if (e->retry_after_ms > 0 || e->code == ERR_RATE_LIMITED ||
	    e->code == ERR_QUOTA_EXCEEDED || error_status(e->code) == 503) {
		ms = e->retry_after_ms > 0 ? e->retry_after_ms : 1000;
		http_header(r, "Retry-After", "%ld", (ms + 999) / 1000);
		http_header(r, "retry-after-ms", "%ld", ms);
	}
	if (error_status(e->code) == 503)
		metrics_unavailable(e->unavailable);
	body = http_error_body(e);
	if (also != NULL) {
		json_object_object_foreach(also, k, v)
			ju_add(body, k, json_object_get(v));
	}
	http_json(r, error_status(e->code), body);
	json_object_put(body);
}
