/* backend.c: the registry of backend kinds, the dispatch on a backend's
 * kind, and the replica loop that every remote kind shares
 * (doc/design.md, sections 7.1 and 7.2).
 *
 * The loop: replicas are tried in turn from a rotating start, until one
 * answers what fits the questions.  What a failed attempt says of its
 * replica is the kind's verdict (struct backend_attempt): a failure of
 * the transport or the server (connection, timeout, 5xx, 529, 429) is
 * counted host-wide in the shared memory, and after BACKEND_COOL_AFTER
 * of them in a row (consecutive failures, as a proxy's outlier
 * detection counts them) the replica rests for a cool-down shared by
 * every worker through the cache.  An answer that does not fit the
 * questions fails only its own evaluation (the next replica is asked):
 * it proves the replica's transport and server work, and ends its
 * count, as a success does.  When its cool-down is over, one worker of
 * the host probes it (the shared memory decides which) while the others
 * still leave it out; a probe that fails is one more failure in a row,
 * and the replica rests again at once.  When every replica is left out,
 * the call is a 503 at once, with Retry-After the time until the first
 * may be asked: a dead backend does not hold a worker for its timeout.
 * Around the loop, the in-flight rule (inflight.h) keeps a backend
 * slower than its normal from holding more than half of the host's
 * workers (or the operator's max_in_flight); beyond, a 503.  When no
 * replica answered: 503 backend_unavailable, with the largest retry
 * hint an upstream gave, else 1 s.  Before it all, a backend with
 * auth_env whose variable holds no usable key is a 503 too
 * (doc/design.md, section 7.5).  Each 503 says why (enum err_unavailable), for
 * the metrics.
 *
 * The kinds' own options (struct backend_option) are read, shown and
 * looked up here too, from each kind's table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "backend_http.h"
#include "backend_lexical.h"
#include "backend_openai.h"
#include "backend_systemone.h"
#include "clock.h"
#include "inflight.h"
#include "json_util.h"
#include "log.h"
#include "metrics.h"
#include "settings.h"
#include "shm.h"
#include "shm_flight.h"
#include "shm_probe.h"
#include "shm_streak.h"

#define BACKEND_COOLDOWN_MS	30000	/* a failing replica rests */
#define BACKEND_COOL_AFTER	2	/* failures in a row that rest it */

/* Every kind, in the order "must be one of" lists them. */
static const struct backend_kind *const kinds[] = {
	&backend_kind_lexical,
	&backend_kind_systemone,
	&backend_kind_openai,
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

static unsigned long	 rotation;	/* start replica of the next call */

/* A remote call's context in the loop. */
struct kind_call {
	const struct backend_kind	*kind;
	struct store			*st;		/* borrowed; NULL: none */
	size_t				 nurls;		/* replicas to try */
	int				 challenger;	/* a challenger's call:
							 * no probe, and not
							 * in the client's
							 * metrics */
};

const struct backend_kind *
backend_kind_find(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < NKINDS; i++)
		if (strcmp(kinds[i]->name, name) == 0)
			return kinds[i];
	return NULL;
}

const struct backend_kind *
backend_kind_at(size_t i)
{
	return i < NKINDS ? kinds[i] : NULL;
}

const struct backend_option *
backend_kind_options(const char *kind)
{
	const struct backend_kind *k = backend_kind_find(kind);

	return k != NULL ? k->options : NULL;
}

int
backend_check_replicas(const struct backend_kind *k, size_t nurls,
    struct error *e)
{
	if (!k->remote && nurls > 0)
		return error_set(e, ERR_VALIDATION, "urls", "a %s backend is "
		    "built in and has no replicas", k->name);
	if (k->remote && (nurls == 0 || nurls > BACKEND_MAX_URLS))
		return error_set(e, ERR_VALIDATION, "urls", "a %s backend "
		    "needs 1 to %d replica URLs", k->name, BACKEND_MAX_URLS);
	return 0;
}

int
backend_check_add(const struct backend_kind *k, json_object *in,
    const struct backend *b, struct error *e)
{
	return k->check_add != NULL ? k->check_add(k, in, b, e) : 0;
}

int
backend_check_schema(const struct backend *b, json_object *questions,
    struct error *e)
{
	const struct backend_kind	*k = backend_kind_find(b->kind);

	if (k == NULL || k->check_schema == NULL)
		return 0;
	return k->check_schema(b, questions, e);
}

/* ---------------------------------------------------- kinds' options */

/* The option named name among k's; NULL: none such. */
static const struct backend_option *
option_of(const struct backend_kind *k, const char *name)
{
	const struct backend_option	*o;

	for (o = k != NULL ? k->options : NULL; o != NULL && o->name != NULL;
	    o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* Option o's value in b's options (a new object the caller puts), or
 * NULL when it has none set. */
static json_object *
option_value(const struct backend *b, const struct backend_option *o)
{
	json_object	*all, *v = NULL;

	if (b->options[0] == '\0' || (all = ju_parse(b->options)) == NULL)
		return NULL;
	if (json_object_object_get_ex(all, o->name, &v))
		json_object_get(v);
	json_object_put(all);
	return v;
}

int
backend_read_options(const struct backend_kind *k, json_object *in,
    int is_update, struct backend *b, struct error *e)
{
	const struct backend_kind	*o;
	const struct backend_option	*opt;
	json_object			*set = NULL, *v;
	const char			*text;
	size_t				 i;
	int				 rc;

	for (i = 0; (o = backend_kind_at(i)) != NULL; i++)
		for (opt = o->options; opt != NULL && opt->name != NULL;
		    opt++)
			if (json_object_object_get_ex(in, opt->name, NULL) &&
			    option_of(k, opt->name) == NULL)
				return error_set(e, ERR_VALIDATION, opt->name,
				    "is an option of %s backends, not of %s "
				    "ones", o->name, k->name);
	/* Those given over those b has; null: the default, not stored. */
	if (is_update && b->options[0] != '\0')
		set = ju_parse(b->options);
	if (set == NULL || !json_object_is_type(set, json_type_object)) {
		json_object_put(set);
		set = ju_obj();
	}
	for (opt = k->options; opt != NULL && opt->name != NULL; opt++) {
		if (!json_object_object_get_ex(in, opt->name, &v))
			continue;
		if (v == NULL)
			json_object_object_del(set, opt->name);
		else
			ju_add(set, opt->name, json_object_get(v));
	}
	text = json_object_to_json_string_ext(set, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL)
		rc = error_set(e, ERR_UNAVAILABLE, NULL, "out of memory");
	else if (json_object_object_length(set) == 0) {
		b->options[0] = '\0';
		rc = bound_options(k->options, b->options, b->optval, e);
	} else if (strlen(text) >= sizeof(b->options))
		rc = error_set(e, ERR_VALIDATION, NULL, "the options of a "
		    "backend must be at most %zu bytes as compact JSON",
		    sizeof(b->options) - 1);
	else {
		memcpy(b->options, text, strlen(text) + 1);
		rc = bound_options(k->options, b->options, b->optval, e);
	}
	json_object_put(set);
	return rc;
}

int
backend_options_given(json_object *in)
{
	const struct backend_kind	*k;
	const struct backend_option	*opt;
	size_t				 i;

	for (i = 0; (k = backend_kind_at(i)) != NULL; i++)
		for (opt = k->options; opt != NULL && opt->name != NULL;
		    opt++)
			if (json_object_object_get_ex(in, opt->name, NULL))
				return 1;
	return 0;
}

void
backend_options_json(const struct backend *b, json_object *o)
{
	const struct backend_kind	*k = backend_kind_find(b->kind), *kk;
	const struct backend_option	*opt;
	json_object			*all = NULL, *v;
	size_t				 i;

	if (b->options[0] != '\0')
		all = ju_parse(b->options);
	/* Every kind's options, so that a table of backends has one set
	 * of columns; null where b has the default or not the option. */
	for (i = 0; (kk = backend_kind_at(i)) != NULL; i++)
		for (opt = kk->options; opt != NULL && opt->name != NULL;
		    opt++) {
			if (json_object_object_get_ex(o, opt->name, NULL))
				continue;
			v = NULL;
			if (all != NULL && option_of(k, opt->name) == opt &&
			    json_object_object_get_ex(all, opt->name, &v))
				json_object_get(v);
			ju_add(o, opt->name, v);
		}
	json_object_put(all);
}

long
backend_option_long(const struct backend *b, const char *name)
{
	const struct backend_kind	*k = backend_kind_find(b->kind);
	const struct backend_option	*o = option_of(k, name);
	size_t				 i;

	if (o == NULL || o->type != BOPT_LONG)
		return 0;
	i = (size_t)(o - k->options);
	if (i >= BACKEND_OPTIONS_MAX || b->optval[i] == 0)
		return o->def;
	return (long)b->optval[i];
}

json_object *
backend_option_json(const struct backend *b, const char *name)
{
	const struct backend_option *o;

	o = option_of(backend_kind_find(b->kind), name);
	if (o == NULL || o->type != BOPT_JSON)
		return NULL;
	return option_value(b, o);
}

void
backend_cleanup(void)
{
	size_t	 i;

	for (i = 0; i < NKINDS; i++)
		if (kinds[i]->cleanup != NULL)
			kinds[i]->cleanup();
}

/* ------------------------------------------------------- replica loop */

/* The replica's cool-down; a call without a store has none. */
static int64_t
cooldown_get(struct store *st, const char *url)
{
	return st != NULL ? store_cooldown_until(st, url) : 0;
}

static void
cooldown_put(struct store *st, const char *url, int64_t until_ms)
{
	if (st != NULL)
		store_cooldown_set(st, url, until_ms);
}

/* A getter for settings_load() that finds nothing set. */
static const char *
no_settings(const char *name)
{
	(void)name;
	return NULL;
}

/* s, or the settings' defaults where there are none (the unit tests);
 * NULL with e set if the defaults do not load. */
static const struct settings *
or_defaults(const struct settings *s, struct error *e)
{
	static struct settings	 defaults;
	static int		 loaded;
	char			 err[256];

	if (s != NULL)
		return s;
	if (!loaded && settings_load(&defaults, no_settings, err,
	    sizeof(err)) == -1) {
		error_set(e, ERR_INTERNAL, NULL, "settings: %s", err);
		return NULL;
	}
	loaded = 1;
	return &defaults;
}

/* 503 backend_unavailable "backend 'name': why", to come back in
 * retry_ms (1 s when there is no hint), for the reason reason.  Returns
 * -1. */
static int
unavailable(struct error *e, long retry_ms, const char *name,
    const char *why, enum err_unavailable reason)
{
	error_set(e, ERR_BACKEND_UNAVAILABLE, NULL, "backend '%s': %s", name,
	    why);
	e->retry_after_ms = retry_ms > 0 ? retry_ms : 1000;
	e->unavailable = reason;
	return -1;
}

/* Which replicas of b to ask now, from a rotating start, into order[]
 * (their count returned).  A replica resting in its cool-down is left
 * out; one whose cool-down is over is asked by the first worker of the
 * host to claim its probe, and left out by the others until the probe
 * has answered (or a cool-down has passed).  *wake_ms: when the first
 * replica left out may be asked again. */
static size_t
replicas_now(const struct kind_call *kc, const struct backend *b, size_t n,
    size_t order[BACKEND_MAX_URLS], int64_t until[BACKEND_MAX_URLS],
    long *wake_ms)
{
	struct store	*st = kc->st;
	int64_t	 now = clock_now_ms(), left;
	size_t	 start = rotation++ % n, j, i, k = 0;

	*wake_ms = -1;
	for (j = 0; j < n; j++) {
		i = (start + j) % n;
		until[i] = cooldown_get(st, b->urls[i]);
		if (until[i] == 0 || (until[i] <= now && !kc->challenger &&
		    shm_probe_claim(shm_host(), b->urls[i], now,
		    BACKEND_COOLDOWN_MS))) {
			order[k++] = i;
			continue;
		}
		left = until[i] > now ? until[i] - now : 1000;
		if (*wake_ms == -1 || left < *wake_ms)
			*wake_ms = (long)left;
	}
	return k;
}

/* After a failed attempt at url (the probe of its cool-down if probe),
 * per its verdict: a failure of its transport or server is counted
 * host-wide, and the replica rests once it has failed BACKEND_COOL_AFTER
 * times in a row; an answer ends the count (and the cool-down it was
 * probed after).  What was done goes into note, for the log line. */
static void
judge(const struct kind_call *kc, const struct backend *b, const char *url,
    int probe, const struct backend_attempt *at, char *note, size_t size)
{
	int64_t	 now = clock_now_ms();
	long	 n;

	note[0] = '\0';
	if (at->verdict == BV_ANSWERED) {
		shm_streak_add(shm_host(), url, 0, now, BACKEND_COOLDOWN_MS);
		if (probe)
			cooldown_put(kc->st, url, 0);
	}
	if (at->verdict != BV_FAILED)
		return;
	/* Without the shared memory there is no count (-1): the first
	 * failure rests the replica, as it always did there.  A probe's
	 * failure follows those that rested it, with no success between. */
	n = shm_streak_add(shm_host(), url, 1, now, BACKEND_COOLDOWN_MS);
	if (n >= 0 && n < BACKEND_COOL_AFTER && !probe) {
		snprintf(note, size, " (failure %ld of %d)", n,
		    BACKEND_COOL_AFTER);
		return;
	}
	cooldown_put(kc->st, url, now + BACKEND_COOLDOWN_MS);
	metrics_cooldown(b->name);
	snprintf(note, size, " (cooling down %d s)",
	    BACKEND_COOLDOWN_MS / 1000);
}

/* Asks the replicas of b, a backend of the remote kind k, in turn;
 * *how says what the call teaches the in-flight rule. */
static int
ask_replicas(const struct kind_call *kc, struct backend_call *c,
    struct backend_answer *out, enum shm_call *how, struct error *e)
{
	const struct backend_kind	*k = kc->kind;
	const struct backend		*b = c->b;
	struct backend_attempt		 at;
	char				 base[sizeof(b->urls[0])];
	char				 shown[sizeof(b->urls[0])];
	char				 reasons[300] = "", note[40];
	char				 why[340];
	enum err_unavailable		 reason = EU_OTHER;
	int64_t				 until[BACKEND_MAX_URLS], t0;
	size_t				 order[BACKEND_MAX_URLS], n, j, i, len;
	long				 hint = -1, wake;
	int				 rc = -1;

	*how = SHM_CALL_OTHER;
	n = replicas_now(kc, b, kc->nurls, order, until, &wake);
	if (n == 0) {
		log_warn("backend '%s': every replica is cooling down; calls "
		    "are refused until one may be probed", b->name);
		return unavailable(e, wake, b->name,
		    "every replica is cooling down", EU_COOLING);
	}
	if (k->begin != NULL && k->begin(c, e) == -1)
		return -1;
	*how = SHM_CALL_FAILED;		/* unless a replica answers */
	for (j = 0; j < n && rc == -1; j++) {
		i = order[j];
		len = strlen(b->urls[i]);
		while (len > 0 && b->urls[i][len - 1] == '/')
			len--;
		snprintf(base, sizeof(base), "%.*s", (int)len, b->urls[i]);
		t0 = clock_mono_us();
		memset(&at, 0, sizeof(at));
		if (k->ask(c, base, out, &at) == 0) {
			if (!kc->challenger)
				metrics_backend(b->name, MO_OK,
				    clock_mono_us() - t0);
			snprintf(out->replica, sizeof(out->replica), "%s",
			    b->urls[i]);
			if (until[i] != 0)
				cooldown_put(kc->st, b->urls[i], 0);
			shm_streak_add(shm_host(), b->urls[i], 0,
			    clock_now_ms(), BACKEND_COOLDOWN_MS);
			*how = SHM_CALL_ANSWERED;
			rc = 0;
			break;
		}
		if (at.verdict != BV_FAILED)	/* it answered, or ours */
			*how = SHM_CALL_OTHER;
		if (!kc->challenger)
			metrics_backend(b->name, at.outcome != MO_OK ?
			    at.outcome : MO_ERROR, clock_mono_us() - t0);
		judge(kc, b, b->urls[i], until[i] != 0, &at, note,
		    sizeof(note));
		if (at.hint_ms > hint)
			hint = at.hint_ms;
		/* Why none answered: one that did not fit, else a failure
		 * of a replica, else ours. */
		if (at.verdict == BV_ANSWERED && at.outcome == MO_UNFIT)
			reason = EU_UNFIT;
		else if (at.verdict != BV_NONE && reason != EU_UNFIT)
			reason = EU_NO_REPLICA;
		backend_http_loggable_url(b->urls[i], shown, sizeof(shown));
		log_warn("backend '%s': replica %s failed after %lld ms: %s%s",
		    b->name, shown, (long long)((clock_mono_us() - t0) / 1000),
		    at.reason, note);
		len = strlen(reasons);
		snprintf(reasons + len, sizeof(reasons) - len, "%s%s",
		    len > 0 ? "; " : "", at.reason);
	}
	if (rc == -1) {
		snprintf(why, sizeof(why), "no replica answered (%s)", reasons);
		unavailable(e, hint, b->name, why, reason);
	}
	if (k->end != NULL)
		k->end(c);
	return rc;
}

/* The key auth_env names (doc/design.md, section 7.5): without
 * auth_env, no key is sent; with it, a variable that is unset, empty
 * or holds a line break refuses the call, and the log names the
 * variable, never its value. */
static int
key_ready(const struct backend *b, struct error *e)
{
	const char	*key;

	if (b->auth_env[0] == '\0')
		return 0;
	key = getenv(b->auth_env);
	if (key != NULL && key[0] != '\0' && key[strcspn(key, "\r\n")] == '\0')
		return 0;
	log_warn("backend '%s': variable %s (auth_env) is %s; calls are "
	    "refused", b->name, b->auth_env, key == NULL ? "not set" :
	    key[0] == '\0' ? "empty" : "holding a line break");
	return unavailable(e, 30000, b->name, "its key is not available "
	    "(the gateway's log names the variable)", EU_DISABLED);
}

/* Takes a place among b's evaluations in flight on the host, under
 * the rule inflight.h explains, waiting for one as long as the rule
 * allows (not at all if nowait: a challenger's call): 1 taken, 0
 * refused (e set).  The wait looks at the host's
 * counts without the lock, napping 2, 4, ... 32 ms between looks, and
 * takes the lock only when they show room (or the rule changed). */
static int
inflight_enter(const struct backend *b, const struct settings *s,
    long timeout_ms, int nowait, struct error *e)
{
	struct shm		*m = shm_host();
	struct shm_flight_view	 v;
	struct inflight_rule	 r;
	struct timespec		 nap = { 0, 0 };
	int64_t			 start = clock_mono_us() / 1000, now = start;
	long			 nap_ms = 2;
	int			 first = 1;

	for (;;) {
		shm_inflight_view(m, b->id, &v);
		inflight_rule(&v, (long)b->max_in_flight, s->workers,
		    timeout_ms, &r);
		if (nowait)
			r.wait_ms = 0;
		if ((first || r.older_ms > 0 || v.in_flight < r.limit) &&
		    shm_inflight_take(m, b->id, r.limit, r.older_ms, now))
			return 1;
		first = 0;
		if (now - start >= r.wait_ms)
			break;
		nap.tv_nsec = (now - start + nap_ms < r.wait_ms ? nap_ms :
		    r.wait_ms - (now - start)) * 1000000L;
		nanosleep(&nap, NULL);
		nap_ms = nap_ms < 32 ? nap_ms * 2 : 32;
		now = clock_mono_us() / 1000;
	}
	if (b->max_in_flight > 0)
		unavailable(e, 1000, b->name, "as many evaluations are in "
		    "flight to it on this host as its limit (max_in_flight) "
		    "allows", EU_IN_FLIGHT);
	else if (r.older_ms > 0)
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL, "backend '%s': "
		    "%ld of its evaluations on this host have waited over "
		    "%lld ms for it (%s), as many as may", b->name, r.limit,
		    (long long)r.older_ms, v.failing ? "its last call failed" :
		    "slower than its recent answers");
	else
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL, "backend '%s': "
		    "%ld evaluations on this host await its %s answer, as "
		    "many as may", b->name, r.limit, v.failing ? "next" :
		    "first");
	e->retry_after_ms = 1000;	/* unavailable() sets the same */
	e->unavailable = EU_IN_FLIGHT;
	return 0;
}

/* A remote call: within b's in-flight limit on the host (inflight.h),
 * so that a backend that hangs cannot hold every worker, then the
 * replica loop. */
static int
remote(const struct backend_kind *k, struct store *st,
    const struct settings *s, const struct backend *b, json_object *state,
    json_object *questions, int challenger, struct backend_answer *out,
    struct error *e)
{
	struct kind_call	 kc = { k, st, b->nurls, challenger };
	struct backend_call	 c;
	enum shm_call		 how;
	int64_t			 t0;
	int			 rc;

	if (kc.nurls > BACKEND_MAX_URLS)
		kc.nurls = BACKEND_MAX_URLS;
	if (kc.nurls == 0)
		return unavailable(e, 1000, b->name, "no replica configured",
		    EU_NO_REPLICA);
	if (key_ready(b, e) == -1)
		return -1;
	if ((s = or_defaults(s, e)) == NULL)
		return -1;
	memset(&c, 0, sizeof(c));
	c.b = b;
	c.state = state;
	c.questions = questions;
	c.timeout_ms = b->timeout_ms > 0 ? (long)b->timeout_ms :
	    s->backend_timeout_ms;
	if (!inflight_enter(b, s, c.timeout_ms, challenger, e))
		return -1;
	t0 = clock_mono_us();
	rc = ask_replicas(&kc, &c, out, &how, e);
	shm_inflight_give(shm_host(), how, clock_mono_us() - t0);
	return rc;
}

/* backend_evaluate(), or backend_challenge() if challenger. */
static int
evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    int challenger, struct backend_answer *out, struct error *e)
{
	const struct backend_kind	*k = backend_kind_find(b->kind);
	int64_t				 t0 = clock_mono_us();
	int				 rc;

	memset(out, 0, sizeof(*out));
	if (k == NULL)
		return error_set(e, ERR_INTERNAL, NULL,
		    "backend '%s' has an unknown kind", b->name);
	if (k->remote)
		return remote(k, st, s, b, state, questions, challenger, out,
		    e);
	/* A built-in backend answers as one attempt. */
	rc = k->answer(b, state, questions, out, e);
	if (!challenger)
		metrics_backend(b->name, rc == 0 ? MO_OK : MO_ERROR,
		    clock_mono_us() - t0);
	return rc;
}

int
backend_evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, struct error *e)
{
	return evaluate(st, s, b, state, questions, 0, out, e);
}

int
backend_challenge(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, int *shed, struct error *e)
{
	int rc = evaluate(st, s, b, state, questions, 1, out, e);

	*shed = rc == -1 && (e->unavailable == EU_IN_FLIGHT ||
	    e->unavailable == EU_COOLING);
	return rc;
}
