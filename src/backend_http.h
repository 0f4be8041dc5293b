/* backend_http.h: the HTTP client that remote backend kinds share.
 *
 * Blocking libcurl on the process's one easy handle, created at first
 * use (so after fork) and kept across requests so that connections are
 * reused; and several POSTs at once on the process's one multi handle,
 * kept likewise.  A POST of a JSON text with a timeout, or several; what
 * a transport failure or an HTTP status means for the replica (one table
 * each); the upstream's retry-after-ms and Retry-After hints; the request
 * headers, with the key read from the variable a backend's auth_env
 * names (backend.c refuses a call whose variable holds no key). */
#ifndef EVALGATE_BACKEND_HTTP_H
#define EVALGATE_BACKEND_HTTP_H

#include <stddef.h>

#include "backend.h"
#include "buf.h"

/* Bytes of a call's answers, all its POSTs together. */
#define BACKEND_HTTP_MAX_ANSWER	(8u << 20)
#define BACKEND_HTTP_MAX_RETRY_MS 60000		/* cap on an upstream hint */
#define BACKEND_HTTP_MAX_CONNECT_MS 5000
#define BACKEND_HTTP_MAX_PARALLEL 64		/* POSTs in flight at once */

struct curl_slist;

/* Sets libcurl up (curl_global_init, once) and creates the process's
 * handle if there is none yet: 0, or -1 when memory ran out.
 * backend_http_post() calls it; a kind calls it first, before any other
 * use of libcurl, to tell that case apart. */
int	backend_http_init(void);

/* The request headers of a call to b: JSON both ways, no 100-continue,
 * and "Authorization: Bearer KEY" when b->auth_env names a variable
 * holding a key (unset, empty or holding a line break: a warning naming
 * the variable, and no key).  The key is never logged or kept.  A list
 * for backend_http_headers_free(): without a key, the process's, made
 * at the first call and kept (until backend_http_cleanup()); with one, a
 * new one.  NULL when memory ran out. */
struct curl_slist *backend_http_headers(const struct backend *b);
/* Wipes the values (one is the key) and frees list, unless it is the
 * process's list without a key; NULL is fine. */
void	backend_http_headers_free(struct curl_slist *list);

/* While fn is set (NULL: none), every transfer is given up as soon as
 * fn() gives 1, which libcurl's progress callback asks often while
 * data moves and about once a second while none does: a challenger's
 * call once a client's request waits for the worker (challenger.c).  A
 * transfer given up fails with the verdict BV_NONE ("given up"):
 * nothing is held against the replica. */
void	backend_http_give_up_when(int (*fn)(void));

/* POSTs body (a JSON text, borrowed) to url with headers (borrowed),
 * timeout_ms for the whole exchange.  resp is emptied first; its cap
 * should be BACKEND_HTTP_MAX_ANSWER.  A 2xx answer: 0 with its body in
 * resp.  Otherwise -1 and at says why, what it says of the replica
 * (its verdict), and the upstream's retry hint (for 429 and 529).  The handle
 * keeps no pointer to the arguments afterwards. */
int	backend_http_post(const char *url, const char *body,
	    struct curl_slist *headers, long timeout_ms, struct buf *resp,
	    struct backend_attempt *at);

/* One of the POSTs backend_http_post_many() performs. */
struct backend_http_post {
	const char	*url;		/* borrowed */
	const char	*body;		/* borrowed: a JSON text */
	struct buf	*resp;		/* borrowed: capped as for
					 * backend_http_post() */
};

/* Performs the n POSTs of posts with headers (borrowed), at most
 * parallel (1..BACKEND_HTTP_MAX_PARALLEL) in flight at once, on the
 * process's multi handle, all within timeout_ms from the call, their
 * bodies BACKEND_HTTP_MAX_ANSWER bytes in all (past it: "answer too
 * large", an answer that does not fit).  As each answers 2xx before
 * the time is up, done(arg, i, at) reads posts[i].resp: 0 to go on, or
 * -1 with at filled.  The first failure, of the transport, the status (as
 * for backend_http_post()) or done(), ends the call: the POSTs in
 * flight are abandoned and the rest not sent.  0 when every POST
 * answered and done() took it; -1 with at saying why. */
int	backend_http_post_many(const struct backend_http_post *posts,
	    size_t n, struct curl_slist *headers, long timeout_ms,
	    size_t parallel, int (*done)(void *arg, size_t i,
	    struct backend_attempt *at), void *arg,
	    struct backend_attempt *at);

/* The URL as a log may show it, into buf: without user:password@, one
 * line. */
void	backend_http_loggable_url(const char *url, char *buf, size_t size);

/* Releases the curl handles.  Idempotent. */
void	backend_http_cleanup(void);

#endif
