-- 004 exact JSON and the metric cap. SQLite already keeps JSON as the text sent (PostgreSQL's
-- migration 004 moves its columns from jsonb to json for the same); here only the metric cap's column.
-- The metric names of a result that were not rolled up because its experiment already had
-- MAX_METRICS_PER_EXPERIMENT of them (a JSON array; NULL when every name was rolled up), so a
-- rebuild of the rollups from raw rows reproduces the live ones exactly (ADR 0014).
ALTER TABLE results ADD COLUMN metrics_over_cap TEXT;
