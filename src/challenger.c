/* challenger.c: a schema version's challengers, asked after the client
 * is answered (see challenger.h; doc/design.md, section 22). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "answer.h"
#include "backend.h"
#include "backend_http.h"
#include "challenger.h"
#include "clock.h"
#include "compare.h"
#include "json_util.h"
#include "log.h"
#include "metrics.h"
#include "question.h"

/* The job handed over by the request just answered; n 0 none. */
static struct {
	char			 id[UUID7_LEN + 1];
	size_t			 n;
	struct challenger	 c[CHALLENGER_MAX];	/* chosen, n used */
	json_object		*state;		/* owned: a ref */
	json_object		*questions;	/* owned: a ref */
} job;

static void
job_clear(void)
{
	json_object_put(job.state);
	json_object_put(job.questions);
	job.state = job.questions = NULL;
	job.n = 0;
}

void
challenger_queue(const char *id, const struct challenger_list *list,
    json_object *state, json_object *questions)
{
	size_t i;

	job_clear();
	for (i = 0; i < list->n && job.n < CHALLENGER_MAX; i++)
		if (cmp_to_challenger(id, list->c[i].backend,
		    list->c[i].share))
			job.c[job.n++] = list->c[i];
	if (job.n == 0)
		return;
	snprintf(job.id, sizeof(job.id), "%s", id);
	job.state = json_object_get(state);
	job.questions = json_object_get(questions);
}

/* The untempered distributions of a for questions, question by
 * question, as the decision keeps its own: a new object, or NULL (e
 * set) when they do not fit. */
static json_object *
distributions(const char *backend, json_object *questions,
    struct backend_answer *a, struct error *e)
{
	json_object	*dists = ju_obj(), *d;
	size_t		 i = 0, n;

	json_object_object_foreach(questions, name, q) {
		n = question_arity(q);
		if (i >= a->nquestions ||
		    answer_normalise(a->dist[i], n) == -1 ||
		    (d = answer_distribution_json(q, a->dist[i], n)) == NULL) {
			json_object_put(dists);
			error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
			    "backend '%s' gave no usable distribution for "
			    "'%s'", backend, name);
			return NULL;
		}
		ju_add(dists, name, d);
		i++;
	}
	return dists;
}

int
challenger_ask(struct store *st, const struct settings *s,
    const struct backend *b, const char *id, json_object *state,
    json_object *questions, const char *source, int *shed,
    struct error *e)
{
	struct challenger_answer	 row;
	struct backend_answer		 ba;
	int64_t				 t0;
	int				 rc;

	*shed = 0;
	t0 = clock_mono_us();
	if (backend_challenge(st, s, b, state, questions, &ba, shed, e) ==
	    -1)
		return -1;
	memset(&row, 0, sizeof(row));
	row.latency_ms = (clock_mono_us() - t0 + 500) / 1000;
	snprintf(row.decision_id, sizeof(row.decision_id), "%s", id);
	row.backend = b->name;
	row.has_usage = ba.has_usage;
	row.input_tokens = ba.input_tokens;
	row.output_tokens = ba.output_tokens;
	row.source = source;
	row.recorded_at_ms = clock_now_ms();
	row.answers = distributions(b->name, questions, &ba, e);
	backend_answer_free(&ba);
	if (row.answers == NULL)
		return -1;
	rc = store_challenger_answer_insert(st, &row, e);
	json_object_put(row.answers);
	return rc;
}

/* Asks challenger c and records its answer: an outcome to count. */
static enum metrics_challenger
ask(struct store *st, const struct settings *s, const struct challenger *c,
    const volatile sig_atomic_t *stopping, int (*waiting)(void),
    struct error *e)
{
	struct backend	 b;
	int		 rc, shed;

	if (*stopping || waiting())
		return MC_SHED;
	store_read_begin(st);
	rc = store_backend_by_id(st, c->backend_id, &b, e);
	store_read_end(st);
	if (rc != 1 || !b.enabled)
		return rc == -1 ? MC_FAILED : MC_SHED;
	backend_http_give_up_when(waiting);
	rc = challenger_ask(st, s, &b, job.id, job.state, job.questions,
	    "live", &shed, e);
	backend_http_give_up_when(NULL);
	if (rc == -1)
		return shed || waiting() ? MC_SHED : MC_FAILED;
	return MC_OK;
}

void
challenger_run(struct store *st, const struct settings *s,
    const volatile sig_atomic_t *stopping, int (*waiting)(void))
{
	struct error			 e = { 0 };
	enum metrics_challenger		 o;
	size_t				 i;

	for (i = 0; i < job.n; i++) {
		o = ask(st, s, &job.c[i], stopping, waiting, &e);
		metrics_challenger(job.c[i].backend, o);
		if (o == MC_FAILED)
			log_warn("challenger '%s' of decision %s: %s",
			    job.c[i].backend, job.id, e.message);
		error_clear(&e);
	}
	job_clear();
}
