-- 027 rollouts (issue 38): one variant of an experiment ramped to everyone in steps. One row per rollout;
-- `version` counts its moves, and a move is written only over the version it was planned from, so two
-- instances (or the monitor and a person) never both make one. At most one live rollout per experiment.
CREATE TABLE rollouts (
  id TEXT PRIMARY KEY,
  experiment_id {{bigint}} NOT NULL,
  state TEXT NOT NULL,
  step INTEGER NOT NULL,
  version INTEGER NOT NULL,
  rollout {{json}} NOT NULL,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX rollouts_live ON rollouts (experiment_id) WHERE state IN ('pending', 'running', 'paused');
CREATE INDEX rollouts_experiment ON rollouts (experiment_id, created_at);
