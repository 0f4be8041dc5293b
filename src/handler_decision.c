/* handler_decision.c: GET /v1/decisions/{id} and POST
 * /v1/decisions/{id}/outcome (doc/design.md, sections 1.1 and 14).
 *
 * A malformed id, an unknown one and another application's decision all
 * get the same 404, before the body is looked at.  Every outcome value is
 * checked against its question in the schema version the decision used
 * before anything is written; the store then applies the outcome table in
 * one transaction. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "decision.h"
#include "handlers.h"
#include "json_util.h"
#include "metrics.h"
#include "question.h"
#include "store.h"
#include "utf8.h"
#include "xalloc.h"

#define SOURCE_MAX_CHARS 200

/* The one answer for an id the caller may not see, whatever the cause:
 * it names nothing, so that the bodies are identical. */
static int
not_found(struct error *e)
{
	return error_set(e, ERR_NOT_FOUND, NULL, "no such decision");
}

int
handle_decision_get(struct req *r, struct error *e)
{
	json_object	*body;
	int		 rc;

	/* The state is shown while the application has log_state on now
	 * (doc/design.md, section 14), and only if it was kept when the
	 * decision was made. */
	if ((rc = decision_json(r->store, r->params[0], r->app.id,
	    r->app.log_state, &body, e)) != 1)
		return rc == 0 ? not_found(e) : -1;
	http_json(r, 200, body);
	json_object_put(body);
	return 0;
}

/* answers: a non-empty map of question name -> outcome value, each a
 * question of the decision with a value valid for its type. */
static int
check_answers(json_object *body, json_object *questions,
    json_object **values, struct error *e)
{
	json_object	*q;
	char		*field;
	int		 rc;

	if (!json_object_object_get_ex(body, "answers", values) ||
	    *values == NULL)
		return error_set(e, ERR_VALIDATION, "answers", "is required");
	if (!json_object_is_type(*values, json_type_object))
		return error_set(e, ERR_VALIDATION, "answers",
		    "must be an object mapping question names to values");
	if (json_object_object_length(*values) == 0)
		return error_set(e, ERR_VALIDATION, "answers",
		    "must name at least one question");
	json_object_object_foreach(*values, name, v) {
		field = xasprintf("answers.%s", name);
		if (!json_object_object_get_ex(questions, name, &q))
			rc = error_set(e, ERR_VALIDATION, field,
			    "the decision has no such question");
		else
			rc = question_check_outcome(q, v, field, e);
		free(field);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* source: absent or null, or a string of at most 200 characters. */
static int
check_source(json_object *body, const char **source, struct error *e)
{
	json_object	*v;
	const char	*s;
	size_t		 len;

	*source = NULL;
	if (!json_object_object_get_ex(body, "source", &v) || v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return error_set(e, ERR_VALIDATION, "source",
		    "must be a string");
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (utf8_count(s, len) > SOURCE_MAX_CHARS)	/* valid UTF-8 here */
		return error_set(e, ERR_VALIDATION, "source",
		    "must be at most %d characters", SOURCE_MAX_CHARS);
	if (strlen(s) != len)
		return error_set(e, ERR_VALIDATION, "source",
		    "must not contain NUL");
	*source = s;
	return 0;
}

/* {decision_id, recorded}: every question of the request, so that a
 * replay gets exactly the first answer. */
static void
respond(struct req *r, const char *id, json_object *values)
{
	json_object *body = ju_obj();
	json_object *names = ju_arr();

	json_object_object_foreach(values, name, v) {
		(void)v;
		ju_push(names, ju_string(name));
	}
	ju_add_str(body, "decision_id", id);
	ju_add(body, "recorded", names);
	http_json(r, 200, body);
	json_object_put(body);
}

int
handle_decision_outcome(struct req *r, struct error *e)
{
	struct decision_row	 d;
	json_object		*body, *values;
	const char		*source;
	char			 id[UUID7_LEN + 1];
	int			 rc;

	if (!decision_id_canon(r->params[0], id))
		return not_found(e);
	if ((rc = store_decision_get(r->store, id, r->app.id, &d, e)) != 1)
		return rc == 0 ? not_found(e) : -1;
	rc = -1;
	if ((body = req_json_object(r, e)) != NULL &&
	    check_answers(body, d.questions, &values, e) == 0 &&
	    check_source(body, &source, e) == 0 &&
	    store_outcome_record(r->store, id, values, source,
	    clock_now_ms(), e) == 0) {
		metrics_outcome(d.schema_slug);
		respond(r, id, values);
		rc = 0;
	}
	json_object_put(body);
	decision_row_clear(&d);
	return rc;
}
