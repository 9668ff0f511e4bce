-- 002 rollups: sufficient statistics per experiment, version, variant and metric, kept in the same
-- transaction that stores results, so analysis never scans results.
CREATE TABLE metric_rollups (
  experiment_id INTEGER NOT NULL REFERENCES experiments (id),
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  -- 'mean' for numeric values, 'proportion' for true/false (sum counts the trues)
  kind TEXT NOT NULL,
  n INTEGER NOT NULL,
  sum REAL NOT NULL,
  sum_squares REAL NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key, metric, kind)
);

-- Assignments per experiment, version and variant (from exposures).
CREATE TABLE exposure_rollups (
  experiment_id INTEGER NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key)
);
