/* model.c: releasing what the records of model.h own. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"

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
