-- 006 analysis that decides (issue 15): metric definitions, per-user units, late feedback, and hourly
-- rollups for the time series. Expand only: older rows keep working; `rollups:rebuild` fills the new
-- rollups from raw rows logged before this release.

-- The experiment's metric definitions (a JSON array; ADR 0018).
ALTER TABLE experiments ADD COLUMN metrics TEXT NOT NULL DEFAULT '[]';

-- The variant the result's assignmentId was issued for, when it differs from variant_key (flagged).
ALTER TABLE results ADD COLUMN assigned_variant TEXT;

-- Per-user running sums of sticky experiments: unit i's x (sum of its values) and y (its count).
CREATE TABLE unit_sums (
  experiment_id {{bigint}} NOT NULL,
  user_id TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, user_id, experiment_version, variant_key, metric, kind)
);

-- Per variant and metric: units, Σx, Σx², Σy, Σy², Σxy over the users' sums, moved at write time by
-- the difference each write makes (the delta method reads these; ADR 0018).
CREATE TABLE unit_rollups (
  experiment_id {{bigint}} NOT NULL,
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
  PRIMARY KEY (experiment_id, experiment_version, variant_key, metric, kind)
);

-- Late feedback: one row per target (an assignment 'a:<id>' or a result 'l:<id>') and metric; sending
-- the same metric again replaces the value, and the rollups move by the difference.
CREATE TABLE feedback (
  experiment_id {{bigint}} NOT NULL,
  target TEXT NOT NULL,
  metric TEXT NOT NULL,
  feedback_id TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  user_id TEXT,
  kind TEXT NOT NULL,
  value {{double}} NOT NULL,
  -- 1 when the metric name was beyond the experiment's cap (stored, not rolled up; ADR 0014)
  over_cap INTEGER NOT NULL DEFAULT 0,
  comment TEXT,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL,
  PRIMARY KEY (experiment_id, target, metric)
);
CREATE INDEX feedback_by_id ON feedback (feedback_id);

-- Hourly rollups (bucket = the hour's start, ISO 8601 UTC) for the time series.
CREATE TABLE bucket_rollups (
  experiment_id {{bigint}} NOT NULL,
  bucket TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum {{double}} NOT NULL,
  sum_squares {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, bucket, experiment_version, variant_key, metric, kind)
);
CREATE TABLE bucket_exposures (
  experiment_id {{bigint}} NOT NULL,
  bucket TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, bucket, experiment_version, variant_key)
);
