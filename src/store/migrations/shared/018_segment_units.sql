-- 018 segments per user (issue 33 item 3): a sticky experiment's segments are analysed per user, as the
-- whole analysis is, and every segment has quantile sketches. Expand only: `npm run rollups:rebuild` fills
-- the new sums from rows written before this release.

-- The segment values that counted a result in the segment rows (a JSON object {key: value}; a key whose
-- value is null waited for its client's exposure, and counts under that assignment's stored value once it
-- came). NULL: counted in no segment. A rebuild reads it, so it counts what the live writes counted.
ALTER TABLE results ADD COLUMN segments TEXT;

-- Results up to this seq were written before results.segments existed: a rebuild gives them the values
-- their own context, else their assignment's, has for the keys their experiment declares now.
CREATE TABLE segments_recorded (after_seq {{bigint}} NOT NULL);
INSERT INTO segments_recorded (after_seq) SELECT COALESCE(MAX(seq), 0) FROM results;

-- Per-user running sums per segment value (like unit_sums): a user with calls in two values of a key is
-- a unit in each.
CREATE TABLE segment_unit_sums (
  experiment_id {{bigint}} NOT NULL,
  user_id TEXT NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  kind TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, user_id, segment_key, value, experiment_version, variant_key, metric, kind)
);

-- Per segment value, variant and metric: units, Σx, Σx², Σy, Σy², Σxy over the users' sums (like
-- unit_rollups), moved at write time by the difference each write makes.
CREATE TABLE segment_unit_rollups (
  experiment_id {{bigint}} NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
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
  PRIMARY KEY (experiment_id, segment_key, value, experiment_version, variant_key, metric, kind)
);

-- DDSketch bins per segment value (like sketch_bins; `key` is the bin's): quantiles within a segment.
CREATE TABLE segment_sketch_bins (
  experiment_id {{bigint}} NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  side INTEGER NOT NULL,
  key INTEGER NOT NULL,
  count {{bigint}} NOT NULL,
  PRIMARY KEY (experiment_id, segment_key, value, experiment_version, variant_key, metric, side, key)
);
