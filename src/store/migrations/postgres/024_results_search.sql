-- 024 results search (issue 36, ADR 0039): the text of each result's input and output in result_text,
-- lowercased, with a pg_trgm GIN index (LIKE substring matches), and one on feedback comments. Filled off the /log
-- path: a search first indexes the results of its experiment after search_marks.seq (results of one
-- experiment commit in seq order: lockExperimentsForAppend). Filled here from the results already stored.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE result_text (
  seq BIGINT PRIMARY KEY,
  experiment_id BIGINT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX result_text_body ON result_text USING gin (body gin_trgm_ops);
CREATE INDEX feedback_comment ON feedback USING gin (comment gin_trgm_ops);
CREATE TABLE search_marks (
  experiment_id BIGINT PRIMARY KEY,
  seq BIGINT NOT NULL
);
INSERT INTO result_text (seq, experiment_id, body)
SELECT seq, experiment_id, lower(coalesce(input::text, '') || E'\n' || coalesce(output::text, '')) FROM results;
INSERT INTO search_marks (experiment_id, seq) SELECT experiment_id, max(seq) FROM results GROUP BY experiment_id;
