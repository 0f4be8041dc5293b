-- migrate-10.sql: takes a database from user_version 9 to 10: fewer
-- pages written per decision (doc/design.md, "Storage").  Like
-- migrate-8.sql, it rebuilds what schema.sql made: every database, new
-- or old, gets the layout below here, and schema.sql keeps the earlier
-- one of these four tables for this step to read.
--
-- decisions: keyed by rid, the integer its id gives (decision_rid(),
-- src/store_sqlite_rid.c), so that a decision is appended at the
-- table's right edge and found from its id without an index of ids;
-- its answers in its row (answers: the JSON array src/store_answers.c
-- writes), where decision_answers had a row per question.  Of its
-- indexes, decisions_app_time (an application's decisions by time: the
-- listing, export, retention) and decisions_state_time (kept states, by
-- time) stay; decisions_schema goes.
--
-- outcomes: each carries its decision's schema version, by which
-- calibration and the comparison walk a version's outcomes
-- (outcomes_schema): a page of that index is written when an outcome
-- is recorded, not with every decision.
--
-- outcomes and challenger_answers name their decision by id, which is
-- no longer a key SQLite can check a foreign key against: the prune
-- deletes them with their decision (store_sqlite_retention.c).
CREATE TABLE decisions_10 (
	rid		INTEGER PRIMARY KEY,	-- decision_rid(id, slot)
	id		TEXT NOT NULL,		-- UUIDv7
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
	latency_backend_ms INTEGER,
	answers		TEXT NOT NULL		-- JSON array, in answer order
);

CREATE TABLE outcomes_10 (
	decision_id	TEXT NOT NULL,
	question	TEXT NOT NULL,
	value		TEXT NOT NULL,		-- JSON: string, boolean or integer
	source		TEXT,
	recorded_at_ms	INTEGER NOT NULL,
	schema_id	INTEGER NOT NULL,	-- the decision's
	schema_version	INTEGER NOT NULL,
	PRIMARY KEY (decision_id, question)
) WITHOUT ROWID;

CREATE TABLE challenger_answers_10 (
	decision_id	TEXT NOT NULL,
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

-- Ids that share a key take its slots in id order.  Each answer's
-- text as store_answers_add() writes it: the stored distribution and
-- answer as they are, the names quoted, label_mass when there is one,
-- in its shortest text (answer_number(), src/store_sqlite_rid.c).
INSERT INTO decisions_10 (rid, id, app_id, created_at_ms, model, backend,
	schema_id, schema_version, template_id, template_version, state,
	input_tokens, output_tokens, latency_gateway_ms, latency_backend_ms,
	answers)
SELECT decision_rid(d.id, row_number() OVER (PARTITION BY
	decision_rid(d.id) ORDER BY d.id) - 1), d.id, d.app_id,
	d.created_at_ms, d.model, d.backend, d.schema_id, d.schema_version,
	d.template_id, d.template_version, d.state, d.input_tokens,
	d.output_tokens, d.latency_gateway_ms, d.latency_backend_ms,
	coalesce((SELECT '[' || group_concat(a.text, ',') || ']' FROM (
		SELECT '{"question":' || json_quote(question) ||
		',"type":' || json_quote(type) ||
		',"distribution":' || distribution ||
		',"answer":' || answer ||
		CASE WHEN label_mass IS NOT NULL THEN ',"label_mass":' ||
		answer_number(label_mass) ELSE '' END ||
		'}' AS text
		FROM decision_answers WHERE decision_id = d.id
		ORDER BY position) a), '[]')
FROM decisions d;

INSERT INTO outcomes_10 (decision_id, question, value, source,
	recorded_at_ms, schema_id, schema_version)
SELECT o.decision_id, o.question, o.value, o.source, o.recorded_at_ms,
	d.schema_id, d.schema_version
FROM outcomes o JOIN decisions d ON d.id = o.decision_id;

INSERT INTO challenger_answers_10 SELECT * FROM challenger_answers;

DROP TABLE challenger_answers;
DROP TABLE outcomes;
DROP TABLE decision_answers;
DROP TABLE decisions;
ALTER TABLE decisions_10 RENAME TO decisions;
ALTER TABLE outcomes_10 RENAME TO outcomes;
ALTER TABLE challenger_answers_10 RENAME TO challenger_answers;

CREATE INDEX decisions_app_time ON decisions(app_id, created_at_ms, id);
CREATE INDEX decisions_state_time ON decisions(created_at_ms)
	WHERE state IS NOT NULL;
CREATE INDEX outcomes_schema ON outcomes(schema_id, schema_version);
