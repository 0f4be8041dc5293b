-- sql/pg/migrate-7.sql: takes a database from schema version 6 to 7,
-- as sql/migrate-7.sql does SQLite's: decisions_time, written by every
-- evaluation, read only by a prune over every application at once,
-- which now goes through the applications one by one.
DROP INDEX IF EXISTS decisions_time;
UPDATE schema_version SET v = 7;
