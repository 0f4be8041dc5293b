/* store_sqlite_decision.c: decisions, their answers and outcomes; a
 * decision written in a group commit (shm_group.h) by whichever worker
 * leads. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "clock.h"
#include "json_util.h"
#include "log.h"
#include "settings.h"
#include "shm.h"
#include "shm_group.h"
#include "store_sqlite.h"
#include "xalloc.h"

static const char *
compact(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* A decision as a record: flat bytes that whichever worker of the host
 * leads a group commit can write (shm_group.h).  The fixed part, then
 * nanswers struct rec_answer, then the text they point into, each text
 * an offset from the record's start and a length (REC_NULL: NULL).
 * A leader of another build may read it, so its layout is the shared
 * memory's: SHM_VERSION changes with it, which the asserts after the
 * structs check (shm.h says how). */
#define REC_NULL	UINT32_MAX

struct rec_text {
	uint32_t	 off;
	uint32_t	 len;
};

struct rec_answer {
	struct rec_text	 name, type, distribution, answer;
	double		 label_mass;
	int32_t		 has_mass;
};

struct rec {
	char		 id[UUID7_LEN + 1];
	char		 quota_day[16];		/* "YYYY-MM-DD" */
	int32_t		 has_usage;
	uint32_t	 nanswers;
	int64_t		 app_id, created_at_ms, schema_id, schema_version;
	int64_t		 template_id, template_version;
	int64_t		 input_tokens, output_tokens;
	int64_t		 latency_gateway_ms, latency_backend_ms;
	int64_t		 quota_units;
	struct rec_text	 model, backend, state;
};

/* A record of another size needs a new SHM_VERSION and its pair of sizes
 * in shm.h: this fails the build until both are there. */
_Static_assert(sizeof(struct rec) == SHM_RECORD_HEAD,
    "struct rec changed: bump SHM_VERSION and add its sizes (shm.h)");
_Static_assert(sizeof(struct rec_answer) == SHM_RECORD_ANSWER,
    "struct rec_answer changed: bump SHM_VERSION and add its sizes (shm.h)");

/* Appends s (NULL: none) to the record's text; *bad set when it does not
 * fit. */
static struct rec_text
text(struct buf *b, const char *s, int *bad)
{
	struct rec_text	t = { (uint32_t)b->len, REC_NULL };
	size_t		n;

	if (s == NULL)
		return t;
	if ((n = strlen(s)) >= REC_NULL || buf_add(b, s, n) != BUF_OK)
		*bad = 1;
	else
		t.len = (uint32_t)n;
	return t;
}

/* The decision and its answers into b: 0, or -1 when it does not fit
 * (STORE_RECORD_MAX) or memory ran out. */
static int
encode(struct buf *b, const struct decision *d, json_object *questions,
    const char *const *answers, const char *const *dists)
{
	size_t			 n = (size_t)json_object_object_length(questions);
	struct rec		 r;
	struct rec_answer	 a;
	json_object		*type;
	uint32_t		 i = 0;
	int			 bad = 0;

	buf_reset(b);
	if (buf_extend(b, sizeof(r) + n * sizeof(a), NULL) == NULL)
		return -1;
	memset(&r, 0, sizeof(r));
	memcpy(r.id, d->id, sizeof(r.id));
	snprintf(r.quota_day, sizeof(r.quota_day), "%s",
	    d->quota_day != NULL ? d->quota_day : "");
	r.has_usage = d->has_usage;
	r.app_id = d->app_id;
	r.created_at_ms = d->created_at_ms;
	r.schema_id = d->schema_id;
	r.schema_version = d->schema_version;
	r.template_id = d->template_id;
	r.template_version = d->template_version;
	r.input_tokens = d->input_tokens;
	r.output_tokens = d->output_tokens;
	r.latency_gateway_ms = d->latency_gateway_ms;
	r.latency_backend_ms = d->latency_backend_ms;
	r.quota_units = d->quota_units;
	r.model = text(b, d->model, &bad);
	r.backend = text(b, d->backend, &bad);
	r.state = text(b, d->state, &bad);
	json_object_object_foreach(questions, name, q) {
		memset(&a, 0, sizeof(a));
		json_object_object_get_ex(q, "type", &type);
		a.name = text(b, name, &bad);
		a.type = text(b, json_object_get_string(type), &bad);
		a.distribution = text(b, dists[i], &bad);
		a.answer = text(b, answers[i], &bad);
		if ((a.has_mass = d->label_mass != NULL))
			a.label_mass = d->label_mass[i];
		memcpy(b->p + sizeof(r) + i++ * sizeof(a), &a, sizeof(a));
	}
	r.nanswers = i;
	memcpy(b->p, &r, sizeof(r));
	return bad ? -1 : 0;
}

/* Binds text t of record p (len bytes): 0, or -1 when it lies outside. */
static int
bind_text(sqlite3_stmt *stmt, int i, const char *p, size_t len,
    struct rec_text t)
{
	if (t.len == REC_NULL)
		return sqlite3_bind_null(stmt, i) == SQLITE_OK ? 0 : -1;
	if (t.off > len || t.len > len - t.off)
		return -1;
	sqlite3_bind_text(stmt, i, p + t.off, (int)t.len, SQLITE_STATIC);
	return 0;
}

static int
damaged(struct error *e)
{
	return error_set(e, ERR_INTERNAL, NULL, "a decision to be written "
	    "was damaged in shared memory");
}

/* Text t of record p (len bytes) into *s and *n: 0, or -1 when it lies
 * outside or is NULL. */
static int
slice(const char *p, size_t len, struct rec_text t, const char **s,
    size_t *n)
{
	if (t.len == REC_NULL || t.off > len || t.len > len - t.off)
		return -1;
	*s = p + t.off;
	*n = t.len;
	return 0;
}

/* The answers of record r (p, len bytes) as the text of
 * decisions.answers, into st->answers: 0, or -1 with e set. */
static int
answers_text(struct store *st, const struct rec *r, const char *p,
    size_t len, struct error *e)
{
	struct rec_answer	 a;
	struct answer_text	 t;
	uint32_t		 i;

	buf_reset(&st->answers);
	for (i = 0; i < r->nanswers; i++) {
		memcpy(&a, p + sizeof(*r) + i * sizeof(a), sizeof(a));
		t.label_mass = a.has_mass ? &a.label_mass : NULL;
		if (slice(p, len, a.name, &t.name, &t.name_len) == -1 ||
		    slice(p, len, a.type, &t.type, &t.type_len) == -1 ||
		    slice(p, len, a.distribution, &t.dist, &t.dist_len) == -1 ||
		    slice(p, len, a.answer, &t.answer, &t.answer_len) == -1)
			return damaged(e);
		if (store_answers_add(&st->answers, &t) == -1)
			return error_set(e, ERR_UNAVAILABLE, NULL,
			    "out of memory");
	}
	if (store_answers_end(&st->answers) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	return 0;
}

/* Writes record p (len bytes) in the open transaction: the decision with
 * its answers, and its charge to the day's units: 0.  A decision already
 * there is not written again, nor charged: 1.  It is there when a leader
 * that died had committed it, or when another leader wrote a copy of the
 * record (a shared-memory file replaced by a copy of itself carries the
 * records it held), so the record is written at most once whoever
 * holds it.  -1 with e set. */
static int
write_record(struct store *st, const void *data, size_t len,
    struct error *e)
{
	const char	*p = data;
	struct rec	 r;
	sqlite3_stmt	*stmt;

	if (len < sizeof(r))
		return damaged(e);
	memcpy(&r, p, sizeof(r));
	if (r.nanswers > (len - sizeof(r)) / sizeof(struct rec_answer) ||
	    r.id[UUID7_LEN] != '\0' ||
	    r.quota_day[sizeof(r.quota_day) - 1] != '\0')
		return damaged(e);
	if (answers_text(st, &r, p, len, e) == -1 ||
	    (stmt = sqlite_stmt(st, STMT_DECISION_INSERT, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, r.id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, r.app_id);
	sqlite3_bind_int64(stmt, 3, r.created_at_ms);
	sqlite3_bind_int64(stmt, 6, r.schema_id);
	sqlite3_bind_int64(stmt, 7, r.schema_version);
	sqlite_bind_optional(stmt, 8, r.template_id);
	sqlite_bind_optional(stmt, 9, r.template_version);
	if (r.has_usage) {
		sqlite3_bind_int64(stmt, 11, r.input_tokens);
		sqlite3_bind_int64(stmt, 12, r.output_tokens);
	}
	sqlite3_bind_int64(stmt, 13, r.latency_gateway_ms);
	sqlite3_bind_int64(stmt, 14, r.latency_backend_ms);
	sqlite3_bind_text(stmt, 15, st->answers.p, (int)st->answers.len,
	    SQLITE_STATIC);
	if (bind_text(stmt, 4, p, len, r.model) == -1 ||
	    bind_text(stmt, 5, p, len, r.backend) == -1 ||
	    bind_text(stmt, 10, p, len, r.state) == -1)
		return damaged(e);
	if (sqlite_exec_stmt(st, stmt, e, "insert decision") == -1)
		return -1;
	if (sqlite3_changes(st->db) == 0)
		return 1;
	return sqlite_quota_add(st, r.app_id, r.quota_day, r.quota_units, e);
}

/* Our record in a transaction of its own. */
static int
write_alone(struct store *st, struct error *e)
{
	if (sq_begin(st, e) == -1)
		return -1;
	if (write_record(st, st->rec.p, st->rec.len, e) < 0 ||
	    sq_commit(st, e) == -1) {
		sq_rollback(st);
		return -1;
	}
	return 0;
}

#ifdef EVALGATE_TEST_HOOKS
/* Tests kill a leader that holds others' decisions, before its COMMIT
 * and after it. */
static void
hold(struct store *st, const char *what, int n)
{
	if (n > 0 && st->settings->test_group_hold_ms > 0) {
		log_info("test: %s %d decisions", what, n + 1);
		usleep((useconds_t)st->settings->test_group_hold_ms * 1000);
	}
}
#else
#define hold(st, what, n)
#endif

/* The transaction could not begin (the database busy past its limit,
 * or unavailable): the decisions waiting would meet the same, one
 * leader after another, so they are all told now, as writers in the
 * queue give up together; one a leader that died may have written
 * looks for itself. */
static void
refuse_waiting(struct shm *m, const struct error *e)
{
	const void	*data;
	size_t		 len;
	int		 h, w;

	while ((h = shm_group_take(m, &data, &len, &w)) >= 0)
		shm_group_finish(m, h, w ? SHM_GROUP_ALONE : SHM_GROUP_FAILED,
		    e);
	shm_group_leave(m);
}

/* Leads a group (shm_group.h): our record and those the other workers have
 * waiting, in one transaction, taken until the COMMIT; each owner is
 * told how it went once the commit is durable.  When one of theirs, or
 * the commit, fails, all is rolled back and each owner writes its own
 * alone, to meet its own error.  Records a leader that died had taken
 * are looked for first, and said in the log.  With full, the records of
 * workers still serving are awaited a while before the COMMIT. */
static int
lead(struct store *st, struct shm *m, int written, struct error *e)
{
	int		 taken[SHM_GROUP_MAX], n = 0, i, h, w, sync, rc;
	int		 orphans = written, found;
	int64_t		 until;
	const void	*data;
	size_t		 len;
	struct error	 fe = { 0 };

	if (sq_begin(st, e) == -1) {
		refuse_waiting(m, e);
		return -1;
	}
	if ((found = write_record(st, st->rec.p, st->rec.len, e)) < 0) {
		sq_rollback(st);
		shm_group_leave(m);
		return -1;
	}
	/* With full, the decisions of workers about to submit are awaited,
	 * as long as a sync takes at most, to share this commit's sync
	 * rather than each wait for one of its own (shm_group_await). */
	until = clock_mono_us() + (st->sync_full ? (st->sync_us <
	    STORE_AWAIT_MAX_US ? st->sync_us : STORE_AWAIT_MAX_US) : 0);
	do
		while (n < SHM_GROUP_MAX && fe.code == ERR_NONE &&
		    (h = shm_group_take(m, &data, &len, &w)) >= 0) {
			taken[n++] = h;
			orphans += w;
			if ((rc = write_record(st, data, len, &fe)) >= 0)
				found += rc;
		}
	while (n < SHM_GROUP_MAX && fe.code == ERR_NONE &&
	    shm_group_await(m, until));
	hold(st, "leading", n);
	if (fe.code == ERR_NONE &&
	    sqlite_commit_unsynced(st, &sync, &fe) == 0) {
		rc = sync ? sqlite_sync(st, e) : 0;
		hold(st, "committed", n);
		shm_group_leave(m);
		for (i = 0; i < n; i++)
			shm_group_finish(m, taken[i], rc == 0 ?
			    SHM_GROUP_DONE : SHM_GROUP_FAILED, e);
		if (orphans > 0)
			log_warn("database: took over %d decisions from a "
			    "worker that died writing them; it had committed "
			    "%d", orphans, found);
		return rc;
	}
	error_clear(&fe);
	sq_rollback(st);
	shm_group_leave(m);
	for (i = 0; i < n; i++)
		shm_group_finish(m, taken[i], SHM_GROUP_ALONE, NULL);
	return write_alone(st, e);
}

/* Writes the record encoded in st->rec: alone, or in a group. */
static int
write_decision(struct store *st, struct error *e)
{
	struct shm	*m = shm_host();
	void		*slot;
	size_t		 size;
	int		 written = 0;

	/* No snapshot is held while waiting: a checkpoint waits for it. */
	sq_read_end(st);
	if ((slot = shm_group_buffer(m, &size)) == NULL ||
	    st->rec.len > size)
		return write_alone(st, e);
	memcpy(slot, st->rec.p, st->rec.len);
	switch (shm_group_submit(m, st->rec.len, STORE_QUEUE_WAIT_MS,
	    &written, e)) {
	case SHM_GROUP_DONE:
		return 0;
	case SHM_GROUP_FAILED:
		return -1;
	case SHM_GROUP_LEAD:
		return lead(st, m, written, e);
	default:
		return write_alone(st, e);
	}
}

int
sq_decision_insert(struct store *st, const struct decision *d,
    json_object *questions, const char *const *answers,
    const char *const *dists, struct error *e)
{
	int rc;

	if (encode(&st->rec, d, questions, answers, dists) == -1)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	rc = write_decision(st, e);
	/* A large logged state is not kept in every worker. */
	if (st->rec.cap > STORE_RECORD_KEEP)
		buf_free(&st->rec);
	if (st->answers.cap > STORE_RECORD_KEEP)
		buf_free(&st->answers);
	return rc;
}

/* Reading a decision back. */

static const char *
col(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

/* The decision row into d (owning its copies); d is cleared by the
 * caller on failure. */
static int
read_decision(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	sqlite_col_text(stmt, 0, d->id, sizeof(d->id));
	d->app_id = sqlite3_column_int64(stmt, 1);
	d->created_at_ms = sqlite3_column_int64(stmt, 2);
	/* The model is the client's, of any length: checked. */
	if (col(stmt, 3) != NULL && (d->model = strdup(col(stmt, 3))) == NULL)
		return error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	sqlite_col_text(stmt, 4, d->backend, sizeof(d->backend));
	sqlite_col_text(stmt, 5, d->schema_slug, sizeof(d->schema_slug));
	d->schema_version = sqlite3_column_int64(stmt, 6);
	sqlite_col_text(stmt, 8, d->template_slug, sizeof(d->template_slug));
	d->template_version = sqlite3_column_int64(stmt, 9);
	if (stored_json(col(stmt, 7), &d->questions, "questions", e) == -1 ||
	    store_bad_row(1, bound_decision(d, e), e) == -1 ||
	    (col(stmt, 10) != NULL &&
	    stored_json(col(stmt, 10), &d->state, "state", e) == -1))
		return -1;
	d->answers = ju_obj();
	d->outcomes = ju_obj();
	return 0;
}

static int
add_answer(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	json_object *a;

	if (stored_json(col(stmt, 1), &a, "answer", e) == -1)
		return -1;
	ju_add(d->answers, col(stmt, 0), a);
	return 0;
}

static int
add_outcome(sqlite3_stmt *stmt, struct decision_row *d, struct error *e)
{
	json_object *o, *v;

	if (stored_json(col(stmt, 1), &v, "outcome", e) == -1)
		return -1;
	o = ju_obj();
	ju_add(o, "value", v);
	ju_add_str(o, "source", col(stmt, 2));
	ju_add(o, "recorded_at_ms", ju_int(sqlite3_column_int64(stmt, 3)));
	ju_add(d->outcomes, col(stmt, 0), o);
	return 0;
}

/* Hands each row of statement id, run for d->id, to add(): 0 or -1. */
static int
read_rows(struct store *st, enum stmt id, struct decision_row *d,
    int (*add)(sqlite3_stmt *, struct decision_row *, struct error *),
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, id, e);
	int		 rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, d->id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		if (add(stmt, d, e) == -1) {
			sqlite3_reset(stmt);
			return -1;
		}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "decision rows");
}

int
sq_decision_get(struct store *st, const char *id, int64_t app_id,
    struct decision_row *d, struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_DECISION_GET, e);
	int		 rc;

	memset(d, 0, sizeof(*d));
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, app_id);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		rc = read_decision(stmt, d, e) == -1 ? -1 : 1;
	else
		rc = rc == SQLITE_DONE ? 0 : sqlite_fail(st, e, "decision");
	sqlite3_reset(stmt);
	if (rc == 1 && (read_rows(st, STMT_ANSWERS_GET, d, add_answer, e) ==
	    -1 || read_rows(st, STMT_OUTCOMES_GET, d, add_outcome, e) == -1))
		rc = -1;
	if (rc != 1)
		decision_row_clear(d);
	return rc;
}

/* Outcomes (doc/design.md, section 14). */

/* One question's outcome, inside the caller's transaction. */
static int
record_one(struct store *st, const char *id, const char *question,
    json_object *value, const char *source, int64_t now_ms,
    struct error *e)
{
	sqlite3_stmt	*stmt = sqlite_stmt(st, STMT_OUTCOME_VALUE, e);
	const char	*text = compact(value);
	int		 rc, same = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, question, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		same = col(stmt, 0) != NULL && strcmp(col(stmt, 0), text) == 0;
		if (!same)
			outcome_conflict(question, col(stmt, 0) ? col(stmt, 0) : "",
			    e);
	}
	sqlite3_reset(stmt);
	if (rc == SQLITE_ROW)
		return same ? 0 : -1;
	if (rc != SQLITE_DONE)
		return sqlite_fail(st, e, "outcome");
	if ((stmt = sqlite_stmt(st, STMT_OUTCOME_INSERT, e)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, question, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, text, -1, SQLITE_TRANSIENT);
	sqlite_bind_text(stmt, 4, source);
	sqlite3_bind_int64(stmt, 5, now_ms);
	return sqlite_exec_stmt(st, stmt, e, "insert outcome");
}

int
sq_outcome_record(struct store *st, const char *id, json_object *values,
    const char *source, int64_t now_ms, struct error *e)
{
	if (sq_begin(st, e) == -1)
		return -1;
	json_object_object_foreach(values, question, value) {
		if (record_one(st, id, question, value, source, now_ms,
		    e) == -1) {
			sq_rollback(st);
			return -1;
		}
	}
	return sq_commit(st, e);
}
