/* json_util_test: ju_lossy(), what json-c accepts but would not keep as
 * sent, and the place it names; and ju_parse_body() refusing it. */
#include <string.h>

#include "json_util.h"
#include "tap.h"

static const struct {
	const char	*text;
	const char	*path;	/* NULL: nothing to find */
} cases[] = {
	{ "{\"a\": 1, \"b\": [1.5, -0, -0.0, 1e308, \"NaN\"]}", NULL },
	{ "{\"n\": 18446744073709551615, \"m\": -9223372036854775808}", NULL },
	{ "{\"s\": \"a\\u0000b\", \"t\": \"\\\\u0000\"}", NULL },
	{ "{\"\\\\u0000\": 1}", NULL },		/* a backslash, then u0000 */
	{ "{\"k\\u0000x\": 1}", "k\\u0000x" },
	{ "{\"a\": {\"b\\u0000\" : 1}}", "a.b\\u0000" },
	{ "{\"n\": 18446744073709551616}", "n" },
	{ "{\"n\": -9223372036854775809}", "n" },
	{ "{\"n\": 123456789012345678901234567890}", "n" },
	{ "{\"a\": [0, {\"b\": 1e999}]}", "a[1].b" },
	{ "{\"a\": [0, 1, -1e999]}", "a[2]" },
	{ "{\"a\": NaN}", "a" },
	{ "{\"a\": {\"b\": [Infinity]}}", "a.b[0]" },
	{ "{\"a\": -Infinity}", "a" },
	{ "{\"x\": {\"y\": 1}, \"z\": [[1], 1e400]}", "z[1]" },
	{ "{\"it's\": \"it's fine\"}", NULL },	/* quotes inside strings */
	{ "{'a': 1}", "" },			/* json-c's strict mode takes it */
	{ "{\"q\": {'\"t': 1, \"x[[\": 1e400}}", "q" },	/* fuzz_request */
	{ "{\"a\": 0.000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000001"
	  "e1000}", "a" },
};

int
main(void)
{
	struct error	 e = { 0 };
	json_object	*o;
	const char	*why, *text;
	char		 path[64];
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(path, "?");
		why = ju_lossy(cases[i].text, strlen(cases[i].text), path,
		    sizeof(path));
		if (cases[i].path == NULL)
			ok(why == NULL, "kept as sent: %s", cases[i].text);
		else
			ok(why != NULL && strcmp(path, cases[i].path) == 0,
			    "%s: at %s (%s)", cases[i].text, path,
			    why ? why : "not found");
		o = ju_parse_body(cases[i].text, strlen(cases[i].text), &e);
		ok((o != NULL) == (cases[i].path == NULL),
		    "ju_parse_body %s it", o ? "takes" : "refuses");
		json_object_put(o);
		error_clear(&e);
	}
	/* A path longer than the buffer is cut, never overrun. */
	text = "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaa\": {\"b\": NaN}}";
	why = ju_lossy(text, strlen(text), path, 16);
	ok(why != NULL && strlen(path) == 15, "a long path is cut: %s", path);
	/* Text that ends inside a token is not read past its length. */
	ok(ju_lossy("{\"a\": 1e999", 8, NULL, 0) == NULL,
	    "only len bytes are read");
	return tap_done();
}
