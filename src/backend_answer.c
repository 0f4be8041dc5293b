/* backend_answer.c: a backend's answer, its allocation and release, and
 * what the kinds' parsers share: the reason an answer does not fit, the
 * parse of an upstream's JSON body and the bounds on its usage (README,
 * "Faults and hardening").  A reason is our own text, never the
 * upstream's.  No I/O, and no state but the tokener the parse keeps
 * (its levels allocated once), so that the unit tests and the fuzzer
 * build it with the kinds' parsers alone. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "question.h"

int
backend_answer_alloc(struct backend_answer *a, json_object *questions)
{
	size_t	 i = 0, n, arity;

	memset(a, 0, sizeof(*a));
	n = (size_t)json_object_object_length(questions);
	if (n == 0)
		return 0;
	/* Sized by the questions and their options: checked. */
	if ((a->dist = calloc(n, sizeof(*a->dist))) == NULL)
		return -1;
	a->nquestions = n;
	json_object_object_foreach(questions, name, q) {
		(void)name;
		arity = question_arity(q);
		if (i == n || (a->dist[i++] = calloc(arity > 0 ? arity : 1,
		    sizeof(double))) == NULL) {
			backend_answer_free(a);
			return -1;
		}
	}
	return 0;
}

void
backend_answer_free(struct backend_answer *a)
{
	size_t	 i;

	if (a->dist != NULL)
		for (i = 0; i < a->nquestions; i++)
			free(a->dist[i]);
	free(a->dist);
	free(a->label_mass);
	memset(a, 0, sizeof(*a));
}

int
backend_reason(char *why, size_t whylen, const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	if (why == NULL || whylen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	for (p = why; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -1;
}

/* What json-c said of a body, as our own words. */
static const struct {
	enum json_tokener_error	 jerr;
	const char		*what;
} parse_errors[] = {
	{ json_tokener_error_depth,	"is nested too deeply" },
	{ json_tokener_continue,	"is cut short" },
};

/* The tokener of every upstream body the process parses, reset after
 * each it took whole; after one it did not, it may hold state its reset
 * leaves (half of a surrogate pair), and a new one parses the next. */
static json_tokener	*answer_tok;

json_object *
backend_parse_json(const char *body, size_t len, char *why, size_t whylen)
{
	json_tokener		*tok;
	json_object		*root;
	enum json_tokener_error	 jerr;
	size_t			 end, i;

	if (body == NULL || len == 0) {
		backend_reason(why, whylen, "the body is empty");
		return NULL;
	}
	if (len > INT_MAX) {
		backend_reason(why, whylen, "the body is too large");
		return NULL;
	}
	if (answer_tok == NULL &&
	    (answer_tok = json_tokener_new_ex(BACKEND_JSON_DEPTH)) == NULL) {
		backend_reason(why, whylen, "out of memory");
		return NULL;
	}
	tok = answer_tok;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {	/* ends a bare number */
		root = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
	}
	if (jerr == json_tokener_success)
		json_tokener_reset(tok);
	else {
		json_tokener_free(tok);
		answer_tok = NULL;
	}
	if (jerr == json_tokener_success && root == NULL) {
		backend_reason(why, whylen, "not an object");	/* null */
		return NULL;
	}
	if (root == NULL || jerr != json_tokener_success) {
		json_object_put(root);
		for (i = 0; i < sizeof(parse_errors) / sizeof(parse_errors[0]);
		    i++)
			if (parse_errors[i].jerr == jerr)
				break;
		if (i < sizeof(parse_errors) / sizeof(parse_errors[0]))
			backend_reason(why, whylen, "the body %s",
			    parse_errors[i].what);
		else
			backend_reason(why, whylen, "the body is not valid "
			    "JSON (at byte %zu)", end);
		return NULL;
	}
	for (; end < len; end++)
		if (strchr(" \t\r\n", body[end]) == NULL ||
		    body[end] == '\0') {
			json_object_put(root);
			backend_reason(why, whylen, "the body has trailing "
			    "data (at byte %zu)", end);
			return NULL;
		}
	return root;
}

/* A usage count: 1 read, 0 none (missing, or not a number), -1 a
 * number out of range (a fraction or an exponent is not an integer). */
static int
usage_count(json_object *u, const char *key, int64_t *v)
{
	json_object	*o;

	*v = 0;
	if (!json_object_object_get_ex(u, key, &o))
		return 0;
	if (json_object_is_type(o, json_type_double))
		return -1;
	if (!json_object_is_type(o, json_type_int))
		return 0;
	*v = json_object_get_int64(o);
	return *v >= 0 && *v <= BACKEND_USAGE_MAX ? 1 : -1;
}

int
backend_usage_read(json_object *u, const char *in_key, const char *out_key,
    int64_t *in, int64_t *out, char *why, size_t whylen)
{
	int	 a, b;

	*in = *out = 0;
	if (!json_object_is_type(u, json_type_object))
		return 0;
	a = usage_count(u, in_key, in);
	b = usage_count(u, out_key, out);
	if (a == -1 || b == -1) {
		*in = *out = 0;
		return backend_reason(why, whylen, "usage %s is not an integer "
		    "from 0 to %lld", a == -1 ? in_key : out_key,
		    (long long)BACKEND_USAGE_MAX);
	}
	if (a == 0 || b == 0)
		*in = *out = 0;
	return a == 1 && b == 1;
}

int
backend_usage_add(struct backend_answer *a, int64_t in, int64_t out)
{
	/* Each term is at most BACKEND_USAGE_MAX: no overflow. */
	if (a->input_tokens + in > BACKEND_USAGE_MAX ||
	    a->output_tokens + out > BACKEND_USAGE_MAX)
		return -1;
	a->input_tokens += in;
	a->output_tokens += out;
	return 0;
}
