/* openai_test.c: TAP tests of the openai kind's pure parts
 * (backend_openai.c): the labels, the request of one question (every
 * fixed member, the prompt's order and texts, extra merged without
 * overriding), and backend_parse_openai() at its edges (token variants
 * merged, renormalisation, the label mass, usage, and every misfit
 * refused with a reason and nothing left behind); also the kind's
 * options and its check of a schema. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "backend.h"
#include "backend_openai.h"
#include "json_util.h"
#include "tap.h"

#define EPS	1e-12

static json_object	*choice, *score, *noul, *noul_bare;

/* A reply whose first token's top_logprobs are entries (JSON text). */
static char *
reply(const char *entries, const char *usage)
{
	static char	 body[4096];

	snprintf(body, sizeof(body), "{\"id\":\"x\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"A\"},"
	    "\"logprobs\":{\"content\":[{\"token\":\"A\",\"logprob\":-0.1,"
	    "\"top_logprobs\":[%s]}]}}]%s%s}\n", entries, usage ? "," : "",
	    usage ? usage : "");
	return body;
}

static int
parse_ok(const char *body, json_object *q, double *d, size_t n,
    struct openai_reply *r, const char *name)
{
	char	 why[120] = "";
	int	 rc;

	rc = backend_parse_openai(body, strlen(body), q, d, n, r, why,
	    sizeof(why));
	return ok(rc == 0, "%s (%s)", name, why);
}

static void
refused(const char *body, json_object *q, size_t n, const char *want,
    const char *name)
{
	struct openai_reply	 r;
	double			 d[4] = { 9, 9, 9, 9 };
	char			 why[120] = "";
	size_t			 i;
	int			 rc, clean = 1;

	rc = backend_parse_openai(body, strlen(body), q, d, n, &r, why,
	    sizeof(why));
	for (i = 0; i < n; i++)
		clean &= d[i] == 0;
	ok(rc == -1 && clean && r.mass == 0 && !r.has_usage &&
	    strstr(why, want) != NULL && strstr(why, "sk-") == NULL &&
	    strcspn(why, "\r\n") == strlen(why), "%s: refused (%s)", name,
	    why);
}

static void
test_labels(void)
{
	char	 b[OPENAI_LABEL_SIZE];

	is_str(backend_openai_label(Q_CHOICE, 0, b), "A", "choice 0: A");
	is_str(backend_openai_label(Q_CHOICE, 25, b), "Z", "choice 25: Z");
	ok(backend_openai_label(Q_CHOICE, 26, b) == NULL, "choice 26: none");
	is_str(backend_openai_label(Q_SCORE, 9, b), "9", "score 9: 9");
	is_str(backend_openai_label(Q_NOUL, 0, b), "yes", "noul true: yes");
	is_str(backend_openai_label(Q_NOUL, 1, b), "no", "noul false: no");
	ok(backend_openai_label(Q_NOUL, 2, b) == NULL, "noul 2: none");
}

/* b's options set to the JSON text t, parsed as the store parses them
 * when it reads a backend. */
static void
set_options(struct backend *b, const char *t)
{
	struct error e = { 0 };

	snprintf(b->options, sizeof(b->options), "%s", t);
	ok(bound_options(backend_kind_options(b->kind), b->options,
	    b->optval, &e) == 0, "options %s taken (%s)", t, e.message);
	error_clear(&e);
}

static void
test_request(void)
{
	struct backend	 b;
	json_object	*o, *v, *m, *state;
	const char	*sys, *user;
	char		*text;

	memset(&b, 0, sizeof(b));
	snprintf(b.kind, sizeof(b.kind), "openai");
	snprintf(b.model, sizeof(b.model), "qwen2.5-1.5b-instruct");
	set_options(&b, "{\"extra\":{\"chat_template_kwargs\":"
	    "{\"enable_thinking\":false},\"temperature\":0.7}}");
	state = parse("{\"ticket\":\"refund please\",\"n\":[1,2]}");
	text = backend_openai_request(&b, state, "dept", choice);
	ok(text != NULL && (o = parse(text)) != NULL, "request is JSON");
	is_str(json_object_get_string(json_object_object_get(o, "model")),
	    "qwen2.5-1.5b-instruct", "model: the backend's");
	v = json_object_object_get(o, "max_tokens");
	ok(json_object_is_type(v, json_type_int) &&
	    json_object_get_int(v) == 1, "max_tokens: 1");
	v = json_object_object_get(o, "temperature");
	ok(json_object_get_double(v) == 0, "temperature: 0, extra does not "
	    "override it");
	ok(json_object_get_boolean(json_object_object_get(o, "logprobs")),
	    "logprobs: true");
	ok(json_object_get_int(json_object_object_get(o, "top_logprobs")) ==
	    20, "top_logprobs: max_options' default, 20");
	ok(json_object_get_int(json_object_object_get(o, "n")) == 1, "n: 1");
	v = json_object_object_get(o, "stream");
	ok(json_object_is_type(v, json_type_boolean) &&
	    !json_object_get_boolean(v), "stream: false");
	ok(json_object_object_get_ex(o, "chat_template_kwargs", &v) &&
	    json_object_is_type(v, json_type_object), "extra merged in");
	m = json_object_object_get(o, "messages");
	ok(json_object_array_length(m) == 2, "two messages");
	is_str(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(m, 0), "role")), "system",
	    "the system message first");
	sys = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(m, 0), "content"));
	user = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(m, 1), "content"));
	ok(sys != NULL && strstr(sys, "label") != NULL,
	    "the instructions speak of labels");
	ok(user != NULL && strncmp(user, "State:\n{\"ticket\":\"refund "
	    "please\",\"n\":[1,2]}\n\n", 40) == 0,
	    "the state first, as compact JSON");
	ok(user != NULL && strstr(user, "Question: dept\nWhich team?") !=
	    NULL, "then the question and its instructions");
	ok(user != NULL && strstr(user, "\nA: billing: money\n"
	    "B: technical: {\"area\":\"it\"}\nC: sales\n") != NULL,
	    "options labelled A, B, C in order, key and description");
	ok(user != NULL && strstr(user, "alone: A, B or C.") != NULL,
	    "told to answer with the label alone");
	json_object_put(o);
	free(text);

	set_options(&b, "{\"max_options\":5}");
	json_object_put(state);
	state = json_object_new_string("plain text");
	text = backend_openai_request(&b, state, "urg", score);
	o = parse(text);
	ok(json_object_get_int(json_object_object_get(o, "top_logprobs")) ==
	    5, "top_logprobs: the backend's max_options");
	user = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(o, "messages"),
	    1), "content"));
	ok(strncmp(user, "State:\nplain text\n\n", 19) == 0,
	    "a string state as is");
	ok(strstr(user, "\n0: low\n1: mid\n2: high\n") != NULL,
	    "score levels labelled 0..k-1");
	json_object_put(o);
	free(text);

	text = backend_openai_request(&b, state, "hot", noul);
	o = parse(text);
	user = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(o, "messages"),
	    1), "content"));
	ok(strstr(user, "\nyes: it burns\nno: it does not\n") != NULL &&
	    strstr(user, "alone: yes or no.") != NULL,
	    "noul yes/no with the true/false descriptions");
	json_object_put(o);
	free(text);
	text = backend_openai_request(&b, state, "bare", noul_bare);
	ok(text != NULL && strstr(text, "\\nyes\\nno\\n") != NULL,
	    "noul without descriptions: the labels alone");
	free(text);
	json_object_put(state);
}

static void
test_parse(void)
{
	struct openai_reply	 r;
	double			 d[3];
	char			 entries[512];

	/* A 0.5 + " a" 0.1 + "A " 0.1 = 0.7, B 0.2, c absent; others
	 * ignored. */
	snprintf(entries, sizeof(entries),
	    "{\"token\":\"A\",\"logprob\":%.17g},"
	    "{\"token\":\" a\",\"logprob\":%.17g},"
	    "{\"token\":\"A \\n\",\"logprob\":%.17g},"
	    "{\"token\":\"B\",\"logprob\":%.17g},"
	    "{\"token\":\"AB\",\"logprob\":-3},{\"token\":\"Z\","
	    "\"logprob\":-3},{\"logprob\":-1},{\"token\":\"C\"},"
	    "{\"token\":7,\"logprob\":-1},5", log(0.5), log(0.1), log(0.1),
	    log(0.2));
	if (parse_ok(reply(entries, "\"usage\":{\"prompt_tokens\":41,"
	    "\"completion_tokens\":1,\"total_tokens\":42}"), choice, d, 3, &r,
	    "a choice reply parses")) {
		is_num(d[0], 0.7 / 0.9, 1e-9, "A, a and 'A ' merged, "
		    "renormalised");
		is_num(d[1], 0.2 / 0.9, 1e-9, "B renormalised");
		is_num(d[2], 0, EPS, "C absent: 0");
		is_num(r.mass, 0.9, 1e-9, "the label mass before "
		    "renormalising");
		ok(r.has_usage && r.prompt_tokens == 41 &&
		    r.completion_tokens == 1, "usage read");
	}
	if (parse_ok(reply("{\"token\":\" Yes\",\"logprob\":-0.5},"
	    "{\"token\":\"NO\",\"logprob\":-1.5}", NULL), noul, d, 2, &r,
	    "a noul reply parses")) {
		is_num(d[0], exp(-0.5) / (exp(-0.5) + exp(-1.5)), 1e-12,
		    "P(true) from yes");
		is_num(d[0] + d[1], 1, 1e-12, "sums to 1");
		ok(!r.has_usage, "no usage: none");
	}
	if (parse_ok(reply("{\"token\":\"2\",\"logprob\":1e-7},"
	    "{\"token\":\"Level\",\"logprob\":-2}", NULL), score, d, 3,
	    &r, "a score reply parses (a logprob of 1e-7 counts as 0)")) {
		is_num(d[2], 1, 1e-12, "level 2");
		is_num(r.mass, 1, 1e-12, "mass with p capped at 1");
	}
	refused(reply("{\"token\":\"2\",\"logprob\":0.001}", NULL), score,
	    3, "logprob", "a logprob above 0");
	refused(reply("{\"token\":\"A\",\"logprob\":-0.1}", "\"usage\":{"
	    "\"prompt_tokens\":-1,\"completion_tokens\":1}"), choice, 3,
	    "usage prompt_tokens", "a negative usage count");
	refused(reply("{\"token\":\"A\",\"logprob\":-0.1}", "\"usage\":{"
	    "\"prompt_tokens\":9223372036854775806,\"completion_tokens\":1}"),
	    choice, 3, "usage prompt_tokens", "a usage count past 10^9");
	refused(reply("{\"token\":\"A\",\"logprob\":-0.1}", "\"usage\":{"
	    "\"prompt_tokens\":1,\"completion_tokens\":1.5}"), choice, 3,
	    "usage completion_tokens", "a fractional usage count");
	if (parse_ok(reply("{\"token\":\"A\",\"logprob\":-0.9163},"
	    "{\"token\":\"A\",\"logprob\":-0.9163},"
	    "{\"token\":\"A\",\"logprob\":-0.9163},"
	    "{\"token\":\"B\",\"logprob\":-0.9163}", NULL), choice, d, 3,
	    &r, "a token repeated: parses")) {
		is_num(d[0], 0.5, 1e-12, "the repeated token counts once");
		is_num(r.mass, 2 * exp(-0.9163), 1e-12, "and so does its mass");
	}
	refused(reply("{\"token\":\"A\",\"logprob\":-0.1},"
	    "{\"token\":\" A\",\"logprob\":-0.1}", NULL), choice, 3,
	    "above 1", "distinct tokens of a label summing past 1");
	refused("{\"Bearer sk-secret-1\\u0000x\":1}", choice, 3, "\\u0000",
	    "a key with \\u0000 reflected");
	refused("{\"Bearer sk-secret-1\":NaN}", choice, 3, "NaN",
	    "a key reflected, its value NaN");
	refused("{\"Bearer sk-secret-1\":1e999}", choice, 3, "out of range",
	    "a key reflected, its value 1e999");
	refused("{\"Bearer sk-secret-1", choice, 3, "not valid JSON",
	    "a key reflected, cut short");

	refused(reply("{\"token\":\"A\",\"logprob\":-1.2},"
	    "{\"token\":\"x\",\"logprob\":-0.4}", NULL), choice, 3,
	    "label mass 0.301 is below 0.5", "mass 0.3");
	refused(reply("{\"token\":\"x\",\"logprob\":-0.1}", NULL), choice, 3,
	    "no label", "no label among the tokens");
	refused(reply("", NULL), choice, 3, "no label", "no tokens");
	refused("{\"choices\":[{\"message\":{\"content\":\"A\"}}]}", choice,
	    3, "no logprobs", "logprobs missing");
	refused("{\"choices\":[{\"logprobs\":null}]}", choice, 3,
	    "no logprobs", "logprobs null");
	refused("{\"choices\":[{\"logprobs\":{\"content\":[]}}]}", choice, 3,
	    "no top_logprobs", "no first token");
	refused("{\"choices\":[]}", choice, 3, "no choices", "no choices");
	refused("{\"error\":{\"message\":\"x\"}}", choice, 3, "no choices",
	    "an error object");
	refused("[1]", choice, 3, "not an object", "an array");
	refused("{\"choices\":", choice, 3, "not valid JSON", "cut short");
	refused("garbage\r\nmore", choice, 3, "not valid JSON", "garbage");
	refused("", choice, 3, "empty", "empty");
	refused(reply("{\"token\":\"A\",\"logprob\":1e999}", NULL), choice, 3,
	    "out of range", "a number json-c would not keep");
	refused(reply("{\"token\":\"A\",\"logprob\":-0.1}", NULL), choice, 2,
	    "not valid", "arity that is not the question's");
}

static void
test_kind(void)
{
	struct backend	 b;
	struct error	 e = { 0 };
	json_object	*qs, *in, *v, *o;
	const struct backend_kind *k = backend_kind_find("openai"), *kk;
	size_t		 i, n;

	for (i = 0; (kk = backend_kind_at(i)) != NULL; i++) {
		for (n = 0; kk->options != NULL && kk->options[n].name; n++)
			;
		ok(n <= BACKEND_OPTIONS_MAX, "kind %s: %zu options, at most "
		    "%d", kk->name, n, BACKEND_OPTIONS_MAX);
	}

	ok(k == &backend_kind_openai && k->remote, "openai is registered, "
	    "remote");
	memset(&b, 0, sizeof(b));
	snprintf(b.name, sizeof(b.name), "local");
	snprintf(b.kind, sizeof(b.kind), "openai");
	ok(backend_option_long(&b, "max_options") == 20 &&
	    backend_option_long(&b, "concurrency") == 8,
	    "defaults: 20 options, 8 in flight");
	qs = parse("{\"big\":{\"type\":\"choice\",\"criteria\":{\"a\":null,"
	    "\"b\":null,\"c\":null}}}");
	ok(backend_check_schema(&b, qs, &e) == 0, "3 options under 20: "
	    "published");
	set_options(&b, "{\"max_options\":2}");
	ok(backend_check_schema(&b, qs, &e) == -1 && e.code ==
	    ERR_VALIDATION && strstr(e.message, "'big'") != NULL &&
	    strstr(e.message, "2") != NULL, "3 options over 2: refused, "
	    "naming the question and the limit (%s)", e.message);
	error_clear(&e);

	in = parse("{\"max_options\":27}");
	ok(backend_read_options(k, in, 0, &b, &e) == -1 && e.code ==
	    ERR_VALIDATION, "max_options 27 refused (%s)", e.message);
	error_clear(&e);
	json_object_put(in);
	in = parse("{\"max_options\":26,\"concurrency\":null,\"extra\":"
	    "{\"top_p\":1}}");
	ok(backend_read_options(k, in, 1, &b, &e) == 0 &&
	    backend_option_long(&b, "max_options") == 26 &&
	    backend_option_long(&b, "concurrency") == 8 &&
	    strcmp(b.options, "{\"max_options\":26,\"extra\":{\"top_p\":1}}")
	    == 0, "options read into one JSON text; null is the default (%s)",
	    b.options);
	json_object_put(in);
	v = backend_option_json(&b, "extra");
	ok(v != NULL && json_object_is_type(v, json_type_object) &&
	    json_object_object_length(v) == 1, "extra: the object set");
	json_object_put(v);
	ok(backend_option_json(&b, "max_options") == NULL &&
	    backend_option_json(&b, "nonesuch") == NULL, "no JSON option "
	    "of another type or name");

	/* An update keeps what it does not name, and null drops one. */
	in = parse("{\"concurrency\":3}");
	ok(backend_read_options(k, in, 1, &b, &e) == 0 &&
	    backend_option_long(&b, "max_options") == 26 &&
	    backend_option_long(&b, "concurrency") == 3, "an update of "
	    "concurrency keeps max_options (%s)", b.options);
	json_object_put(in);
	in = parse("{\"max_options\":null,\"extra\":null}");
	ok(backend_read_options(k, in, 1, &b, &e) == 0 &&
	    backend_option_long(&b, "max_options") == 20 &&
	    strcmp(b.options, "{\"concurrency\":3}") == 0, "null: back to "
	    "the default, not stored (%s)", b.options);
	json_object_put(in);
	in = parse("{\"concurrency\":null}");
	ok(backend_read_options(k, in, 1, &b, &e) == 0 &&
	    b.options[0] == '\0' && b.optval[1] == 0, "none left: no text");
	json_object_put(in);
	in = parse("{\"max_options\":4}");
	ok(backend_read_options(k, in, 0, &b, &e) == 0, "added with 4");
	json_object_put(in);
	o = ju_obj();
	backend_options_json(&b, o);
	ok(json_object_get_int(json_object_object_get(o, "max_options")) ==
	    4 && json_object_object_get_ex(o, "concurrency", &v) &&
	    v == NULL && json_object_object_get_ex(o, "extra", &v) &&
	    v == NULL, "shown: max_options 4, the others null (defaults)");
	json_object_put(o);
	in = parse("{\"extra\":{\"a\":1}}");
	ok(backend_read_options(k, in, 0, &b, &e) == 0 &&
	    strcmp(b.options, "{\"extra\":{\"a\":1}}") == 0, "an add starts "
	    "from no options (%s)", b.options);
	json_object_put(in);
	in = parse("{\"max_options\":4}");
	ok(backend_read_options(k, in, 1, &b, &e) == 0, "max_options 4");
	json_object_put(in);
	snprintf(b.model, sizeof(b.model), "m");
	ok(backend_check_add(k, NULL, &b, &e) == 0, "extra with its own "
	    "members: accepted");
	set_options(&b, "{\"extra\":{\"logprobs\":false}}");
	ok(backend_check_add(k, NULL, &b, &e) == -1 && strstr(e.message,
	    "logprobs") != NULL, "extra overriding logprobs: refused");
	error_clear(&e);
	in = parse("{\"concurrency\":2}");
	ok(backend_read_options(backend_kind_find("systemone"), in, 0, &b,
	    &e) == -1 && strstr(e.message, "concurrency") != NULL,
	    "an openai option refused for a systemone backend");
	error_clear(&e);
	json_object_put(in);
	json_object_put(qs);
}

int
main(void)
{
	choice = parse("{\"type\":\"choice\",\"instructions\":\"Which team?\","
	    "\"criteria\":{\"billing\":\"money\",\"technical\":{\"area\":"
	    "\"it\"},\"sales\":null}}");
	score = parse("{\"type\":\"score\",\"criteria\":[\"low\",\"mid\","
	    "\"high\"]}");
	noul = parse("{\"type\":\"noul\",\"criteria\":{\"true\":\"it burns\","
	    "\"false\":\"it does not\"}}");
	noul_bare = parse("{\"type\":\"noul\"}");
	test_labels();
	test_request();
	test_parse();
	test_kind();
	json_object_put(choice);
	json_object_put(score);
	json_object_put(noul);
	json_object_put(noul_bare);
	backend_cleanup();
	return tap_done();
}
