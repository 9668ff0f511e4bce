-- 009 (issue 24) GET /keys pages through the live keys in creation order: this index answers a page
-- (WHERE revoked_at IS NULL AND (created_at, id) > cursor ORDER BY created_at, id LIMIT n) without
-- reading the other keys.
CREATE INDEX api_keys_live_by_creation ON api_keys (created_at, id) WHERE revoked_at IS NULL;
