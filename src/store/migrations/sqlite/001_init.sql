-- 001 init: experiments (with a history of variant versions), results, exposures.
CREATE TABLE experiments (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  status TEXT NOT NULL,
  assignment TEXT NOT NULL,
  seed TEXT NOT NULL,
  variants TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Every variant definition an experiment has had, so results and exposures of an old version can be
-- read against the weights they were made under.
CREATE TABLE experiment_versions (
  experiment_id INTEGER NOT NULL REFERENCES experiments (id),
  version INTEGER NOT NULL,
  variants TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (experiment_id, version)
);

-- seq is the commit order (one writer), used as the stable pagination key.
CREATE TABLE results (
  seq INTEGER PRIMARY KEY,
  log_id TEXT NOT NULL UNIQUE,
  experiment_id INTEGER NOT NULL REFERENCES experiments (id),
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  known_variant INTEGER NOT NULL,
  user_id TEXT,
  assignment_id TEXT,
  input TEXT,
  output TEXT,
  metrics TEXT,
  context TEXT,
  client_timestamp TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX results_by_experiment ON results (experiment_id, seq);
CREATE INDEX results_by_variant ON results (experiment_id, variant_key, seq);

-- No foreign key: exposures are written in the background and must never fail a batch; only
-- drafts (which are never assigned) can be deleted.
CREATE TABLE exposures (
  seq INTEGER PRIMARY KEY,
  assignment_id TEXT NOT NULL,
  experiment_id INTEGER NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  user_id TEXT NOT NULL,
  context TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX exposures_by_experiment ON exposures (experiment_id, seq);

-- A counter bumped by every change to experiments, so instances can notice changes made elsewhere.
CREATE TABLE experiment_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision INTEGER NOT NULL
);
INSERT INTO experiment_revision (id, revision) VALUES (1, 0);
