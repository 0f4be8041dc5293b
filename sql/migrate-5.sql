-- migrate-5.sql: takes a database from user_version 4 to 5 (issue 17,
-- the openai backend kind).  Like migrate-4.sql, these columns are not
-- in schema.sql: every database, new or old, gets them here.
--
-- backends.max_options, concurrency, extra: the options of an openai
-- backend (design.md section 7); NULL: the kind's default (20 options,
-- 8 calls in flight, no extra members), and always NULL for the other
-- kinds.  extra is a JSON object, as text, merged into every request.
ALTER TABLE backends ADD COLUMN max_options INTEGER;
ALTER TABLE backends ADD COLUMN concurrency INTEGER;
ALTER TABLE backends ADD COLUMN extra TEXT;

-- decision_answers.label_mass: for an openai backend, the probability
-- mass the model's first token put on the question's answer labels,
-- before the distribution was renormalised (how sure it was of the
-- format); NULL for the other kinds.
ALTER TABLE decision_answers ADD COLUMN label_mass REAL;
