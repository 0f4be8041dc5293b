/* model.h: the records evalgate keeps and works on (applications, keys,
 * backends, schema and template versions, decisions), independent of
 * where they are kept.
 *
 * store.h reads and writes them; the handlers and the pure modules that
 * only pass them around include this file alone.  The sizes of their
 * names and identifiers are defined here once, and every buffer holding
 * one is sized from them.  Each *_clear() (model.c) releases what a
 * record owns and zeroes it; clearing a zeroed record is harmless. */
#ifndef EVALGATE_MODEL_H
#define EVALGATE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "error.h"
#include "question.h"		/* QUESTION_FINGERPRINT_LEN */
#include "uuid7.h"		/* UUID7_LEN */

/* Bytes of a name (application, backend) or slug (schema, template) as
 * the operations accept it. */
#define MODEL_NAME_MAX	100
/* A buffer holding a name or slug read back, or one a client asks for
 * (x_schema.id, x_template.id: refused from this size on); also the
 * upstream model name and the auth_env variable of a backend. */
#define MODEL_NAME_SIZE	128
/* The prefix of an API key, "svc_<prefix>_<secret>" (auth.h). */
#define MODEL_KEY_PREFIX_LEN 8
/* A key's stored hash: crypto_pwhash_str's output (auth.c checks). */
#define MODEL_KEY_HASH_SIZE 128

struct app {
	int64_t	id;
	char	name[MODEL_NAME_SIZE];
	int	log_state;
	int	is_admin;
	int64_t	rate_per_minute;	/* 0: the default setting */
	int64_t	daily_quota;		/* 0: the default setting */
	int64_t	created_at;		/* epoch seconds */
	int64_t	retention_days;		/* -1: SERVICE_RETENTION_DAYS,
					 * 0: keep every decision */
};

struct key_row {
	char	prefix[MODEL_KEY_PREFIX_LEN + 1];
	int64_t	app_id;
	char	hash[MODEL_KEY_HASH_SIZE];	/* crypto_pwhash_str */
	int64_t	created_at;		/* epoch seconds */
	int64_t	expires_at;		/* 0: never */
	int64_t	revoked_at;		/* 0: not revoked */
	unsigned char check[32];	/* keyed BLAKE2b of the secret */
	int	has_check;		/* 0: a key from before it existed */
};

/* Backends (doc/design.md, section 7). */
#define BACKEND_MAX_URLS 8
/* A backend's kind options (bounds.h, struct backend_option): at most
 * BACKEND_OPTIONS_MAX rows in a kind's table; the JSON text of those set
 * in BACKEND_OPTIONS_SIZE bytes, of which a JSON option's value (compact)
 * takes at most BACKEND_OPTION_JSON_MAX. */
#define BACKEND_OPTIONS_MAX	8
#define BACKEND_OPTIONS_SIZE	4352
#define BACKEND_OPTION_JSON_MAX	4095
struct backend {
	int64_t	id;
	char	name[MODEL_NAME_SIZE];
	char	kind[16];		/* a backend_kind's name */
	char	model[MODEL_NAME_SIZE];	/* upstream model name; "" none */
	char	auth_env[MODEL_NAME_SIZE]; /* variable holding the key; ""
					 * none */
	char	description[512];
	char	release_date[16];	/* YYYY-MM-DD or "" */
	int	enabled;
	int64_t	timeout_ms;		/* 0: SERVICE_BACKEND_TIMEOUT_MS */
	int64_t	max_in_flight;		/* 0: the rule of inflight.h */
	/* The options of its kind (struct backend_option of bounds.h):
	 * the compact JSON text of an object holding those set ("": none),
	 * as stored; and, parsed from it when the store reads the row
	 * (bound_backend()), the value of each BOPT_LONG one by its row in
	 * the kind's table (0: not set, the kind's default). */
	char	options[BACKEND_OPTIONS_SIZE];
	int64_t	optval[BACKEND_OPTIONS_MAX];
	size_t	nurls;
	char	urls[BACKEND_MAX_URLS][512];	/* replicas, in order */
};

/* A published version of a schema: the shape of a set of questions. */
struct schema_version {
	int64_t		 schema_id;
	char		 slug[MODEL_NAME_SIZE];
	int64_t		 version;
	json_object	*questions;	/* owned: schema_version_clear() */
	char		 fingerprint[QUESTION_FINGERPRINT_LEN + 1];
	int64_t		 backend_id;
	double		 temperature;
	double		 abstain_threshold;
	int64_t		 created_at;	/* epoch seconds */
};
void	 schema_version_clear(struct schema_version *v);

/* Templates (doc/design.md, section 16). */
struct template_version {
	int64_t		 template_id;
	char		 slug[MODEL_NAME_SIZE];
	int64_t		 version;
	char		*body;		/* owned: template_version_clear() */
	json_object	*variables;	/* owned: template_version_clear() */
	int		 escape_html;
	int64_t		 created_at;	/* epoch seconds */
};
void	 template_version_clear(struct template_version *v);

/* Decisions: one per successful evaluation, as it is recorded. */
struct decision {
	char		 id[UUID7_LEN + 1];	/* UUIDv7 */
	int64_t		 app_id;
	int64_t		 created_at_ms;
	const char	*model;			/* borrowed; NULL none */
	const char	*backend;		/* borrowed: backend name */
	int64_t		 schema_id;
	int64_t		 schema_version;
	int64_t		 template_id;		/* 0: none */
	int64_t		 template_version;
	const char	*state;			/* borrowed JSON; NULL unless
						 * the app has log_state */
	int		 has_usage;
	int64_t		 input_tokens;
	int64_t		 output_tokens;
	int64_t		 latency_gateway_ms;
	int64_t		 latency_backend_ms;
	const double	*label_mass;		/* borrowed: one per question,
						 * in order; NULL none */
	const char	*quota_day;		/* borrowed: "YYYY-MM-DD" */
	int64_t		 quota_units;		/* charged with it */
};

/* A recorded decision read back, with what its outcomes are checked
 * against; decision_row_clear() releases the owned parts. */
struct decision_row {
	char		 id[UUID7_LEN + 1];	/* UUIDv7, lowercase */
	int64_t		 app_id;
	int64_t		 created_at_ms;
	char		*model;			/* owned; NULL none */
	char		 backend[MODEL_NAME_SIZE];
	char		 schema_slug[MODEL_NAME_SIZE];
	int64_t		 schema_version;
	json_object	*questions;		/* owned: the version's map */
	char		 template_slug[MODEL_NAME_SIZE]; /* "" none */
	int64_t		 template_version;	/* 0: none */
	json_object	*state;			/* owned; NULL when it was not
						 * kept */
	json_object	*answers;		/* owned: question -> answer as
						 * returned, in answer order */
	json_object	*outcomes;		/* owned: question -> {value,
						 * source (or null),
						 * recorded_at_ms}, in answer
						 * order */
};
void	 decision_row_clear(struct decision_row *d);
/* An outcome for question differs from the one recorded (its JSON
 * text): 409 naming answers.<question>, with the recorded value in the
 * details (doc/design.md, section 14).  Returns -1. */
int	 outcome_conflict(const char *question, const char *recorded,
	    struct error *e);

/* Which decisions a page lists: those of app_id created in [since_ms,
 * until_ms) that come strictly after (after_ms, after_id) in
 * (created_at_ms, id) order. */
struct decision_range {
	int64_t	app_id;
	int64_t	since_ms;
	int64_t	until_ms;
	int64_t	after_ms;
	char	after_id[UUID7_LEN + 1];	/* "": from the first */
};

/* Calibration (doc/design.md, section 15): one answered question with its
 * outcome.  Every member is borrowed for the callback's duration. */
struct calibration_row {
	const char	*decision_id;
	const char	*backend;		/* name, as x_backend */
	int64_t		 created_at_ms;
	const char	*question;
	const char	*type;			/* "choice", "score", "noul" */
	const char	*distribution;		/* untempered, JSON text */
	const char	*outcome;		/* the value, JSON text */
};

/* A challenger of a schema version (README, "Challengers"): a backend
 * asked, after the client is answered, the same questions as the
 * version's own backend for a share of its evaluations. */
struct challenger {
	int64_t	 schema_id;
	int64_t	 version;
	int64_t	 backend_id;
	char	 backend[MODEL_NAME_SIZE];	/* its name, read back */
	double	 share;				/* (0, 1] */
	int64_t	 created_at;
};

/* The challengers of one schema version, by backend name, as an
 * evaluation looks them up (store_challenger_list()): the first
 * CHALLENGER_LIST_MAX of them, kept with the catalog rows. */
#define CHALLENGER_LIST_MAX	32
struct challenger_list {
	size_t			 n;
	struct challenger	 c[CHALLENGER_LIST_MAX];	/* n used */
};

/* What a challenger answered for a decision: one row per decision and
 * challenger.  The pointers are borrowed (for the callback's duration
 * when read back). */
struct challenger_answer {
	char		 decision_id[UUID7_LEN + 1];
	const char	*backend;		/* name, as decisions.backend */
	json_object	*answers;		/* question -> untempered
						 * distribution */
	int64_t		 latency_ms;
	int		 has_usage;
	int64_t		 input_tokens;
	int64_t		 output_tokens;
	const char	*source;		/* "live" or "replay" */
	int64_t		 recorded_at_ms;
};

/* A replay's walk (evalgate-admin replay; README, "Challengers"): the
 * decisions of version of schema_id created at or after since_ms, in
 * id order after the cursor after_id, each with whether backend has
 * answered it already.  backend is borrowed. */
struct replay_range {
	int64_t		 schema_id;
	int64_t		 version;
	int64_t		 since_ms;
	const char	*backend;
	char		 after_id[UUID7_LEN + 1];	/* "": from the first */
};

/* One decision of a replay's walk.  state is borrowed for the
 * callback's duration. */
struct replay_row {
	char		 id[UUID7_LEN + 1];
	int64_t		 created_at_ms;
	int		 recorded;	/* the backend answered it: state
					 * NULL */
	const char	*state;		/* JSON text kept (log_state), or
					 * NULL */
};

/* What an admitted call is told (the RateLimit-Policy and RateLimit
 * headers): the limits, and what is left of each and when it resets. */
struct ratelimit {
	int64_t	rate;			/* calls per minute */
	int64_t	quota;			/* cost units per UTC day */
	int64_t	rate_remaining, rate_reset_s;
	int64_t	quota_remaining, quota_reset_s;
};

#endif
