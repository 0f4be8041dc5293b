/* http.h: one HTTP request as FastCGI hands it over, and every way of
 * answering it.  http_error() is the only writer of error responses. */
#ifndef EVALGATE_HTTP_H
#define EVALGATE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <fcgiapp.h>
#include <json-c/json.h>

#include "error.h"
#include "model.h"
#include "uuid7.h"

struct ratelimit;
struct admin_call;
struct settings;
struct store;

#define HTTP_MAX_PARAMS	4	/* {} segments of a route pattern */
#define HTTP_MAX_HEADERS 8	/* extra response headers */

struct req {
	FCGX_Request		*fcgi;		/* borrowed, for this turn */
	const struct settings	*settings;	/* borrowed, process-wide */
	struct store		*store;		/* borrowed, process-wide */
	char			 method[16];
	char			*path;		/* owned copy, no query */
	char			*query;		/* owned copy or NULL */
	char			*authorization;	/* owned copy or NULL */
	int			 on_admin_listener;
	int			 out_of_memory;	/* a copy failed: 503 */
	char			*body;		/* owned, NUL-terminated */
	size_t			 body_len;
	char			*params[HTTP_MAX_PARAMS]; /* owned, decoded */
	const struct admin_call	*admin;		/* handle_admin()'s: from the
						 * route's row, by the router */
	char			 request_id[UUID7_LEN + 1];
	int64_t			 start_us;	/* clock_mono_us() at start */
	struct app		 app;		/* set by authentication */
	char			*headers[HTTP_MAX_HEADERS]; /* owned lines */
	size_t			 nheaders;
	int			 responded;
	int			 status;	/* of the answer written */
	/* What the evaluation handler learnt, for the access log
	 * (SERVICE_ACCESS_LOG=1): "" and -1 where it did not get there. */
	struct {
		char		 schema[MODEL_NAME_SIZE];
		int64_t		 schema_version;
		char		 backend[MODEL_NAME_SIZE];
		char		 decision[UUID7_LEN + 1];
		int64_t		 backend_ms;
	}			 note;
};

/* Copies what the request needs out of the FastCGI params (they do not
 * outlive the turn).  A missing param is an empty one; a copy that
 * cannot be made sets out_of_memory, which the router answers with 503
 * service_unavailable. */
void	 req_init(struct req *r, FCGX_Request *fcgi,
	    const struct settings *settings, struct store *store);
/* Releases everything the request owns. */
void	 req_free(struct req *r);
/* After the answer: 1 when everything the web server sent has been
 * read, up to the empty FCGI_STDIN record that ends every request (read
 * here if need be), so that the connection may be closed at once; 0
 * when a body is left unread (a 413, a refusal before reading). */
int	 req_drained(struct req *r);

/* Reads the body, refusing (413) one over SERVICE_MAX_BODY_BYTES from
 * CONTENT_LENGTH before reading anything.  0 or -1 with e set. */
int	 req_read_body(struct req *r, struct error *e);
/* Parses the body as a JSON object (depth 64, strict, valid UTF-8).
 * Returns a new reference the caller puts, or NULL with e set (422). */
json_object *req_json_object(struct req *r, struct error *e);
/* A query parameter, decoded, into buf; NULL when absent (uri_query()
 * on r->query). */
const char *req_query(const struct req *r, const char *name, char *buf,
	    size_t size);

/* Adds a response header line ("Name: value") to the next answer. */
void	 http_header(struct req *r, const char *name, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Adds the RateLimit-Policy and RateLimit headers of an admitted call
 * (admission_charge() computes rl). */
void	 http_ratelimit(struct req *r, const struct ratelimit *rl);
/* Answers with status and a JSON body (borrowed: the caller puts it). */
void	 http_json(struct req *r, int status, json_object *body);
/* Answers with status and a body of the given type. */
void	 http_raw(struct req *r, int status, const char *type,
	    const char *body, size_t len);
/* Answers with a body of unknown length, written piece by piece: the
 * status and headers now, then http_write() as often as needed.  0 or
 * -1 when the client is gone. */
void	 http_begin(struct req *r, int status, const char *type);
int	 http_write(struct req *r, const char *buf, size_t len);
/* The spec's error format for e, {"error": {code, message, details}}:
 * a new object the caller puts. */
json_object *http_error_body(const struct error *e);
/* Answers with the spec's error format; 429/503 carry Retry-After, and
 * a 503 none of the RateLimit headers added before it, and every 503
 * is counted by its reason (metrics_unavailable()).  The members of
 * also (borrowed; NULL: none) are added to the body beside "error":
 * /health/ready's report. */
void	 http_error(struct req *r, const struct error *e, json_object *also);

#endif
