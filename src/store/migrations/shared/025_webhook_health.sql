-- 025 webhook health (issue 36 item 3): each delivery's last error in words (DNS, refused, timeout, TLS,
-- HTTP status), and on each endpoint its last attempt: when, ok or failing, and the error. Expand only:
-- NULL until the next attempt writes them.
ALTER TABLE webhook_deliveries ADD COLUMN last_error TEXT;
ALTER TABLE webhooks ADD COLUMN last_delivery_at {{time}};
ALTER TABLE webhooks ADD COLUMN last_status TEXT;
ALTER TABLE webhooks ADD COLUMN last_error TEXT;
