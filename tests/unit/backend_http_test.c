/* backend_http_test.c: TAP tests of the request headers of a remote
 * call (backend_http_headers()): without a key, the process's list,
 * made once and never freed by backend_http_headers_free(); with one,
 * a new list holding it, each time; an unset variable gives the list
 * without a key. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "backend.h"
#include "backend_http.h"
#include "tap.h"

/* The list's lines joined by '|'. */
static const char *
lines(const struct curl_slist *l)
{
	static char	 buf[512];

	buf[0] = '\0';
	for (; l != NULL; l = l->next)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
		    buf[0] ? "|" : "", l->data);
	return buf;
}

int
main(void)
{
	struct backend		 b;
	struct curl_slist	*a, *a2, *k, *k2;

	memset(&b, 0, sizeof(b));
	snprintf(b.name, sizeof(b.name), "up");
	a = backend_http_headers(&b);
	is_str(lines(a), "Content-Type: application/json|"
	    "Accept: application/json|Expect:", "no key: JSON, no Expect");
	a2 = backend_http_headers(&b);
	ok(a2 == a, "no key: the same list again");
	backend_http_headers_free(a);
	backend_http_headers_free(a2);
	a2 = backend_http_headers(&b);
	ok(a2 == a && strcmp(lines(a2), "Content-Type: application/json|"
	    "Accept: application/json|Expect:") == 0,
	    "no key: untouched by its free");
	backend_http_headers_free(a2);

	setenv("BACKEND_HTTP_TEST_KEY", "sk-secret", 1);
	snprintf(b.auth_env, sizeof(b.auth_env), "BACKEND_HTTP_TEST_KEY");
	k = backend_http_headers(&b);
	k2 = backend_http_headers(&b);
	is_str(lines(k), "Content-Type: application/json|"
	    "Accept: application/json|Expect:|Authorization: Bearer sk-secret",
	    "a key: its Authorization line");
	ok(k != a && k2 != k, "a key: a new list each time");
	backend_http_headers_free(k);
	backend_http_headers_free(k2);

	unsetenv("BACKEND_HTTP_TEST_KEY");
	ok(backend_http_headers(&b) == a, "the variable unset: the list "
	    "without a key");
	backend_http_cleanup();
	return tap_done();
}
