-- 003 exposure batches: the exposures one write batch holds for one experiment version are one row,
-- a JSON array of [assignmentId, variantKey, userId, context, createdAt] in assignment order. Written
-- row by row, an exposure cost more CPU than the assignment it records (ADR 0006).
-- Expand only: rows already in `exposures` stay there and are read alongside the batches, so an
-- instance of the previous release that is still running during a rolling deploy loses nothing.
CREATE TABLE exposure_batches (
  seq INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL,
  experiment_version INTEGER NOT NULL,
  count INTEGER NOT NULL,
  exposures TEXT NOT NULL
);
CREATE INDEX exposure_batches_by_experiment ON exposure_batches (experiment_id, seq);
