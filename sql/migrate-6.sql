-- migrate-6.sql: takes a database from user_version 5 to 6 (issue 22,
-- retention).  Like migrate-4.sql and migrate-5.sql, what it adds is
-- not in schema.sql: every database, new or old, gets it here.
--
-- applications.retention_days: days a decision of the application is
-- kept; NULL: SERVICE_RETENTION_DAYS, 0: every decision is kept.
ALTER TABLE applications ADD COLUMN retention_days INTEGER;

-- Pruning by date over every application (evalgate-admin decisions
-- prune --before DATE) walks decisions oldest first; with an
-- application, decisions_app_time serves.
CREATE INDEX IF NOT EXISTS decisions_time ON decisions(created_at_ms);

-- SERVICE_STATE_RETENTION_DAYS clears the oldest kept states: only the
-- decisions that still have one are in this index, so each step finds
-- its rows at once however many have lost theirs.
CREATE INDEX IF NOT EXISTS decisions_state_time ON decisions(created_at_ms)
	WHERE state IS NOT NULL;
