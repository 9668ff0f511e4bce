-- 019 ratios, caps and covariates (issue 33 items 9-11, ADR 0035): the sums a definition's ratio or
-- covariate needs beyond each metric's own rollups, and the users' bins of a capped metric. Expand only;
-- kept from the moment a definition declares them (a definition change rebuilds them for the experiment,
-- and `npm run rollups:rebuild` fills them from every stored row).

-- Per variant, pair (a JSON array [role, first, second]) and unit ('user' or 'call'): the units' count and
-- Σx, Σx², Σy, Σy², Σxy, Σz, Σz², Σxz, Σyz of core/pairs.ts, moved at write time by each write's difference.
CREATE TABLE pair_rollups (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  pair TEXT NOT NULL,
  unit TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum_x {{double}} NOT NULL,
  sum_x2 {{double}} NOT NULL,
  sum_y {{double}} NOT NULL,
  sum_y2 {{double}} NOT NULL,
  sum_xy {{double}} NOT NULL,
  sum_z {{double}} NOT NULL,
  sum_z2 {{double}} NOT NULL,
  sum_xz {{double}} NOT NULL,
  sum_yz {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key, pair, unit)
);

-- The same moves per hour written (bucket = the hour's start): the time series of a ratio.
CREATE TABLE bucket_pair_rollups (
  experiment_id {{bigint}} NOT NULL,
  bucket TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  pair TEXT NOT NULL,
  unit TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum_x {{double}} NOT NULL,
  sum_x2 {{double}} NOT NULL,
  sum_y {{double}} NOT NULL,
  sum_y2 {{double}} NOT NULL,
  sum_xy {{double}} NOT NULL,
  sum_z {{double}} NOT NULL,
  sum_z2 {{double}} NOT NULL,
  sum_xz {{double}} NOT NULL,
  sum_yz {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, bucket, experiment_version, variant_key, pair, unit)
);

-- Sticky experiments, capped metrics: users by the DDSketch bin of their mean per call, with the sums over
-- their (x, y) (core/unit-bins.ts); a user moves between bins as its sums change.
CREATE TABLE unit_bins (
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  side INTEGER NOT NULL,
  key INTEGER NOT NULL,
  units {{bigint}} NOT NULL,
  sum_x {{double}} NOT NULL,
  sum_x2 {{double}} NOT NULL,
  sum_y {{double}} NOT NULL,
  sum_y2 {{double}} NOT NULL,
  sum_xy {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, experiment_version, variant_key, metric, side, key)
);

-- Pair sums per segment value (like segment_unit_rollups): a ratio read within a segment.
CREATE TABLE segment_pair_rollups (
  experiment_id {{bigint}} NOT NULL,
  segment_key TEXT NOT NULL,
  value TEXT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  pair TEXT NOT NULL,
  unit TEXT NOT NULL,
  n {{bigint}} NOT NULL,
  sum_x {{double}} NOT NULL,
  sum_x2 {{double}} NOT NULL,
  sum_y {{double}} NOT NULL,
  sum_y2 {{double}} NOT NULL,
  sum_xy {{double}} NOT NULL,
  sum_z {{double}} NOT NULL,
  sum_z2 {{double}} NOT NULL,
  sum_xz {{double}} NOT NULL,
  sum_yz {{double}} NOT NULL,
  PRIMARY KEY (experiment_id, segment_key, value, experiment_version, variant_key, pair, unit)
);
