-- 028 released experiments (issue 38): a rollout that completes makes its experiment `released`, serving
-- the rolled-out variant (this column) to every unit that enters. NULL for every other status.
ALTER TABLE experiments ADD COLUMN released_variant TEXT;
