-- migrate-9.sql: takes a database from user_version 8 to 9:
-- challengers (README, "Challengers"; doc/design.md, section 17).
--
-- schema_challengers: the backends an operator names for a schema
-- version beside its own, each asked for a share of its evaluations
-- after the client is answered.  challenger_answers: what each one
-- answered, one row per decision and challenger, deleted with its
-- decision.  schema.sql has both tables too (a new database runs this
-- step after it: IF NOT EXISTS).  A version's challengers are kept by
-- the workers with the other catalog rows (src/kept.h): the triggers
-- below bump the catalog generation, as sql/migrate-3.sql's do for the
-- tables before them, each on one line.
CREATE TABLE IF NOT EXISTS schema_challengers (
	schema_id	INTEGER NOT NULL REFERENCES schemas(id),
	version		INTEGER NOT NULL,
	backend_id	INTEGER NOT NULL REFERENCES backends(id),
	share		REAL NOT NULL,		-- of the evaluations, (0, 1]
	created_at	INTEGER NOT NULL,
	PRIMARY KEY (schema_id, version, backend_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS challenger_answers (
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

CREATE TRIGGER IF NOT EXISTS schema_challengers_insert AFTER insert ON schema_challengers BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schema_challengers_update AFTER update ON schema_challengers BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schema_challengers_delete AFTER delete ON schema_challengers BEGIN UPDATE catalog_generation SET n = n + 1; END;
