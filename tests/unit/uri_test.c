/* uri_test.c: TAP tests of src/uri.c, what reads the request line a
 * client sends: percent decoding, query parameters, route patterns and
 * the internal-listener check. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "uri.h"

static void
test_unescape(void)
{
	char	 out[64];
	char	*d;
	size_t	 n;

	n = uri_unescape("a%20b", 5, 0, out, sizeof(out));
	ok(n == 3 && strcmp(out, "a b") == 0, "%%20 is a space");
	uri_unescape("%41%42%43", 9, 0, out, sizeof(out));
	is_str(out, "ABC", "consecutive escapes");
	uri_unescape("%e2%82%AC", 9, 0, out, sizeof(out));
	is_str(out, "\xe2\x82\xac", "either case of hex digits");
	uri_unescape("a+b", 3, 0, out, sizeof(out));
	is_str(out, "a+b", "'+' is itself in a path");
	uri_unescape("a+b%2B", 6, 1, out, sizeof(out));
	is_str(out, "a b+", "'+' is a space in a query, %%2B a '+'");
	uri_unescape("%zz%4%", 6, 0, out, sizeof(out));
	is_str(out, "%zz%4%", "a '%%' without two hex digits stays");
	uri_unescape("%%41", 4, 0, out, sizeof(out));
	is_str(out, "%A", "'%%%%41' is '%%' then 'A'");
	uri_unescape("%4", 2, 0, out, sizeof(out));
	is_str(out, "%4", "an escape cut by the end stays");
	uri_unescape("%41BC", 2, 0, out, sizeof(out));
	is_str(out, "%4", "only n bytes are read, even mid-escape");
	n = uri_unescape("a%00b", 5, 0, out, sizeof(out));
	ok(n == 3 && out[0] == 'a' && out[1] == '\0' && out[2] == 'b' &&
	    out[3] == '\0', "%%00 is a NUL byte, counted in the length");
	n = uri_unescape("abcdef", 6, 0, out, 3);
	ok(n == 2 && strcmp(out, "ab") == 0, "cut to size - 1 bytes");
	n = uri_unescape("abc", 3, 0, out, 1);
	ok(n == 0 && out[0] == '\0', "size 1 holds the NUL alone");
	out[0] = 'x';
	n = uri_unescape("abc", 3, 0, out, 0);
	ok(n == 0 && out[0] == 'x', "size 0 writes nothing");
	n = uri_unescape("", 0, 1, out, sizeof(out));
	ok(n == 0 && out[0] == '\0', "empty in, empty out");

	d = uri_decode("x%2Fy%20z", 9, 0);
	is_str(d, "x/y z", "uri_decode: a new decoded string");
	free(d);
	d = uri_decode("a+b", 3, 1);
	is_str(d, "a b", "uri_decode: query form");
	free(d);
}

static void
test_query(void)
{
	char	buf[16];
	char	tiny[4];

	is_str(uri_query("a=1&b=x%20y", "b", buf, sizeof(buf)), "x y",
	    "a decoded value");
	is_str(uri_query("a=1&b=2", "a", buf, sizeof(buf)), "1",
	    "the first parameter");
	ok(uri_query("a=1&b=2", "c", buf, sizeof(buf)) == NULL,
	    "absent: NULL");
	ok(uri_query(NULL, "a", buf, sizeof(buf)) == NULL,
	    "no query: NULL");
	ok(uri_query("", "a", buf, sizeof(buf)) == NULL, "empty query: NULL");
	is_str(uri_query("a&b=2", "a", buf, sizeof(buf)), "",
	    "a name alone is an empty value");
	is_str(uri_query("a=&b=2", "a", buf, sizeof(buf)), "",
	    "'a=' is an empty value");
	is_str(uri_query("a=1&a=2", "a", buf, sizeof(buf)), "1",
	    "the first occurrence wins");
	ok(uri_query("ab=1&ba=2", "a", buf, sizeof(buf)) == NULL,
	    "names are whole: 'a' is not 'ab' nor 'ba'");
	ok(uri_query("b=a", "a", buf, sizeof(buf)) == NULL,
	    "a value is not a name");
	is_str(uri_query("a=b=c", "a", buf, sizeof(buf)), "b=c",
	    "the value runs to the next '&'");
	is_str(uri_query("&&a=1+2&", "a", buf, sizeof(buf)), "1 2",
	    "empty pairs are skipped, '+' is a space");
	ok(uri_query("a%3D=1", "a=", buf, sizeof(buf)) == NULL,
	    "names are compared as sent, undecoded");
	is_str(uri_query("since=2026-11-21T12%3A00%3A00Z", "since", buf,
	    sizeof(buf)), "2026-11-21T12:0", "cut to the buffer");
	is_str(uri_query("a=%41%42%43%44%45", "a", tiny, sizeof(tiny)),
	    "ABC", "cut after decoding");
}

static void
test_match(void)
{
	struct uri_seg	segs[4];
	size_t		n = 99;

	ok(uri_match("/health", "/health", segs, 4, &n) && n == 0,
	    "a literal path");
	ok(!uri_match("/health", "/health/", segs, 4, &n),
	    "a trailing '/' is another path");
	ok(!uri_match("/health", "//health", segs, 4, &n),
	    "so is a doubled '/'");
	ok(!uri_match("/health", "/Health", segs, 4, &n),
	    "literal segments are case-sensitive");
	ok(!uri_match("/health", "/h%65alth", segs, 4, &n),
	    "and compared undecoded");
	ok(!uri_match("/health", "", segs, 4, &n), "an empty path");
	ok(!uri_match("/health", "health", segs, 4, &n),
	    "a path without its '/'");
	ok(!uri_match("/health/ready", "/health", segs, 4, &n),
	    "a prefix of the pattern");
	ok(!uri_match("/health", "/health/ready", segs, 4, &n),
	    "a path longer than the pattern");
	ok(uri_match("/v1/decisions/{}", "/v1/decisions/a%2Fb", segs, 4,
	    &n) && n == 1 && segs[0].len == 5 &&
	    strncmp(segs[0].p, "a%2Fb", 5) == 0,
	    "a {} segment, still encoded");
	ok(!uri_match("/v1/decisions/{}", "/v1/decisions/", segs, 4, &n) &&
	    n == 0, "a {} segment is never empty");
	ok(!uri_match("/v1/decisions/{}", "/v1/decisions", segs, 4, &n),
	    "nor missing");
	ok(!uri_match("/v1/decisions/{}", "/v1/decisions/a/b", segs, 4, &n),
	    "nor more than one segment");
	ok(uri_match("/g/{}/{}/{}", "/g/a/b/c", segs, 4, &n) && n == 3 &&
	    segs[0].p[0] == 'a' && segs[1].p[0] == 'b' &&
	    segs[2].p[0] == 'c' && segs[2].len == 1,
	    "three segments in order");
	ok(!uri_match("/g/{}/{}/{}", "/g/a/b/c", segs, 2, &n),
	    "more {} segments than max: no match");
	ok(uri_match("/{}", "/%", segs, 4, &n) && n == 1 && segs[0].len == 1,
	    "any bytes but '/' make a segment");
	ok(uri_match("/x/{}", "/x/{}", segs, 4, &n) && n == 1,
	    "a literal '{}' in the path is just a segment");
}

static void
test_listener(void)
{
	ok(uri_on_listener("127.0.0.1", "8081", "127.0.0.1:8081"),
	    "the admin listener");
	ok(!uri_on_listener("127.0.0.1", "8080", "127.0.0.1:8081"),
	    "another port");
	ok(!uri_on_listener("127.0.0.2", "8081", "127.0.0.1:8081"),
	    "another address");
	ok(!uri_on_listener("127.0.0.10", "8081", "127.0.0.1:8081"),
	    "an address the setting is a prefix of");
	ok(!uri_on_listener("127.0.0.1", "80810", "127.0.0.1:8081"),
	    "a port the setting is a prefix of");
	ok(!uri_on_listener("127.0.0.1", "808", "127.0.0.1:8081"),
	    "a port that is a prefix of the setting");
	ok(!uri_on_listener("127.0.0.1", "8081", ""), "no admin listener");
	ok(!uri_on_listener(NULL, "8081", "127.0.0.1:8081"),
	    "no SERVER_ADDR");
	ok(!uri_on_listener("127.0.0.1", NULL, "127.0.0.1:8081"),
	    "no SERVER_PORT");
	ok(!uri_on_listener("127.0.0.1", "8081", "127.0.0.1"),
	    "a setting without a port");
	ok(uri_on_listener("::1", "8081", "[::1]:8081"),
	    "IPv6 in brackets");
	ok(!uri_on_listener("[::1]", "8081", "[::1]:8081"),
	    "SERVER_ADDR comes without brackets");
	ok(!uri_on_listener("::2", "8081", "[::1]:8081"),
	    "another IPv6 address");
	ok(!uri_on_listener("", "8081", "127.0.0.1:8081"),
	    "an empty SERVER_ADDR");
}

static void
test_mount(void)
{
	const char *p;

	p = "/v1/systemone";
	ok(uri_mount_offset(p, strlen(p), "/v1", "/systemone") == 0,
	    "a split that makes up the path: the whole path (lighttpd, "
	    "Apache's sample)");
	ok(uri_mount_offset(p, strlen(p), "/v1/systemone", "") == 0,
	    "an empty PATH_INFO: the whole path");
	ok(uri_mount_offset(p, strlen(p), NULL, NULL) == 0,
	    "neither given: the whole path");
	ok(uri_mount_offset(p, strlen(p), "", "/v1/systemone") == 0,
	    "an empty SCRIPT_NAME and the path as PATH_INFO");
	p = "/evalgate/v1/systemone";
	ok(uri_mount_offset(p, strlen(p), "/evalgate/evalgate.fcgi",
	    "/v1/systemone") == 9, "rewritten: below /evalgate");
	p = "/~user/evalgate/v1/decisions/x";
	ok(uri_mount_offset(p, strlen(p), "/~user/evalgate/evalgate.fcgi",
	    "/v1/decisions/x") == 15, "rewritten: below /~user/evalgate");
	p = "/%7Euser/a%20b/v1/templates/t%20u?q";
	ok(uri_mount_offset(p, strlen(p) - 2, "/~user/a b/evalgate.fcgi",
	    "/v1/templates/t u") == 14,
	    "encoded path: the tail that decodes to PATH_INFO");
	p = "/a%20b/c";
	ok(uri_mount_offset(p, strlen(p), "/a b", "/c") == 0,
	    "an encoded split that makes up the path: the whole path");
	p = "/evalgate/evalgate.fcgi/v1/systemone";
	ok(uri_mount_offset(p, strlen(p), "/evalgate/evalgate.fcgi",
	    "/v1/systemone") == 0,
	    "the program named in the path: the whole path");
	p = "/evalgate/admin/v1/applications";
	ok(uri_mount_offset(p, strlen(p), "/evalgate/evalgate.fcgi",
	    "/admin/v1/applications") == 9,
	    "administration below a mount point (the listener check "
	    "follows)");
	p = "/x/v1/v1";
	ok(uri_mount_offset(p, strlen(p), "/x/e.fcgi", "/v1") == 5,
	    "only a whole tail counts");
	p = "/x/y";
	ok(uri_mount_offset(p, strlen(p), "/x/e.fcgi", "/z") == 0,
	    "no tail decodes to PATH_INFO: the whole path");
	ok(uri_mount_offset(p, strlen(p), "/x/e.fcgi", "/x/y/z") == 0,
	    "a PATH_INFO longer than the path: the whole path");
	p = "/x/%2";
	ok(uri_mount_offset(p, strlen(p), "/e", "/%2") == 2,
	    "an escape cut by the end compares as sent");
	p = "";
	ok(uri_mount_offset(p, 0, "/e", "/v1") == 0, "an empty path");
}

int
main(void)
{
	test_unescape();
	test_query();
	test_match();
	test_listener();
	test_mount();
	return tap_done();
}
