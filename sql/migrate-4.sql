-- migrate-4.sql: takes a database from user_version 3 to 4 (issue 15,
-- hardening).  SQLite cannot add a column only if it is missing, so
-- these columns are not in schema.sql: every database, new or old, gets
-- them here.
--
-- api_keys.secret_check: BLAKE2b-256 of the key's secret, keyed with a
-- subkey of the pepper (design.md section 16, item 4).  A presented
-- secret whose keyed hash differs is refused without argon2id.  NULL for
-- a key issued before this step, until its first successful argon2id
-- verification stores it.
ALTER TABLE api_keys ADD COLUMN secret_check BLOB;

-- backends.max_in_flight: evaluations in flight to the backend on the
-- host at most; NULL: half of SERVICE_WORKERS, at least 1.
ALTER TABLE backends ADD COLUMN max_in_flight INTEGER;
