/* bounds.c: the bounds of the stored fields (bounds.h) as one table, and
 * the checks of the records the store reads back against it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "json_util.h"
#include "question.h"
#include "utf8.h"

#define LOWER_DIGITS	"abcdefghijklmnopqrstuvwxyz0123456789"

/* The text fields' checks, by what they hold. */
enum bound_text_kind { BT_NONE, BT_NAME, BT_SLUG, BT_QUESTIONS, BT_OBJECT };

static const struct bound {
	const char		*name;	/* as an operation names it */
	enum bound_kind		 kind;
	int64_t			 min, max;	/* BK_INT */
	double			 rmin, rmax;	/* BK_REAL */
	int			 open_min;	/* BK_REAL: rmin refused */
	enum bound_text_kind	 text;		/* BK_TEXT */
} bounds[BF__MAX] = {
	[BF_APP_NAME] = { "name", BK_TEXT, .text = BT_NAME },
	[BF_APP_LOG_STATE] = { "log_state", BK_INT, 0, 1 },
	[BF_APP_ADMIN] = { "is_admin", BK_INT, 0, 1 },
	[BF_APP_RATE] = { "rate_per_minute", BK_INT, 1, BOUND_LIMIT_MAX },
	[BF_APP_QUOTA] = { "daily_quota", BK_INT, 1, BOUND_LIMIT_MAX },
	[BF_APP_RETENTION] = { "retention_days", BK_INT, 0,
	    BOUND_RETENTION_DAYS_MAX },
	[BF_CREATED_AT] = { "created_at", BK_INT, 0, BOUND_TIME_MAX },
	[BF_EXPIRES_AT] = { "expires_at", BK_INT, 0, BOUND_TIME_MAX },
	[BF_REVOKED_AT] = { "revoked_at", BK_INT, 0, BOUND_TIME_MAX },
	[BF_BACKEND_NAME] = { "name", BK_TEXT, .text = BT_NAME },
	[BF_BACKEND_ENABLED] = { "enabled", BK_INT, 0, 1 },
	[BF_BACKEND_TIMEOUT] = { "timeout_ms", BK_INT, BOUND_TIMEOUT_MS_MIN,
	    BOUND_TIMEOUT_MS_MAX },
	[BF_BACKEND_IN_FLIGHT] = { "max_in_flight", BK_INT, 1,
	    BOUND_IN_FLIGHT_MAX },
	[BF_BACKEND_OPTIONS] = { "kind option", BK_TEXT, .text = BT_OBJECT },
	[BF_SLUG] = { "slug", BK_TEXT, .text = BT_SLUG },
	[BF_VERSION] = { "version", BK_INT, 1, BOUND_LIMIT_MAX },
	[BF_GRANT_VERSION] = { "version", BK_INT, 0, BOUND_LIMIT_MAX },
	[BF_PUBLISHED] = { "published", BK_INT, 0, 1 },
	[BF_QUESTIONS] = { "questions", BK_TEXT, .text = BT_QUESTIONS },
	[BF_TEMPERATURE] = { "temperature", BK_REAL, .rmin = 0,
	    .rmax = BOUND_TEMPERATURE_MAX, .open_min = 1 },
	[BF_THRESHOLD] = { "abstain_threshold", BK_REAL, .rmin = 0,
	    .rmax = 1 },
	[BF_VARIABLES] = { "variables", BK_TEXT, .text = BT_OBJECT },
	[BF_ESCAPE_HTML] = { "escape_html", BK_INT, 0, 1 },
	[BF_QUOTA_USED] = { "used", BK_INT, 0, BOUND_LIMIT_MAX },
};

enum bound_kind
bound_kind(enum bound_field f)
{
	return bounds[f].kind;
}

int
bound_int(enum bound_field f, int64_t v, struct error *e)
{
	const struct bound *b = &bounds[f];

	if (b->kind != BK_INT || v < b->min || v > b->max)
		return error_set(e, ERR_VALIDATION, NULL, "%lld is not from "
		    "%lld to %lld", (long long)v, (long long)b->min,
		    (long long)b->max);
	return 0;
}

int
bound_real(enum bound_field f, double v, struct error *e)
{
	const struct bound *b = &bounds[f];

	if (b->kind != BK_REAL || !isfinite(v) || v < b->rmin ||
	    (b->open_min && v == b->rmin) || v > b->rmax)
		return error_set(e, ERR_VALIDATION, NULL, "%g is not %s %g "
		    "and at most %g", v, b->open_min ? "above" : "at least",
		    b->rmin, b->rmax);
	return 0;
}

const char *
bound_name_fault(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > MODEL_NAME_MAX)
		return "must be 1 to 100 bytes";
	if (strpbrk(name, " /") != NULL || utf8_control(name, NULL) != NULL)
		return "must have no spaces, control characters or '/'";
	return NULL;
}

const char *
bound_slug_fault(const char *slug)
{
	size_t len = strlen(slug);

	if (len == 0 || len > MODEL_NAME_MAX)
		return "must be 1 to 100 bytes";
	if (strchr(LOWER_DIGITS, *slug) == NULL ||
	    strspn(slug + 1, LOWER_DIGITS "_.-") != len - 1)
		return "must be lowercase letters, digits, '_', '.' or '-', "
		    "starting with a letter or a digit";
	return NULL;
}

/* Text that must be a JSON object, or questions as publish takes them. */
static int
json_text(enum bound_text_kind k, const char *v, struct error *e)
{
	json_object	*o = ju_parse(v);
	int		 rc;

	if (o == NULL)
		return error_set(e, ERR_VALIDATION, NULL, "is not JSON");
	if (k == BT_QUESTIONS)
		rc = question_validate(o, BOUND_QUESTIONS_MAX, e);
	else if (!json_object_is_type(o, json_type_object))
		rc = error_set(e, ERR_VALIDATION, NULL, "is not a JSON "
		    "object");
	else
		rc = 0;
	json_object_put(o);
	return rc;
}

int
bound_text(enum bound_field f, const char *v, struct error *e)
{
	const struct bound	*b = &bounds[f];
	const char		*why = NULL;

	switch (b->kind == BK_TEXT ? b->text : BT_NONE) {
	case BT_NAME:
		why = bound_name_fault(v);
		break;
	case BT_SLUG:
		why = bound_slug_fault(v);
		break;
	case BT_QUESTIONS:
	case BT_OBJECT:
		return json_text(b->text, v, e);
	case BT_NONE:
		why = "is not text";
		break;
	}
	return why == NULL ? 0 : error_set(e, ERR_VALIDATION, NULL, "%s",
	    why);
}

/* One member of an options object against its row o of a table. */
static int
option_value(const struct backend_option *o, json_object *v, int64_t *n,
    struct error *e)
{
	const char	*text;

	switch (o->type) {
	case BOPT_LONG:
		if (!json_object_is_type(v, json_type_int))
			return error_set(e, ERR_VALIDATION, o->name,
			    "must be an integer");
		*n = json_object_get_int64(v);
		if (*n < o->min || *n > o->max)
			return error_set(e, ERR_VALIDATION, o->name, "must be "
			    "from %ld to %ld", o->min, o->max);
		return 0;
	case BOPT_JSON:
		if (!json_object_is_type(v, json_type_object))
			return error_set(e, ERR_VALIDATION, o->name,
			    "must be a JSON object");
		text = json_object_to_json_string_ext(v,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		if (text == NULL || strlen(text) > BACKEND_OPTION_JSON_MAX)
			return error_set(e, ERR_VALIDATION, o->name, "must be "
			    "at most %d bytes as compact JSON",
			    BACKEND_OPTION_JSON_MAX);
		return 0;
	default:
		return error_set(e, ERR_VALIDATION, o->name, "is of no known "
		    "type");
	}
}

int
bound_options(const struct backend_option *opts, const char *text,
    int64_t vals[BACKEND_OPTIONS_MAX], struct error *e)
{
	json_object	*o;
	size_t		 i;
	int64_t		 n;
	int		 rc = 0;

	if (vals != NULL)
		memset(vals, 0, sizeof(int64_t) * BACKEND_OPTIONS_MAX);
	if (text[0] == '\0')
		return 0;
	if (strlen(text) >= BACKEND_OPTIONS_SIZE)
		return error_set(e, ERR_VALIDATION, NULL, "is over %d bytes",
		    BACKEND_OPTIONS_SIZE - 1);
	if ((o = ju_parse(text)) == NULL ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_set(e, ERR_VALIDATION, NULL, "is not a JSON "
		    "object");
	}
	json_object_object_foreach(o, name, v) {
		for (i = 0; opts != NULL && opts[i].name != NULL &&
		    strcmp(opts[i].name, name) != 0; i++)
			;
		if (opts == NULL || opts[i].name == NULL ||
		    i >= BACKEND_OPTIONS_MAX) {
			rc = error_set(e, ERR_VALIDATION, NULL, "'%.64s' is "
			    "not an option of its kind", name);
			break;
		}
		n = 0;
		if ((rc = option_value(&opts[i], v, &n, e)) == -1)
			break;
		if (vals != NULL)
			vals[i] = n;
	}
	json_object_put(o);
	return rc;
}

/* A field of a record read back, out of bounds: the 500 naming both. */
static int
stored(struct error *e, const char *what, const char *name,
    enum bound_field f)
{
	char why[sizeof(e->message)];

	snprintf(why, sizeof(why), "%s", e->message);
	error_clear(e);
	return error_set(e, ERR_INTERNAL, NULL, "the stored %s '%s' has a "
	    "%s that evalgate does not take: %s", what, name, bounds[f].name,
	    why);
}

/* Each optional field is checked when it is set (0: the default). */
#define INT_OF(f, v, what, name) \
	if ((v) != 0 && bound_int((f), (v), e) == -1) \
		return stored(e, (what), (name), (f))

int
bound_app(const struct app *a, struct error *e)
{
	if (bound_text(BF_APP_NAME, a->name, e) == -1)
		return stored(e, "application", a->name, BF_APP_NAME);
	INT_OF(BF_APP_RATE, a->rate_per_minute, "application", a->name);
	INT_OF(BF_APP_QUOTA, a->daily_quota, "application", a->name);
	INT_OF(BF_CREATED_AT, a->created_at, "application", a->name);
	if (a->retention_days != -1 &&
	    bound_int(BF_APP_RETENTION, a->retention_days, e) == -1)
		return stored(e, "application", a->name, BF_APP_RETENTION);
	return 0;
}

int
bound_key(const struct key_row *k, struct error *e)
{
	INT_OF(BF_CREATED_AT, k->created_at, "key", k->prefix);
	INT_OF(BF_EXPIRES_AT, k->expires_at, "key", k->prefix);
	INT_OF(BF_REVOKED_AT, k->revoked_at, "key", k->prefix);
	return 0;
}

int
bound_backend(struct backend *b, const struct backend_option *opts,
    struct error *e)
{
	INT_OF(BF_BACKEND_TIMEOUT, b->timeout_ms, "backend", b->name);
	INT_OF(BF_BACKEND_IN_FLIGHT, b->max_in_flight, "backend", b->name);
	if (bound_options(opts, b->options, b->optval, e) == -1)
		return stored(e, "backend", b->name, BF_BACKEND_OPTIONS);
	return 0;
}

int
bound_version(const struct schema_version *v, struct error *e)
{
	if (question_validate(v->questions, BOUND_QUESTIONS_MAX, e) == -1)
		return stored(e, "schema", v->slug, BF_QUESTIONS);
	if (bound_real(BF_TEMPERATURE, v->temperature, e) == -1)
		return stored(e, "schema", v->slug, BF_TEMPERATURE);
	if (bound_real(BF_THRESHOLD, v->abstain_threshold, e) == -1)
		return stored(e, "schema", v->slug, BF_THRESHOLD);
	INT_OF(BF_VERSION, v->version, "schema", v->slug);
	INT_OF(BF_CREATED_AT, v->created_at, "schema", v->slug);
	return 0;
}

int
bound_decision(const struct decision_row *d, struct error *e)
{
	if (question_validate(d->questions, BOUND_QUESTIONS_MAX, e) == -1)
		return stored(e, "decision", d->id, BF_QUESTIONS);
	return 0;
}

int
bound_template(const struct template_version *v, struct error *e)
{
	if (!json_object_is_type(v->variables, json_type_object)) {
		error_set(e, ERR_VALIDATION, NULL, "is not a JSON object");
		return stored(e, "template", v->slug, BF_VARIABLES);
	}
	INT_OF(BF_VERSION, v->version, "template", v->slug);
	INT_OF(BF_CREATED_AT, v->created_at, "template", v->slug);
	return 0;
}
