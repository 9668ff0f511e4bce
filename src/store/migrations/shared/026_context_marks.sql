-- 026 exposures carry their context (issue 37): assign no longer writes an assignment_contexts row per
-- exposure. Before results are read, the experiment's exposure batches after its mark here are indexed
-- into assignment_contexts (context-index.ts). Everything stored so far was indexed as it was written.
CREATE TABLE context_marks (
  experiment_id {{bigint}} PRIMARY KEY,
  seq {{bigint}} NOT NULL
);
INSERT INTO context_marks (experiment_id, seq)
SELECT experiment_id, max(seq) FROM exposure_batches GROUP BY experiment_id;
