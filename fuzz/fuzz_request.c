/* fuzz_request.c: libFuzzer target for the body of POST /v1/systemone as
 * the handler reads it: ju_parse_body() (what req_json_object() calls),
 * then question_validate_state() on its state, question_validate() on
 * its questions and, when they are valid, question_fingerprint(),
 * question_arity() and question_check_outcome() on a "value" member.
 *
 * Properties beyond "no crash, leak or undefined behaviour": a body is
 * accepted only if it is UTF-8, and every string decoded from it is; the
 * text json-c writes of it parses again to an equal value; a refusal has
 * a known code and a message, both it and its details valid UTF-8
 * whenever the body is; a fingerprint is 64 lowercase hex digits; a
 * valid question has a type and 1 to QUESTION_MAX_OPTIONS outcomes. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "question.h"

#define MAX_QUESTIONS	32	/* SERVICE_MAX_QUESTIONS default */
#define MAX_STATE_CHARS	300	/* SERVICE_MAX_STATE_CHARS: small, to be
				 * reached within -max_len */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
questions(json_object *qs, json_object *value, int utf8)
{
	struct error	 e = { 0 };
	char		 fp[65], again[65];
	size_t		 n;

	if (question_validate(qs, MAX_QUESTIONS, &e) == -1) {
		FUZZ_ASSERT(e.code == ERR_VALIDATION);
		FUZZ_ASSERT(fuzz_refusal_ok(&e, utf8));
		error_clear(&e);
		return;
	}
	question_fingerprint(qs, fp);
	FUZZ_ASSERT(strlen(fp) == 64 && strspn(fp, "0123456789abcdef") == 64);
	json_object_object_foreach(qs, name, q) {
		(void)name;
		n = question_arity(q);
		FUZZ_ASSERT(question_type(q) != Q__MAX);
		FUZZ_ASSERT(n >= 1 && n <= QUESTION_MAX_OPTIONS);
		if (value == NULL)
			continue;
		if (question_check_outcome(q, value, "value", &e) == -1) {
			FUZZ_ASSERT(e.code == ERR_VALIDATION);
			FUZZ_ASSERT(fuzz_refusal_ok(&e, utf8));
		}
		error_clear(&e);
	}
	question_fingerprint(qs, again);
	FUZZ_ASSERT(strcmp(fp, again) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error	 e = { 0 };
	json_object	*body, *again, *state, *qs, *value = NULL;
	const char	*text;
	int		 utf8 = fuzz_utf8((const char *)data, size);

	if ((body = ju_parse_body((const char *)data, size, &e)) == NULL) {
		FUZZ_ASSERT(e.code == ERR_VALIDATION);
		FUZZ_ASSERT(fuzz_refusal_ok(&e, utf8));
		error_clear(&e);
		return 0;
	}
	/* What was let in is UTF-8 (fuzz_utf8() is an oracle written apart
	 * from ju_utf8_valid()), and so is every string json-c decoded
	 * from it, escapes included. */
	FUZZ_ASSERT(utf8);
	text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	FUZZ_ASSERT(text != NULL && fuzz_utf8(text, strlen(text)));
	/* What is accepted is kept as sent: the text json-c writes of it
	 * (as a decision stores it) is accepted again and reads back equal. */
	again = ju_parse_body(text, strlen(text), &e);
	FUZZ_ASSERT(again != NULL && json_object_equal(body, again));
	json_object_put(again);
	if (json_object_object_get_ex(body, "state", &state) &&
	    question_validate_state(state, MAX_STATE_CHARS, &e) == -1) {
		FUZZ_ASSERT(e.code == ERR_VALIDATION);
		FUZZ_ASSERT(fuzz_refusal_ok(&e, utf8));
	}
	error_clear(&e);
	json_object_object_get_ex(body, "value", &value);
	if (json_object_object_get_ex(body, "questions", &qs))
		questions(qs, value, utf8);
	json_object_put(body);
	return 0;
}
