/* template_test.c: TAP tests of the Mustache renderer (src/template.c),
 * grouped like the Mustache spec (interpolation, sections, inverted,
 * comments, delimiters), then typed variables, escaping, publish checks,
 * parse errors and the bounds. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tap.h"
#include "template.h"

#define BIG	100000

static char unset[] = "unset";	/* *out before a call */

/* A declaration of every member of values with the member's own type. */
static json_object *
decl_of(json_object *values)
{
	static const char *const names[] = {
		[json_type_boolean] = "boolean",
		[json_type_double]  = "number",
		[json_type_int]     = "integer",
		[json_type_object]  = "object",
		[json_type_array]   = "array",
		[json_type_string]  = "string",
	};
	json_object	*decl = json_object_new_object();

	json_object_object_foreach(values, key, val) {
		if (json_object_get_type(val) != json_type_null)
			json_object_object_add(decl, key, json_object_new_string(
			    names[json_object_get_type(val)]));
	}
	return decl;
}

/* Renders body with values (JSON text) declared by decl (JSON text, or
 * NULL to declare every member of values as it is).  Returns the output
 * (caller frees) or NULL with e set. */
static char *
render(const char *body, const char *decl, const char *values, int esc,
    size_t max, struct error *e)
{
	json_object	*v = json_tokener_parse(values);
	json_object	*d = decl != NULL ? json_tokener_parse(decl) :
			    decl_of(v);
	char		*out = unset;
	size_t		 len = 1;

	error_clear(e);
	if (template_render(body, d, v, esc, max, &out, &len, e) == -1 &&
	    (out != NULL || len != 0)) {
		ok(0, "out not NULL or length not 0 after failure");
		out = NULL;
	} else if (out != NULL && len != strlen(out)) {
		ok(0, "length %zu is not that of \"%s\"", len, out);
	}
	json_object_put(d);
	json_object_put(v);
	return out;
}

/* Expects body rendered with values (escaping off) to be want. */
static void
R(const char *body, const char *values, const char *want, const char *name)
{
	struct error	 e = { 0 };
	char		*out = render(body, NULL, values, 0, BIG, &e);

	if (!is_str(out, want, name) && out == NULL)
		printf("#   error: %s\n", e.message);
	free(out);
	error_clear(&e);
}

/* The same with HTML escaping on. */
static void
RE(const char *body, const char *values, const char *want, const char *name)
{
	struct error	 e = { 0 };
	char		*out = render(body, NULL, values, 1, BIG, &e);

	if (!is_str(out, want, name) && out == NULL)
		printf("#   error: %s\n", e.message);
	free(out);
	error_clear(&e);
}

static const char *
detail(const struct error *e, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(e->details, key, &v))
		return "(absent)";
	return v == NULL ? "(null)" : json_object_get_string(v);
}

/* Expects rendering to fail with template_render_error naming variable
 * ("(null)" for none) and a reason holding reason. */
static void
RF(const char *body, const char *decl, const char *values, size_t max,
    const char *variable, const char *reason, const char *name)
{
	struct error	 e = { 0 };
	char		*out = render(body, decl, values, 0, max, &e);
	int		 good;

	good = out == NULL && e.code == ERR_TEMPLATE_RENDER &&
	    strcmp(detail(&e, "variable"), variable) == 0 &&
	    strstr(detail(&e, "reason"), reason) != NULL;
	if (!ok(good, "%s", name))
		printf("#   out: %s\n#   code %d variable %s reason %s\n",
		    out ? out : "(null)", e.code, detail(&e, "variable"),
		    detail(&e, "reason"));
	free(out);
	error_clear(&e);
}

/* Expects template_check to pass (field NULL) or to fail with
 * validation_error on field, the reason holding reason. */
static void
C(const char *body, const char *decl, const char *field, const char *reason,
    const char *name)
{
	struct error	 e = { 0 };
	json_object	*d = json_tokener_parse(decl);
	int		 rc = template_check(body, d, &e), good;

	if (field == NULL)
		good = rc == 0 && e.code == ERR_NONE;
	else
		good = rc == -1 && e.code == ERR_VALIDATION &&
		    strcmp(detail(&e, "field"), field) == 0 &&
		    strstr(detail(&e, "reason"), reason) != NULL;
	if (!ok(good, "%s", name))
		printf("#   rc %d code %d message %s\n", rc, e.code, e.message);
	json_object_put(d);
	error_clear(&e);
}

static void
test_interpolation(void)
{
	R("Hello from {Mustache}!\n", "{}", "Hello from {Mustache}!\n",
	    "interpolation: no tags");
	R("Hello, {{subject}}!\n", "{\"subject\":\"world\"}",
	    "Hello, world!\n", "interpolation: basic");
	R("\"{{mph}} miles an hour!\"", "{\"mph\":85}",
	    "\"85 miles an hour!\"", "interpolation: integer");
	R("{{{mph}}}/{{&mph}}", "{\"mph\":-3}", "-3/-3",
	    "interpolation: integer, triple and ampersand");
	R("\"{{power}} jiggawatts!\"", "{\"power\":1.210}",
	    "\"1.21 jiggawatts!\"", "interpolation: decimal, significance");
	R("{{a}} {{b}} {{c}} {{d}}", "{\"a\":1.5,\"b\":2.0,\"c\":0.1,"
	    "\"d\":1e21}", "1.5 2 0.1 1e+21", "interpolation: decimals");
	R("{{n}}", "{\"n\":9007199254740993}", "9007199254740993",
	    "interpolation: large integer exact");
	R("{{t}}/{{f}}", "{\"t\":true,\"f\":false}", "true/false",
	    "interpolation: booleans");
	R("[{{o.n}}]", "{\"o\":{\"n\":null}}", "[]",
	    "interpolation: null is empty");
	R("{{o}}", "{\"o\":{\"a\":1,\"b\":[1,\"x/y\"]}}",
	    "{\"a\":1,\"b\":[1,\"x/y\"]}",
	    "interpolation: object as compact JSON");
	R("{{a}}", "{\"a\":[1,\"x\",null]}", "[1,\"x\",null]",
	    "interpolation: array as compact JSON");
	R("I ({{#o}}{{cannot}}{{{cannot}}}{{&cannot}}{{/o}}) be seen!",
	    "{\"o\":{}}", "I () be seen!", "interpolation: context miss");
	R("\"{{person.name}}\" == \"{{#person}}{{name}}{{/person}}\"",
	    "{\"person\":{\"name\":\"Joe\"}}", "\"Joe\" == \"Joe\"",
	    "interpolation: dotted names");
	R("{{{person.name}}}{{&person.name}}",
	    "{\"person\":{\"name\":\"Joe\"}}", "JoeJoe",
	    "interpolation: dotted names, triple and ampersand");
	R("{{a.b.c.d.e.name}}",
	    "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"name\":\"Phil\"}}}}}}",
	    "Phil", "interpolation: dotted names, arbitrary depth");
	R("\"{{a.b.c}}\"", "{\"a\":{}}", "\"\"",
	    "interpolation: dotted names, broken chain");
	R("\"{{a.b.c.name}}\"", "{\"a\":{\"b\":{}},\"c\":{\"name\":\"Jim\"}}",
	    "\"\"", "interpolation: dotted names, each part against its parent");
	R("{{#a}}{{b.c.d.e.name}}{{/a}}",
	    "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"name\":\"Phil\"}}}}},"
	    "\"b\":{\"c\":{\"d\":{\"e\":{\"name\":\"Wrong\"}}}}}",
	    "Phil", "interpolation: dotted names, initial resolution");
	R("{{#a}}{{.name}}{{/a}}{{#b}}{{.name}}{{/b}}",
	    "{\"a\":{},\"b\":{\"name\":\"Name\"},\"name\":\"Fail\"}",
	    "Name", "interpolation: leading dot stays in the current scope");
	R("{{#a}}{{b.c}}{{/a}}", "{\"a\":{\"b\":{}},\"b\":{\"c\":\"ERROR\"}}",
	    "", "interpolation: dotted names, context precedence");
	R("| {{string}} | {{{string}}} | {{&string}} |",
	    "{\"string\":\"---\"}", "| --- | --- | --- |",
	    "interpolation: surrounding whitespace kept");
	R("  {{string}}\n  {{{string}}}\n  {{&string}}\n",
	    "{\"string\":\"---\"}", "  ---\n  ---\n  ---\n",
	    "interpolation: never standalone");
	R("|{{ string }}|{{{ string }}}|{{& string }}|",
	    "{\"string\":\"---\"}", "|---|---|---|",
	    "interpolation: padding ignored");
	R("{{s}}", "{\"s\":\"h\\u00e9llo \\u263a\"}", "h\xc3\xa9llo \xe2\x98\xba",
	    "interpolation: UTF-8 passes through");
	R("{{.}}", "{\"a\":1}", "{\"a\":1}",
	    "interpolation: top-level implicit iterator");
}

static void
test_escaping(void)
{
	RE("{{forbidden}}", "{\"forbidden\":\"& \\\" < > '\"}",
	    "&amp; &quot; &lt; &gt; &#39;", "escape on: {{name}} escapes");
	RE("{{{forbidden}}}", "{\"forbidden\":\"& \\\" < > '\"}",
	    "& \" < > '", "escape on: triple mustache does not");
	RE("{{&forbidden}}", "{\"forbidden\":\"& \\\" < > '\"}",
	    "& \" < > '", "escape on: ampersand does not");
	RE("{{o}}", "{\"o\":{\"a\":\"<\"}}", "{&quot;a&quot;:&quot;&lt;&quot;}",
	    "escape on: JSON text escaped too");
	R("{{forbidden}}", "{\"forbidden\":\"& \\\" < > '\"}",
	    "& \" < > '", "escape off: nothing escaped");
	RE("a<b>{{x}}", "{\"x\":\"ok\"}", "a<b>ok",
	    "escape on: template text untouched");
}

static void
test_sections(void)
{
	R("\"{{#boolean}}This should be rendered.{{/boolean}}\"",
	    "{\"boolean\":true}", "\"This should be rendered.\"",
	    "sections: truthy");
	R("\"{{#boolean}}This should not be rendered.{{/boolean}}\"",
	    "{\"boolean\":false}", "\"\"", "sections: falsey");
	R("\"{{#o.n}}This should not be rendered.{{/o.n}}\"",
	    "{\"o\":{\"n\":null}}", "\"\"", "sections: null is falsey");
	R("\"{{#context}}Hi {{name}}.{{/context}}\"",
	    "{\"context\":{\"name\":\"Joe\"}}", "\"Hi Joe.\"",
	    "sections: object pushed as context");
	R("\"{{#sec}}{{a}}, {{b}}, {{c.d}}{{/sec}}\"",
	    "{\"a\":\"foo\",\"b\":\"wrong\",\"sec\":{\"b\":\"bar\"},"
	    "\"c\":{\"d\":\"baz\"}}", "\"foo, bar, baz\"",
	    "sections: parent contexts");
	R("\"{{#foo}}{{.}} is {{foo}}{{/foo}}\"", "{\"foo\":\"bar\"}",
	    "\"bar is bar\"", "sections: value on top of the context");
	R("{{#tops}}{{#middles}}{{tname.lower}}{{mname}}.{{#bottoms}}"
	    "{{tname.upper}}{{mname}}{{bname}}.{{/bottoms}}{{/middles}}"
	    "{{/tops}}",
	    "{\"tops\":[{\"tname\":{\"upper\":\"A\",\"lower\":\"a\"},"
	    "\"middles\":[{\"mname\":\"1\",\"bottoms\":[{\"bname\":\"x\"},"
	    "{\"bname\":\"y\"}]}]}]}", "a1.A1x.A1y.",
	    "sections: list contexts see the whole stack");
	R("{{#a}}\n{{one}}\n{{#b}}\n{{one}}{{two}}{{one}}\n{{#c}}\n"
	    "{{one}}{{two}}{{three}}{{two}}{{one}}\n{{/c}}\n{{/b}}\n{{/a}}\n",
	    "{\"a\":{\"one\":1},\"b\":{\"two\":2},\"c\":{\"three\":3}}",
	    "1\n121\n12321\n", "sections: deeply nested contexts");
	R("\"{{#list}}{{item}}{{/list}}\"",
	    "{\"list\":[{\"item\":1},{\"item\":2},{\"item\":3}]}", "\"123\"",
	    "sections: list iterated");
	R("\"{{#list}}Yay lists!{{/list}}\"", "{\"list\":[]}", "\"\"",
	    "sections: empty list is falsey");
	R("\"{{#section}}foo{{/section}}\"", "{\"section\":\"123\"}",
	    "\"foo\"", "sections: strings are not lists");
	R("[{{#s}}empty string is truthy{{/s}}]", "{\"s\":\"\"}",
	    "[empty string is truthy]", "sections: empty string is truthy");
	R("[{{#z}}{{.}} is truthy{{/z}}]", "{\"z\":0}", "[0 is truthy]",
	    "sections: zero is truthy");
	R("{{#bool}}\n* first\n{{/bool}}\n* {{two}}\n{{#bool}}\n* third\n"
	    "{{/bool}}\n", "{\"bool\":true,\"two\":\"second\"}",
	    "* first\n* second\n* third\n", "sections: doubled");
	R("| A {{#bool}}B {{#bool}}C{{/bool}} D{{/bool}} E |",
	    "{\"bool\":true}", "| A B C D E |", "sections: nested truthy");
	R("| A {{#bool}}B {{#bool}}C{{/bool}} D{{/bool}} E |",
	    "{\"bool\":false}", "| A  E |", "sections: nested falsey");
	R("{{#o}}[{{#missing}}Found key 'missing'!{{/missing}}]{{/o}}",
	    "{\"o\":{}}", "[]", "sections: context misses are falsey");
	R("\"{{#list}}({{.}}){{/list}}\"",
	    "{\"list\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}",
	    "\"(a)(b)(c)(d)(e)\"", "sections: implicit iterator, strings");
	R("\"{{#list}}({{.}}){{/list}}\"", "{\"list\":[1,2,3,4,5]}",
	    "\"(1)(2)(3)(4)(5)\"", "sections: implicit iterator, integers");
	R("\"{{#list}}({{.}}){{/list}}\"",
	    "{\"list\":[1.10,2.20,3.30,4.40,5.50]}",
	    "\"(1.1)(2.2)(3.3)(4.4)(5.5)\"",
	    "sections: implicit iterator, decimals");
	R("\"{{#list}}({{#.}}{{.}}{{/.}}){{/list}}\"",
	    "{\"list\":[[1,2,3],[\"a\",\"b\",\"c\"]]}", "\"(123)(abc)\"",
	    "sections: implicit iterator, nested arrays");
	R("{{#list}}<{{.}}>{{/list}}", "{\"list\":[null,false,1]}",
	    "<><false><1>", "sections: null and false items still iterate");
	R("\"{{#a.b.c}}Here{{/a.b.c}}\"", "{\"a\":{\"b\":{\"c\":true}}}",
	    "\"Here\"", "sections: dotted names, truthy");
	R("\"{{#a.b.c}}Here{{/a.b.c}}\"", "{\"a\":{\"b\":{\"c\":false}}}",
	    "\"\"", "sections: dotted names, falsey");
	R("\"{{#a.b.c}}Here{{/a.b.c}}\"", "{\"a\":{}}", "\"\"",
	    "sections: dotted names, broken chain");
	R(" | {{#boolean}}\t|\t{{/boolean}} | \n", "{\"boolean\":true}",
	    " | \t|\t | \n", "sections: surrounding whitespace kept");
	R(" | {{#boolean}} {{! Important Whitespace }}\n {{/boolean}} | \n",
	    "{\"boolean\":true}", " |  \n  | \n",
	    "sections: internal whitespace kept");
	R(" {{#boolean}}YES{{/boolean}}\n {{#boolean}}GOOD{{/boolean}}\n",
	    "{\"boolean\":true}", " YES\n GOOD\n",
	    "sections: indented inline sections");
	R("| This Is\n{{#boolean}}\n|\n{{/boolean}}\n| A Line\n",
	    "{\"boolean\":true}", "| This Is\n|\n| A Line\n",
	    "sections: standalone lines removed");
	R("| This Is\n  {{#boolean}}\n|\n  {{/boolean}}\n| A Line\n",
	    "{\"boolean\":true}", "| This Is\n|\n| A Line\n",
	    "sections: indented standalone lines removed");
	R("|\r\n{{#boolean}}\r\n{{/boolean}}\r\n|", "{\"boolean\":true}",
	    "|\r\n|", "sections: standalone CRLF");
	R("  {{#boolean}}\n#{{/boolean}}\n/", "{\"boolean\":true}", "#\n/",
	    "sections: standalone without previous line");
	R("#{{#boolean}}\n/\n  {{/boolean}}", "{\"boolean\":true}", "#\n/\n",
	    "sections: standalone without newline");
	R("|{{# boolean }}={{/ boolean }}|", "{\"boolean\":true}", "|=|",
	    "sections: padding");
	R("{{#list}}\n- {{name}}\n{{/list}}\n",
	    "{\"list\":[{\"name\":\"a\"},{\"name\":\"b\"}]}", "- a\n- b\n",
	    "sections: standalone list lines");
}

static void
test_inverted(void)
{
	R("\"{{^boolean}}This should be rendered.{{/boolean}}\"",
	    "{\"boolean\":false}", "\"This should be rendered.\"",
	    "inverted: falsey");
	R("\"{{^boolean}}This should not be rendered.{{/boolean}}\"",
	    "{\"boolean\":true}", "\"\"", "inverted: truthy");
	R("\"{{^o.n}}This should be rendered.{{/o.n}}\"",
	    "{\"o\":{\"n\":null}}", "\"This should be rendered.\"",
	    "inverted: null is falsey");
	/* Names inside a root-level inverted section are root names: the
	 * spec's cases declare them here. */
	R("\"{{^context}}Hi {{name}}.{{/context}}\"",
	    "{\"context\":{\"name\":\"Joe\"},\"name\":\"Ann\"}", "\"\"",
	    "inverted: context");
	R("\"{{^list}}{{n}}{{/list}}\"",
	    "{\"list\":[{\"n\":1},{\"n\":2},{\"n\":3}],\"n\":0}", "\"\"",
	    "inverted: list");
	R("{{^o}}{{n}}{{/o}}", "{\"o\":false,\"n\":7}", "7",
	    "inverted: the context is the one outside");
	R("\"{{^list}}Yay lists!{{/list}}\"", "{\"list\":[]}",
	    "\"Yay lists!\"", "inverted: empty list");
	R("{{^bool}}\n* first\n{{/bool}}\n* {{two}}\n{{^bool}}\n* third\n"
	    "{{/bool}}\n", "{\"bool\":false,\"two\":\"second\"}",
	    "* first\n* second\n* third\n", "inverted: doubled");
	R("| A {{^bool}}B {{^bool}}C{{/bool}} D{{/bool}} E |",
	    "{\"bool\":false}", "| A B C D E |", "inverted: nested falsey");
	R("| A {{^bool}}B {{^bool}}C{{/bool}} D{{/bool}} E |",
	    "{\"bool\":true}", "| A  E |", "inverted: nested truthy");
	R("{{#o}}[{{^missing}}Found key 'missing'!{{/missing}}]{{/o}}",
	    "{\"o\":{}}", "[Found key 'missing'!]", "inverted: context miss");
	R("\"{{^a.b.c}}Not Here{{/a.b.c}}\" == \"{{^a.x.c}}Here{{/a.x.c}}\"",
	    "{\"a\":{\"b\":{\"c\":true}}}", "\"\" == \"Here\"",
	    "inverted: dotted names and broken chains");
	R("| This Is\n  {{^boolean}}\n|\n  {{/boolean}}\n| A Line\n",
	    "{\"boolean\":false}", "| This Is\n|\n| A Line\n",
	    "inverted: indented standalone lines");
	R("|\r\n{{^boolean}}\r\n{{/boolean}}\r\n|", "{\"boolean\":false}",
	    "|\r\n|", "inverted: standalone CRLF");
	R("|{{^ boolean }}={{/ boolean }}|", "{\"boolean\":false}", "|=|",
	    "inverted: padding");
}

static void
test_comments(void)
{
	R("12345{{! Comment Block! }}67890", "{}", "1234567890",
	    "comments: inline");
	R("12345{{!\n  This is a\n  multi-line comment...\n}}67890\n", "{}",
	    "1234567890\n", "comments: multiline");
	R("Begin.\n{{! Comment Block! }}\nEnd.\n", "{}", "Begin.\nEnd.\n",
	    "comments: standalone");
	R("Begin.\n  {{! Indented Comment Block! }}\nEnd.\n", "{}",
	    "Begin.\nEnd.\n", "comments: indented standalone");
	R("|\r\n{{! Standalone Comment }}\r\n|", "{}", "|\r\n|",
	    "comments: standalone CRLF");
	R("  {{! I'm Still Standalone }}\n!", "{}", "!",
	    "comments: standalone without previous line");
	R("!\n  {{! I'm Still Standalone }}", "{}", "!\n",
	    "comments: standalone without newline");
	R("Begin.\n{{!\nSomething's going on here...\n}}\nEnd.\n", "{}",
	    "Begin.\nEnd.\n", "comments: multiline standalone");
	R("Begin.\n  {{!\n    Something's going on here...\n  }}\nEnd.\n",
	    "{}", "Begin.\nEnd.\n", "comments: indented multiline standalone");
	R("  12 {{! 34 }}\n", "{}", "  12 \n", "comments: indented inline");
	R("12345 {{! Comment Block! }} 67890", "{}", "12345  67890",
	    "comments: surrounding whitespace");
	R("comments never render: {{! comment }}{{! {{undeclared }}|",
	    "{}", "comments never render: |",
	    "comments: names in comments are not looked up");
}

static void
test_delimiters(void)
{
	R("{{=<% %>=}}(<%text%>)", "{\"text\":\"Hey!\"}", "(Hey!)",
	    "delimiters: pair behavior");
	R("({{=[ ]=}}[text])", "{\"text\":\"It worked!\"}", "(It worked!)",
	    "delimiters: special characters");
	R("[\n{{#section}}\n  {{data}}\n  |data|\n{{/section}}\n\n"
	    "{{= | | =}}\n|#section|\n  {{data}}\n  |data|\n|/section|\n]\n",
	    "{\"section\":{\"data\":\"I got interpolated.\"}}",
	    "[\n  I got interpolated.\n  |data|\n\n  {{data}}\n"
	    "  I got interpolated.\n]\n", "delimiters: persist over sections");
	R("[\n{{^section}}\n  {{data}}\n  |data|\n{{/section}}\n\n"
	    "{{= | | =}}\n|^section|\n  {{data}}\n  |data|\n|/section|\n]\n",
	    "{\"section\":false,\"data\":\"I got interpolated.\"}",
	    "[\n  I got interpolated.\n  |data|\n\n  {{data}}\n"
	    "  I got interpolated.\n]\n",
	    "delimiters: persist over inverted sections");
	R("| {{=@ @=}} |", "{}", "|  |", "delimiters: surrounding whitespace");
	R(" | {{=@ @=}}\n", "{}", " | \n", "delimiters: outlying inline");
	R("Begin.\n{{=@ @=}}\nEnd.\n", "{}", "Begin.\nEnd.\n",
	    "delimiters: standalone");
	R("Begin.\n  {{=@ @=}}\nEnd.\n", "{}", "Begin.\nEnd.\n",
	    "delimiters: indented standalone");
	R("|\r\n{{= @ @ =}}\r\n|", "{}", "|\r\n|",
	    "delimiters: standalone CRLF");
	R("  {{=@ @=}}\n=", "{}", "=",
	    "delimiters: standalone without previous line");
	R("=\n  {{=@ @=}}", "{}", "=\n",
	    "delimiters: standalone without newline");
	R("|{{= @   @ =}}|", "{}", "||", "delimiters: pair with padding");
	RE("{{=<% %>=}}<%x%> <%{x}%> <%& x%>", "{\"x\":\"<\"}",
	    "&lt; < <", "delimiters: triple and ampersand with new ones");
	R("{{=<% %>=}}<%a%><%={{ }}=%>{{a}}", "{\"a\":\"A\"}", "AA",
	    "delimiters: changed back");
}

static void
test_typed(void)
{
	static const struct {
		const char	*type, *good, *bad, *got;
	} cases[] = {
		{ "string",  "\"s\"",        "1",     "integer" },
		{ "integer", "7",            "1.5",   "number" },
		{ "number",  "1.5",          "\"1\"", "string" },
		{ "boolean", "false",        "0",     "integer" },
		{ "array",   "[1]",          "{}",    "object" },
		{ "object",  "{\"a\":1}",    "[]",    "array" },
	};
	struct error	 e = { 0 };
	char		 decl[64], values[64], want[64];
	char		*out;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(decl, sizeof(decl), "{\"v\":\"%s\"}", cases[i].type);
		snprintf(values, sizeof(values), "{\"v\":%s}", cases[i].good);
		out = render("{{v}}", decl, values, 0, BIG, &e);
		ok(out != NULL, "typed: %s accepts %s", cases[i].type,
		    cases[i].good);
		free(out);
		snprintf(values, sizeof(values), "{\"v\":%s}", cases[i].bad);
		snprintf(want, sizeof(want), "expected %s, got %s",
		    cases[i].type, cases[i].got);
		RF("{{v}}", decl, values, BIG, "v", want, want);
	}
	out = render("{{v}}", "{\"v\":\"number\"}", "{\"v\":3}", 0, BIG, &e);
	is_str(out, "3", "typed: number accepts an integer");
	free(out);
	RF("{{a}}{{b}}", "{\"a\":\"string\",\"b\":\"integer\"}",
	    "{\"a\":\"x\"}", BIG, "b", "missing", "typed: missing variable");
	RF("{{a}}", "{\"a\":\"string\"}", "{\"a\":null}", BIG, "a",
	    "expected string, got null", "typed: null refused");
	RF("hi", "{\"a\":\"string\"}", "{}", BIG, "a", "missing",
	    "typed: declared but unused still required");
	RF("{{a}}", "{\"a\":\"string\"}", "[1]", BIG, "(null)",
	    "must be an object", "typed: values not an object");

	out = render("{{a}}", "{\"a\":\"string\"}", "{\"a\":\"x\"}", 0, BIG,
	    &e);
	free(out);
	out = render("{{a}}{{b}}", "{\"a\":\"string\",\"b\":\"integer\"}",
	    "{\"a\":\"x\"}", 0, BIG, &e);
	ok(out == NULL && strcmp(e.message, "variable 'b': missing") == 0,
	    "typed: message names the variable (%s)", e.message);
	free(out);
	error_clear(&e);

	out = render("{{#o}}[{{extra}}]{{/o}}", "{\"o\":\"object\"}",
	    "{\"o\":{},\"extra\":\"leak\"}", 0, BIG, &e);
	is_str(out, "[]", "typed: undeclared values are not visible");
	free(out);
	out = render("{{.}}", "{\"a\":\"integer\"}", "{\"a\":1,\"b\":2}", 0,
	    BIG, &e);
	is_str(out, "{\"a\":1}", "typed: root holds declared variables only");
	free(out);
	RF("{{x}}", "{\"a\":\"string\"}", "{\"a\":\"\",\"x\":\"1\"}", BIG, "x",
	    "not declared", "typed: undeclared name refused at render");
	RF("{{a}}", "{\"a\":\"text\"}", "{\"a\":\"\"}", BIG, "a", "type",
	    "typed: bad declaration refused at render");
	error_clear(&e);
}

static void
test_check(void)
{
	C("Hello {{name}}, {{#items}}{{label}} {{.}}{{/items}}{{^none}}-"
	    "{{/none}}", "{\"name\":\"string\",\"items\":\"array\","
	    "\"none\":\"boolean\"}", NULL, NULL, "check: good template");
	C("{{.}} {{! {{nope }}", "{}", NULL, NULL,
	    "check: '.' and comments need no declaration");
	C("Hello {{name}}", "{}", "body", "undeclared variable 'name'",
	    "check: undeclared interpolation");
	C("{{#items}}x{{/items}}", "{\"name\":\"string\"}", "body",
	    "undeclared variable 'items'", "check: undeclared section");
	C("{{^items}}x{{/items}}", "{}", "body", "undeclared variable 'items'",
	    "check: undeclared inverted section");
	C("{{user.name}}", "{\"name\":\"string\"}", "body",
	    "undeclared variable 'user'", "check: first dotted segment");
	C("{{user.name}}", "{\"user\":\"object\"}", NULL, NULL,
	    "check: dotted name of a declared object");
	C("{{.user}}", "{}", "body", "undeclared variable 'user'",
	    "check: leading dot at top level");
	C("{{{raw}}}{{&amp}}", "{\"raw\":\"string\"}", "body",
	    "undeclared variable 'amp'", "check: ampersand interpolation");
	C("{{^flag}}{{nope}}{{/flag}}", "{\"flag\":\"boolean\"}", "body",
	    "undeclared variable 'nope'",
	    "check: an inverted section pushes no context");
	C("{{^flag}}{{#o}}{{member}}{{/o}}{{/flag}}{{nope}}",
	    "{\"flag\":\"boolean\",\"o\":\"object\"}", "body",
	    "undeclared variable 'nope'",
	    "check: root scope again after sections close");
	C("{{#o}}{{^flag}}{{member}}{{/flag}}{{/o}}",
	    "{\"flag\":\"boolean\",\"o\":\"object\"}", NULL, NULL,
	    "check: an inverted section inside a section may use members");
	C("x\n\n {{y}}", "{}", "body", "line 3:", "check: line numbers");
	C("{{a}}", "[]", "variables", "object", "check: declaration not object");
	C("{{a}}", "{\"a\":\"text\"}", "variables", "variable 'a'",
	    "check: unknown type name");
	C("{{a}}", "{\"a\":1}", "variables", "variable 'a'",
	    "check: type not a string");
	C("{{a}}", "{\"a.b\":\"string\"}", "variables", "'.'",
	    "check: dotted variable name");
	C("{{a}}", "{\"\":\"string\"}", "variables", "empty",
	    "check: empty variable name");
	C("x", "{\"a b\":\"string\"}", "variables", "whitespace",
	    "check: variable name with whitespace");
}

static void
test_parse_errors(void)
{
	static const struct {
		const char	*body, *reason;
	} bad[] = {
		{ "{{#a}}x", "unclosed section 'a'" },
		{ "{{#a}}{{#b}}{{/a}}{{/b}}", "'a' closes section 'b'" },
		{ "x{{/a}}", "without an open section" },
		{ "{{> part}}", "partials are not supported" },
		{ "{{<parent}}{{/parent}}", "inheritance" },
		{ "{{a", "unclosed tag" },
		{ "{{{a}}", "unclosed tag" },
		{ "{{! never closed", "unclosed tag" },
		{ "{{=<% %>}}", "unclosed tag" },
		{ "{{=<%=}}", "two delimiters" },
		{ "{{=< % >=}}", "two delimiters" },
		{ "{{=<%%%%%%%%%%%%%%%%%% %>=}}", "longer than" },
		{ "{{==% %==}}", "may not hold '='" },
		{ "{{=<% =%>=}}", "may not hold '='" },
		{ "{{}}", "empty tag name" },
		{ "{{#}}{{/}}", "empty tag name" },
		{ "{{a b}}", "whitespace" },
		{ "{{a..b}}", "bad dotted name" },
		{ "{{a.}}", "bad dotted name" },
		{ "{{=<% %>=}}{{a}}<%b", "unclosed tag" },
	};
	const char	*decl = "{\"a\":\"string\",\"b\":\"string\"}";
	char		 name[128];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "parse error: %s", bad[i].body);
		C(bad[i].body, decl, "body", bad[i].reason, name);
	}
	RF("{{#a}}x", decl, "{\"a\":\"x\",\"b\":\"y\"}", BIG, "(null)",
	    "unclosed section", "parse error at render: unclosed section");
	RF("{{>p}}", decl, "{\"a\":\"x\",\"b\":\"y\"}", BIG, "(null)",
	    "partials", "parse error at render: partial");
}

static void
test_bounds(void)
{
	struct error	 e = { 0 };
	char		*out, body[512];
	size_t		 i, n;

	out = render("{{s}}", NULL, "{\"s\":\"abcde\"}", 0, 5, &e);
	is_str(out, "abcde", "cap: exactly max_chars passes");
	free(out);
	RF("{{s}}!", NULL, "{\"s\":\"abcde\"}", 5, "(null)", "over 5",
	    "cap: one over fails");
	out = render("{{s}}", NULL, "{\"s\":\"\\u00e9\\u00e9\\u263a\"}", 0, 3,
	    &e);
	is_str(out, "\xc3\xa9\xc3\xa9\xe2\x98\xba",
	    "cap: counts code points, not bytes");
	free(out);
	out = render("{{s}}", NULL, "{\"s\":\"<<\"}", 1, 7, &e);
	ok(out == NULL && e.code == ERR_TEMPLATE_RENDER,
	    "cap: escaped entities count");
	free(out);
	out = render("{{s}}", NULL, "{\"s\":\"<<\"}", 1, 8, &e);
	is_str(out, "&lt;&lt;", "cap: escaped entities fit");
	free(out);
	out = render("", NULL, "{}", 0, 0, &e);
	is_str(out, "", "cap: empty output with zero cap");
	free(out);
	RF("{{#l}}{{#l}}{{#l}}xxxxxxxxxx{{/l}}{{/l}}{{/l}}", NULL,
	    "{\"l\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}",
	    1000, "l", "over 1000", "cap: stops growing in loops, naming "
	    "the root-level section");
	RF("ab{{s}}cd", NULL, "{\"s\":\"xyz\"}", 4, "s", "over 4",
	    "cap: passed by an interpolation names its variable");
	RF("{{^f}}{{s}}{{/f}}", NULL, "{\"f\":false,\"s\":\"xyz\"}", 2, "f",
	    "over 2", "cap: passed inside an inverted section names it");
	RF("{{s}}{{! c }}abcdef", NULL, "{\"s\":\"x\"}", 3, "(null)",
	    "over 3", "cap: passed by root-level text names no variable");
	{
		json_object	*v = json_tokener_parse("{\"s\":\"a\\u0000b\"}");
		json_object	*d = json_tokener_parse("{\"s\":\"string\"}");
		size_t		 len = 0;

		out = NULL;
		ok(template_render("[{{s}}]", d, v, 0, 5, &out, &len, &e) == 0 &&
		    len == 5 && memcmp(out, "[a\0b]", 6) == 0,
		    "a NUL in a value is kept: the length says where it ends");
		free(out);
		json_object_put(d);
		json_object_put(v);
	}
	{
		json_object	*l = json_object_new_array();
		json_object	*v = json_object_new_object();
		json_object	*d = json_tokener_parse("{\"l\":\"array\"}");

		for (i = 0; i < 200; i++)
			json_object_array_add(l, json_object_new_int((int)i));
		json_object_object_add(v, "l", l);
		error_clear(&e);
		out = unset;
		ok(template_render("{{#l}}{{#l}}{{#l}}{{/l}}{{/l}}{{/l}}", d, v,
		    0, BIG, &out, NULL, &e) == -1 && out == NULL &&
		    e.code == ERR_TEMPLATE_RENDER &&
		    strstr(detail(&e, "reason"), "steps") != NULL &&
		    strcmp(detail(&e, "variable"), "l") == 0,
		    "bounds: work capped, naming the section (%s)", e.message);
		json_object_put(d);
		json_object_put(v);
		error_clear(&e);
	}

	{
		/* 60^3 lookups of a 1000-byte name: few tags, much hashing. */
		json_object	*l = json_object_new_array();
		json_object	*v = json_object_new_object();
		json_object	*d = json_tokener_parse("{\"l\":\"array\"}");
		char		*big = malloc(1100);

		for (i = 0; i < 60; i++)
			json_object_array_add(l, json_object_new_object());
		json_object_object_add(v, "l", l);
		strcpy(big, "{{#l}}{{#l}}{{#l}}{{");
		memset(big + 20, 'x', 1000);
		strcpy(big + 1020, "}}{{/l}}{{/l}}{{/l}}");
		error_clear(&e);
		out = unset;
		ok(template_render(big, d, v, 0, BIG, &out, NULL, &e) == -1 &&
		    out == NULL && strstr(detail(&e, "reason"), "steps") != NULL,
		    "bounds: long names count toward the work bound (%s)",
		    e.message);
		free(big);
		json_object_put(d);
		json_object_put(v);
		error_clear(&e);
	}

	/* 32 nested sections pass, 33 are refused. */
	for (n = 32; n <= 33; n++) {
		body[0] = '\0';
		for (i = 0; i < n; i++)
			strcat(body, "{{#b}}");
		strcat(body, "x");
		for (i = 0; i < n; i++)
			strcat(body, "{{/b}}");
		if (n == 32) {
			C(body, "{\"b\":\"boolean\"}", NULL, NULL,
			    "nesting: 32 levels pass check");
			out = render(body, NULL, "{\"b\":true}", 0, BIG, &e);
			is_str(out, "x", "nesting: 32 levels render");
			free(out);
		} else {
			C(body, "{\"b\":\"boolean\"}", "body", "deeper than 32",
			    "nesting: 33 levels refused at check");
			RF(body, NULL, "{\"b\":true}", BIG, "(null)",
			    "deeper than 32", "nesting: 33 levels refused at "
			    "render");
		}
	}
	error_clear(&e);
}

int
main(void)
{
	test_interpolation();
	test_escaping();
	test_sections();
	test_inverted();
	test_comments();
	test_delimiters();
	test_typed();
	test_check();
	test_parse_errors();
	test_bounds();
	return tap_done();
}
