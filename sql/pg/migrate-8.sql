-- sql/pg/migrate-8.sql: takes a database from schema version 7 to 8,
-- as sql/migrate-8.sql does SQLite's: the options of a backend's kind
-- in one column, the text of a JSON object holding only those set
-- (NULL: none), instead of a column each (max_options, concurrency,
-- extra: the openai kind's; NULL or 0 the default).
ALTER TABLE backends ADD COLUMN options TEXT;
UPDATE backends SET options = NULLIF(jsonb_strip_nulls(jsonb_build_object(
	'max_options', NULLIF(max_options, 0),
	'concurrency', NULLIF(concurrency, 0),
	'extra', NULLIF(extra, '')::jsonb))::text, '{}');
ALTER TABLE backends DROP COLUMN max_options;
ALTER TABLE backends DROP COLUMN concurrency;
ALTER TABLE backends DROP COLUMN extra;
UPDATE schema_version SET v = 8;
