/* fuzz_fingerprint.c: libFuzzer target for question_fingerprint(), the
 * structural hash that matches inline questions to published schema
 * versions.  The input is a questions map; when it validates, these must
 * hold (a violation traps):
 *   - a copy with its questions, their members and the option keys of
 *     every choice and noul in another order (random, seeded by the
 *     input), and every instruction and description text changed, still
 *     validates and has the same fingerprint;
 *   - adding a question, an option to a choice or a level to a score
 *     changes the fingerprint, and taking it away again restores it. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "question.h"

#define MAX_QUESTIONS	1000	/* SERVICE_MAX_QUESTIONS at its highest */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static uint64_t	 rng;

/* Another text in place of v: texts never enter the fingerprint. */
static json_object *
other_text(json_object *v)
{
	const char	*s;
	char		*t;
	json_object	*o;
	size_t		 len;

	if (!json_object_is_type(v, json_type_string))
		return json_object_new_string("another text");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if ((t = malloc(len + 2)) == NULL)
		abort();
	memcpy(t, s, len);
	t[len] = '!';
	t[len + 1] = '\0';
	o = json_object_new_string_len(t, (int)len + 1);
	free(t);
	return o;
}

/* A new object with obj's members in a random order, each value given
 * by fn(key, value, arg). */
static json_object *
shuffled(json_object *obj, json_object *(*fn)(const char *, json_object *,
    void *), void *arg)
{
	size_t		 n = (size_t)json_object_object_length(obj), i = 0, j;
	const char	**keys, *k;
	json_object	**vals, *v, *copy;

	keys = calloc(n + 1, sizeof(*keys));
	vals = calloc(n + 1, sizeof(*vals));
	if (keys == NULL || vals == NULL || (copy = json_object_new_object())
	    == NULL)
		abort();
	json_object_object_foreach(obj, key, val) {
		keys[i] = key;
		vals[i++] = val;
	}
	for (i = n; i > 1; i--) {		/* Fisher-Yates */
		j = (size_t)(fuzz_next(&rng) % i);
		k = keys[i - 1];
		keys[i - 1] = keys[j];
		keys[j] = k;
		v = vals[i - 1];
		vals[i - 1] = vals[j];
		vals[j] = v;
	}
	for (i = 0; i < n; i++)
		json_object_object_add(copy, keys[i], fn(keys[i], vals[i], arg));
	free(keys);
	free(vals);
	return copy;
}

static json_object *
option(const char *key, json_object *v, void *arg)
{
	(void)key;
	(void)arg;
	return other_text(v);
}

static json_object *
member(const char *key, json_object *v, void *arg)
{
	enum qtype	 t = *(enum qtype *)arg;

	if (strcmp(key, "instructions") == 0)
		return other_text(v);
	if (strcmp(key, "criteria") == 0 && t != Q_SCORE &&
	    json_object_is_type(v, json_type_object))
		return shuffled(v, option, NULL);
	return json_object_get(v);
}

static json_object *
question(const char *name, json_object *q, void *arg)
{
	enum qtype	 t = question_type(q);

	(void)name;
	(void)arg;
	return shuffled(q, member, &t);
}

/* A key that obj does not hold: base, then base with 'x's. */
static void
unused_key(json_object *obj, const char *base, char *buf, size_t size)
{
	size_t	 len;

	snprintf(buf, size, "%s", base);
	while (json_object_object_get_ex(obj, buf, NULL) &&
	    (len = strlen(buf)) + 1 < size) {
		buf[len] = 'x';
		buf[len + 1] = '\0';
	}
	FUZZ_ASSERT(!json_object_object_get_ex(obj, buf, NULL));
}

/* fp changes while obj holds a new key, and comes back without it. */
static void
added_key_counts(json_object *qs, json_object *obj, json_object *value,
    const char *fp)
{
	char	 key[64], now[65];

	unused_key(obj, "fuzz-added", key, sizeof(key));
	json_object_object_add(obj, key, value);
	question_fingerprint(qs, now);
	FUZZ_ASSERT(strcmp(now, fp) != 0);
	json_object_object_del(obj, key);
	question_fingerprint(qs, now);
	FUZZ_ASSERT(strcmp(now, fp) == 0);
}

static void
structure_counts(json_object *qs, const char *fp)
{
	json_object	*crit;
	char		 now[65];
	size_t		 n;
	int		 choice = 0, score = 0;

	added_key_counts(qs, qs, json_tokener_parse("{\"type\":\"noul\"}"),
	    fp);
	json_object_object_foreach(qs, name, q) {
		(void)name;
		if (!json_object_object_get_ex(q, "criteria", &crit))
			continue;
		if (question_type(q) == Q_CHOICE && !choice++)
			added_key_counts(qs, crit, NULL, fp);
		if (question_type(q) == Q_SCORE && !score++) {
			n = json_object_array_length(crit);
			json_object_array_add(crit,
			    json_object_new_string("fuzz-added"));
			question_fingerprint(qs, now);
			FUZZ_ASSERT(strcmp(now, fp) != 0);
			json_object_array_del_idx(crit, n, 1);
			question_fingerprint(qs, now);
			FUZZ_ASSERT(strcmp(now, fp) == 0);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part	 all = { (const char *)data, size };
	struct error		 e = { 0 };
	json_object		*qs, *copy;
	char			 fp[65], fp2[65];

	if ((qs = fuzz_json(&all)) == NULL)
		return 0;
	if (question_validate(qs, MAX_QUESTIONS, &e) == -1) {
		error_clear(&e);
		json_object_put(qs);
		return 0;
	}
	rng = fuzz_seed(data, size);
	question_fingerprint(qs, fp);

	copy = shuffled(qs, question, NULL);
	FUZZ_ASSERT(question_validate(copy, MAX_QUESTIONS, &e) == 0);
	question_fingerprint(copy, fp2);
	FUZZ_ASSERT(strcmp(fp, fp2) == 0);
	json_object_put(copy);

	structure_counts(qs, fp);
	json_object_put(qs);
	return 0;
}
