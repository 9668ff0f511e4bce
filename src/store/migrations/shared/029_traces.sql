-- 029 traces (issue 39, ADR 0045): spans received on /v1/traces, kept by (trace, span) for the trace
-- window so every export can read its traces' runs again; one row per trace (its span count and last
-- export, for the sweep); one row per run that became a result (its log id, last reading and summary).
CREATE TABLE trace_spans (
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  span TEXT NOT NULL,
  PRIMARY KEY (trace_id, span_id)
);
CREATE TABLE traces (
  trace_id TEXT PRIMARY KEY,
  spans INTEGER NOT NULL,
  last_at {{time}} NOT NULL
);
CREATE INDEX traces_last_at ON traces (last_at);
CREATE TABLE trace_runs (
  trace_id TEXT NOT NULL,
  run_key TEXT NOT NULL,
  experiment_id {{bigint}} NOT NULL,
  log_id TEXT NOT NULL,
  span_count INTEGER NOT NULL,
  reading TEXT NOT NULL,
  summary TEXT NOT NULL,
  sealed INTEGER NOT NULL,
  updated_at {{time}} NOT NULL,
  PRIMARY KEY (trace_id, run_key)
);
CREATE INDEX trace_runs_results ON trace_runs (experiment_id, log_id);
