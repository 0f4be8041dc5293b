-- migrate-8.sql: takes a database from user_version 7 to 8: a backend
-- kind owns its options.  Like migrate-5.sql, the column is not in
-- schema.sql: every database, new or old, gets it here.
--
-- backends.options: the options of the backend's kind (the table of
-- its backend_<kind>.c), as the text of one JSON object holding only
-- those set, e.g. {"max_options":8,"extra":{"seed":1}}; NULL: none, each
-- the kind's default.  The columns migrate-5.sql added for the openai
-- kind's options (max_options, concurrency, extra; NULL or 0 the
-- default) move into it, and go.  json_patch() onto an empty object
-- drops the members whose value is NULL.
ALTER TABLE backends ADD COLUMN options TEXT;
UPDATE backends SET options = NULLIF(json_patch('{}', json_object(
	'max_options', NULLIF(max_options, 0),
	'concurrency', NULLIF(concurrency, 0),
	'extra', json(NULLIF(extra, '')))), '{}');
ALTER TABLE backends DROP COLUMN max_options;
ALTER TABLE backends DROP COLUMN concurrency;
ALTER TABLE backends DROP COLUMN extra;
