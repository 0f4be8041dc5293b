-- migrate-2.sql: takes a database from user_version 1 to 2.
--
-- Calibration reads one schema version's decisions.  schema.sql (which
-- is step 1) already has the index, so this is a no-op after it.  The
-- statement stays on one line: SQLite keeps its text in sqlite_schema,
-- the same as the one earlier versions of evalgate recorded.

CREATE INDEX IF NOT EXISTS decisions_schema ON decisions(schema_id, schema_version);
