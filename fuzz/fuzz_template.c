/* fuzz_template.c: libFuzzer target for the Mustache engine,
 * template_check() and template_render().  The input is cut at NUL bytes
 * into the body, the declaration (a JSON object; when it is not one,
 * every member of the values is declared as the type it has), the values
 * (a JSON object) and a last part whose first byte sets escaping (bit 0)
 * and the cap max_chars (the byte's upper bits: 0 to 127, small so that
 * the cap is often hit).
 *
 * Properties: a render that succeeds was preceded by a check that
 * succeeds; its output has the length it reports, a NUL after it, at most
 * max_chars code points and 4 * max_chars bytes; a failure leaves no
 * output and has a known code and a message. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "template.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Every member of values declared as the type it has (nulls left out). */
static json_object *
declaration_of(json_object *values)
{
	static const char *const names[] = {
		[json_type_boolean] = "boolean", [json_type_double] = "number",
		[json_type_int] = "integer", [json_type_object] = "object",
		[json_type_array] = "array", [json_type_string] = "string",
	};
	json_object	*decl = json_object_new_object();
	enum json_type	 t;

	json_object_object_foreach(values, key, val) {
		t = json_object_get_type(val);
		if (t != json_type_null)
			json_object_object_add(decl, key,
			    json_object_new_string(names[t]));
	}
	return decl;
}

static size_t
code_points(const char *s, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part	 part[4];
	struct error		 e = { 0 };
	json_object		*decl, *values;
	char			*body, *out = NULL;
	size_t			 n, max_chars = 64, outlen = 1;
	int			 escape = 1, checked, rendered;

	n = fuzz_split(data, size, part, 4);
	if ((body = strndup(part[0].p, part[0].len)) == NULL)
		return 0;
	values = n > 2 ? fuzz_json(&part[2]) : NULL;
	if (values == NULL)
		values = json_object_new_object();
	if ((decl = n > 1 ? fuzz_json(&part[1]) : NULL) == NULL)
		decl = declaration_of(values);
	if (n > 3 && part[3].len > 0) {
		escape = part[3].p[0] & 1;
		max_chars = (unsigned char)part[3].p[0] >> 1;
	}

	checked = template_check(body, decl, &e) == 0;
	FUZZ_ASSERT(checked || (e.code == ERR_VALIDATION &&
	    e.message[0] != '\0'));
	error_clear(&e);

	rendered = template_render(body, decl, values, escape, max_chars,
	    &out, &outlen, &e) == 0;
	if (rendered) {
		FUZZ_ASSERT(checked);
		FUZZ_ASSERT(out != NULL && out[outlen] == '\0');
		FUZZ_ASSERT(outlen <= 4 * max_chars);
		FUZZ_ASSERT(code_points(out, outlen) <= max_chars);
	} else {
		FUZZ_ASSERT(out == NULL && outlen == 0);
		FUZZ_ASSERT(e.code == ERR_TEMPLATE_RENDER &&
		    e.message[0] != '\0');
	}
	free(out);
	error_clear(&e);
	json_object_put(decl);
	json_object_put(values);
	free(body);
	return 0;
}
