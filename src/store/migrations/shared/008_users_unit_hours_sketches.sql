-- 008 a verdict you can trust (issue 23): three more sums kept at write time, so analysis still reads
-- rollups only. Expand only: `npm run rollups:rebuild` fills them from rows written before this release.

-- Sticky experiments: each user once per version, with the variant it was first exposed to; a repeat
-- user inserts nothing. exposure_user_rollups counts these rows per variant (the sample-ratio check).
CREATE TABLE exposure_users (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  variant_key TEXT NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, user_id)
);
CREATE TABLE exposure_user_rollups (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key)
);

-- Sticky experiments: how much each hour's writes moved unit_rollups (same columns); summed over the
-- hours up to t they are the unit rollups as of t, over all hours unit_rollups itself.
CREATE TABLE bucket_unit_rollups (
  experiment_id {{bigint}} NOT NULL,
  bucket TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  units {{bigint}} NOT NULL,
  sum_x {{double}} NOT NULL,
  sum_x2 {{double}} NOT NULL,
  sum_y {{double}} NOT NULL,
  sum_y2 {{double}} NOT NULL,
  sum_xy {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, bucket, experiment_version, variant_key, metric, kind)
);

-- DDSketch bins (core/sketch.ts) of the numeric values metric_rollups sums: side 1 positive, -1 negative
-- (the bin of the magnitude), 0 zero; count = values in the bin (a row may reach 0 after feedback).
CREATE TABLE sketch_bins (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  side INTEGER NOT NULL,
  key INTEGER NOT NULL,
  count {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key, metric, side, key)
);
CREATE TABLE bucket_sketch_bins (
  experiment_id {{bigint}} NOT NULL,
  bucket TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  side INTEGER NOT NULL,
  key INTEGER NOT NULL,
  count {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, bucket, experiment_version, variant_key, metric, side, key)
);
