-- schema.sql: every table of the evalgate database.
--
-- evalgate-admin init applies this to a new database as step 1 and
-- sets PRAGMA user_version; sql/migrate-N.sql takes a database from
-- version N - 1 to N, and a new one runs them too (they are no-ops where
-- this file already has what they add; the catalog generation's
-- triggers are in sql/migrate-3.sql only (those of schema_challengers in
-- sql/migrate-9.sql), and the columns that
-- sql/migrate-4.sql adds, which SQLite cannot add only if missing, are
-- not here: api_keys.secret_check, backends.max_in_flight; nor those of
-- sql/migrate-5.sql: decision_answers.label_mass (and the openai
-- options that sql/migrate-8.sql moves into backends.options, the
-- column of every kind's options); nor sql/migrate-6.sql's
-- applications.retention_days and its two indexes of decisions by time).
-- decisions, decision_answers, outcomes and challenger_answers are here
-- as they were before sql/migrate-10.sql, which rebuilds them for every
-- database (a decision's answers in its row, keyed by rid): read their
-- layout there.
-- Times are integers: seconds since the epoch (UTC) unless named *_ms.
-- The cache file (admission rows, key memo, cool-downs) is created by
-- sql/cache.sql, not here: it may be deleted at any time.

CREATE TABLE applications (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE,
	log_state	INTEGER NOT NULL DEFAULT 0,
	is_admin	INTEGER NOT NULL DEFAULT 0,
	rate_per_minute	INTEGER,		-- NULL: SERVICE_DEFAULT_RATE_PER_MINUTE
	daily_quota	INTEGER,		-- NULL: SERVICE_DEFAULT_DAILY_QUOTA
	created_at	INTEGER NOT NULL
);

CREATE TABLE api_keys (
	prefix		TEXT PRIMARY KEY,	-- 8 of [a-z0-9], shown in the key
	app_id		INTEGER NOT NULL REFERENCES applications(id),
	hash		TEXT NOT NULL,		-- argon2id of HMAC-SHA-256(pepper, secret)
	created_at	INTEGER NOT NULL,
	expires_at	INTEGER,		-- NULL: never
	revoked_at	INTEGER			-- NULL: valid
);
CREATE INDEX api_keys_app ON api_keys(app_id);

CREATE TABLE backends (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE,
	kind		TEXT NOT NULL,		-- a backend_kind's name
	model		TEXT,			-- upstream model name
	auth_env	TEXT,			-- name of the variable holding the key
	description	TEXT NOT NULL DEFAULT '',
	release_date	TEXT NOT NULL DEFAULT '',
	enabled		INTEGER NOT NULL DEFAULT 1,
	timeout_ms	INTEGER,		-- NULL: SERVICE_BACKEND_TIMEOUT_MS
	created_at	INTEGER NOT NULL
);

CREATE TABLE backend_replicas (
	backend_id	INTEGER NOT NULL REFERENCES backends(id),
	position	INTEGER NOT NULL,
	url		TEXT NOT NULL,
	PRIMARY KEY (backend_id, position)
);

CREATE TABLE schemas (
	id		INTEGER PRIMARY KEY,
	slug		TEXT NOT NULL UNIQUE,
	created_at	INTEGER NOT NULL
);

CREATE TABLE schema_versions (
	schema_id	INTEGER NOT NULL REFERENCES schemas(id),
	version		INTEGER NOT NULL,
	questions	TEXT NOT NULL,		-- the questions map, texts included
	fingerprint	TEXT NOT NULL,		-- hex SHA-256, question.c
	backend_id	INTEGER NOT NULL REFERENCES backends(id),
	temperature	REAL NOT NULL DEFAULT 1.0,
	abstain_threshold REAL NOT NULL DEFAULT 0.0,
	published	INTEGER NOT NULL DEFAULT 1,
	created_at	INTEGER NOT NULL,
	PRIMARY KEY (schema_id, version)
);
CREATE INDEX schema_versions_fingerprint
	ON schema_versions(fingerprint, published);

CREATE TABLE grants (
	app_id		INTEGER NOT NULL REFERENCES applications(id),
	schema_id	INTEGER NOT NULL REFERENCES schemas(id),
	version		INTEGER NOT NULL DEFAULT 0,	-- 0: every version
	created_at	INTEGER NOT NULL,
	PRIMARY KEY (app_id, schema_id, version)
);

CREATE TABLE templates (
	id		INTEGER PRIMARY KEY,
	slug		TEXT NOT NULL UNIQUE,
	created_at	INTEGER NOT NULL
);

CREATE TABLE template_versions (
	template_id	INTEGER NOT NULL REFERENCES templates(id),
	version		INTEGER NOT NULL,
	body		TEXT NOT NULL,
	variables	TEXT NOT NULL,		-- {"name": "string", ...}
	escape_html	INTEGER NOT NULL DEFAULT 0,
	published	INTEGER NOT NULL DEFAULT 1,
	created_at	INTEGER NOT NULL,
	PRIMARY KEY (template_id, version)
);

CREATE TABLE decisions (
	id		TEXT PRIMARY KEY,	-- UUIDv7
	app_id		INTEGER NOT NULL REFERENCES applications(id),
	created_at_ms	INTEGER NOT NULL,
	model		TEXT,
	backend		TEXT NOT NULL,		-- backend name, as x_backend
	schema_id	INTEGER NOT NULL REFERENCES schemas(id),
	schema_version	INTEGER NOT NULL,
	template_id	INTEGER REFERENCES templates(id),
	template_version INTEGER,
	state		TEXT,			-- JSON; only with log_state
	input_tokens	INTEGER,
	output_tokens	INTEGER,
	latency_gateway_ms INTEGER,
	latency_backend_ms INTEGER
) WITHOUT ROWID;
CREATE INDEX decisions_app_time ON decisions(app_id, created_at_ms, id);
CREATE INDEX decisions_schema ON decisions(schema_id, schema_version);

CREATE TABLE decision_answers (
	decision_id	TEXT NOT NULL REFERENCES decisions(id),
	question	TEXT NOT NULL,
	position	INTEGER NOT NULL,	-- order in the answer
	type		TEXT NOT NULL,
	distribution	TEXT NOT NULL,		-- untempered, JSON
	answer		TEXT NOT NULL,		-- as returned, JSON
	PRIMARY KEY (decision_id, question)
) WITHOUT ROWID;

CREATE TABLE outcomes (
	decision_id	TEXT NOT NULL REFERENCES decisions(id),
	question	TEXT NOT NULL,
	value		TEXT NOT NULL,		-- JSON: string, boolean or integer
	source		TEXT,
	recorded_at_ms	INTEGER NOT NULL,
	PRIMARY KEY (decision_id, question)
) WITHOUT ROWID;

-- Challengers (sql/migrate-9.sql): the backends named for a schema
-- version beside its own, and what each one answered, one row per
-- decision and challenger.
CREATE TABLE schema_challengers (
	schema_id	INTEGER NOT NULL REFERENCES schemas(id),
	version		INTEGER NOT NULL,
	backend_id	INTEGER NOT NULL REFERENCES backends(id),
	share		REAL NOT NULL,		-- of the evaluations, (0, 1]
	created_at	INTEGER NOT NULL,
	PRIMARY KEY (schema_id, version, backend_id)
) WITHOUT ROWID;

CREATE TABLE challenger_answers (
	decision_id	TEXT NOT NULL REFERENCES decisions(id),
	backend		TEXT NOT NULL,		-- backend name, as decisions.backend
	answers		TEXT NOT NULL,		-- JSON: question -> untempered
						-- distribution
	latency_ms	INTEGER NOT NULL,
	input_tokens	INTEGER,
	output_tokens	INTEGER,
	source		TEXT NOT NULL,		-- live | replay
	recorded_at_ms	INTEGER NOT NULL,
	PRIMARY KEY (decision_id, backend)
) WITHOUT ROWID;

-- Counts the changes to the tables above (applications to template
-- versions, and schema_challengers): the triggers of sql/migrate-3.sql
-- and sql/migrate-9.sql bump it, and each worker drops the catalog rows
-- it keeps when it moves (src/kept.h).
CREATE TABLE catalog_generation (
	n		INTEGER NOT NULL
);
INSERT INTO catalog_generation VALUES (0);

-- The day's units, charged with each decision (the cache keeps the
-- running total, ahead of this by the calls in flight).
CREATE TABLE quota_days (
	app_id		INTEGER NOT NULL REFERENCES applications(id),
	day		TEXT NOT NULL,		-- UTC YYYY-MM-DD
	used		INTEGER NOT NULL,
	PRIMARY KEY (app_id, day)
) WITHOUT ROWID;

CREATE TABLE audit_log (
	id		INTEGER PRIMARY KEY,
	at_ms		INTEGER NOT NULL,
	actor		TEXT NOT NULL,		-- "console" or the application name
	action		TEXT NOT NULL,		-- e.g. "app.create"
	target		TEXT,
	details		TEXT			-- JSON, never a secret
);
