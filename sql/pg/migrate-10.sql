-- sql/pg/migrate-10.sql: takes a database from schema version 9 to 10,
-- as sql/migrate-10.sql does SQLite's: fewer pages written per
-- decision (doc/design.md, section 10).
--
-- A decision's answers move into its row (decisions.answers), one JSON
-- text in exactly the shape src/store_answers.c writes for a new
-- decision: an array, in the answer's order (position), of
-- {"question":Q,"type":T,"distribution":D,"answer":A,"label_mass":M},
-- D and A the stored JSON texts as they are, "label_mass" only where it
-- is not NULL.  Q and T are written by to_json(), which escapes a string
-- as src/json_util.c's ju_write_str() does ('"', '\', \b \f \n \r \t,
-- other control bytes as \u00xx, nothing else); M by float8's shortest
-- text (extra_float_digits 1, set here whatever the server's default),
-- which is ju_write_num()'s for every number below 1e15 but that an
-- integer gains ".0" and 0, -0 and what is not finite are "0.0".  Then
-- decision_answers goes: a decision is one row, one b-tree less per
-- commit.
--
-- An outcome carries its decision's schema version, and calibration
-- and the comparison walk a version's outcomes by outcomes_schema,
-- each joined to its decision by id; decisions_schema, an index every
-- decision appended to, goes.
SET LOCAL extra_float_digits = 1;

ALTER TABLE decisions ADD COLUMN answers TEXT;
UPDATE decisions d SET answers = a.answers
	FROM (SELECT decision_id, '[' || string_agg('{"question":' ||
		to_json(question)::text || ',"type":' || to_json(type)::text ||
		',"distribution":' || distribution || ',"answer":' || answer ||
		CASE
		WHEN label_mass IS NULL THEN ''
		WHEN label_mass = 0 OR label_mass IN ('NaN', 'Infinity',
		    '-Infinity') THEN ',"label_mass":0.0'
		WHEN label_mass::text ~ '^-?[0-9]+$'
		    THEN ',"label_mass":' || label_mass::text || '.0'
		ELSE ',"label_mass":' || label_mass::text
		END || '}', ',' ORDER BY position) || ']' AS answers
	    FROM decision_answers GROUP BY decision_id) a
	WHERE a.decision_id = d.id;
UPDATE decisions SET answers = '[]' WHERE answers IS NULL;
ALTER TABLE decisions ALTER COLUMN answers SET NOT NULL;
DROP TABLE decision_answers;
DROP INDEX IF EXISTS decisions_schema;

ALTER TABLE outcomes ADD COLUMN schema_id BIGINT,
	ADD COLUMN schema_version BIGINT;
UPDATE outcomes o SET schema_id = d.schema_id,
	schema_version = d.schema_version
	FROM decisions d WHERE d.id = o.decision_id;
ALTER TABLE outcomes ALTER COLUMN schema_id SET NOT NULL,
	ALTER COLUMN schema_version SET NOT NULL;
CREATE INDEX outcomes_schema
	ON outcomes(schema_id, schema_version, decision_id);
UPDATE schema_version SET v = 10;
