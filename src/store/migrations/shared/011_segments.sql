-- 011 segments (issue 26): context keys an experiment declares, and their values' rollups kept at write
-- time so that GET /experiment/:slug/analysis?segment=key reads O(values) rows, never the results.
ALTER TABLE experiments ADD COLUMN segments TEXT NOT NULL DEFAULT '[]';

-- The values of the declared keys in an assign's context, per assignment id (server-issued or client-made),
-- so a result naming the assignment finds them. Only for experiments that declare segments; the first kept.
CREATE TABLE assignment_segments (
  experiment_id {{bigint}} NOT NULL,
  assignment_id TEXT NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (experiment_id, assignment_id, segment_key)
);

-- Results whose assignment's segment values were not stored yet when they were committed (a client's
-- exposure sent after its log): rolled up when the exposure arrives, then deleted.
CREATE TABLE segment_pending (
  experiment_id {{bigint}} NOT NULL,
  assignment_id TEXT NOT NULL,
  log_id TEXT NOT NULL,
  segment_key TEXT NOT NULL,
  PRIMARY KEY (experiment_id, assignment_id, log_id, segment_key)
);

-- Metric sums per segment key and value, version, variant, metric and kind (like metric_rollups).
CREATE TABLE segment_rollups (
  experiment_id {{bigint}} NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum {{double}} NOT NULL,
  sum_squares {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, segment_key, value, experiment_version, variant_key, metric, kind)
);

-- Results per segment key and value, version and variant (like result_rollups).
CREATE TABLE segment_results (
  experiment_id {{bigint}} NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, segment_key, value, experiment_version, variant_key)
);
