-- 007 result counts (issue 16): results per experiment, version and variant key, kept at write time
-- like the exposure counts, so a dashboard can show how many results an experiment has without a scan.
-- Rows logged before this migration are counted by `npm run rollups:rebuild`.
CREATE TABLE result_rollups (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key)
);
