/* decision.h: a recorded decision as JSON (doc/design.md, section 14), the
 * body of GET /v1/decisions/{id} and one line of the administration
 * export, and the one check of a decision id taken from a path. */
#ifndef EVALGATE_DECISION_H
#define EVALGATE_DECISION_H

#include <stdint.h>

#include <json-c/json.h>

#include "error.h"
#include "model.h"
#include "uuid7.h"

struct store;

/* Copies s into id in lowercase if it is a well-formed UUIDv7: 1, or 0
 * when it is not one (callers answer that as an unknown decision). */
int		 decision_id_canon(const char *s, char id[UUID7_LEN + 1]);

/* A new object (the caller puts it): {id, created_at, model, x_backend,
 * x_schema {id, version}, x_template {id, version} (only when a template
 * was rendered), answers, outcomes {question: {value, source,
 * recorded_at}}, state (only when with_state and a state was kept)}.
 * Borrows d. */
json_object	*decision_to_json(const struct decision_row *d, int with_state);

/* The same for decision id (any spelling; a malformed id is unknown) of
 * application app_id (0: of any application): 1 with *out a new object
 * the caller puts, 0 unknown or another application's, -1 with e set. */
int		 decision_json(struct store *st, const char *id,
		    int64_t app_id, int with_state, json_object **out,
		    struct error *e);

#endif
