-- sql/pg/migrate-9.sql: takes a database from schema version 8 to 9,
-- as sql/migrate-9.sql does SQLite's: challengers, the backends named
-- for a schema version beside its own, and what each one answered
-- (IF NOT EXISTS: a database set back to an earlier version by hand may
-- have them already).  A version's challengers are kept by the workers
-- with the other catalog rows (src/kept.h): a change to them bumps the
-- catalog generation, as sql/pg/schema.sql's triggers do for the other
-- catalog tables.
CREATE TABLE IF NOT EXISTS schema_challengers (
	schema_id	BIGINT NOT NULL REFERENCES schemas(id),
	version		BIGINT NOT NULL,
	backend_id	BIGINT NOT NULL REFERENCES backends(id),
	share		DOUBLE PRECISION NOT NULL,	-- (0, 1]
	created_at	BIGINT NOT NULL,
	PRIMARY KEY (schema_id, version, backend_id)
);

CREATE TABLE IF NOT EXISTS challenger_answers (
	decision_id	TEXT COLLATE "C" NOT NULL REFERENCES decisions(id),
	backend		TEXT COLLATE "C" NOT NULL,
	answers		TEXT NOT NULL,		-- JSON: question -> untempered
						-- distribution
	latency_ms	BIGINT NOT NULL,
	input_tokens	BIGINT,
	output_tokens	BIGINT,
	source		TEXT NOT NULL,		-- live | replay
	recorded_at_ms	BIGINT NOT NULL,
	PRIMARY KEY (decision_id, backend)
);
DROP TRIGGER IF EXISTS schema_challengers_changed ON schema_challengers;
CREATE TRIGGER schema_challengers_changed AFTER INSERT OR UPDATE OR DELETE
	OR TRUNCATE ON schema_challengers
	FOR EACH STATEMENT EXECUTE FUNCTION catalog_generation_bump();
UPDATE schema_version SET v = 9;
