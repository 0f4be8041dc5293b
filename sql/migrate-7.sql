-- migrate-7.sql: takes a database from user_version 6 to 7 (issue 24,
-- fewer pages per decision).
--
-- decisions_time (migrate-6.sql) served a prune over every application
-- at once.  Every evaluation wrote a page of it and only that prune read
-- it: a prune over every application now goes through them one by one
-- (ops_retention.c), each on decisions_app_time.
DROP INDEX IF EXISTS decisions_time;
