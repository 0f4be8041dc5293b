/* backend_http.c: the "systemone" backend kind (design.md section 7).
 *
 * POST {replica}/v1/systemone {state, model, questions} over blocking
 * libcurl, one easy handle per process kept across requests so that
 * connections are reused.  Replicas are tried in turn from a rotating
 * start; one that fails at the transport, answers 429, 529 or 5xx, or
 * answers something that does not fit the questions rests for a
 * cool-down shared by every worker through the cache.  When every replica
 * is resting, all are tried anyway, in the same order: a backend is never
 * refused without asking.  The pure parser of the upstream's answer is
 * in backend_answer.c. */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "backend_http.h"
#include "clock.h"
#include "log.h"
#include "question.h"
#include "settings.h"

#define DEFAULT_TIMEOUT	10000		/* ms, if settings give none */

static CURL		*curl;		/* owned: the process's one handle */
static unsigned long	 rotation;	/* start replica of the next call */

/* ----------------------------------------------------------- transport */

struct body {
	char	*p;		/* owned, NUL-terminated */
	size_t	 len, cap;
	int	 too_large;
	int	 no_memory;
};

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body	*b = arg;
	size_t		 n = size * nmemb, cap;
	char		*p;

	if (n > SYSTEMONE_MAX_ANSWER - b->len) {
		b->too_large = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap > 0 ? b->cap : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->no_memory = 1;
			return 0;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* The upstream's hints on when to come back; -1 when none. */
struct hints {
	long	 retry_after_ms;	/* retry-after-ms */
	long	 retry_after;		/* Retry-After, in ms */
};

static long
hint_ms(double ms)
{
	if (!isfinite(ms) || ms < 0)
		return -1;
	return ms > SYSTEMONE_MAX_RETRY_MS ? SYSTEMONE_MAX_RETRY_MS :
	    (long)ceil(ms);
}

static size_t
on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct hints	*h = arg;
	size_t		 n = size * nmemb;
	char		 line[256], *v, *end;
	double		 d;
	time_t		 t;

	if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		h->retry_after_ms = h->retry_after = -1;	/* a new answer */
		return n;
	}
	snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ?
	    n : sizeof(line) - 1), data);
	line[strcspn(line, "\r\n")] = '\0';
	if ((v = strchr(line, ':')) == NULL)
		return n;
	*v++ = '\0';
	v += strspn(v, " \t");
	if (strcasecmp(line, "retry-after-ms") == 0) {
		d = strtod(v, &end);
		if (end != v && *end == '\0')
			h->retry_after_ms = hint_ms(d);
	} else if (strcasecmp(line, "retry-after") == 0) {
		d = strtod(v, &end);
		if (end != v && *end == '\0' && isdigit((unsigned char)*v))
			h->retry_after = hint_ms(d * 1000);
		else if ((t = curl_getdate(v, NULL)) != -1)
			h->retry_after = hint_ms(difftime(t, time(NULL)) *
			    1000);
	}
	return n;
}

/* What a transport failure means for the replica. */
static const struct {
	CURLcode	 code;
	int		 cool;
	const char	*what;
} transport[] = {
	{ CURLE_COULDNT_RESOLVE_HOST,	1, "cannot resolve the host" },
	{ CURLE_COULDNT_CONNECT,	1, "cannot connect" },
	{ CURLE_OPERATION_TIMEDOUT,	1, "timed out" },
	{ CURLE_FILESIZE_EXCEEDED,	1, "answer too large" },
	{ CURLE_GOT_NOTHING,		1, "empty reply" },
	{ CURLE_SEND_ERROR,		1, "connection lost while sending" },
	{ CURLE_RECV_ERROR,		1, "connection lost while receiving" },
	{ CURLE_PARTIAL_FILE,		1, "answer cut short" },
	{ CURLE_SSL_CONNECT_ERROR,	1, "TLS handshake failed" },
	{ CURLE_PEER_FAILED_VERIFICATION, 1, "TLS certificate refused" },
	{ CURLE_UNSUPPORTED_PROTOCOL,	0, "not an http or https URL" },
	{ CURLE_URL_MALFORMAT,		0, "malformed URL" },
	{ CURLE_OUT_OF_MEMORY,		0, "out of memory" },
};

/* What an HTTP status means: first matching row wins. */
static const struct {
	long		 lo, hi;
	int		 answer;	/* read the body as an answer */
	int		 cool;		/* the replica rests */
	int		 hint;		/* its Retry-After counts */
	const char	*what;
} statuses[] = {
	{ 200, 299,	 1, 0, 0, NULL },
	{ 429, 429,	 0, 1, 1, "rate limited" },
	{ 529, 529,	 0, 1, 1, "overloaded" },
	{ 500, 599,	 0, 1, 0, "server error" },
	{ 400, 499,	 0, 0, 0, "request refused" },
	{ 0, LONG_MAX,	 0, 0, 0, "unexpected status" },
};
#define NSTATUSES	(sizeof(statuses) / sizeof(statuses[0]))

/* How one attempt went. */
struct attempt {
	char	 reason[160];
	int	 cool;		/* the replica should rest */
	long	 hint_ms;	/* upstream's Retry-After; -1 none */
};

static void
transport_failure(CURLcode code, const struct body *b, struct attempt *at)
{
	size_t	 i;

	at->cool = 1;
	if (b->too_large || b->no_memory) {
		at->cool = b->too_large;
		snprintf(at->reason, sizeof(at->reason), "%s",
		    b->too_large ? "answer too large" : "out of memory");
		return;
	}
	for (i = 0; i < sizeof(transport) / sizeof(transport[0]); i++)
		if (transport[i].code == code) {
			at->cool = transport[i].cool;
			snprintf(at->reason, sizeof(at->reason), "%s",
			    transport[i].what);
			return;
		}
	snprintf(at->reason, sizeof(at->reason), "%s",
	    curl_easy_strerror(code));
}

/* One POST to endpoint: 0 and out filled, or -1 and at says why. */
static int
attempt(const char *endpoint, struct body *b, json_object *questions,
    struct backend_answer *out, struct attempt *at)
{
	struct hints	 h = { -1, -1 };
	CURLcode	 code;
	long		 status = 0;
	size_t		 i;
	char		 why[120];

	memset(at, 0, sizeof(*at));
	at->hint_ms = -1;
	b->len = 0;
	b->too_large = b->no_memory = 0;
	curl_easy_setopt(curl, CURLOPT_URL, endpoint);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &h);
	if ((code = curl_easy_perform(curl)) != CURLE_OK) {
		transport_failure(code, b, at);
		return -1;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	for (i = 0; i < NSTATUSES - 1; i++)
		if (status >= statuses[i].lo && status <= statuses[i].hi)
			break;
	if (!statuses[i].answer) {
		at->cool = statuses[i].cool;
		if (statuses[i].hint)
			at->hint_ms = h.retry_after_ms >= 0 ?
			    h.retry_after_ms : h.retry_after;
		snprintf(at->reason, sizeof(at->reason), "HTTP %ld, %s",
		    status, statuses[i].what);
		return -1;
	}
	if (backend_parse_systemone(b->p, b->len, questions, out, why,
	    sizeof(why)) == -1) {
		at->cool = 1;
		snprintf(at->reason, sizeof(at->reason),
		    "answer does not fit: %s", why);
		return -1;
	}
	return 0;
}

/* The request body, a new string the caller frees; NULL out of memory. */
static char *
request_body(const struct backend *b, json_object *state,
    json_object *questions)
{
	json_object	*o;
	const char	*text;
	char		*copy = NULL;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(o, "state", json_object_get(state));
	json_object_object_add(o, "model", json_object_new_string(
	    b->model[0] != '\0' ? b->model : SYSTEMONE_DEFAULT_MODEL));
	json_object_object_add(o, "questions", json_object_get(questions));
	text = json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text != NULL)
		copy = strdup(text);
	json_object_put(o);
	return copy;
}

/* Wipes header values (one is the upstream key) before freeing them. */
static void
free_headers(struct curl_slist *list)
{
	struct curl_slist	*l;

	for (l = list; l != NULL; l = l->next)
		sodium_memzero(l->data, strlen(l->data));
	curl_slist_free_all(list);
}

static struct curl_slist *
append(struct curl_slist *list, const char *header, int *failed)
{
	struct curl_slist	*l;

	if (*failed)
		return list;
	if ((l = curl_slist_append(list, header)) == NULL)
		*failed = 1;
	return l != NULL ? l : list;
}

/* The request headers; NULL out of memory.  The key is read here from
 * the variable the backend names, and is never logged or kept. */
static struct curl_slist *
request_headers(const struct backend *b)
{
	static const char	 bearer[] = "Authorization: Bearer ";
	struct curl_slist	*list = NULL;
	const char		*key = NULL;
	char			*line;
	size_t			 len;
	int			 failed = 0;

	list = append(list, "Content-Type: application/json", &failed);
	list = append(list, "Accept: application/json", &failed);
	list = append(list, "Expect:", &failed);	/* no 100-continue */
	if (b->auth_env[0] != '\0' && ((key = getenv(b->auth_env)) == NULL ||
	    key[0] == '\0')) {
		log_warn("backend '%s': variable %s is not set; calling the"
		    " upstream without a key", b->name, b->auth_env);
		key = NULL;
	}
	if (key != NULL && key[strcspn(key, "\r\n")] != '\0') {
		log_warn("backend '%s': variable %s holds a line break; calling"
		    " the upstream without a key", b->name, b->auth_env);
		key = NULL;
	}
	if (key != NULL && !failed) {
		len = sizeof(bearer) + strlen(key);
		if ((line = malloc(len)) == NULL)
			failed = 1;
		else {
			snprintf(line, len, "%s%s", bearer, key);
			list = append(list, line, &failed);
			sodium_memzero(line, len);
			free(line);
		}
	}
	if (failed) {
		free_headers(list);
		return NULL;
	}
	return list;
}

/* The URL as a log may show it: without user:password@, one line. */
static void
loggable_url(const char *url, char *buf, size_t size)
{
	const char	*host = strstr(url, "://"), *at = NULL, *p;
	char		*q;

	if (host != NULL)
		for (p = host + 3; *p != '\0' && strchr("/?#", *p) == NULL;
		    p++)
			if (*p == '@')
				at = p;
	if (at != NULL)
		snprintf(buf, size, "%.*s***%s", (int)(host + 3 - url), url,
		    at);
	else
		snprintf(buf, size, "%s", url);
	for (q = buf; *q != '\0'; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
}

/* The process's handle with the options common to every attempt. */
static CURL *
prepare(const char *body, struct curl_slist *headers, long timeout_ms,
    struct body *b)
{
	if (curl == NULL && (curl = curl_easy_init()) == NULL)
		return NULL;
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
	    timeout_ms < SYSTEMONE_MAX_CONNECT_MS ? timeout_ms :
	    (long)SYSTEMONE_MAX_CONNECT_MS);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(curl, CURLOPT_MAXCONNECTS,
	    (long)(2 * BACKEND_MAX_URLS));
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "evalgate");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)strlen(body));
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)SYSTEMONE_MAX_ANSWER);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
	return curl;
}

/* The replica's cool-down; a call without a store has none. */
static int64_t
cooldown_get(struct store *st, const char *url)
{
	return st != NULL ? store_cooldown_until(st, url) : 0;
}

static void
cooldown_put(struct store *st, const char *url, int64_t until_ms)
{
	if (st != NULL)
		store_cooldown_set(st, url, until_ms);
}

static int
no_memory(struct error *e)
{
	error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	e->retry_after_ms = 1000;
	return -1;
}

int
backend_systemone_evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, struct error *e)
{
	struct body		 resp = { 0 };
	struct curl_slist	*headers = NULL;
	struct attempt		 at;
	char			*body = NULL, endpoint[sizeof(b->urls[0]) + 16];
	char			 shown[sizeof(b->urls[0])], reasons[300] = "";
	int64_t			 until[BACKEND_MAX_URLS], now, t0;
	size_t			 n = b->nurls, start, k, i, resting = 0, len;
	long			 timeout, hint = -1;
	int			 rc = -1;

	memset(out, 0, sizeof(*out));
	if (n > BACKEND_MAX_URLS)
		n = BACKEND_MAX_URLS;
	if (n == 0) {
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
		    "backend '%s': no replica configured", b->name);
		e->retry_after_ms = 1000;
		return -1;
	}
	timeout = b->timeout_ms > 0 ? (long)b->timeout_ms :
	    s != NULL && s->backend_timeout_ms > 0 ? s->backend_timeout_ms :
	    DEFAULT_TIMEOUT;
	if ((body = request_body(b, state, questions)) == NULL ||
	    (headers = request_headers(b)) == NULL ||
	    prepare(body, headers, timeout, &resp) == NULL) {
		rc = no_memory(e);
		goto done;
	}

	start = rotation++ % n;
	now = clock_now_ms();
	for (i = 0; i < n; i++)
		if ((until[i] = cooldown_get(st, b->urls[i])) > now)
			resting++;
	if (resting == n)
		log_warn("backend '%s': every replica is cooling down;"
		    " trying them all", b->name);

	for (k = 0; k < n && rc == -1; k++) {
		i = (start + k) % n;
		if (resting < n && until[i] > now)
			continue;
		len = strlen(b->urls[i]);
		while (len > 0 && b->urls[i][len - 1] == '/')
			len--;
		snprintf(endpoint, sizeof(endpoint), "%.*s/v1/systemone",
		    (int)len, b->urls[i]);
		t0 = clock_mono_us();
		if (attempt(endpoint, &resp, questions, out, &at) == 0) {
			snprintf(out->replica, sizeof(out->replica), "%s",
			    b->urls[i]);
			if (until[i] != 0)
				cooldown_put(st, b->urls[i], 0);
			rc = 0;
			break;
		}
		if (at.cool)
			cooldown_put(st, b->urls[i],
			    clock_now_ms() + SYSTEMONE_COOLDOWN_MS);
		if (at.hint_ms > hint)
			hint = at.hint_ms;
		loggable_url(b->urls[i], shown, sizeof(shown));
		log_warn("backend '%s': replica %s failed after %lld ms: %s%s",
		    b->name, shown, (long long)((clock_mono_us() - t0) / 1000),
		    at.reason, at.cool ? " (cooling down 30 s)" : "");
		len = strlen(reasons);
		snprintf(reasons + len, sizeof(reasons) - len, "%s%s",
		    len > 0 ? "; " : "", at.reason);
	}
	if (rc == -1) {
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
		    "backend '%s': no replica answered (%s)", b->name,
		    reasons);
		e->retry_after_ms = hint > 0 ? hint : 1000;
	}
done:
	if (curl != NULL)	/* no borrowed pointer stays; keeps */
		curl_easy_reset(curl);	/* the live connections */
	free_headers(headers);
	free(body);
	free(resp.p);
	return rc;
}

void
backend_systemone_cleanup(void)
{
	if (curl != NULL)
		curl_easy_cleanup(curl);
	curl = NULL;
}
