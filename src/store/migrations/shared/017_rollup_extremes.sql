-- 017 quantiles within the data (issue 33): the least and greatest value each metric rollup counted, all-time
-- and per hour, so quantiles read from the sketch bins (about 2% wide) are clamped to the values seen.
-- Expand only: rows from before this release keep NULL (unknown: their quantiles are read unclamped, with
-- a warning) until `npm run rollups:rebuild` fills them from raw rows. New values leave a NULL as it is:
-- they alone do not bound the values counted before them.
ALTER TABLE metric_rollups ADD COLUMN min_value {{double}};
ALTER TABLE metric_rollups ADD COLUMN max_value {{double}};
ALTER TABLE bucket_rollups ADD COLUMN min_value {{double}};
ALTER TABLE bucket_rollups ADD COLUMN max_value {{double}};
