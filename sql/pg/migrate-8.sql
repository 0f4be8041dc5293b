-- sql/pg/migrate-8.sql: takes a database from schema version 7 to 8,
-- as sql/migrate-8.sql does SQLite's: a placeholder for another
-- change's step, which changes nothing here.
UPDATE schema_version SET v = 8;
