-- 005 scoped API keys and Idempotency-Key answers (issue 14; ADR 0015, ADR 0016).
-- A key is stored as a keyed hash of its secret; the secret itself is shown once and never stored.
-- scopes and experiments are JSON arrays (experiments NULL: every experiment). A revoked key keeps
-- its row (revoked_at set) so its name and prefix stay known.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  experiments TEXT,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  rate_limit_per_second INTEGER,
  created_at {{time}} NOT NULL,
  last_used_at {{time}},
  revoked_at {{time}}
);

-- One row per (key owner, Idempotency-Key): 'pending' while the first request runs (PostgreSQL
-- only: several instances), 'done' with the answer to replay, committed in the same transaction as
-- what the request wrote. Rows older than 24 hours are ignored and pruned.
CREATE TABLE idempotency_keys (
  owner TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  status INTEGER,
  answer TEXT,
  created_at {{time}} NOT NULL,
  PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
