/* utf8_test.c: TAP tests of utf8_valid(), utf8_count() and utf8_scrub()
 * (src/utf8.c) at the edges of RFC 3629: the shortest and longest forms
 * of each length, overlong forms, surrogates, code points above U+10FFFF,
 * cut sequences; and error_set() keeping its message, field and reason
 * UTF-8 when a bound cuts a character in two. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "tap.h"
#include "utf8.h"

static const struct {
	const char	*s;
	int		 valid;
	const char	*what;
} cases[] = {
	{ "", 1, "empty" },
	{ "plain ASCII \x7f", 1, "ASCII up to DEL" },
	{ "\xc2\x80 \xdf\xbf", 1, "2 bytes: U+0080 and U+07FF" },
	{ "\xe0\xa0\x80 \xef\xbf\xbf", 1, "3 bytes: U+0800 and U+FFFF" },
	{ "\xed\x9f\xbf \xee\x80\x80", 1, "3 bytes: around the surrogates" },
	{ "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf", 1,
	    "4 bytes: U+10000 and U+10FFFF" },
	{ "\xc0\xaf", 0, "overlong '/' (C0 AF)" },
	{ "\xc1\xbf", 0, "overlong 2 bytes (C1)" },
	{ "\xe0\x9f\x98", 0, "overlong 3 bytes (E0 9F)" },
	{ "\xf0\x8f\xbf\xbf", 0, "overlong 4 bytes (F0 8F)" },
	{ "\xed\xa0\x80", 0, "surrogate U+D800" },
	{ "\xed\xbf\xbf", 0, "surrogate U+DFFF" },
	{ "\xf4\x90\x80\x80", 0, "U+110000" },
	{ "\xf5\x80\x80\x80", 0, "lead byte F5" },
	{ "\xff", 0, "byte FF" },
	{ "\x80", 0, "a lone continuation byte" },
	{ "a\xc3", 0, "cut at the end" },
	{ "\xe2\x98x", 0, "cut before ASCII" },
	{ "\xf0\x9f\x98", 0, "4 bytes cut to 3" },
};

int
main(void)
{
	struct error	 e = { 0 };
	char		 buf[64], name[300];
	const char	*text;
	size_t		 i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(utf8_valid(cases[i].s, strlen(cases[i].s)) ==
		    cases[i].valid, "%s: %s", cases[i].valid ? "valid" :
		    "invalid", cases[i].what);
	ok(utf8_valid("a\0b", 3), "a NUL is a code point like any other");
	ok(!utf8_valid("\xc3\xa9", 1), "the length is respected");
	ok(utf8_count("", 0) == 0, "count: nothing");
	ok(utf8_count("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10) == 4,
	    "count: one code point per character of 1 to 4 bytes");
	ok(utf8_count("a\0b", 3) == 3, "count: a NUL counts, the length rules");

	snprintf(buf, sizeof(buf), "%s", "ok \xc3\xa9 \xe0\x9f\x98 a\xc3");
	utf8_scrub(buf);
	is_str(buf, "ok \xc3\xa9 ??? a?", "scrub: bad bytes become '?'");
	snprintf(buf, sizeof(buf), "%s", "\xf0\x9f\x98\x80\xed\xa0\x80");
	utf8_scrub(buf);
	is_str(buf, "\xf0\x9f\x98\x80???", "scrub: a surrogate goes");

	/* error_set() cuts a field at 150 bytes in its message. */
	memset(name, 'a', 139);
	for (i = 139; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	name[i] = '\0';
	error_set(&e, ERR_VALIDATION, name, "reason %.40s", name + 120);
	ok(utf8_valid(e.message, strlen(e.message)),
	    "error_set: message UTF-8 when the field is cut");
	text = json_object_to_json_string(e.details);
	ok(utf8_valid(text, strlen(text)),
	    "error_set: details UTF-8 when the reason is cut");
	name[140] = '\0';		/* a field ending in a cut */
	error_set(&e, ERR_VALIDATION, name, "x");
	text = json_object_to_json_string(e.details);
	ok(utf8_valid(text, strlen(text)) && strstr(text, "a?\"") != NULL,
	    "error_set: a field cut by its caller is repaired");
	error_clear(&e);

	ok(utf8_control("plain, \xc3\xa9t\xc3\xa9 \xe2\x80\xa6", NULL) == NULL,
	    "control: none in text, accents or an ellipsis");
	text = "ab\x1b[2J";
	ok(utf8_control(text, &n) == text + 2 && n == 1, "control: ESC");
	text = "a\x7f";
	ok(utf8_control(text, &n) == text + 1 && n == 1, "control: DEL");
	text = "a\xc2\x9b" "b";
	ok(utf8_control(text, &n) == text + 1 && n == 2, "control: C1 CSI");
	text = "a\xc2\xa0" "b";
	ok(utf8_control(text, NULL) == NULL, "control: no-break space is not");
	text = "a\xe2\x80\xa8" "b\xe2\x80\xa9";
	ok(utf8_control(text, &n) == text + 1 && n == 3,
	    "control: U+2028 (and U+2029)");
	return tap_done();
}
