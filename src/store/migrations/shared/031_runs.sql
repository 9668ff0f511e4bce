-- 031 offline runs (issue 40, ADR 0047): a run of an experiment's variants over one version of a dataset;
-- its results are results with the run, item and trial they answer, stored and never counted online (the
-- rollups skip them, and so does a rebuild); a run's comparison reads them by run.
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  experiment_id {{bigint}} NOT NULL,
  dataset_id TEXT NOT NULL,
  dataset_name TEXT NOT NULL,
  dataset_version INTEGER NOT NULL,
  variants TEXT NOT NULL,
  trials INTEGER NOT NULL,
  items INTEGER NOT NULL,
  created_at {{time}} NOT NULL
);
CREATE INDEX runs_experiment ON runs (experiment_id, created_at);
ALTER TABLE results ADD COLUMN run_id TEXT;
ALTER TABLE results ADD COLUMN item_id TEXT;
ALTER TABLE results ADD COLUMN trial INTEGER;
CREATE INDEX results_by_run ON results (run_id, seq) WHERE run_id IS NOT NULL;
