/* backend_systemone.c: the "systemone" backend kind (doc/design.md,
 * section 7.1): an upstream speaking the System One contract.
 *
 * For one replica, POST {replica}/v1/systemone {state, model, questions}
 * through the shared HTTP client (backend_http.c) and read the answer.
 * The body and the headers are made once per evaluation, in begin();
 * the replica loop (rotation, failover, cool-downs) is backend.c's.  The
 * parser of the answer, backend_parse_systemone(), is pure (no I/O, no
 * global state), so that the unit tests and the fuzzer
 * (fuzz/fuzz_upstream.c) call it without an upstream. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_http.h"
#include "backend_systemone.h"
#include "buf.h"
#include "json_util.h"
#include "question.h"
#include "xalloc.h"

/* A JSON number that is finite: 0 and *v, or -1. */
static int
finite_number(json_object *o, double *v)
{
	if (!json_object_is_type(o, json_type_double) &&
	    !json_object_is_type(o, json_type_int))
		return -1;
	*v = json_object_get_double(o);
	return isfinite(*v) ? 0 : -1;
}

/* p[i] from probs[key]: finite and >= 0. */
static int
probability(json_object *probs, const char *key, double *p,
    const char *name, char *why, size_t whylen)
{
	json_object	*v;

	if (!json_object_object_get_ex(probs, key, &v))
		return backend_reason(why, whylen, "answer '%.40s': probability of"
		    " '%.40s' missing", name, key);
	if (finite_number(v, p) == -1 || *p < 0)
		return backend_reason(why, whylen, "answer '%.40s': probability of"
		    " '%.40s' is not a finite number >= 0", name, key);
	return 0;
}

/* The answer's "probabilities" object, or NULL with why set. */
static json_object *
probabilities(json_object *answer, const char *name, char *why,
    size_t whylen)
{
	json_object	*probs;

	if (!json_object_object_get_ex(answer, "probabilities", &probs) ||
	    !json_object_is_type(probs, json_type_object)) {
		backend_reason(why, whylen, "answer '%.40s': no probabilities object",
		    name);
		return NULL;
	}
	return probs;
}

/* A distribution must have some mass, and a finite one. */
static int
some_mass(const double *p, size_t n, const char *name, char *why,
    size_t whylen)
{
	double	 sum = 0;
	size_t	 i;

	for (i = 0; i < n; i++)
		sum += p[i];
	if (!isfinite(sum) || !(sum > 0))
		return backend_reason(why, whylen, "answer '%.40s': probabilities sum"
		    " to %s", name, sum > 0 ? "too much" : "zero");
	return 0;
}

static int
fill_choice(json_object *answer, json_object *question, double *p,
    size_t n, const char *name, char *why, size_t whylen)
{
	json_object	*probs, *criteria;
	size_t		 i = 0;

	if ((probs = probabilities(answer, name, why, whylen)) == NULL)
		return -1;
	if (!json_object_object_get_ex(question, "criteria", &criteria) ||
	    !json_object_is_type(criteria, json_type_object))
		return backend_reason(why, whylen, "question '%.40s' has no options",
		    name);
	json_object_object_foreach(criteria, key, desc) {
		(void)desc;
		if (i == n)
			break;
		if (probability(probs, key, &p[i++], name, why, whylen) == -1)
			return -1;
	}
	return some_mass(p, n, name, why, whylen);
}

static int
fill_score(json_object *answer, json_object *question, double *p,
    size_t n, const char *name, char *why, size_t whylen)
{
	json_object	*probs;
	char		 key[24];
	size_t		 i;

	if ((probs = probabilities(answer, name, why, whylen)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%zu", i);
		if (probability(probs, key, &p[i], name, why, whylen) == -1)
			return -1;
	}
	return some_mass(p, n, name, why, whylen);
}

static int
fill_noul(json_object *answer, json_object *question, double *p,
    size_t n, const char *name, char *why, size_t whylen)
{
	json_object	*v;
	double		 t;

	if (n != 2)
		return backend_reason(why, whylen, "question '%.40s' is not a noul",
		    name);
	if (!json_object_object_get_ex(answer, "noul", &v))
		return backend_reason(why, whylen, "answer '%.40s': noul missing", name);
	if (finite_number(v, &t) == -1 || t < 0 || t > 1)
		return backend_reason(why, whylen, "answer '%.40s': noul is not a number"
		    " from 0 to 1", name);
	p[0] = t;
	p[1] = 1 - t;
	return 0;
}

/* One reader per question type, indexed by enum qtype. */
static int (*const fills[Q__MAX])(json_object *, json_object *, double *,
    size_t, const char *, char *, size_t) = {
	[Q_CHOICE]	= fill_choice,
	[Q_SCORE]	= fill_score,
	[Q_NOUL]	= fill_noul,
};

int
backend_parse_systemone(const char *body, size_t len,
    json_object *questions, struct backend_answer *out, char *why,
    size_t whylen)
{
	json_object	*root, *answers, *a, *type, *u = NULL;
	const char	*lossy;
	enum qtype	 t;
	int64_t		 in, outn;
	size_t		 i = 0, n;
	int		 rc = -1, has;

	memset(out, 0, sizeof(*out));
	if ((root = backend_parse_json(body, len, why, whylen)) == NULL)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		backend_reason(why, whylen, "not an object");
		goto done;
	}
	if (!json_object_object_get_ex(root, "answers", &answers) ||
	    !json_object_is_type(answers, json_type_object)) {
		backend_reason(why, whylen, "no answers object");
		goto done;
	}
	if (!json_object_is_type(questions, json_type_object)) {
		backend_reason(why, whylen, "no questions");
		goto done;
	}
	if (backend_answer_alloc(out, questions) == -1) {
		backend_reason(why, whylen, "out of memory");
		goto done;
	}
	json_object_object_foreach(questions, name, q) {
		t = question_shape(q, &n);
		if (t == Q__MAX || n == 0) {
			backend_reason(why, whylen, "question '%.40s' is not valid", name);
			goto done;
		}
		if (!json_object_object_get_ex(answers, name, &a)) {
			backend_reason(why, whylen, "answer '%.40s' missing", name);
			goto done;
		}
		if (!json_object_is_type(a, json_type_object)) {
			backend_reason(why, whylen, "answer '%.40s' is not an object",
			    name);
			goto done;
		}
		if (json_object_object_get_ex(a, "type", &type) &&
		    (!json_object_is_type(type, json_type_string) ||
		    strcmp(json_object_get_string(type),
		    question_type_name(t)) != 0)) {
			backend_reason(why, whylen, "answer '%.40s' is not of type %s",
			    name, question_type_name(t));
			goto done;
		}
		if (fills[t](a, q, out->dist[i++], n, name, why, whylen) == -1)
			goto done;
	}
	/* Last, so that a bad number gets the reason above: what json-c
	 * took but changed (a key cut at a NUL, a saturated integer). */
	if ((lossy = ju_lossy(body, len, NULL, 0)) != NULL) {
		backend_reason(why, whylen, "%s", lossy);
		goto done;
	}
	/* Usage is relayed when it is there; a count out of range (our
	 * bounds, backend.h) makes the answer unfit. */
	json_object_object_get_ex(root, "usage", &u);
	if ((has = backend_usage_read(u, "input_tokens", "output_tokens",
	    &in, &outn, why, whylen)) == -1)
		goto done;
	out->has_usage = has;
	out->input_tokens = in;
	out->output_tokens = outn;
	rc = 0;
done:
	json_object_put(root);
	if (rc == -1)
		backend_answer_free(out);
	return rc;
}

/* ---------------------------------------------------------------- kind */

/* What one evaluation keeps from begin() to end(). */
struct call {
	struct buf		 body;		/* owned: the request's JSON */
	struct curl_slist	*headers;	/* owned */
	struct buf		 resp;		/* owned: the last answer */
};

/* The request body into k->body, written as json-c would write the
 * object {state, model, questions} (ju_write_json()): 0, or -1 out of
 * memory. */
static int
request_body(struct call *k, const struct backend *b, json_object *state,
    json_object *questions)
{
	const char	*model = b->model[0] != '\0' ? b->model :
			    SYSTEMONE_DEFAULT_MODEL;

	return buf_add(&k->body, "{\"state\":", 9) != BUF_OK ||
	    ju_write_json(&k->body, state) == -1 ||
	    buf_add(&k->body, ",\"model\":", 9) != BUF_OK ||
	    ju_write_str(&k->body, model, strlen(model)) == -1 ||
	    buf_add(&k->body, ",\"questions\":", 13) != BUF_OK ||
	    ju_write_json(&k->body, questions) == -1 ||
	    buf_add(&k->body, "}", 1) != BUF_OK ? -1 : 0;
}

static void
systemone_end(struct backend_call *c)
{
	struct call	*k = c->priv;

	if (k == NULL)
		return;
	backend_http_headers_free(k->headers);
	buf_free(&k->body);
	buf_free(&k->resp);
	free(k);
	c->priv = NULL;
}

static int
systemone_begin(struct backend_call *c, struct error *e)
{
	struct call	*k;

	c->priv = k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	buf_init(&k->resp, BACKEND_HTTP_MAX_ANSWER);
	/* The text is sized by the state and the questions, both checked
	 * against their bounds before a backend is asked. */
	buf_init(&k->body, SIZE_MAX / 2);
	if (request_body(k, c->b, c->state, c->questions) == 0 &&
	    (k->headers = backend_http_headers(c->b)) != NULL &&
	    backend_http_init() == 0)
		return 0;
	systemone_end(c);
	error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	e->retry_after_ms = 1000;
	return -1;
}

static int
systemone_ask(struct backend_call *c, const char *replica,
    struct backend_answer *out, struct backend_attempt *at)
{
	struct call	*k = c->priv;
	char		 endpoint[sizeof(c->b->urls[0]) +
			    sizeof(SYSTEMONE_ENDPOINT)], why[120];

	snprintf(endpoint, sizeof(endpoint), "%s%s", replica,
	    SYSTEMONE_ENDPOINT);
	if (backend_http_post(endpoint, k->body.p, k->headers, c->timeout_ms,
	    &k->resp, at) == -1)
		return -1;
	if (backend_parse_systemone(k->resp.p, k->resp.len, c->questions,
	    out, why, sizeof(why)) == -1) {
		at->verdict = BV_ANSWERED;
		at->outcome = MO_UNFIT;
		snprintf(at->reason, sizeof(at->reason),
		    "answer does not fit: %s", why);
		return -1;
	}
	return 0;
}

const struct backend_kind backend_kind_systemone = {
	.name		= "systemone",
	.remote		= 1,
	.begin		= systemone_begin,
	.ask		= systemone_ask,
	.end		= systemone_end,
	.cleanup	= backend_http_cleanup,
};
