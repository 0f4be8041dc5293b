/* fuzz_route.c: libFuzzer target for the router's lookup, route_find()
 * (src/routes.c), as the router calls it for every request.  The input
 * is the method NUL the path (as REQUEST_URI gives it, before the '?';
 * without a NUL, the method is GET and the input the path).  Each is
 * looked up as from a public listener and from the internal one.
 *
 * Properties beyond "no crash, leak or undefined behaviour":
 *  - from a public listener, nothing under /admin/ and no route that
 *    needs an administrator is ever found, nor answered 405 (which
 *    would tell that it exists);
 *  - a found row is in routes[], has the method, its pattern matches
 *    the path, and there is one decoded param per {} segment, each no
 *    longer than the path, and none after;
 *  - a refusal is 404 or 405 (503 only if out of memory) with a
 *    message, no row and no params;
 *  - a path of an internal route (/metrics) is 404 from a public
 *    listener, whatever the method;
 *  - outside /admin/ and the internal routes, the internal listener
 *    answers as a public one;
 *  - from the internal listener, a route found under /admin/ needs an
 *    administrator or is internal (the console, whose pages check a
 *    session and whose login form needs nothing), and one found
 *    elsewhere for an internal path is internal;
 *  - below a mount point (uri_mount_offset(), with the second half of
 *    the path as PATH_INFO), the routed tail starts at 0 or at a '/'
 *    of the path, and the lookups above hold for it too.
 *
 * The route table points at the handlers; they are never called here,
 * and are defined below as traps, so that the target needs neither
 * FastCGI, nor the database, nor the network.  A new handler in the
 * table needs a STUB() line here. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "routes.h"
#include "uri.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
static void	check(const char *, const char *);

#define STUB(fn) int fn(struct req *r, struct error *e) \
	{ (void)r; (void)e; __builtin_trap(); }
STUB(handle_health)
STUB(handle_ready)
STUB(handle_models)
STUB(handle_systemone)
STUB(handle_decision_get)
STUB(handle_decision_outcome)
STUB(handle_admin)
STUB(handle_admin_decisions)
STUB(handle_admin_export)
STUB(handle_admin_calibration)
STUB(handle_metrics)
STUB(handle_admin_compare)
STUB(handle_console_login_form)
STUB(handle_console_login)
STUB(handle_console_logout)
STUB(handle_console_asset)
STUB(handle_console_action)
STUB(handle_console_page)

struct answer {
	const struct route	*found;
	enum err_code		 code;
};

static struct answer
lookup(const char *method, const char *path, int admin)
{
	struct error		 e = { 0 };
	struct uri_seg		 segs[HTTP_MAX_PARAMS];
	struct answer		 a = { NULL, ERR_NONE };
	char			*params[HTTP_MAX_PARAMS];
	size_t			 i, nb, nsegs;
	int			 rc;

	rc = route_find(method, path, admin, &a.found, params, &e);
	if (rc == -1) {
		FUZZ_ASSERT(a.found == NULL);
		FUZZ_ASSERT(e.code == ERR_NOT_FOUND ||
		    e.code == ERR_METHOD_NOT_ALLOWED ||
		    e.code == ERR_UNAVAILABLE);
		FUZZ_ASSERT(e.message[0] != '\0');
		for (i = 0; i < HTTP_MAX_PARAMS; i++)
			FUZZ_ASSERT(params[i] == NULL);
		a.code = e.code;
		error_clear(&e);
		return a;
	}
	FUZZ_ASSERT(rc == 0 && a.found != NULL);
	FUZZ_ASSERT(a.found >= routes && a.found < routes + ROUTE__MAX);
	FUZZ_ASSERT(strcmp(a.found->method, method) == 0 ||
	    (strcmp(method, "HEAD") == 0 &&
	    strcmp(a.found->method, "GET") == 0));	/* RFC 9110 */
	FUZZ_ASSERT(uri_match(a.found->pattern, path, segs, HTTP_MAX_PARAMS,
	    &nsegs));
	nb = uri_pattern_params(a.found->pattern);
	FUZZ_ASSERT(nsegs == nb);
	for (i = 0; i < HTTP_MAX_PARAMS; i++) {
		if (i < nb)
			FUZZ_ASSERT(params[i] != NULL &&
			    strlen(params[i]) <= segs[i].len);
		else
			FUZZ_ASSERT(params[i] == NULL);
		free(params[i]);
	}
	return a;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part	 parts[2];
	char			 method[16], *path;
	const struct fuzz_part	*p;
	size_t			 n, mlen, off;

	n = fuzz_split(data, size, parts, 2);
	/* The router keeps at most 15 bytes of the method (r->method). */
	mlen = n == 2 ? parts[0].len : 3;
	if (mlen > sizeof(method) - 1)
		mlen = sizeof(method) - 1;
	memcpy(method, n == 2 ? parts[0].p : "GET", mlen);
	method[mlen] = '\0';
	p = &parts[n - 1];
	/* A FastCGI param ends at its first NUL. */
	if ((path = malloc(p->len + 1)) == NULL)
		return 0;
	memcpy(path, p->p, p->len);
	path[p->len] = '\0';

	check(method, path);
	off = uri_mount_offset(path, p->len, "/m/e.fcgi", path + p->len / 2);
	FUZZ_ASSERT(off <= p->len && (off == 0 || path[off] == '/'));
	if (off > 0)
		check(method, path + off);
	free(path);
	return 0;
}

static void
check(const char *method, const char *path)
{
	struct answer	 pub, internal;
	struct uri_seg	 segs[HTTP_MAX_PARAMS];
	size_t		 i, nsegs;
	int		 admin_path, internal_path = 0;

	admin_path = strncmp(path, "/admin/", 7) == 0;
	for (i = 0; i < ROUTE__MAX; i++)
		internal_path |= routes[i].internal && uri_match(
		    routes[i].pattern, path, segs, HTTP_MAX_PARAMS, &nsegs);
	pub = lookup(method, path, 0);
	if (internal_path)
		FUZZ_ASSERT(pub.found == NULL && pub.code == ERR_NOT_FOUND);
	if (pub.found != NULL) {
		FUZZ_ASSERT(!pub.found->internal);
		FUZZ_ASSERT(!admin_path);
		FUZZ_ASSERT(pub.found->need != NEED_ADMIN);
		FUZZ_ASSERT(strncmp(pub.found->pattern, "/admin/", 7) != 0);
	}
	if (admin_path)
		FUZZ_ASSERT(pub.code == ERR_NOT_FOUND);
	internal = lookup(method, path, 1);
	if (!admin_path && !internal_path)
		FUZZ_ASSERT(internal.found == pub.found &&
		    internal.code == pub.code);
	else if (internal.found != NULL)
		FUZZ_ASSERT(admin_path ? internal.found->need == NEED_ADMIN ||
		    internal.found->internal : internal.found->internal);
}
