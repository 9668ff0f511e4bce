-- 010 (issue 24) GET /keys pages through the live keys in creation order: this index answers a page
-- (WHERE revoked_at IS NULL AND (created_at, id) > cursor ORDER BY created_at, id LIMIT n) without
-- reading the other keys.
CREATE INDEX api_keys_live_by_creation ON api_keys (created_at, id) WHERE revoked_at IS NULL;

-- ADR 0016, amended (issue 24): a pending Idempotency-Key claim names the instance that made it. The
-- claim holds while that instance is alive (it holds its PostgreSQL advisory lock); a dead instance's
-- claims are taken over at once instead of after a fixed timeout. NULL: a claim made before this.
ALTER TABLE idempotency_keys ADD COLUMN instance INTEGER;
