-- 015 webhooks (issue 27 item 3): endpoints that hear of events, and one delivery row per event and
-- endpoint. Delivery rows are inserted in the same transaction as the event they deliver (event-rows.ts),
-- so a committed event is never lost between its commit and its delivery. secret is the signing secret
-- (whsec_...): kept retrievable, since every delivery is signed with it. An instance claims a due row
-- (claimed_by, claimed_until) before it posts, so each attempt is made by one instance.
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  events {{json}} NOT NULL,
  description TEXT,
  format TEXT NOT NULL,
  secret TEXT NOT NULL,
  enabled {{bool}} NOT NULL,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL
);

CREATE TABLE webhook_deliveries (
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_response_status INTEGER,
  next_attempt_at {{time}},
  delivered_at {{time}},
  created_at {{time}} NOT NULL,
  claimed_by TEXT,
  claimed_until {{time}},
  PRIMARY KEY (webhook_id, event_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
