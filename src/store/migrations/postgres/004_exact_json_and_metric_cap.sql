-- 004 exact JSON and the metric cap.
-- JSON returned to clients is json, not jsonb: json keeps the text as sent, so objects come back with
-- their keys in the order sent, as on SQLite (jsonb reorders keys by length). No query reads inside
-- these columns, so nothing needs jsonb's operators. Rows stored before this keep jsonb's order.
-- Changing the type rewrites these tables. The legacy `exposures` table (no longer written, never
-- returned to clients) keeps jsonb.
ALTER TABLE results
  ALTER COLUMN input TYPE json USING input::json,
  ALTER COLUMN output TYPE json USING output::json,
  ALTER COLUMN metrics TYPE json USING metrics::json,
  ALTER COLUMN context TYPE json USING context::json;
ALTER TABLE experiments ALTER COLUMN variants TYPE json USING variants::json;
ALTER TABLE experiment_versions ALTER COLUMN variants TYPE json USING variants::json;

-- The metric names of a result that were not rolled up because its experiment already had
-- MAX_METRICS_PER_EXPERIMENT of them (a JSON array; NULL when every name was rolled up), so a
-- rebuild of the rollups from raw rows reproduces the live ones exactly (ADR 0014).
ALTER TABLE results ADD COLUMN metrics_over_cap TEXT;
