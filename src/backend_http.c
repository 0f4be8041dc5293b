/* backend_http.c: the HTTP client that remote backend kinds share
 * (doc/design.md, sections 2.2 and 7.1).
 *
 * One blocking libcurl easy handle per process, created at first use (so
 * after fork) and kept across requests so that connections are reused;
 * the options all POSTs share are set once, when it is made (setup()),
 * and after every POST it lets go of the caller's memory (release()),
 * keeping its options and live connections.  Several POSTs at once go
 * through one multi handle per process and a pool of easy handles,
 * kept the same way (the multi handle keeps their connections).  The answer's
 * body goes into the caller's capped buffer; the answers of one call
 * together are capped the same (README, "Faults and hardening"), and
 * none is read once the call's time is up.  What a transport failure
 * or an HTTP status means for the replica is read from the two tables
 * below.  Nothing the upstream sent is logged or put in a reason. */
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
#include "xalloc.h"

static CURL	*curl;		/* owned: the process's one handle */
static CURLM	*multi;		/* owned: the one for several at once */
static CURL	*pool[BACKEND_HTTP_MAX_PARALLEL];	/* owned: multi's */

/* Where the body goes, and why it stopped when it did. */
struct sink {
	struct buf	*b;		/* borrowed */
	enum buf_rc	 rc;
	size_t		*total;		/* borrowed: bytes of the
					 * call's answers so far */
};

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink	*s = arg;
	size_t		 n = size * nmemb;

	if (n > BACKEND_HTTP_MAX_ANSWER - *s->total) {
		s->rc = BUF_TOO_LARGE;
		return 0;
	}
	if ((s->rc = buf_add(s->b, data, n)) != BUF_OK)
		return 0;
	*s->total += n;
	return n;
}

/* The upstream's hints on when to come back (-1 when none), and
 * whether its status line came. */
struct hints {
	long	 retry_after_ms;	/* retry-after-ms */
	long	 retry_after;		/* Retry-After, in ms */
	int	 status_seen;
};

static long
hint_ms(double ms)
{
	if (!isfinite(ms) || ms < 0)
		return -1;
	return ms > BACKEND_HTTP_MAX_RETRY_MS ? BACKEND_HTTP_MAX_RETRY_MS :
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
		h->status_seen = 1;
		return n;
	}
	/* Only the two hints are read: any other line is passed over
	 * before it is copied. */
	if (n < sizeof("retry-after:") - 1 || strncasecmp(data, "retry-after",
	    sizeof("retry-after") - 1) != 0)
		return n;
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

/* libcurl 7 reports a header line past its cap (100 KB) as out of
 * memory; libcurl 8.6 and later say CURLE_TOO_LARGE (100).  After the
 * status line has come, either is taken for headers too large. */
#define HEADERS_TOO_LARGE	((CURLcode)100)

/* What a transport failure means for the replica.  An answer too large
 * arrived: like one that does not fit, it fails only its evaluation.
 * Headers too large are well-formed HTTP that cannot be used, from a
 * server that does it every time: a failure of the server, so that
 * such a replica rests. */
static const struct {
	CURLcode		 code;
	enum backend_verdict	 verdict;
	enum metrics_outcome	 outcome;
	const char		*what;
} transport[] = {
	{ CURLE_COULDNT_RESOLVE_HOST,	BV_FAILED, MO_CONNECT,
	  "cannot resolve the host" },
	{ CURLE_COULDNT_CONNECT,	BV_FAILED, MO_CONNECT,
	  "cannot connect" },
	{ CURLE_OPERATION_TIMEDOUT,	BV_FAILED, MO_TIMEOUT, "timed out" },
	/* backend_http_give_up_when(): ours, nothing of the replica. */
	{ CURLE_ABORTED_BY_CALLBACK,	BV_NONE, MO_ERROR, "given up" },
	{ CURLE_FILESIZE_EXCEEDED,	BV_ANSWERED, MO_UNFIT,
	  "answer too large" },
	{ CURLE_GOT_NOTHING,		BV_FAILED, MO_CONNECT, "empty reply" },
	{ CURLE_SEND_ERROR,		BV_FAILED, MO_CONNECT,
	  "connection lost while sending" },
	{ CURLE_RECV_ERROR,		BV_FAILED, MO_CONNECT,
	  "connection lost while receiving" },
	{ CURLE_PARTIAL_FILE,		BV_FAILED, MO_CONNECT,
	  "answer cut short" },
	{ CURLE_SSL_CONNECT_ERROR,	BV_FAILED, MO_CONNECT,
	  "TLS handshake failed" },
	{ CURLE_PEER_FAILED_VERIFICATION, BV_FAILED, MO_CONNECT,
	  "TLS certificate refused" },
	/* Replica URLs are checked http(s) when added: at call time this
	 * means an answer that is not HTTP (curl takes it for HTTP/0.9). */
	{ CURLE_UNSUPPORTED_PROTOCOL,	BV_FAILED, MO_UNFIT,
	  "the answer is not HTTP" },
	{ CURLE_WEIRD_SERVER_REPLY,	BV_FAILED, MO_UNFIT,
	  "the answer is not HTTP" },
	{ HEADERS_TOO_LARGE,		BV_FAILED, MO_HTTP_OTHER,
	  "the answer's headers are too large" },
	{ CURLE_URL_MALFORMAT,		BV_NONE, MO_ERROR, "malformed URL" },
	{ CURLE_OUT_OF_MEMORY,		BV_NONE, MO_ERROR, "out of memory" },
};

/* What an HTTP status means: first matching row wins. */
static const struct {
	long			 lo, hi;
	int			 answer;	/* read the body as an answer */
	enum backend_verdict	 verdict;	/* for the replica */
	int			 hint;		/* its Retry-After counts */
	enum metrics_outcome	 outcome;
	const char		*what;
} statuses[] = {
	{ 200, 299,	 1, BV_NONE, 0, MO_OK, NULL },
	{ 429, 429,	 0, BV_FAILED, 1, MO_HTTP_429, "rate limited" },
	{ 529, 529,	 0, BV_FAILED, 1, MO_HTTP_5XX, "overloaded" },
	{ 500, 599,	 0, BV_FAILED, 0, MO_HTTP_5XX, "server error" },
	{ 400, 499,	 0, BV_ANSWERED, 0, MO_HTTP_OTHER, "request refused" },
	{ 300, 399,	 0, BV_FAILED, 0, MO_HTTP_OTHER,
	  "a redirect, not followed" },
	{ 0, LONG_MAX,	 0, BV_FAILED, 0, MO_HTTP_OTHER, "unexpected status" },
};
#define NSTATUSES	(sizeof(statuses) / sizeof(statuses[0]))


/* What status means: 0 for an answer, or -1 with at filled (with the
 * upstream's hint h where the status takes one). */
static int
status_failure(long status, const struct hints *h,
    struct backend_attempt *at)
{
	size_t	 i;

	for (i = 0; i < NSTATUSES - 1; i++)
		if (status >= statuses[i].lo && status <= statuses[i].hi)
			break;
	if (statuses[i].answer)
		return 0;
	at->verdict = statuses[i].verdict;
	at->outcome = statuses[i].outcome;
	if (statuses[i].hint)
		at->hint_ms = h->retry_after_ms >= 0 ? h->retry_after_ms :
		    h->retry_after;
	snprintf(at->reason, sizeof(at->reason), "HTTP %ld, %s", status,
	    statuses[i].what);
	return -1;
}

static void
transport_failure(CURLcode code, enum buf_rc rc, const struct hints *h,
    struct backend_attempt *at)
{
	size_t	 i;

	if (code == CURLE_OUT_OF_MEMORY && h != NULL && h->status_seen)
		code = HEADERS_TOO_LARGE;
	at->verdict = BV_FAILED;
	at->outcome = MO_CONNECT;
	if (rc != BUF_OK) {
		at->verdict = rc == BUF_TOO_LARGE ? BV_ANSWERED : BV_NONE;
		at->outcome = rc == BUF_TOO_LARGE ? MO_UNFIT : MO_ERROR;
		snprintf(at->reason, sizeof(at->reason), "%s",
		    rc == BUF_TOO_LARGE ? "answer too large" : "out of memory");
		return;
	}
	for (i = 0; i < sizeof(transport) / sizeof(transport[0]); i++)
		if (transport[i].code == code) {
			at->verdict = transport[i].verdict;
			at->outcome = transport[i].outcome;
			snprintf(at->reason, sizeof(at->reason), "%s",
			    transport[i].what);
			return;
		}
	snprintf(at->reason, sizeof(at->reason), "%s",
	    curl_easy_strerror(code));
}

/* backend_http_give_up_when()'s test; NULL: none. */
static int (*give_up)(void);

void
backend_http_give_up_when(int (*fn)(void))
{
	give_up = fn;
}

/* libcurl's progress callback: non-zero gives the transfer up. */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	(void)arg, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return give_up != NULL && give_up();
}

/* The options every POST shares, set once on a new easy handle h (and
 * kept: no POST resets the handle). */
static CURL *
setup(CURL *h)
{
	if (h == NULL)
		return NULL;
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_MAXCONNECTS,
	    (long)(2 * BACKEND_MAX_URLS));
	curl_easy_setopt(h, CURLOPT_USERAGENT, "evalgate");
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)BACKEND_HTTP_MAX_ANSWER);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	return h;
}

/* The options of one POST, on the easy handle h (setup() done). */
static void
prepare(CURL *h, const char *url, const char *body,
    struct curl_slist *headers, long timeout_ms, struct sink *sink,
    struct hints *hints)
{
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
	    timeout_ms < BACKEND_HTTP_MAX_CONNECT_MS ? timeout_ms :
	    (long)BACKEND_HTTP_MAX_CONNECT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)strlen(body));
	curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, hints);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, give_up != NULL ? 0L : 1L);
}

/* After a POST on h: the handle keeps no pointer to the caller's memory
 * (the body, the headers, where the answer went), and keeps its options
 * and its live connections. */
static void
release(CURL *h)
{
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, (char *)NULL);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)NULL);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, (void *)NULL);
	curl_easy_setopt(h, CURLOPT_PRIVATE, (void *)NULL);
}

int
backend_http_init(void)
{
	static int	 ready;		/* curl_global_init() done */

	/* At the first remote call rather than at start: it sets up the
	 * TLS library, a millisecond of each worker's start, which a pool
	 * of a thousand workers pays before it serves. */
	if (!ready && curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return -1;
	ready = 1;
	if (curl == NULL && (curl = setup(curl_easy_init())) == NULL)
		return -1;
	return 0;
}

int
backend_http_post(const char *url, const char *body,
    struct curl_slist *headers, long timeout_ms, struct buf *resp,
    struct backend_attempt *at)
{
	struct hints	 h = { -1, -1, 0 };
	size_t		 total = 0;
	struct sink	 sink = { resp, BUF_OK, &total };
	CURLcode	 code;
	long		 status = 0;

	memset(at, 0, sizeof(*at));
	at->hint_ms = -1;
	buf_reset(resp);
	if (backend_http_init() == -1) {
		transport_failure(CURLE_OUT_OF_MEMORY, BUF_OK, NULL,
		    at);
		return -1;
	}
	prepare(curl, url, body, headers, timeout_ms, &sink, &h);
	code = curl_easy_perform(curl);
	if (code == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	release(curl);
	if (code != CURLE_OK) {
		transport_failure(code, sink.rc, &h, at);
		return -1;
	}
	return status_failure(status, &h, at);
}

/* ------------------------------------------------- several at once */

/* A handle of the pool and the POST it performs. */
struct slot {
	size_t		 i;		/* of the POST */
	int		 busy;
	struct sink	 sink;
	struct hints	 h;
};

/* Starts POST i on pool handle s, with what is left of the time until
 * deadline_us, its body counted in *total.  0, or -1 with at filled. */
static int
start(struct slot *slots, size_t s, const struct backend_http_post *p,
    size_t i, struct curl_slist *headers, int64_t deadline_us,
    size_t *total, struct backend_attempt *at)
{
	int64_t	 left_ms = (deadline_us - clock_mono_us()) / 1000;

	if (left_ms <= 0) {
		transport_failure(CURLE_OPERATION_TIMEDOUT, BUF_OK, NULL, at);
		return -1;
	}
	if (pool[s] == NULL && (pool[s] = setup(curl_easy_init())) == NULL) {
		transport_failure(CURLE_OUT_OF_MEMORY, BUF_OK, NULL, at);
		return -1;
	}
	buf_reset(p->resp);
	slots[s].i = i;
	slots[s].sink.b = p->resp;
	slots[s].sink.rc = BUF_OK;
	slots[s].sink.total = total;
	slots[s].h.retry_after_ms = slots[s].h.retry_after = -1;
	slots[s].h.status_seen = 0;
	prepare(pool[s], p->url, p->body, headers, (long)left_ms,
	    &slots[s].sink, &slots[s].h);
	curl_easy_setopt(pool[s], CURLOPT_PRIVATE, (void *)&slots[s]);
	if (curl_multi_add_handle(multi, pool[s]) != CURLM_OK) {
		release(pool[s]);
		transport_failure(CURLE_OUT_OF_MEMORY, BUF_OK, NULL, at);
		return -1;
	}
	slots[s].busy = 1;
	return 0;
}

/* Takes pool handle s off the multi handle; it keeps no pointer to the
 * caller's memory. */
static void
stop(struct slot *slots, size_t s)
{
	curl_multi_remove_handle(multi, pool[s]);
	release(pool[s]);
	slots[s].busy = 0;
}

/* How the finished transfer of handle s went: 0 a 2xx answer, or -1
 * with at filled. */
static int
finished(struct slot *slots, size_t s, CURLcode code,
    struct backend_attempt *at)
{
	long	 status = 0;

	if (code == CURLE_OK)
		curl_easy_getinfo(pool[s], CURLINFO_RESPONSE_CODE, &status);
	if (code != CURLE_OK) {
		transport_failure(code, slots[s].sink.rc, &slots[s].h, at);
		return -1;
	}
	return status_failure(status, &slots[s].h, at);
}

/* Whether the call's time is up (at filled then): an answer that came
 * too late is not parsed. */
static int
past(int64_t deadline_us, struct backend_attempt *at)
{
	if (clock_mono_us() < deadline_us)
		return 0;
	transport_failure(CURLE_OPERATION_TIMEDOUT, BUF_OK, NULL, at);
	return 1;
}

int
backend_http_post_many(const struct backend_http_post *posts, size_t n,
    struct curl_slist *headers, long timeout_ms, size_t parallel,
    int (*done)(void *arg, size_t i, struct backend_attempt *at),
    void *arg, struct backend_attempt *at)
{
	struct slot	 slots[BACKEND_HTTP_MAX_PARALLEL];
	struct slot	*sl;
	CURLMsg		*msg;
	int64_t		 deadline;
	size_t		 next = 0, running = 0, s, answered = 0;
	size_t		 total = 0;	/* bytes of the answers */
	int		 left, still, failed = 0;

	memset(at, 0, sizeof(*at));
	at->hint_ms = -1;
	memset(slots, 0, sizeof(slots));
	deadline = clock_mono_us() + (int64_t)timeout_ms * 1000;
	if (parallel < 1)
		parallel = 1;
	if (parallel > BACKEND_HTTP_MAX_PARALLEL)
		parallel = BACKEND_HTTP_MAX_PARALLEL;
	if (multi == NULL) {
		if ((multi = curl_multi_init()) == NULL) {
			transport_failure(CURLE_OUT_OF_MEMORY, BUF_OK, NULL,
			    at);
			return -1;
		}
		curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS,
		    (long)(BACKEND_HTTP_MAX_PARALLEL + 2 * BACKEND_MAX_URLS));
	}
	while (!failed && answered < n) {
		for (s = 0; s < parallel && next < n && !failed; s++)
			if (!slots[s].busy) {
				if (start(slots, s, &posts[next], next,
				    headers, deadline, &total, at) == -1)
					failed = 1;
				else {
					next++;
					running++;
				}
			}
		if (failed || running == 0)
			break;
		if (curl_multi_perform(multi, &still) != CURLM_OK) {
			transport_failure(CURLE_OUT_OF_MEMORY, BUF_OK, NULL,
			    at);
			failed = 1;
			break;
		}
		while (!failed && (msg = curl_multi_info_read(multi,
		    &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			sl = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&sl);
			if (sl == NULL)
				continue;
			s = (size_t)(sl - slots);
			if (finished(slots, s, msg->data.result, at) == -1 ||
			    past(deadline, at) ||
			    (done != NULL && done(arg, sl->i, at) == -1))
				failed = 1;
			else
				answered++;
			stop(slots, s);
			running--;
		}
		if (!failed && running > 0 && still > 0)
			curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
	for (s = 0; s < parallel; s++)		/* abandoned */
		if (slots[s].busy)
			stop(slots, s);
	return failed ? -1 : 0;
}

/* The process's headers of a call without a key: the same for every
 * backend, made once. */
static struct curl_slist	*plain;		/* owned */

void
backend_http_headers_free(struct curl_slist *list)
{
	struct curl_slist	*l;

	if (list == plain)		/* kept: no key in it */
		return;
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

struct curl_slist *
backend_http_headers(const struct backend *b)
{
	static const char	 bearer[] = "Authorization: Bearer ";
	struct curl_slist	*list = NULL;
	const char		*key = NULL;
	char			*line;
	size_t			 len;
	int			 failed = 0;

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
	if (key == NULL && plain != NULL)
		return plain;
	list = append(list, "Content-Type: application/json", &failed);
	list = append(list, "Accept: application/json", &failed);
	list = append(list, "Expect:", &failed);	/* no 100-continue */
	if (key == NULL && !failed)
		return plain = list;
	if (key != NULL && !failed) {
		len = sizeof(bearer) + strlen(key);
		line = xmalloc(len);
		snprintf(line, len, "%s%s", bearer, key);
		list = append(list, line, &failed);
		sodium_memzero(line, len);
		free(line);
	}
	if (failed) {
		backend_http_headers_free(list);
		return NULL;
	}
	return list;
}

void
backend_http_loggable_url(const char *url, char *buf, size_t size)
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

void
backend_http_cleanup(void)
{
	size_t	 i;

	if (curl != NULL)
		curl_easy_cleanup(curl);
	curl = NULL;
	for (i = 0; i < BACKEND_HTTP_MAX_PARALLEL; i++) {
		if (pool[i] != NULL)
			curl_easy_cleanup(pool[i]);
		pool[i] = NULL;
	}
	if (multi != NULL)
		curl_multi_cleanup(multi);
	multi = NULL;
	curl_slist_free_all(plain);
	plain = NULL;
}
