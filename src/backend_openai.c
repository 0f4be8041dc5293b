/* backend_openai.c: the "openai" backend kind (doc/design.md, section
 * 7.1; README, "OpenAI-compatible backends"): any server speaking the OpenAI chat-completions contract
 * with log-probabilities turned into a typed evaluator.
 *
 * One chat completion per question, asking for one token with its
 * top_logprobs (N = the backend's max_options): the messages hold the
 * fixed instructions (a system message), then the state, then the
 * question with its answers labelled by one-token labels (choice A, B,
 * ...; score 0 ... k-1; noul yes, no), so that a server's prefix cache
 * serves every question of an evaluation.  The distribution is the
 * labels' share of the first token's probability mass, renormalised; a
 * mass below OPENAI_MIN_LABEL_MASS is an answer that does not fit.
 *
 * For one replica, ask() sends every question at once through the
 * shared HTTP client (backend_http_post_many(), at most the backend's
 * concurrency in flight) and parses each reply as it comes; the
 * bodies are made once per evaluation, in begin().  The replica loop
 * (rotation, failover, cool-downs, the key's variable) is backend.c's.
 * The label, request and parser functions are pure (no I/O, no global
 * state), for the unit tests and the fuzzer. */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend_http.h"
#include "backend_openai.h"
#include "buf.h"
#include "json_util.h"

#define PROMPT_MAX	(16u << 20)	/* bytes of one question's prompt */

/* The request's own members: extra may not name them. */
static const char *const fixed[] = {
	"model", "messages", "max_tokens", "temperature", "logprobs",
	"top_logprobs", "n", "stream",
};
#define NFIXED	(sizeof(fixed) / sizeof(fixed[0]))

/* The system message, the same for every question. */
static const char instructions[] =
    "You evaluate a state. You are given the state, then one question "
    "about it with its possible answers, each after a label. Reply with "
    "the label of the answer that fits the state best, and with nothing "
    "else: no explanation, no punctuation.";

static const char *const noul_labels[] = { "yes", "no" };

const char *
backend_openai_label(enum qtype t, size_t i, char buf[OPENAI_LABEL_SIZE])
{
	switch (t) {
	case Q_CHOICE:
		if (i >= OPENAI_OPTIONS_MAX)
			return NULL;
		snprintf(buf, OPENAI_LABEL_SIZE, "%c", (char)('A' + i));
		return buf;
	case Q_SCORE:
		if (i >= QUESTION_MAX_LEVELS)
			return NULL;
		snprintf(buf, OPENAI_LABEL_SIZE, "%zu", i);
		return buf;
	case Q_NOUL:
		if (i >= 2)
			return NULL;
		snprintf(buf, OPENAI_LABEL_SIZE, "%s", noul_labels[i]);
		return buf;
	default:
		return NULL;
	}
}

/* ------------------------------------------------------------ request */

/* Appends free text as the prompt shows it: a string as is, an object
 * or an array as compact JSON, nothing for null.  BUF_OK or why not. */
static enum buf_rc
add_text(struct buf *p, const char *before, json_object *o)
{
	const char	*text;
	enum buf_rc	 rc;

	if (o == NULL)
		return BUF_OK;
	if (json_object_is_type(o, json_type_string))
		text = json_object_get_string(o);
	else if ((text = json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)) == NULL)
		return BUF_NO_MEMORY;
	if ((rc = buf_adds(p, before)) != BUF_OK)
		return rc;
	return buf_adds(p, text);
}

/* One answer's line: "LABEL: key: description" (key and description as
 * there are). */
static enum buf_rc
add_answer(struct buf *p, const char *label, const char *key,
    json_object *desc)
{
	enum buf_rc	 rc;

	if ((rc = buf_adds(p, "\n")) != BUF_OK ||
	    (rc = buf_adds(p, label)) != BUF_OK)
		return rc;
	if (key != NULL && ((rc = buf_adds(p, ": ")) != BUF_OK ||
	    (rc = buf_adds(p, key)) != BUF_OK))
		return rc;
	return add_text(p, ": ", desc);
}

/* The user message: the state, then the question and its answers. */
static enum buf_rc
prompt(struct buf *p, json_object *state, const char *name,
    json_object *q)
{
	json_object	*instr = NULL, *criteria = NULL, *desc;
	enum qtype	 t = question_type(q);
	char		 label[OPENAI_LABEL_SIZE];
	size_t		 i = 0, n = question_arity(q);
	enum buf_rc	 rc;

	json_object_object_get_ex(q, "instructions", &instr);
	json_object_object_get_ex(q, "criteria", &criteria);
	if ((rc = add_text(p, "State:\n", state)) != BUF_OK ||
	    (rc = buf_adds(p, "\n\nQuestion: ")) != BUF_OK ||
	    (rc = buf_adds(p, name)) != BUF_OK ||
	    (rc = add_text(p, "\n", instr)) != BUF_OK ||
	    (rc = buf_adds(p, "\n\nAnswers:")) != BUF_OK)
		return rc;
	switch (t) {
	case Q_CHOICE: {
		json_object_object_foreach(criteria, key, d) {
			if (i == n || backend_openai_label(t, i++, label) ==
			    NULL)
				break;
			if ((rc = add_answer(p, label, key, d)) != BUF_OK)
				return rc;
		}
		break;
	}
	case Q_SCORE:
		for (i = 0; i < n && backend_openai_label(t, i, label); i++)
			if ((rc = add_answer(p, label, NULL,
			    json_object_array_get_idx(criteria, i))) != BUF_OK)
				return rc;
		break;
	default:
		for (i = 0; i < 2 && backend_openai_label(t, i, label); i++) {
			desc = NULL;
			if (json_object_is_type(criteria, json_type_object))
				json_object_object_get_ex(criteria,
				    i == 0 ? "true" : "false", &desc);
			if ((rc = add_answer(p, label, NULL, desc)) != BUF_OK)
				return rc;
		}
		break;
	}
	if ((rc = buf_adds(p, "\n\nReply with the label alone: ")) != BUF_OK)
		return rc;
	for (i = 0; i < n && backend_openai_label(t, i, label); i++)
		if ((rc = buf_adds(p, i == 0 ? "" : i + 1 == n ? " or " :
		    ", ")) != BUF_OK || (rc = buf_adds(p, label)) != BUF_OK)
			return rc;
	return buf_adds(p, ".");
}

/* {"role": role, "content": content}; NULL out of memory. */
static json_object *
message(const char *role, const char *content, size_t len)
{
	json_object	*m = ju_obj(), *c;

	if ((c = json_object_new_string_len(content, (int)len)) == NULL) {
		json_object_put(m);
		return NULL;
	}
	ju_add_str(m, "role", role);
	ju_add(m, "content", c);
	return m;
}

char *
backend_openai_request(const struct backend *b, json_object *state,
    const char *name, json_object *q)
{
	json_object	*o, *msgs, *m, *extra = NULL;
	struct buf	 p;
	const char	*text;
	char		*copy = NULL;

	buf_init(&p, PROMPT_MAX);
	if (prompt(&p, state, name, q) != BUF_OK || p.len > INT32_MAX) {
		buf_free(&p);
		return NULL;
	}
	o = ju_obj();
	msgs = ju_arr();
	ju_add(o, "model", ju_string(b->model));
	ju_add(o, "messages", msgs);
	ju_push(msgs, message("system", instructions, strlen(instructions)));
	if ((m = message("user", p.p, p.len)) == NULL)
		goto done;
	ju_push(msgs, m);
	ju_add(o, "max_tokens", ju_int(1));
	ju_add(o, "temperature", ju_int(0));
	ju_add(o, "logprobs", ju_bool(1));
	ju_add(o, "top_logprobs",
	    ju_int(backend_option_long(b, "max_options")));
	ju_add(o, "n", ju_int(1));
	ju_add(o, "stream", ju_bool(0));
	if ((extra = backend_option_json(b, "extra")) != NULL &&
	    json_object_is_type(extra, json_type_object)) {
		json_object_object_foreach(extra, key, v)
			if (!json_object_object_get_ex(o, key, NULL))
				ju_add(o, key, json_object_get(v));
	}
	if ((text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE)) != NULL)
		copy = strdup(text);
done:
	json_object_put(extra);
	json_object_put(o);
	buf_free(&p);
	return copy;
}

/* ------------------------------------------------------------- parser */

/* obj's member key if it is of type t, else NULL. */
static json_object *
member(json_object *obj, const char *key, json_type t)
{
	json_object	*v;

	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, t))
		return NULL;
	return v;
}

/* The first element of arr if it is an array holding one, else NULL. */
static json_object *
first(json_object *arr)
{
	if (arr == NULL || json_object_array_length(arr) == 0)
		return NULL;
	return json_object_array_get_idx(arr, 0);
}

/* The label of question type t (n answers) that token (len bytes) is,
 * whitespace around it removed and case folded: its index, or -1. */
static long
label_index(enum qtype t, size_t n, const char *token, size_t len)
{
	char	 label[OPENAI_LABEL_SIZE];
	size_t	 i;

	while (len > 0 && isspace((unsigned char)token[0]))
		token++, len--;
	while (len > 0 && isspace((unsigned char)token[len - 1]))
		len--;
	for (i = 0; i < n && backend_openai_label(t, i, label) != NULL; i++)
		if (strlen(label) == len && strncasecmp(label, token,
		    len) == 0)
			return (long)i;
	return -1;
}

/* A token already counted: an entry of top_logprobs that repeats the
 * text of one before it counts once (the first); distinct tokens of one
 * label (" A", "a") are summed. */
struct seen {
	const char	*text[OPENAI_LABEL_TOKENS_MAX];	/* borrowed */
	size_t		 len[OPENAI_LABEL_TOKENS_MAX];
	size_t		 n;
};

/* 1 if token (len bytes) was counted before, else 0 and it is noted;
 * -1 when there are more label tokens than can be noted. */
static int
seen_before(struct seen *s, const char *token, size_t len)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (s->len[i] == len && memcmp(s->text[i], token, len) == 0)
			return 1;
	if (s->n == OPENAI_LABEL_TOKENS_MAX)
		return -1;
	s->text[s->n] = token;
	s->len[s->n++] = len;
	return 0;
}

/* Adds the masses of top's entries to dist: 0, or -1 with why set for
 * a logprob above 0 (a probability above 1) or too many label tokens.
 * An entry without a string token or a numeric logprob is skipped. */
static int
add_masses(json_object *top, enum qtype t, double *dist, size_t n,
    char *why, size_t whylen)
{
	struct seen	 s = { .n = 0 };
	json_object	*entry, *token, *lp;
	const char	*text;
	double		 v;
	size_t		 i, len = json_object_array_length(top), tlen;
	long		 j;
	int		 dup;

	for (i = 0; i < len; i++) {
		entry = json_object_array_get_idx(top, i);
		if ((token = member(entry, "token", json_type_string)) ==
		    NULL || !json_object_object_get_ex(entry, "logprob", &lp) ||
		    (!json_object_is_type(lp, json_type_double) &&
		    !json_object_is_type(lp, json_type_int)))
			continue;
		v = json_object_get_double(lp);
		if (!isfinite(v) || v > OPENAI_LOGPROB_SLACK)
			return backend_reason(why, whylen, "top_logprobs entry "
			    "%zu has a logprob that is not a number <= 0", i);
		text = json_object_get_string(token);
		tlen = (size_t)json_object_get_string_len(token);
		if ((j = label_index(t, n, text, tlen)) < 0)
			continue;
		if ((dup = seen_before(&s, text, tlen)) == -1)
			return backend_reason(why, whylen, "more than %d label "
			    "tokens", OPENAI_LABEL_TOKENS_MAX);
		if (!dup)
			dist[j] += exp(v < 0 ? v : 0);	/* p <= 1 */
	}
	return 0;
}

int
backend_parse_openai(const char *body, size_t len, json_object *q,
    double *dist, size_t n, struct openai_reply *r, char *why,
    size_t whylen)
{
	json_object	*root, *c0, *lp, *top, *u = NULL;
	const char	*lossy;
	enum qtype	 t = question_type(q);
	double		 mass = 0;
	size_t		 i;
	int		 rc = -1;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n; i++)
		dist[i] = 0;
	if (t == Q__MAX || n == 0 || n != question_arity(q))
		return backend_reason(why, whylen, "the question is not valid");
	while (len > 0 && strchr(" \t\r\n", body[len - 1]) != NULL &&
	    body[len - 1] != '\0')
		len--;
	/* The body is the upstream's: the reason never quotes it. */
	if ((root = backend_parse_json(body, len, why, whylen)) == NULL)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		backend_reason(why, whylen, "not an object");
		goto done;
	}
	if ((lossy = ju_lossy(body, len, NULL, 0)) != NULL) {
		backend_reason(why, whylen, "%s", lossy);
		goto done;
	}
	if ((c0 = first(member(root, "choices", json_type_array))) == NULL ||
	    !json_object_is_type(c0, json_type_object)) {
		backend_reason(why, whylen, "no choices");
		goto done;
	}
	if ((lp = member(c0, "logprobs", json_type_object)) == NULL) {
		backend_reason(why, whylen, "no logprobs");
		goto done;
	}
	if ((top = member(first(member(lp, "content", json_type_array)),
	    "top_logprobs", json_type_array)) == NULL) {
		backend_reason(why, whylen, "no top_logprobs for the first token");
		goto done;
	}
	if (add_masses(top, t, dist, n, why, whylen) == -1)
		goto done;
	for (i = 0; i < n; i++)
		mass += dist[i];
	if (!(mass > 0)) {
		backend_reason(why, whylen, "no label among the top tokens");
		goto done;
	}
	if (mass < OPENAI_MIN_LABEL_MASS) {
		backend_reason(why, whylen, "label mass %.3f is below %.1f", mass,
		    OPENAI_MIN_LABEL_MASS);
		goto done;
	}
	if (mass > 1 + OPENAI_MASS_SLACK) {
		backend_reason(why, whylen, "label mass %.3f is above 1", mass);
		goto done;
	}
	json_object_object_get_ex(root, "usage", &u);
	if ((r->has_usage = backend_usage_read(u, "prompt_tokens",
	    "completion_tokens", &r->prompt_tokens, &r->completion_tokens,
	    why, whylen)) == -1)
		goto done;
	for (i = 0; i < n; i++)
		dist[i] /= mass;
	r->mass = mass;
	rc = 0;
done:
	json_object_put(root);
	if (rc == -1) {
		memset(r, 0, sizeof(*r));
		for (i = 0; i < n; i++)
			dist[i] = 0;
	}
	return rc;
}

/* ---------------------------------------------------------------- kind */

/* What one evaluation keeps from begin() to end(). */
struct call {
	size_t			  n;		/* questions */
	const char		**names;	/* owned array; borrowed
						 * names of the questions */
	json_object		**qs;		/* owned array; borrowed
						 * questions */
	char			**bodies;	/* owned: one request each */
	struct buf		 *resp;		/* owned: one answer each */
	struct backend_http_post *posts;	/* owned */
	struct curl_slist	 *headers;	/* owned */
	struct backend_answer	 *out;		/* borrowed, in ask() */
	int			  usage_all;	/* every reply had usage */
};

static void
openai_end(struct backend_call *c)
{
	struct call	*k = c->priv;
	size_t		 i;

	if (k == NULL)
		return;
	for (i = 0; i < k->n; i++) {
		if (k->bodies != NULL)
			free(k->bodies[i]);
		if (k->resp != NULL)
			buf_free(&k->resp[i]);
	}
	free(k->bodies);
	free(k->resp);
	free(k->posts);
	free(k->names);
	free(k->qs);
	backend_http_headers_free(k->headers);
	free(k);
	c->priv = NULL;
}

static int
openai_begin(struct backend_call *c, struct error *e)
{
	struct call	*k;
	size_t		 i = 0, n;

	n = (size_t)json_object_object_length(c->questions);
	if ((c->priv = k = calloc(1, sizeof(*k))) == NULL ||
	    (k->names = calloc(n + 1, sizeof(*k->names))) == NULL ||
	    (k->qs = calloc(n + 1, sizeof(*k->qs))) == NULL ||
	    (k->bodies = calloc(n + 1, sizeof(*k->bodies))) == NULL ||
	    (k->resp = calloc(n + 1, sizeof(*k->resp))) == NULL ||
	    (k->posts = calloc(n + 1, sizeof(*k->posts))) == NULL)
		goto oom;
	k->n = n;
	json_object_object_foreach(c->questions, name, q) {
		if (i == n)
			break;
		k->names[i] = name;
		k->qs[i] = q;
		buf_init(&k->resp[i], BACKEND_HTTP_MAX_ANSWER);
		if ((k->bodies[i] = backend_openai_request(c->b, c->state,
		    name, q)) == NULL)
			goto oom;
		k->posts[i].body = k->bodies[i];
		k->posts[i].resp = &k->resp[i];
		i++;
	}
	if ((k->headers = backend_http_headers(c->b)) != NULL &&
	    backend_http_init() == 0)
		return 0;
oom:
	openai_end(c);
	error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	e->retry_after_ms = 1000;
	return -1;
}

/* backend_http_post_many()'s done(): reads the i-th reply. */
static int
openai_done(void *arg, size_t i, struct backend_attempt *at)
{
	struct call		*k = arg;
	struct backend_answer	*out = k->out;
	struct openai_reply	 r;
	char			 why[120];

	if (backend_parse_openai(k->resp[i].p, k->resp[i].len, k->qs[i],
	    out->dist[i], question_arity(k->qs[i]), &r, why,
	    sizeof(why)) == -1) {
		at->verdict = BV_ANSWERED;
		at->outcome = MO_UNFIT;
		snprintf(at->reason, sizeof(at->reason), "answer to '%.40s' "
		    "does not fit: %.80s", k->names[i], why);
		return -1;
	}
	out->label_mass[i] = r.mass;
	k->usage_all &= r.has_usage;
	if (backend_usage_add(out, r.prompt_tokens, r.completion_tokens) ==
	    -1) {
		at->verdict = BV_ANSWERED;
		at->outcome = MO_UNFIT;
		snprintf(at->reason, sizeof(at->reason), "the answers do not "
		    "fit: their usage sums past %lld tokens",
		    (long long)BACKEND_USAGE_MAX);
		return -1;
	}
	return 0;
}

static int
openai_ask(struct backend_call *c, const char *replica,
    struct backend_answer *out, struct backend_attempt *at)
{
	struct call	*k = c->priv;
	char		 url[sizeof(c->b->urls[0]) + sizeof(OPENAI_ENDPOINT)];
	size_t		 i;

	memset(at, 0, sizeof(*at));
	at->hint_ms = -1;
	snprintf(url, sizeof(url), "%s%s", replica, OPENAI_ENDPOINT);
	if (backend_answer_alloc(out, c->questions) == -1 ||
	    (out->label_mass = calloc(k->n + 1,
	    sizeof(*out->label_mass))) == NULL) {
		backend_answer_free(out);
		snprintf(at->reason, sizeof(at->reason), "out of memory");
		return -1;
	}
	for (i = 0; i < k->n; i++)
		k->posts[i].url = url;
	k->out = out;
	k->usage_all = 1;
	if (backend_http_post_many(k->posts, k->n, k->headers, c->timeout_ms,
	    (size_t)backend_option_long(c->b, "concurrency"), openai_done, k,
	    at) == -1) {
		k->out = NULL;
		backend_answer_free(out);
		return -1;
	}
	k->out = NULL;
	out->has_usage = k->usage_all && k->n > 0;
	if (!out->has_usage)
		out->input_tokens = out->output_tokens = 0;
	return 0;
}

/* ------------------------------------------------------- ops' hooks */

static int
openai_check_add(const struct backend_kind *kind, json_object *in,
    const struct backend *b, struct error *e)
{
	json_object	*extra;
	size_t		 i;

	(void)in;
	if (b->model[0] == '\0')
		return error_set(e, ERR_VALIDATION, "model", "is required for "
		    "an %s backend: the model the server serves", kind->name);
	if ((extra = backend_option_json(b, "extra")) == NULL)
		return 0;
	for (i = 0; i < NFIXED; i++)
		if (json_object_object_get_ex(extra, fixed[i], NULL)) {
			json_object_put(extra);
			return error_set(e, ERR_VALIDATION, "extra", "must not "
			    "set %s: evalgate sets model, messages, "
			    "max_tokens, temperature, logprobs, top_logprobs, "
			    "n and stream itself", fixed[i]);
		}
	json_object_put(extra);
	return 0;
}

static int
openai_check_schema(const struct backend *b, json_object *questions,
    struct error *e)
{
	long	 max = backend_option_long(b, "max_options");
	char	 field[160];
	size_t	 n;

	json_object_object_foreach(questions, name, q) {
		if ((n = question_arity(q)) <= (size_t)max)
			continue;
		snprintf(field, sizeof(field), "questions.%s.criteria", name);
		return error_set(e, ERR_VALIDATION, field, "question '%s' has "
		    "%zu answers, more than the %ld that backend '%s' can "
		    "label (its max_options)", name, n, max, b->name);
	}
	return 0;
}

static const struct backend_option options[] = {
	{ "max_options", BOPT_LONG, OPENAI_OPTIONS_MIN, OPENAI_OPTIONS_MAX,
	  OPENAI_OPTIONS_DEF,
	  "labels asked for (top_logprobs): a choice has at most as many "
	  "options" },
	{ "concurrency", BOPT_LONG, 1, OPENAI_CONCURRENCY_MAX,
	  OPENAI_CONCURRENCY_DEF,
	  "questions of one evaluation in flight at once" },
	{ "extra", BOPT_JSON, 0, 0, 0,
	  "a JSON object merged into every request" },
	{ NULL, BOPT__MAX, 0, 0, 0, NULL },
};

const struct backend_kind backend_kind_openai = {
	.name		= "openai",
	.remote		= 1,
	.begin		= openai_begin,
	.ask		= openai_ask,
	.end		= openai_end,
	.cleanup	= backend_http_cleanup,
	.check_add	= openai_check_add,
	.check_schema	= openai_check_schema,
	.options	= options,
	.schema_option	= "max_options",
};
