-- cache.sql: the tables of the cache file, attached as "cache".
--
-- The cache holds what may be lost without harm (design.md section 8):
-- the verified-key memo, the admission rows and the replica cool-downs.  It may be deleted at any time: every process runs
-- this when it opens its connection, so each statement is idempotent.

CREATE TABLE IF NOT EXISTS cache.key_memo (
	mac		BLOB PRIMARY KEY,	-- keyed BLAKE2b of the whole key
	prefix		TEXT NOT NULL,
	at_ms		INTEGER NOT NULL
) WITHOUT ROWID;

DROP TABLE IF EXISTS cache.auth_failures;	-- the argon2id budget is in
						-- the shared memory now

-- Per application: the GCRA arrival time and the running total of the
-- day's quota units (store_quota.c); one row, so one page written per
-- admission.
CREATE TABLE IF NOT EXISTS cache.admission (
	app_id		INTEGER PRIMARY KEY,
	tat_ms		INTEGER NOT NULL,
	day		TEXT NOT NULL,		-- UTC, YYYY-MM-DD
	used		INTEGER NOT NULL,
	rate		INTEGER NOT NULL DEFAULT 0,	-- per minute, that of
						-- tat_ms; 0: unknown
	at_ms		INTEGER NOT NULL DEFAULT 0	-- when it was written
);
DROP TABLE IF EXISTS cache.rate_windows;	-- its predecessor

CREATE TABLE IF NOT EXISTS cache.cooldowns (
	url		TEXT PRIMARY KEY,
	until_ms	INTEGER NOT NULL
) WITHOUT ROWID;
