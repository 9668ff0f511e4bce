-- 024 results search (issue 36, ADR 0039): the text of each result's input and output in an FTS5 table
-- with the trigram tokenizer (substring matches, case-insensitive), its rowid the result's seq. Filled off
-- the /log path: a search first indexes the results of its experiment after search_marks.seq (results of
-- one experiment commit in seq order). Contentless: the text is already in results. Filled here from the
-- results already stored.
CREATE VIRTUAL TABLE result_text USING fts5(body, content='', tokenize='trigram');
CREATE TABLE search_marks (
  experiment_id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL
);
INSERT INTO result_text (rowid, body)
SELECT seq, coalesce(input, '') || char(10) || coalesce(output, '') FROM results;
INSERT INTO search_marks (experiment_id, seq) SELECT experiment_id, max(seq) FROM results GROUP BY experiment_id;
