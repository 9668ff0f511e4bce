-- 023 what was decided when an experiment completed (issue 36): JSON {variant, note, decidedAt} or NULL.
-- Expand only: every existing experiment has no decision.
ALTER TABLE experiments ADD COLUMN decision TEXT;
