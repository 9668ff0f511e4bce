-- 014 events (issue 27): the history of who changed what. Each change to an experiment or a key writes
-- its events in the same transaction as the change. seq orders them (oldest first, the pages' cursor);
-- id is the event's UUIDv7, what the API and webhooks show. Events are never deleted: those of a deleted
-- experiment stay in the audit log.
CREATE TABLE events (
  seq {{serial}},
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  at {{time}} NOT NULL,
  actor {{json}} NOT NULL,
  experiment TEXT,
  data {{json}} NOT NULL
);

CREATE INDEX events_by_experiment ON events (experiment, seq);
CREATE INDEX events_by_type ON events (type, seq);
