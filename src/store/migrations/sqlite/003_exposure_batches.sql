-- 003 exposure batches: the exposures one write batch holds for one experiment version are one row,
-- a JSON array of [assignmentId, variantKey, userId, context, createdAt] in assignment order. Written
-- row by row, an exposure cost more CPU than the assignment it records (ADR 0006); exposure_rollups
-- keep the counts per variant, and the store reads the arrays back when exposures are listed.
CREATE TABLE exposure_batches (
  seq INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL,
  experiment_version INTEGER NOT NULL,
  count INTEGER NOT NULL,
  exposures TEXT NOT NULL
);
CREATE INDEX exposure_batches_by_experiment ON exposure_batches (experiment_id, seq);

INSERT INTO exposure_batches (experiment_id, experiment_version, count, exposures)
SELECT experiment_id, experiment_version, count(*),
       json_group_array(json_array(assignment_id, variant_key, user_id, json(context), created_at) ORDER BY seq)
FROM exposures
GROUP BY experiment_id, experiment_version, seq / 1000
ORDER BY min(seq);

DROP TABLE exposures;
