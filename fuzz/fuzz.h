/* fuzz.h: what the libFuzzer targets in fuzz/ share: the input cut into
 * NUL-separated parts (an upstream target's questions and body among
 * them), JSON parsed as the request path parses it, a
 * strict UTF-8 check, a generator seeded by the input (a target must be
 * deterministic), and the assertion that stops the fuzzer. */
#ifndef EVALGATE_FUZZ_H
#define EVALGATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "error.h"
#include "json_util.h"
#include "question.h"

/* A property that must hold: a violation is a crash libFuzzer keeps. */
#define FUZZ_ASSERT(c)	do { if (!(c)) __builtin_trap(); } while (0)

struct fuzz_part {
	const char	*p;		/* borrowed from the input */
	size_t		 len;
};

/* Cuts data at NUL bytes into at most max parts (the last one keeps any
 * further NULs).  Returns the number of parts, at least 1. */
static inline size_t
fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts,
    size_t max)
{
	const uint8_t	*nul;
	size_t		 n = 0;

	while (n + 1 < max &&
	    (nul = memchr(data, '\0', size)) != NULL) {
		parts[n].p = (const char *)data;
		parts[n++].len = (size_t)(nul - data);
		size -= (size_t)(nul - data) + 1;
		data = nul + 1;
	}
	parts[n].p = (const char *)data;
	parts[n++].len = size;
	return n;
}

/* The part as the request path parses a body (an object), or NULL. */
static inline json_object *
fuzz_json(const struct fuzz_part *part)
{
	struct error	 e = { 0 };
	json_object	*o;

	o = ju_parse_body(part->p, part->len, &e);
	error_clear(&e);
	return o;
}

/* 1 if s[0..len) is UTF-8 as RFC 3629 defines it: shortest forms, no
 * surrogates, nothing above U+10FFFF. */
static inline int
fuzz_utf8(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n, k;
	uint32_t		 c;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (p[i] >= 0xc2 && p[i] <= 0xdf) {
			n = 1;
			c = p[i] & 0x1f;
		} else if (p[i] >= 0xe0 && p[i] <= 0xef) {
			n = 2;
			c = p[i] & 0x0f;
		} else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
			n = 3;
			c = p[i] & 0x07;
		} else
			return 0;
		if (len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 2 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		    (n == 3 && (c < 0x10000 || c > 0x10ffff)))
			return 0;
		i += n + 1;
	}
	return 1;
}

/* 1 if a refusal e is one the API may send: a known code, a message,
 * and, when the input was UTF-8, a message and details that are too
 * (they are sent as JSON strings). */
static inline int
fuzz_refusal_ok(const struct error *e, int input_utf8)
{
	const char	*details;

	if (e->code <= ERR_NONE || e->code >= ERR__MAX ||
	    e->message[0] == '\0')
		return 0;
	if (!input_utf8)
		return 1;
	details = e->details != NULL ? json_object_to_json_string_ext(
	    e->details, JSON_C_TO_STRING_PLAIN) : "{}";
	return fuzz_utf8(e->message, strlen(e->message)) &&
	    details != NULL && fuzz_utf8(details, strlen(details));
}

/* splitmix64, seeded from the input (FNV-1a), so that a run repeats. */
static inline uint64_t
fuzz_seed(const uint8_t *data, size_t size)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i;

	for (i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t
fuzz_next(uint64_t *s)
{
	uint64_t	 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* An upstream target's input: the questions before a NUL, if that is a
 * valid questions map, and the body after it; else demo (a questions
 * map the target parsed) and the whole input.  The questions are a new
 * reference the caller puts. */
static inline json_object *
fuzz_questions_body(const uint8_t *data, size_t size, json_object *demo,
    const char **body, size_t *len)
{
	struct fuzz_part	 part[2];
	struct error		 e = { 0 };
	json_object		*qs = NULL;

	*body = (const char *)data;
	*len = size;
	if (fuzz_split(data, size, part, 2) == 2) {
		qs = fuzz_json(&part[0]);
		if (qs != NULL && question_validate(qs, 32, &e) == -1) {
			json_object_put(qs);
			qs = NULL;
		}
		error_clear(&e);
		*body = part[1].p;
		*len = part[1].len;
	}
	return qs != NULL ? qs : json_object_get(demo);
}

#endif
