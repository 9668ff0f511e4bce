-- 002 rollups: sufficient statistics per experiment, version, variant and metric, kept in the same
-- transaction that stores results, so analysis never scans results.
CREATE TABLE metric_rollups (
  experiment_id {{bigint}} NOT NULL REFERENCES experiments (id),
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum {{double}} NOT NULL,
  sum_squares {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key, metric, kind)
);

CREATE TABLE exposure_rollups (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key)
);
