-- 013 feedback in segments (issue 26): the segment values (a JSON object {key: value}) that count a feedback
-- row's current value in segment_rollups. A replacement takes the old value out of exactly these and puts the
-- new one into its target's values now, so a value given before a key was declared is never subtracted from
-- that key's sums. NULL: counted in no segment (every row written before this migration).
ALTER TABLE feedback ADD COLUMN segments TEXT;
