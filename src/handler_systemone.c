/* handler_systemone.c: POST /v1/systemone, the product's main job.
 *
 * In order (doc/design.md, section 3): parse and validate the body; render
 * the state from x_template if given; resolve the schema (x_schema, or
 * the fingerprint of the inline questions) and check the grant; admit
 * the call against the rate limit and quota; ask the backend with no
 * transaction open; temper and shape the answers; record the decision in
 * one write transaction; answer; hand the version's challengers their
 * job, run once the answer has gone (challenger.h). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "answer.h"
#include "backend.h"
#include "buf.h"
#include "challenger.h"
#include "clock.h"
#include "handlers.h"
#include "json_util.h"
#include "metrics.h"
#include "question.h"
#include "settings.h"
#include "store.h"
#include "template.h"

#define SLUG_MAX	MODEL_NAME_SIZE	/* x_schema.id, x_template.id */

/* The process's: the inline questions' encoding last hashed and its
 * fingerprint, since a client sends the same questions again and
 * again. */
static struct question_kept	 kept_fingerprint;

/* One evaluation's working set; eval_clear() releases it. */
struct eval {
	json_object		*body;		/* owned: the request */
	const char		*model;		/* borrowed from body */
	json_object		*state;		/* borrowed: body's or rendered */
	json_object		*rendered;	/* owned: state from a template */
	json_object		*questions;	/* borrowed: body's or sv's */
	struct template_version	 tv;		/* owned parts */
	struct schema_version	 sv;		/* owned parts */
	struct backend_answer	 ba;		/* owned parts */
	struct buf		 texts;		/* owned: each answer's JSON
						 * and its distribution's,
						 * each ended by a NUL */
	const char		**answers;	/* owned array, into texts: one
						 * per question, then dists */
	const char		**dists;	/* answers + the questions */
	struct buf		 answers_text;	/* owned: answers, as JSON */
	int			 abstained;	/* some answer abstained */
	int64_t			 backend_ms;
	int			 asked;		/* the backend was called */
	struct charge		 charge;	/* owed until recorded */
	char			 id[UUID7_LEN + 1];
	/* Last: of its kilobytes, eval_begin() clears what is read before
	 * find_backend() fills it. */
	struct backend		 backend;
	/* The version's challengers, as find_backend() looked them up: n
	 * cleared, c[] written only as far as n. */
	struct challenger_list	 challengers;
};

/* A new working set: all cleared but the room of the backend's options
 * and replicas, which only a backend found fills and reads. */
static void
eval_begin(struct eval *ev)
{
	memset(ev, 0, offsetof(struct eval, backend) +
	    offsetof(struct backend, options));
	ev->challengers.n = 0;
}

static void
eval_clear(struct eval *ev)
{
	json_object_put(ev->body);
	json_object_put(ev->rendered);
	template_version_clear(&ev->tv);
	schema_version_clear(&ev->sv);
	backend_answer_free(&ev->ba);
	buf_free(&ev->texts);
	free(ev->answers);
	buf_free(&ev->answers_text);
}

/* {id, version?} of the body's x_schema or x_template (field), each
 * refusal with one message per member.  A NUL would cut the name short:
 * "demo\u0000x" is not "demo".  A version beyond INT64_MAX is read as
 * INT64_MAX, a version no schema has. */
static int
ref(json_object *body, const char *field, const char **id,
    int64_t *version, struct error *e)
{
	json_object	*v;
	char		 path[32];

	snprintf(path, sizeof(path), "%s.id", field);
	if (ju_req_str(body, path, SLUG_MAX - 1, id, e) == -1)
		return error_set(e, ERR_VALIDATION, path,
		    "must be a non-empty string of at most %d bytes, without"
		    " NUL", SLUG_MAX - 1);
	*version = 0;
	snprintf(path, sizeof(path), "%s.version", field);
	if (ju_get(body, path, &v) && v != NULL &&
	    (!json_object_is_type(v, json_type_int) ||
	    (*version = json_object_get_int64(v)) < 1))
		return error_set(e, ERR_VALIDATION, path,
		    "must be an integer from 1");
	return 0;
}

/* A template refusal names the variable (or null) in its details, and the
 * offending field as a path: x_template.variables.NAME, or x_template
 * when no single variable is to blame. */
static int
template_refusal(struct error *e)
{
	json_object	*v;
	char		 field[160];

	if (e->code != ERR_TEMPLATE_RENDER)
		return -1;
	if (!json_object_object_get_ex(e->details, "variable", &v))
		error_detail(e, "variable", v = NULL);
	if (json_object_object_get_ex(e->details, "field", NULL))
		return -1;
	if (v != NULL)
		snprintf(field, sizeof(field), "x_template.variables.%.120s",
		    json_object_get_string(v));
	else
		snprintf(field, sizeof(field), "x_template");
	error_detail(e, "field", ju_string(field));
	return -1;
}

/* x_template {id, version?, variables}: the rendered text becomes the
 * state.  Variables missing or not an object, and an unknown template or
 * version, are template_render_error, like every rendering refusal. */
static int
render_template(struct req *r, struct eval *ev, struct error *e)
{
	const char	*id;
	json_object	*values;
	char		*text = NULL;
	size_t		 len;
	int64_t		 version;
	int		 rc;

	if (ref(ev->body, "x_template", &id, &version, e) == -1)
		return -1;
	if (!ju_get(ev->body, "x_template.variables", &values) ||
	    !json_object_is_type(values, json_type_object)) {
		error_set(e, ERR_TEMPLATE_RENDER, "x_template.variables",
		    "must be an object of the template's variables");
		return template_refusal(e);
	}
	if ((rc = store_template_get(r->store, id, version, &ev->tv, e)) == 0) {
		error_set(e, ERR_TEMPLATE_RENDER, version ?
		    "x_template.version" : "x_template.id",
		    "no published template '%s'%s", id,
		    version ? " at that version" : "");
		return template_refusal(e);
	}
	if (rc == -1 || template_render(ev->tv.body, ev->tv.variables, values,
	    ev->tv.escape_html, (size_t)r->settings->max_state_chars, &text,
	    &len, e) == -1)
		return template_refusal(e);
	/* Sized by the input: checked, a 503 without memory. */
	ev->rendered = json_object_new_string_len(text, (int)len);
	free(text);
	if ((ev->state = ev->rendered) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	return 0;
}

static int
resolve_schema(struct req *r, struct eval *ev, json_object *xs,
    struct error *e)
{
	const char	*id;
	char		 fp[QUESTION_FINGERPRINT_LEN + 1];
	int64_t		 version;
	int		 rc, matched = 0;

	if (xs != NULL) {
		/* Unknown and ungranted look the same: existence is not
		 * revealed. */
		if (ref(ev->body, "x_schema", &id, &version, e) == -1)
			return -1;
		if ((rc = store_schema_get(r->store, id, version, &ev->sv,
		    e)) == -1)
			return -1;
		if (rc == 1 && (rc = store_grant_allows(r->store, r->app.id,
		    ev->sv.schema_id, ev->sv.version, e)) == -1)
			return -1;
		if (rc == 0)
			return error_set(e, ERR_SCHEMA_NOT_GRANTED, NULL,
			    "schema '%s' is not granted to this application",
			    id);
		ev->questions = ev->sv.questions;
		if ((long)json_object_object_length(ev->questions) >
		    r->settings->max_questions)
			return error_set(e, ERR_VALIDATION, "x_schema",
			    "the schema has more than %ld questions",
			    r->settings->max_questions);
		return 0;
	}
	if (!json_object_object_get_ex(ev->body, "questions", &ev->questions))
		return error_set(e, ERR_VALIDATION, "questions",
		    "is required unless x_schema is given");
	if (question_validate(ev->questions, (int)r->settings->max_questions,
	    e) == -1)
		return -1;
	question_fingerprint_kept(ev->questions, fp, &kept_fingerprint);
	if ((rc = store_schema_match(r->store, r->app.id, fp, &ev->sv,
	    &matched, e)) == -1)
		return -1;
	if (rc == 1)
		return 0;
	if (matched)
		return error_set(e, ERR_SCHEMA_NOT_GRANTED, NULL,
		    "the questions match a schema that is not granted to this "
		    "application");
	error_set(e, ERR_INVALID_SCHEMA, "questions",
	    "the shape of the questions matches no published schema; "
	    "publish it as a schema version first");
	error_detail(e, "fingerprint", ju_string(fp));
	return -1;
}

static int
parse(struct req *r, struct eval *ev, struct error *e)
{
	json_object *model, *xt = NULL, *xs = NULL;

	if ((ev->body = req_json_object(r, e)) == NULL)
		return -1;
	ev->model = SYSTEMONE_DEFAULT_MODEL;
	if (json_object_object_get_ex(ev->body, "model", &model) &&
	    model != NULL) {
		if (!json_object_is_type(model, json_type_string))
			return error_set(e, ERR_VALIDATION, "model",
			    "must be a string");
		ev->model = json_object_get_string(model);
		/* Echoed and stored as a C string: a NUL would cut it. */
		if (strlen(ev->model) !=
		    (size_t)json_object_get_string_len(model))
			return error_set(e, ERR_VALIDATION, "model",
			    "must not contain NUL");
	}
	if (ju_opt_obj(ev->body, "x_template", &xt, e) == -1 ||
	    ju_opt_obj(ev->body, "x_schema", &xs, e) == -1)
		return -1;
	if (xt != NULL) {
		if (render_template(r, ev, e) == -1)
			return -1;
	} else {
		if (!json_object_object_get_ex(ev->body, "state", &ev->state))
			return error_set(e, ERR_VALIDATION, "state",
			    "is required unless x_template is given");
		if (question_validate_state(ev->state,
		    r->settings->max_state_chars, e) == -1)
			return -1;
	}
	return resolve_schema(r, ev, xs, e);
}

/* The schema's backend and, if it is enabled, the version's
 * challengers, read in the request's snapshot with the other catalog
 * rows (a worker keeps them between requests: a version without
 * challengers costs no read); whether the backend is enabled is decided
 * after admission, like any other backend failure. */
static int
find_backend(struct req *r, struct eval *ev, struct error *e)
{
	int rc = store_backend_by_id(r->store, ev->sv.backend_id,
	    &ev->backend, e);

	if (rc == 0)
		ev->backend.enabled = 0;
	if (rc == -1)
		return -1;
	if (!ev->backend.enabled)
		return 0;
	return store_challenger_list(r->store, ev->sv.schema_id,
	    ev->sv.version, &ev->challengers, e);
}

static int
ask_backend(struct req *r, struct eval *ev, struct error *e)
{
	int64_t	start;
	int	rc;

	if (!ev->backend.enabled) {
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
		    "the schema's backend is disabled");
		e->retry_after_ms = 30000;
		e->unavailable = EU_DISABLED;
		return -1;
	}
	store_read_end(r->store);	/* nothing open during the call */
	start = clock_mono_us();
	ev->asked = 1;
	rc = backend_evaluate(r->store, r->settings, &ev->backend, ev->state,
	    ev->questions, &ev->ba, e);
	ev->backend_ms = (clock_mono_us() - start + 500) / 1000;
	return rc;
}

/* Each answer and stored distribution written as text once (answer.h),
 * in ev->texts: stored with the decision, and the answers, as an object
 * of them, answered. */
static int
build_answers(struct eval *ev, struct error *e)
{
	struct buf	*t = &ev->texts;
	size_t		 i = 0, n, at, nq;
	const char	*p;
	int		 a;

	buf_init(t, ANSWER_TEXT_MAX);
	buf_init(&ev->answers_text, ANSWER_TEXT_MAX);
	json_object_object_foreach(ev->questions, name, q) {
		n = question_arity(q);
		if (i >= ev->ba.nquestions ||
		    answer_normalise(ev->ba.dist[i], n) == -1) {
			error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
			    "backend '%s' gave no usable distribution for "
			    "'%s'", ev->backend.name, name);
			e->retry_after_ms = 1000;
			e->unavailable = EU_UNFIT;
			return -1;
		}
		at = t->len;
		if ((a = answer_write_both(t, q, ev->ba.dist[i], n,
		    ev->sv.temperature, ev->sv.abstain_threshold)) == -1)
			return error_set(e, ERR_INTERNAL, NULL,
			    "cannot build the answer to '%s'", name);
		ev->abstained |= a;
		if (buf_add(&ev->answers_text, i > 0 ? "," : "{", 1) !=
		    BUF_OK || ju_write_str(&ev->answers_text, name,
		    strlen(name)) == -1 || buf_add(&ev->answers_text, ":",
		    1) != BUF_OK || buf_adds(&ev->answers_text, t->p + at) !=
		    BUF_OK)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
		i++;
	}
	if (buf_adds(&ev->answers_text, i > 0 ? "}" : "{}") != BUF_OK)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	/* The texts hold no NUL of their own (JSON escapes it): each ends
	 * at the next. */
	nq = i;
	if ((ev->answers = calloc(2 * nq + 1, sizeof(*ev->answers))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	ev->dists = ev->answers + nq;
	for (i = 0, p = t->p; i < nq; i++) {
		ev->answers[i] = p;
		p += strlen(p) + 1;
		ev->dists[i] = p;
		p += strlen(p) + 1;
	}
	return 0;
}

static int
record(struct req *r, struct eval *ev, int64_t gateway_ms, struct error *e)
{
	struct decision d;

	memset(&d, 0, sizeof(d));
	uuid7_new(clock_now_ms(), ev->id);
	memcpy(d.id, ev->id, sizeof(d.id));
	d.app_id = r->app.id;
	d.created_at_ms = clock_now_ms();
	d.model = ev->model;
	d.backend = ev->backend.name;
	d.schema_id = ev->sv.schema_id;
	d.schema_version = ev->sv.version;
	d.template_id = ev->tv.template_id;
	d.template_version = ev->tv.version;
	if (r->app.log_state)
		d.state = json_object_to_json_string_ext(ev->state,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	d.has_usage = ev->ba.has_usage;
	d.input_tokens = ev->ba.input_tokens;
	d.output_tokens = ev->ba.output_tokens;
	d.latency_gateway_ms = gateway_ms;
	d.latency_backend_ms = ev->backend_ms;
	d.label_mass = ev->ba.label_mass;
	d.quota_day = ev->charge.day;
	d.quota_units = ev->charge.units;
	return store_decision_insert(r->store, &d, ev->questions, ev->answers,
	    ev->dists, e);
}

static int
put(struct buf *b, const char *s)
{
	return buf_adds(b, s) == BUF_OK ? 0 : -1;
}

static int
put_str(struct buf *b, const char *s)
{
	return ju_write_str(b, s, strlen(s));
}

/* lead (ending in "{\"id\":"), then id and version: a reference. */
static int
put_ref(struct buf *b, const char *lead, const char *id, int64_t version)
{
	return put(b, lead) == -1 || put_str(b, id) == -1 ||
	    put(b, ",\"version\":") == -1 || ju_write_int(b, version) == -1 ||
	    put(b, "}") == -1 ? -1 : 0;
}

/* The answer, written as text (json_util.h) in the order of its
 * members: the answers as written once in build_answers().  0, or -1
 * with e set when its memory (sized by the questions) ran out. */
static int
respond(struct req *r, struct eval *ev, int64_t gateway_ms,
    struct error *e)
{
	struct buf	 b;
	int		 rc;

	buf_init(&b, ANSWER_TEXT_MAX);
	rc = put(&b, "{\"model\":") == -1 || put_str(&b, ev->model) == -1 ||
	    put(&b, ",\"answers\":") == -1 ||
	    buf_add(&b, ev->answers_text.p, ev->answers_text.len) != BUF_OK;
	if (!rc && ev->ba.has_usage)
		rc = put(&b, ",\"usage\":{\"input_tokens\":") == -1 ||
		    ju_write_int(&b, ev->ba.input_tokens) == -1 ||
		    put(&b, ",\"output_tokens\":") == -1 ||
		    ju_write_int(&b, ev->ba.output_tokens) == -1 ||
		    put(&b, "}") == -1;
	rc = rc || put(&b, ",\"x_decision_id\":") == -1 ||
	    put_str(&b, ev->id) == -1 || put(&b, ",\"x_backend\":") == -1 ||
	    put_str(&b, ev->backend.name) == -1 ||
	    put_ref(&b, ",\"x_schema\":{\"id\":", ev->sv.slug,
	    ev->sv.version) == -1 || put(&b, ",\"x_schema_version\":") == -1 ||
	    ju_write_int(&b, ev->sv.version) == -1 ||
	    (ev->tv.version != 0 && put_ref(&b, ",\"x_template\":{\"id\":",
	    ev->tv.slug, ev->tv.version) == -1) ||
	    put(&b, ",\"x_latency_ms\":{\"gateway\":") == -1 ||
	    ju_write_int(&b, gateway_ms) == -1 ||
	    put(&b, ",\"backend\":") == -1 ||
	    ju_write_int(&b, ev->backend_ms) == -1 || put(&b, "}}") == -1;
	if (rc) {
		buf_free(&b);
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	}
	http_raw(r, 200, "application/json", b.p, b.len);
	buf_free(&b);
	return 0;
}

/* An admitted call that ends in e without a decision: a 503 is given
 * back what it was charged, rate and units (README, "Rate limits and
 * quotas": no 503 is charged); any other failure keeps them, written to
 * the database's counter if settle. */
static void
unanswered(struct req *r, struct eval *ev, const struct error *e,
    int settle)
{
	if (error_status(e->code) == 503)
		admission_refund(r->store, r->app.id, &ev->charge);
	else if (settle)
		admission_settle(r->store, r->app.id, &ev->charge);
}

/* What the access log says of the evaluation, as far as it went. */
static void
note(struct req *r, const struct eval *ev)
{
	if (ev->sv.slug[0] != '\0') {
		snprintf(r->note.schema, sizeof(r->note.schema), "%s",
		    ev->sv.slug);
		r->note.schema_version = ev->sv.version;
	}
	if (ev->backend.name[0] != '\0')
		snprintf(r->note.backend, sizeof(r->note.backend), "%s",
		    ev->backend.name);
	if (ev->asked)
		r->note.backend_ms = ev->backend_ms;
}

int
handle_systemone(struct req *r, struct error *e)
{
	struct eval	ev;
	struct ratelimit rl;
	int64_t		gateway_ms;
	int		rc = -1;

	eval_begin(&ev);
	if (parse(r, &ev, e) == -1 || find_backend(r, &ev, e) == -1 ||
	    admission_charge(r->store, r->settings, &r->app,
	    1 + (int64_t)json_object_object_length(ev.questions), &ev.charge,
	    &rl, e) == -1)
		goto out;
	/* Written now; http_error() drops them from a 503, which is given
	 * back what it was charged (unanswered()). */
	http_ratelimit(r, &rl);
	if (ask_backend(r, &ev, e) == -1 || build_answers(&ev, e) == -1) {
		/* Failed otherwise than with a 503, it still costs its
		 * units, in the database's counter too. */
		unanswered(r, &ev, e, 1);
		goto out;
	}
	gateway_ms = (clock_mono_us() - r->start_us + 500) / 1000 -
	    ev.backend_ms;
	if (gateway_ms < 0)
		gateway_ms = 0;
	if (record(r, &ev, gateway_ms, e) == -1) {
		/* Not settled: the database that refused to record it
		 * would be waited for twice.  (A decision committed but
		 * not synced to disk is a 503 too, and given back like
		 * any: the client is answered that the call failed.) */
		unanswered(r, &ev, e, 0);
		goto out;
	}
	metrics_decision(ev.sv.slug, ev.abstained);
	memcpy(r->note.decision, ev.id, sizeof(r->note.decision));
	/* Recorded but not answered: a 503, given back what it was
	 * charged, as a commit not synced. */
	if (respond(r, &ev, gateway_ms, e) == -1) {
		unanswered(r, &ev, e, 0);
		goto out;
	}
	/* Asked once the answer has gone (main.c), if the version has
	 * challengers that the decision id selects. */
	challenger_queue(ev.id, &ev.challengers, ev.state, ev.questions);
	rc = 0;
out:
	note(r, &ev);
	eval_clear(&ev);
	return rc;
}
