/* uri.h: the parts of a request line a client controls, read without
 * FastCGI and without I/O, so that they can be unit-tested and fuzzed
 * (tests/unit/uri_test.c, fuzz/fuzz_query.c, fuzz/fuzz_route.c): percent
 * decoding, one query parameter, a path against a route pattern, the
 * path below the mount point, and whether the request came in on the internal listener.  Nothing here
 * allocates but uri_decode(). */
#ifndef EVALGATE_URI_H
#define EVALGATE_URI_H

#include <stddef.h>

/* Percent-decodes n bytes of s into out (size bytes, NUL-terminated
 * unless size is 0; '+' is a space when plus is set, as in a query).  A
 * '%' not followed by two hex digits is kept as it is.  What does not
 * fit is cut.  Returns the length, which is at most n: out may be as
 * large as n + 1. */
size_t	 uri_unescape(const char *s, size_t n, int plus, char *out,
	    size_t size);
/* The same into a new string (n + 1 bytes) the caller frees; NULL when
 * out of memory. */
char	*uri_decode(const char *s, size_t n, int plus);

/* The value of parameter name in query ("a=1&b=x%20y", without the
 * '?'; NULL is an empty one), decoded as a query is ('+' is a space)
 * into buf (size bytes, NUL-terminated, cut if need be); the first
 * occurrence wins and "name" alone is an empty value.  Returns buf, or
 * NULL when absent. */
const char *uri_query(const char *query, const char *name, char *buf,
	    size_t size);

/* One {} segment of a path, borrowed from it, still percent-encoded. */
struct uri_seg {
	const char	*p;
	size_t		 len;
};
/* How many {} segments pattern has. */
size_t	 uri_pattern_params(const char *pattern);
/* 1 if path matches pattern, else 0.  A pattern is literal segments and
 * "{}" for one non-empty segment ("/v1/decisions/{}/outcome"); literal
 * segments are compared as sent, undecoded.  On a match, the path's {}
 * segments are in segs[0..*nsegs), in order; a pattern of more than max
 * of them never matches. */
int	 uri_match(const char *pattern, const char *path,
	    struct uri_seg *segs, size_t max, size_t *nsegs);

/* Where the path below the service's mount point starts in path (len
 * bytes, as REQUEST_URI gives it, before the '?'): 0, the whole path,
 * unless the web server ran the program for another path than the one
 * requested, which it tells by a SCRIPT_NAME and PATH_INFO (decoded;
 * NULL: not given) that do not make up the path: mod_rewrite in a
 * shared-hosting .htaccess runs "/evalgate/evalgate.fcgi" with PATH_INFO
 * "/v1/x" for "/evalgate/v1/x".  Then it is the offset of the longest
 * tail of the path starting with '/' that decodes to PATH_INFO ("/v1/x",
 * below the mount point "/evalgate"), or 0 when none does.  (lighttpd
 * and Apache serving the program for every path split it into a
 * SCRIPT_NAME and PATH_INFO that make it up: 0.) */
size_t	 uri_mount_offset(const char *path, size_t len,
	    const char *script_name, const char *path_info);

/* 1 if a request whose FastCGI SERVER_ADDR and SERVER_PORT are addr and
 * port (NULL: not given) came in on listen, SERVICE_ADMIN_LISTEN's
 * "ADDR:PORT" ("[::1]:8081" for IPv6); an empty listen is none. */
int	 uri_on_listener(const char *addr, const char *port,
	    const char *listen);

#endif
