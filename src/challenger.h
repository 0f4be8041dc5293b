/* challenger.h: asking a schema version's challengers after the client
 * is answered (README, "Challengers"; doc/design.md, section 22).
 *
 * The evaluation looks up its version's challengers in its own read
 * snapshot (store_challenger_list(), kept with the catalog rows) and,
 * once its decision is recorded and its answer written, hands over a
 * job of those the hash of the decision id selects (challenger_queue());
 * the worker runs it after FCGX_Finish_r(), once the web server has the
 * whole response (challenger_run()).  The job asks each with
 * backend_challenge() (never waiting for room in flight), and records
 * what each answered beside the decision.  Nothing of it reaches the
 * client: not its answer, its latency nor its charge.  One job at a
 * time per process: the one of the request just answered. */
#ifndef EVALGATE_CHALLENGER_H
#define EVALGATE_CHALLENGER_H

#include <signal.h>
#include <stdint.h>

#include <json-c/json.h>

#include "store.h"

struct settings;

/* The challengers of one version asked for one decision, at most. */
#define CHALLENGER_MAX	8

/* Hands over the job of decision id: those of list (borrowed, its
 * version's challengers) that the hash of id selects, CHALLENGER_MAX
 * at most.  When it selects some, state and questions (borrowed,
 * validated) are held (a reference each) until challenger_run() or the
 * next challenger_queue() drops them; when none, no job is left. */
void	challenger_queue(const char *id, const struct challenger_list *list,
	    json_object *state, json_object *questions);

/* Runs the job handed over, if any, on st (no transaction open), then
 * forgets it.  A call is shed, not made, once *stopping is set
 * (SIGTERM) or waiting() says a client's request waits for this worker,
 * and one in flight is given up as soon as waiting() says so
 * (backend_http_give_up_when()): the web server hands a worker its next
 * request as soon as it has answered.  Every failure is logged and
 * counted, never returned. */
void	challenger_run(struct store *st, const struct settings *s,
	    const volatile sig_atomic_t *stopping, int (*waiting)(void));

/* Asks b (borrowed) about state and questions (borrowed, validated) for
 * decision id through backend_challenge(), and records what it answered
 * beside the decision, with source "live" or "replay" (the console's
 * replay asks through here too).  0, or -1 with e set and nothing
 * recorded; *shed is then 1 when the call was not made (no room in
 * flight, replicas resting). */
int	challenger_ask(struct store *st, const struct settings *s,
	    const struct backend *b, const char *id, json_object *state,
	    json_object *questions, const char *source, int *shed,
	    struct error *e);

#endif
