-- 001 init: experiments (with a history of variant versions), results, exposures.
CREATE TABLE experiments (
  id {{serial}},
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  status TEXT NOT NULL,
  assignment TEXT NOT NULL,
  seed TEXT NOT NULL,
  variants {{json}} NOT NULL,
  version INTEGER NOT NULL,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL
);

CREATE TABLE experiment_versions (
  experiment_id {{bigint}} NOT NULL REFERENCES experiments (id),
  version INTEGER NOT NULL,
  variants {{json}} NOT NULL,
  created_at {{time}} NOT NULL,
  PRIMARY KEY (experiment_id, version)
);

-- seq is the pagination key. Appends to one experiment are serialized by a transaction-scoped advisory
-- lock (see SqlStore.appendBatch), so within an experiment seq order is commit order on every instance.
CREATE TABLE results (
  seq {{serial}},
  log_id TEXT NOT NULL UNIQUE,
  experiment_id {{bigint}} NOT NULL REFERENCES experiments (id),
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  known_variant {{bool}} NOT NULL,
  user_id TEXT,
  assignment_id TEXT,
  input {{json}},
  output {{json}},
  metrics {{json}},
  context {{json}},
  client_timestamp {{time}},
  created_at {{time}} NOT NULL
);
CREATE INDEX results_by_experiment ON results (experiment_id, seq);
CREATE INDEX results_by_variant ON results (experiment_id, variant_key, seq);

CREATE TABLE exposures (
  seq {{serial}},
  assignment_id TEXT NOT NULL,
  experiment_id {{bigint}} NOT NULL,
  experiment_version INTEGER NOT NULL,
  variant_key TEXT NOT NULL,
  user_id TEXT NOT NULL,
  context {{json}},
  created_at {{time}} NOT NULL
);
CREATE INDEX exposures_by_experiment ON exposures (experiment_id, seq);

CREATE TABLE experiment_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision {{bigint}} NOT NULL
);
INSERT INTO experiment_revision (id, revision) VALUES (1, 0);
