/* model.c: releasing what the records of model.h own, and the one
 * error both storage engines give for a conflicting outcome. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "model.h"
#include "xalloc.h"

void
schema_version_clear(struct schema_version *v)
{
	json_object_put(v->questions);
	memset(v, 0, sizeof(*v));
}

void
template_version_clear(struct template_version *v)
{
	free(v->body);
	json_object_put(v->variables);
	memset(v, 0, sizeof(*v));
}

void
decision_row_clear(struct decision_row *d)
{
	free(d->model);
	json_object_put(d->questions);
	json_object_put(d->state);
	json_object_put(d->answers);
	json_object_put(d->outcomes);
	memset(d, 0, sizeof(*d));
}

int
outcome_conflict(const char *question, const char *recorded, struct error *e)
{
	char		*field = xasprintf("answers.%s", question);
	json_object	*v = ju_parse(recorded);

	error_set(e, ERR_CONFLICT, field,
	    "an outcome with a different value is already recorded");
	error_detail(e, "recorded", v);
	free(field);
	return -1;
}
