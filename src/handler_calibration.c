/* handler_calibration.c: the reports of a schema version, GET
 * /admin/v1/schemas/{id}/calibration
 * ?version=&question=&since=&format=&target_accuracy= (doc/design.md,
 * section 15) and GET /admin/v1/schemas/{id}/compare
 * ?version=&question=&since=&format= (section 15.1).  The query becomes
 * the input of OP_CALIBRATION or OP_COMPARE, the operations
 * `evalgate-admin calibration` and `compare` run; the report is answered
 * as JSON (the default), text or a self-contained HTML page.  A GET
 * changes nothing: there is no apply or promote here. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibration_render.h"
#include "compare_render.h"
#include "handlers.h"
#include "json_util.h"
#include "ops.h"
#include "xalloc.h"

#define QUERY_MAX	4200	/* bytes of a decoded parameter */

enum param_kind { PARAM_TEXT, PARAM_INT, PARAM_NUMBER };

static const struct param {
	const char	*name;		/* in the query and in the input */
	enum param_kind	 kind;
	int		 calibration_only;
} params[] = {
	{ "version", PARAM_INT, 0 },
	{ "question", PARAM_TEXT, 0 },
	{ "since", PARAM_TEXT, 0 },
	{ "format", PARAM_TEXT, 0 },
	{ "target_accuracy", PARAM_NUMBER, 1 },
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

/* The two reports: the operation, whether it takes the parameters of
 * calibration alone, and how its text formats are written. */
static const struct report {
	enum op		 op;
	int		 calibration;
	int		(*render)(FILE *, json_object *, enum cal_format);
} reports[] = {
	{ OP_CALIBRATION, 1, calibration_render },
	{ OP_COMPARE, 0, compare_render },
};

/* A parameter's value as JSON: a new reference, or NULL with e set. */
static json_object *
param_value(const struct param *p, const char *v, struct error *e)
{
	char		*end;
	long long	 n;
	double		 d;

	switch (p->kind) {
	case PARAM_TEXT:
		return ju_string(v);
	case PARAM_INT:
		n = strtoll(v, &end, 10);
		if (*v == '\0' || *end != '\0' || strspn(v, "0123456789") !=
		    strlen(v)) {
			error_set(e, ERR_VALIDATION, p->name,
			    "must be a positive integer");
			return NULL;
		}
		return ju_int(n);
	case PARAM_NUMBER:
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || !isfinite(d)) {
			error_set(e, ERR_VALIDATION, p->name,
			    "must be a number");
			return NULL;
		}
		return ju_must(json_object_new_double(d));
	}
	return NULL;
}

/* The operation's input from the path and the query: a new reference,
 * or NULL with e set. */
static json_object *
input(struct req *r, const struct report *rp, struct error *e)
{
	json_object	*in = ju_obj(), *v;
	char		*buf = xmalloc(QUERY_MAX);
	size_t		 i;

	ju_add(in, "id", ju_string(r->params[0]));
	for (i = 0; i < NPARAMS; i++) {
		if ((params[i].calibration_only && !rp->calibration) ||
		    req_query(r, params[i].name, buf, QUERY_MAX) == NULL)
			continue;
		if ((v = param_value(&params[i], buf, e)) == NULL) {
			json_object_put(in);
			in = NULL;
			break;
		}
		ju_add(in, params[i].name, v);
	}
	free(buf);
	return in;
}

/* The report in a text format: rendered into memory, then answered. */
static int
answer_rendered(struct req *r, const struct report *rp, json_object *report,
    enum cal_format fmt, struct error *e)
{
	FILE	*f;
	char	*text = NULL;
	size_t	 len = 0;
	int	 rc;

	if ((f = open_memstream(&text, &len)) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	rc = rp->render(f, report, fmt);
	if (fclose(f) != 0 || rc == -1) {
		free(text);
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	}
	http_raw(r, 200, calibration_media_type(fmt), text, len);
	free(text);
	return 0;
}

static int
answer_report(struct req *r, const struct report *rp, struct error *e)
{
	struct op_ctx	 ctx;
	json_object	*in, *out = NULL;
	enum cal_format	 fmt;
	int		 rc;

	if ((in = input(r, rp, e)) == NULL)
		return -1;
	ctx.st = r->store;
	ctx.settings = r->settings;
	ctx.actor = r->app.name;
	rc = ops_run(rp->op, &ctx, in, &out, e);
	fmt = ju_str(in, "format") != NULL ?
	    calibration_format(ju_str(in, "format")) : CAL_FORMAT_JSON;
	if (rc == 0 && fmt == CAL_FORMAT_JSON)
		http_json(r, 200, out);
	else if (rc == 0)
		rc = answer_rendered(r, rp, out, fmt, e);
	json_object_put(in);
	json_object_put(out);
	return rc;
}

int
handle_admin_calibration(struct req *r, struct error *e)
{
	return answer_report(r, &reports[0], e);
}

int
handle_admin_compare(struct req *r, struct error *e)
{
	return answer_report(r, &reports[1], e);
}
