/* backend.c: the registry of backend kinds, the dispatch on a backend's
 * kind, and the replica loop that every remote kind shares (design.md
 * section 7).
 *
 * The loop: replicas are tried in turn from a rotating start; one that
 * fails at the transport, answers 429, 529 or 5xx, or answers something
 * that does not fit the questions (whatever the kind's ask() reports as
 * cooling) rests for a cool-down shared by every worker through the
 * cache.  When every replica is resting, all are tried anyway, in the
 * same order: a backend is never refused without asking.  When none
 * answered: 503 backend_unavailable, with the largest retry hint an
 * upstream gave, else 1 s. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_http.h"
#include "backend_lexical.h"
#include "backend_systemone.h"
#include "clock.h"
#include "log.h"
#include "settings.h"

#define BACKEND_COOLDOWN_MS	30000	/* a failing replica rests */

/* Every kind, in the order "must be one of" lists them. */
static const struct backend_kind *const kinds[] = {
	&backend_kind_lexical,
	&backend_kind_systemone,
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

static unsigned long	 rotation;	/* start replica of the next call */

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

/* The timeout of one attempt: the backend's, else the setting's (its
 * default when there are no settings, as in the unit tests).  -1 with e
 * set if the defaults do not load. */
static long
attempt_timeout(const struct settings *s, const struct backend *b,
    struct error *e)
{
	static struct settings	 defaults;
	static int		 loaded;
	char			 err[256];

	if (b->timeout_ms > 0)
		return (long)b->timeout_ms;
	if (s != NULL)
		return s->backend_timeout_ms;
	if (!loaded && settings_load(&defaults, no_settings, err,
	    sizeof(err)) == -1)
		return error_set(e, ERR_INTERNAL, NULL, "settings: %s", err);
	loaded = 1;
	return defaults.backend_timeout_ms;
}

/* Asks the replicas of b, a backend of the remote kind k, in turn. */
static int
ask_replicas(const struct backend_kind *k, struct store *st,
    const struct settings *s, const struct backend *b, json_object *state,
    json_object *questions, struct backend_answer *out, struct error *e)
{
	struct backend_call	 c;
	struct backend_attempt	 at;
	char			 base[sizeof(b->urls[0])];
	char			 shown[sizeof(b->urls[0])], reasons[300] = "";
	char			 resting_for[32];
	int64_t			 until[BACKEND_MAX_URLS], now, t0;
	size_t			 n = b->nurls, start, j, i, resting = 0, len;
	long			 hint = -1;
	int			 rc = -1;

	if (n > BACKEND_MAX_URLS)
		n = BACKEND_MAX_URLS;
	if (n == 0) {
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
		    "backend '%s': no replica configured", b->name);
		e->retry_after_ms = 1000;
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.b = b;
	c.state = state;
	c.questions = questions;
	if ((c.timeout_ms = attempt_timeout(s, b, e)) == -1)
		return -1;
	/* Hardening: the host-wide in-flight limit of b is taken here
	 * (503 when it is full, before any replica is asked) and given
	 * back at the end of this function. */
	if (k->begin != NULL && k->begin(&c, e) == -1)
		return -1;

	start = rotation++ % n;
	now = clock_now_ms();
	for (i = 0; i < n; i++)
		if ((until[i] = cooldown_get(st, b->urls[i])) > now)
			resting++;
	if (resting == n)
		log_warn("backend '%s': every replica is cooling down;"
		    " trying them all", b->name);

	for (j = 0; j < n && rc == -1; j++) {
		i = (start + j) % n;
		if (resting < n && until[i] > now)
			continue;
		/* Hardening: a replica whose cool-down is over is probed
		 * by one worker of the host at a time (the probe of this
		 * cool-down, claimed here); the others skip it as if it
		 * were still resting until the probe answers. */
		len = strlen(b->urls[i]);
		while (len > 0 && b->urls[i][len - 1] == '/')
			len--;
		snprintf(base, sizeof(base), "%.*s", (int)len, b->urls[i]);
		t0 = clock_mono_us();
		if (k->ask(&c, base, out, &at) == 0) {
			snprintf(out->replica, sizeof(out->replica), "%s",
			    b->urls[i]);
			if (until[i] != 0)
				cooldown_put(st, b->urls[i], 0);
			rc = 0;
			break;
		}
		if (at.cool)
			cooldown_put(st, b->urls[i],
			    clock_now_ms() + BACKEND_COOLDOWN_MS);
		if (at.hint_ms > hint)
			hint = at.hint_ms;
		backend_http_loggable_url(b->urls[i], shown, sizeof(shown));
		resting_for[0] = '\0';
		if (at.cool)
			snprintf(resting_for, sizeof(resting_for),
			    " (cooling down %d s)", BACKEND_COOLDOWN_MS / 1000);
		log_warn("backend '%s': replica %s failed after %lld ms: %s%s",
		    b->name, shown, (long long)((clock_mono_us() - t0) / 1000),
		    at.reason, resting_for);
		len = strlen(reasons);
		snprintf(reasons + len, sizeof(reasons) - len, "%s%s",
		    len > 0 ? "; " : "", at.reason);
	}
	if (rc == -1) {
		error_set(e, ERR_BACKEND_UNAVAILABLE, NULL,
		    "backend '%s': no replica answered (%s)", b->name,
		    reasons);
		e->retry_after_ms = hint > 0 ? hint : 1000;
	}
	if (k->end != NULL)
		k->end(&c);
	return rc;
}

int
backend_evaluate(struct store *st, const struct settings *s,
    const struct backend *b, json_object *state, json_object *questions,
    struct backend_answer *out, struct error *e)
{
	const struct backend_kind	*k = backend_kind_find(b->kind);

	memset(out, 0, sizeof(*out));
	if (k == NULL)
		return error_set(e, ERR_INTERNAL, NULL,
		    "backend '%s' has an unknown kind", b->name);
	if (k->remote)
		return ask_replicas(k, st, s, b, state, questions, out, e);
	return k->answer(b, state, questions, out, e);
}
