-- 020 webhook secret rotation (issue 34 item 5): the secret a rotation replaced, and until when deliveries
-- are still signed with it too (its grace period). Expand only: NULL for every endpoint never rotated,
-- and once the grace period has passed the column is simply not read (the next rotation overwrites it).
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until {{time}};
