-- 001 init: experiments (with a history of variant versions), results, exposures.
-- Same tables and columns as migrations/sqlite/001_init.sql; JSON is jsonb, times are timestamptz.
CREATE TABLE experiments (
  id BIGSERIAL PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  status TEXT NOT NULL,
  assignment TEXT NOT NULL,
  seed TEXT NOT NULL,
  variants JSONB NOT NULL,
  version INTEGER NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE experiment_versions (
  experiment_id BIGINT NOT NULL REFERENCES experiments (id),
  version INTEGER NOT NULL,
  variants JSONB NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (experiment_id, version)
);

-- seq is the pagination key. Appends to one experiment are serialized by a transaction-scoped advisory
-- lock (see SqlStore.appendBatch), so within an experiment seq order is commit order on every instance.
CREATE TABLE results (
  seq BIGSERIAL PRIMARY KEY,
  log_id TEXT NOT NULL UNIQUE,
  experiment_id BIGINT NOT NULL REFERENCES experiments (id),
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  known_variant BOOLEAN NOT NULL,
  user_id TEXT,
  assignment_id TEXT,
  input JSONB,
  output JSONB,
  metrics JSONB,
  context JSONB,
  client_timestamp TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX results_by_experiment ON results (experiment_id, seq);
CREATE INDEX results_by_variant ON results (experiment_id, variant_key, seq);

CREATE TABLE exposures (
  seq BIGSERIAL PRIMARY KEY,
  assignment_id TEXT NOT NULL,
  experiment_id BIGINT NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  user_id TEXT NOT NULL,
  context JSONB,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX exposures_by_experiment ON exposures (experiment_id, seq);

CREATE TABLE experiment_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL
);
INSERT INTO experiment_revision (id, revision) VALUES (1, 0);
