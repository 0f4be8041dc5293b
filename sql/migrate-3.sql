-- migrate-3.sql: takes a database from user_version 2 to 3.
--
-- Workers keep catalog rows while the catalog's generation holds
-- (store_kept.c): a trigger on every change to a catalog table bumps it,
-- whoever writes.  schema.sql (step 1) already has the table and its
-- row, not the triggers.  Each trigger stays on one line: SQLite keeps
-- its text in sqlite_schema, the same as the one earlier versions of
-- evalgate recorded.

CREATE TABLE IF NOT EXISTS catalog_generation (n INTEGER NOT NULL);
INSERT INTO catalog_generation SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM catalog_generation);

CREATE TRIGGER IF NOT EXISTS applications_insert AFTER insert ON applications BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS applications_update AFTER update ON applications BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS applications_delete AFTER delete ON applications BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS api_keys_insert AFTER insert ON api_keys BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS api_keys_update AFTER update ON api_keys BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS api_keys_delete AFTER delete ON api_keys BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS backends_insert AFTER insert ON backends BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS backends_update AFTER update ON backends BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS backends_delete AFTER delete ON backends BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS backend_replicas_insert AFTER insert ON backend_replicas BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS backend_replicas_update AFTER update ON backend_replicas BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS backend_replicas_delete AFTER delete ON backend_replicas BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS schemas_insert AFTER insert ON schemas BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schemas_update AFTER update ON schemas BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schemas_delete AFTER delete ON schemas BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS schema_versions_insert AFTER insert ON schema_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schema_versions_update AFTER update ON schema_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS schema_versions_delete AFTER delete ON schema_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS grants_insert AFTER insert ON grants BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS grants_update AFTER update ON grants BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS grants_delete AFTER delete ON grants BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS templates_insert AFTER insert ON templates BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS templates_update AFTER update ON templates BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS templates_delete AFTER delete ON templates BEGIN UPDATE catalog_generation SET n = n + 1; END;

CREATE TRIGGER IF NOT EXISTS template_versions_insert AFTER insert ON template_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS template_versions_update AFTER update ON template_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS template_versions_delete AFTER delete ON template_versions BEGIN UPDATE catalog_generation SET n = n + 1; END;
