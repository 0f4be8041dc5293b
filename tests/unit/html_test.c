/* html_test.c: TAP tests of src/html.c, the one HTML escaper and the
 * formatter over it, and of src/session.c, the console's signed session
 * and CSRF token (doc/design.md, section 23). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "session.h"
#include "tap.h"

/* What fn wrote, as a new string. */
static char *
written(void (*fn)(FILE *, const char *), const char *s)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&text, &len);

	fn(f, s);
	fclose(f);
	return text;
}

static void
test_escape(void)
{
	char	*t, *text = NULL;
	size_t	 len = 0;
	FILE	*f;

	t = written(html_esc, "<a href=\"x\" title='y'>&amp;</a>");
	is_str(t, "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;"
	    "&lt;/a&gt;", "every special character is a reference");
	free(t);
	t = written(html_esc, "caf\xc3\xa9 plain");
	is_str(t, "caf\xc3\xa9 plain", "other bytes are kept");
	free(t);
	t = written(html_esc, NULL);
	is_str(t, "", "NULL writes nothing");
	free(t);
	t = written(html_uri_component, "a b/c?d=e&f#\xc3\xa9~-._");
	is_str(t, "a%20b%2Fc%3Fd%3De%26f%23%C3%A9~-._",
	    "a URI component: unreserved kept, the rest %XX");
	free(t);
	t = written(html_uri_component, "javascript:alert(1)");
	is_str(t, "javascript%3Aalert%281%29",
	    "a javascript: value cannot be a scheme");
	free(t);

	f = open_memstream(&text, &len);
	html_printf(f, "<p title=\"%s\">%s %u %d %D %f %f 100%% %q %",
	    "\"><script>", "<b>", "a/b", -3, (int64_t)1 << 40, 0.5, NAN);
	fclose(f);
	is_str(text, "<p title=\"&quot;&gt;&lt;script&gt;\">&lt;b&gt; a%2Fb "
	    "-3 1099511627776 0.500 - 100% %q %",
	    "html_printf: strings escaped, numbers as numbers, the rest as is");
	free(text);
}

static void
test_session(void)
{
	unsigned char	 key[SESSION_KEY_LEN], other[SESSION_KEY_LEN];
	char		 tok[SESSION_TOKEN_MAX + 1];
	char		 bad[SESSION_TOKEN_MAX + 8];
	char		 prefix[9], csrf[SESSION_CSRF_LEN + 1];
	int64_t		 at, issued;

	memset(key, 7, sizeof(key));
	memset(other, 8, sizeof(other));
	at = 1800000000000LL;
	session_make(key, "abcd1234", at, tok);
	ok(session_parse(key, tok, at, prefix, &issued) == 0 &&
	    strcmp(prefix, "abcd1234") == 0 && issued == at,
	    "a session parses back to its prefix and time");
	ok(session_parse(other, tok, at, prefix, &issued) == -1,
	    "under another key it is refused");
	ok(session_parse(key, tok, at + SESSION_TTL_MS, prefix, &issued) == 0,
	    "good for its whole life");
	ok(session_parse(key, tok, at + SESSION_TTL_MS + 1, prefix,
	    &issued) == -1, "refused past it");
	ok(session_parse(key, tok, at - SESSION_SKEW_MS, prefix,
	    &issued) == 0 && session_parse(key, tok, at - SESSION_SKEW_MS - 1,
	    prefix, &issued) == -1, "at most SESSION_SKEW_MS ahead of now");
	snprintf(bad, sizeof(bad), "abcd1235%s", tok + 8);
	ok(session_parse(key, bad, at, prefix, &issued) == -1,
	    "another prefix with the same MAC is refused");
	snprintf(bad, sizeof(bad), "%.9s%lld%s", tok, (long long)at + 1,
	    strrchr(tok, '.'));
	ok(session_parse(key, bad, at + 5, prefix, &issued) == -1,
	    "another time with the same MAC is refused");
	snprintf(bad, sizeof(bad), "%sA", tok);
	ok(session_parse(key, bad, at, prefix, &issued) == -1,
	    "a longer MAC is refused");
	ok(session_parse(key, NULL, at, prefix, &issued) == -1 &&
	    session_parse(key, "", at, prefix, &issued) == -1 &&
	    session_parse(key, "abcd1234..", at, prefix, &issued) == -1 &&
	    session_parse(key, "ABCD1234.1.x", at, prefix, &issued) == -1,
	    "malformed tokens are refused");
	session_csrf(key, tok, csrf);
	ok(strlen(csrf) == SESSION_CSRF_LEN && session_csrf_ok(key, tok, csrf),
	    "a session's CSRF token is accepted");
	ok(!session_csrf_ok(other, tok, csrf), "not under another key");
	session_make(key, "abcd1234", at + 1, bad);
	ok(!session_csrf_ok(key, bad, csrf), "not for another session");
	ok(!session_csrf_ok(key, tok, NULL) && !session_csrf_ok(key, tok, "")
	    && !session_csrf_ok(key, tok, tok), "none, empty or other text "
	    "is refused");
}

int
main(void)
{
	test_escape();
	test_session();
	return tap_done();
}
