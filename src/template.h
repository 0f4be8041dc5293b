/* template.h: the Mustache renderer that turns a template version and its
 * typed variables into the state sent to the backend (doc/design.md,
 * section 16).
 *
 * Supported: interpolation ({{name}}, {{{name}}}, {{& name}}), dotted names,
 * the implicit iterator {{.}}, sections, inverted sections, comments, set
 * delimiters and the standalone-line rules.  Not supported, refused at
 * parse: partials, template inheritance, lambdas.  Pure and bounded: no I/O,
 * no global state, sections nested at most TEMPLATE_MAX_DEPTH deep, output
 * capped by the caller, work capped by TEMPLATE_MAX_STEPS. */
#ifndef EVALGATE_TEMPLATE_H
#define EVALGATE_TEMPLATE_H

#include <stddef.h>

#include <json-c/json.h>

#include "error.h"

#define TEMPLATE_MAX_DEPTH	32		/* section nesting */
#define TEMPLATE_MAX_DELIM	16		/* bytes in a set delimiter */
#define TEMPLATE_MAX_STEPS	4000000		/* tags, texts and items visited */

/* Checks a template body and its variable declaration at publish time.
 * decl (borrowed) is an object {"name": "string" | "integer" | "number" |
 * "boolean" | "array" | "object"}; a name must be non-empty and hold neither
 * '.' nor whitespace.  Refuses with ERR_VALIDATION, field "variables" for a
 * bad declaration, field "body" for a body that does not parse (unclosed
 * tag or section, mismatched close, bad delimiter change, partial or
 * inheritance tag, nesting deeper than TEMPLATE_MAX_DEPTH) or that uses an
 * undeclared name outside every section (the first segment of a dotted
 * name; detail "variable" names it; an inverted section pushes no context,
 * so names inside one count as outside).  "." is always allowed; a leading
 * dot (".name", looked up in the current context only) is an extension.
 * Returns 0 or -1. */
int	 template_check(const char *body, json_object *decl, struct error *e);

/* Renders body with values (both borrowed).  First checks, failing with
 * ERR_TEMPLATE_RENDER and details {"variable": name or null, "reason"}:
 * values is an object, every declared variable is present and of its
 * declared type ("integer" = JSON integer, "number" = integer or decimal),
 * the body parses and uses no undeclared name outside sections.  Only
 * declared variables are visible to the template.  Section truthiness
 * follows the spec's list: false, null, a missing name and the empty list
 * are falsy; everything else (including "" and 0) is truthy.
 * Output over max_chars Unicode code points (or 4 * max_chars bytes), or
 * work over TEMPLATE_MAX_STEPS, fails naming the root-level variable whose
 * tag (interpolation or section) was being rendered, or null when the
 * template's own root-level text passed the cap; rendering stops as soon
 * as a cap is passed.
 * escape_html 1: {{name}} escapes & < > " ' and {{{name}}} / {{& name}}
 * do not; 0: nothing is escaped.
 * On success *out is a malloc'd NUL-terminated string the caller frees
 * and *outlen (when outlen is not NULL) its length in bytes: a value may
 * hold NUL characters, so the length, not strlen(), is the text's end.
 * On failure *out is NULL.  Returns 0 or -1. */
int	 template_render(const char *body, json_object *decl,
	    json_object *values, int escape_html, size_t max_chars,
	    char **out, size_t *outlen, struct error *e);

#endif
