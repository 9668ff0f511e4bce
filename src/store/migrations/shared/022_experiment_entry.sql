-- 022 who enters an experiment (issue 35, ADR 0038): targeting (a GrowthBook condition, JSON), coverage
-- (percent), layer (JSON {key, range}), QA overrides (JSON array) and the variant served to units that
-- do not enter (NULL: the first). Expand only: every existing experiment lets everyone in, as before.
ALTER TABLE experiments ADD COLUMN targeting TEXT;
ALTER TABLE experiments ADD COLUMN coverage {{double}} NOT NULL DEFAULT 100;
ALTER TABLE experiments ADD COLUMN layer TEXT;
ALTER TABLE experiments ADD COLUMN overrides TEXT NOT NULL DEFAULT '[]';
ALTER TABLE experiments ADD COLUMN default_variant TEXT;
