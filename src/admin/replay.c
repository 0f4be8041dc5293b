/* replay.c: evalgate-admin replay SCHEMA --backend NAME: asks a backend
 * about decisions already recorded and records what it answers as a
 * challenger's answers, with source "replay" (README, "Challengers";
 * doc/design.md, section 22).
 *
 * The decisions are those of one schema version, walked in id order a
 * page at a time (store_replay_page()), so that memory stays bounded
 * whatever their number.  One the backend has answered already, live or
 * in an earlier replay, is passed over: a second run resumes where the
 * first stopped.  One whose state is not kept (its application had no
 * log_state, or retention cleared it) is skipped and counted: a
 * template's variables are not kept with a decision, so its state
 * cannot be rendered again.  Each call goes through backend_challenge(),
 * the path of a live challenger: no application's rate or quota is
 * charged, nor the client's backend metrics.  Calls start at most
 * --rate a second, by the monotonic clock.  SIGINT stops the walk after
 * the call in flight; what was recorded stays. */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "admin/console.h"
#include "admin/replay.h"
#include "backend.h"
#include "challenger.h"
#include "clock.h"
#include "error.h"
#include "json_util.h"
#include "question.h"
#include "settings.h"
#include "store.h"

#define REPLAY_PAGE	32	/* decisions read at a time */
#define REPLAY_RATE	5.0	/* calls a second, by default */
#define REPLAY_RATE_MIN	0.01
#define REPLAY_RATE_MAX	1000.0
#define REPLAY_EVERY	100	/* off a terminal: a progress line every
				 * so many calls */
#define REPLAY_SHOWN	5	/* failures told one by one, at most */

/* Set by SIGINT: no call starts after it. */
static volatile sig_atomic_t stopping;

/* What a run did, for its progress and its summary. */
struct counts {
	int64_t	asked;		/* calls made */
	int64_t	recorded;	/* answers written */
	int64_t	failed;		/* calls or answers that came to nothing */
	int64_t	skipped;	/* decisions without a kept state */
	int64_t	already;	/* decisions the backend had answered */
};

/* One page of the walk, copied out of the store's read: it is not held
 * across a backend call. */
struct page {
	size_t	 n;
	struct {
		char		 id[UUID7_LEN + 1];
		int		 recorded;
		int		 has_state;
		json_object	*state;		/* owned; NULL: not JSON */
	} row[REPLAY_PAGE];
};

/* What the run asks, as read from the command's input. */
struct request {
	const char	*slug;		/* borrowed from in */
	const char	*backend;	/* borrowed from in */
	int64_t		 version;	/* 0: the latest */
	int64_t		 limit;		/* calls at most */
	double		 rate;		/* calls a second at most */
	int64_t		 since_ms;
};

static void
on_sigint(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
page_add(const struct replay_row *r, void *arg)
{
	struct page *p = arg;

	if (p->n == REPLAY_PAGE)
		return;
	memcpy(p->row[p->n].id, r->id, sizeof(p->row[p->n].id));
	p->row[p->n].recorded = r->recorded;
	p->row[p->n].has_state = r->state != NULL;
	p->row[p->n].state = r->state != NULL ? ju_parse(r->state) : NULL;
	p->n++;
}

static void
page_clear(struct page *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		json_object_put(p->row[i].state);
	p->n = 0;
}

/* Asks b about decision id's state and records its answer: 0, or -1
 * with e set and nothing recorded. */
static int
ask(struct store *st, const struct settings *s, const struct backend *b,
    json_object *questions, const char *id, json_object *state,
    struct error *e)
{
	int	shed;

	if (state == NULL)
		return error_set(e, ERR_INTERNAL, NULL,
		    "the state kept is not JSON");
	if (question_validate_state(state, s->max_state_chars, e) == -1)
		return -1;
	return challenger_ask(st, s, b, id, state, questions, "replay",
	    &shed, e);
}

/* Waits until the next call may start (*next_us, by the monotonic
 * clock; SIGINT cuts the wait short), then moves *next_us one interval
 * of rate past it. */
static void
pace(int64_t *next_us, double rate)
{
	struct timespec	ts;
	int64_t		now = clock_mono_us(), wait;

	if (*next_us > now) {
		wait = *next_us - now;
		ts.tv_sec = (time_t)(wait / 1000000);
		ts.tv_nsec = (long)(wait % 1000000) * 1000;
		nanosleep(&ts, NULL);
		now = *next_us;
	}
	*next_us = now + (int64_t)(1e6 / rate);
}

static void
progress(const struct counts *c, int tty, int last)
{
	if (!tty && !last && (c->asked == 0 || c->asked % REPLAY_EVERY != 0))
		return;
	fprintf(stderr, "%sreplay: %lld asked, %lld recorded, %lld failed, "
	    "%lld skipped (no state), %lld already recorded%s",
	    tty ? "\r" : "", (long long)c->asked, (long long)c->recorded,
	    (long long)c->failed, (long long)c->skipped,
	    (long long)c->already, tty ? (last ? "\n" : "") : "\n");
	fflush(stderr);
}

/* Shows why decision id's call failed, on a line of its own (tty: over
 * the progress line); last: it is the last failure shown. */
static void
shown(const struct error *why, const char *id, int tty, int last)
{
	fprintf(stderr, "%sevalgate-admin: decision %s: %s%s\n",
	    tty ? "\r" : "", id, why->message,
	    last ? " (further failures are counted only)" : "");
}

/* Walks the decisions of v for b and asks about those it has not
 * answered, as rq bounds it, counting in c.  0, or -1 with e set when
 * the store failed (what was recorded stays). */
static int
walk(struct store *st, const struct settings *s, const struct request *rq,
    const struct schema_version *v, const struct backend *b,
    struct counts *c, struct error *e)
{
	struct replay_range	 q;
	struct page		 p;
	struct error		 why = { 0 };
	int64_t			 next_us = 0;
	size_t			 i;
	int			 n, tty = isatty(STDERR_FILENO), done = 0;

	memset(&q, 0, sizeof(q));
	memset(&p, 0, sizeof(p));
	q.schema_id = v->schema_id;
	q.version = v->version;
	q.since_ms = rq->since_ms;
	q.backend = b->name;
	while (!done && !stopping) {
		store_read_begin(st);
		n = store_replay_page(st, &q, REPLAY_PAGE, page_add, &p, e);
		store_read_end(st);
		if (n == -1)
			return -1;
		done = n < REPLAY_PAGE;
		for (i = 0; i < p.n && !stopping; i++) {
			memcpy(q.after_id, p.row[i].id, sizeof(q.after_id));
			if (p.row[i].recorded) {
				c->already++;
				continue;
			}
			if (!p.row[i].has_state) {
				c->skipped++;
				continue;
			}
			if (c->asked == rq->limit) {
				done = 1;
				break;
			}
			pace(&next_us, rq->rate);
			if (stopping)
				break;
			c->asked++;
			if (ask(st, s, b, v->questions, p.row[i].id,
			    p.row[i].state, &why) == 0)
				c->recorded++;
			else if (++c->failed <= REPLAY_SHOWN)
				shown(&why, p.row[i].id, tty,
				    c->failed == REPLAY_SHOWN);
			error_clear(&why);
			progress(c, tty, 0);
		}
		page_clear(&p);
	}
	progress(c, tty, 1);
	return 0;
}

/* rq from in: 0, or -1 having told why (1). */
static int
parse_request(json_object *in, struct request *rq)
{
	struct error	 e = { 0 };
	const char	*since = NULL;

	memset(rq, 0, sizeof(*rq));
	rq->slug = ju_str(in, "id");
	rq->backend = ju_str(in, "backend");
	rq->limit = INT64_MAX;
	rq->rate = REPLAY_RATE;
	rq->since_ms = INT64_MIN;
	if (ju_opt_int(in, "version", 1, INT64_MAX, &rq->version, NULL,
	    &e) == -1 ||
	    ju_opt_int(in, "limit", 1, INT64_MAX, &rq->limit, NULL, &e) == -1 ||
	    ju_opt_num(in, "rate", REPLAY_RATE_MIN, REPLAY_RATE_MAX,
	    &rq->rate, &e) == -1 ||
	    ju_opt_str(in, "since", 64, &since, &e) == -1) {
		console_error(1, NULL, "--%s", e.message);
		error_clear(&e);
		return -1;
	}
	if (since != NULL && clock_parse_rfc3339(since, &rq->since_ms) == -1) {
		console_error(1, NULL, "--since: must be a date YYYY-MM-DD or "
		    "an RFC 3339 time");
		return -1;
	}
	return 0;
}

/* The version and the backend rq names, checked: 0, or -1 having told
 * why (e set, or e clear when told here). */
static int
find(struct store *st, const struct request *rq, struct schema_version *v,
    struct backend *b, struct error *e)
{
	int	rc;

	store_read_begin(st);
	rc = store_schema_get(st, rq->slug, rq->version, v, e);
	if (rc == 0 && rq->version == 0)
		error_set(e, ERR_NOT_FOUND, NULL, "no schema named '%s'",
		    rq->slug);
	else if (rc == 0)
		error_set(e, ERR_NOT_FOUND, NULL, "no version %lld of a "
		    "schema named '%s'", (long long)rq->version, rq->slug);
	if (rc == 1 && (rc = store_backend_by_name(st, rq->backend, b,
	    e)) == 0)
		error_set(e, ERR_NOT_FOUND, NULL, "no backend named '%s'",
		    rq->backend);
	store_read_end(st);
	if (rc != 1)
		return -1;
	if (!b->enabled)
		return error_set(e, ERR_VALIDATION, "backend",
		    "'%s' is disabled", b->name);
	if (b->id == v->backend_id)
		return error_set(e, ERR_VALIDATION, "backend", "'%s' is the "
		    "version's own backend", b->name);
	return backend_check_schema(b, v->questions, e);
}

int
cmd_replay(const struct settings *s, json_object *in)
{
	struct request		 rq;
	struct schema_version	 v;
	struct backend		 b;
	struct counts		 c;
	struct error		 e = { 0 };
	struct sigaction	 sa, old;
	struct store		*st;
	int			 rc = 1;

	if (parse_request(in, &rq) == -1)
		return 1;
	memset(&v, 0, sizeof(v));
	memset(&c, 0, sizeof(c));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((st = store_open(s, &e)) == NULL)
		goto out;
	if (find(st, &rq, &v, &b, &e) == -1)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	rc = walk(st, s, &rq, &v, &b, &c, &e) == -1 ? 1 : 0;
	sigaction(SIGINT, &old, NULL);
	printf("schema: %s\nversion: %lld\nbackend: %s\nasked: %lld\n"
	    "recorded: %lld\nfailed: %lld\nskipped: %lld\n"
	    "already_recorded: %lld\n%s", v.slug, (long long)v.version,
	    b.name, (long long)c.asked, (long long)c.recorded,
	    (long long)c.failed, (long long)c.skipped, (long long)c.already,
	    stopping ? "stopped: SIGINT\n" : "");
	fflush(stdout);
	if (rc == 0 && stopping)
		rc = 130;
out:
	if (rc == 1 && e.message[0] != '\0')
		console_error(1, NULL, "%s", e.message);
	error_clear(&e);
	schema_version_clear(&v);
	if (st != NULL)
		store_close(st);
	curl_global_cleanup();
	return rc;
}
