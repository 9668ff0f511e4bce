-- 003 exposure batches: the exposures one write batch holds for one experiment version are one row,
-- a JSON array of [assignmentId, variantKey, userId, context, createdAt] in assignment order (ADR 0006).
-- Text, not jsonb: it is written once and read back whole.
-- Expand only: instances of the previous release keep writing `exposures` during a rolling deploy;
-- the store reads those rows alongside the batches.
CREATE TABLE exposure_batches (
  seq {{serial}},
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  count INTEGER NOT NULL,
  exposures TEXT NOT NULL
);
CREATE INDEX exposure_batches_by_experiment ON exposure_batches (experiment_id, seq);
