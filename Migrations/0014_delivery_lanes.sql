-- 0014: delivery in lanes (issue 25, item 1). One delivery line served mail and webhooks: a partner answering after
-- the 15 s timeout held every customer's mail behind it. Mail threads now claim only mail, webhook threads only
-- webhooks, at most N claims in flight per endpoint, and an endpoint that fails rests (backs off) on its own.

-- A claim's holder and lease. next_attempt_at alone cannot tell "in flight" from "waiting for a retry" (both lie in
-- the future); these two can, so the per-endpoint cap counts live claims. Cleared when the attempt is recorded; a
-- claim whose worker died simply runs out (leased_until in the past), so a kill -9 never holds a slot for good.
ALTER TABLE outbox ADD COLUMN leased_until timestamptz;
ALTER TABLE outbox ADD COLUMN lease_holder uuid;

-- The endpoint's health: failures in a row, and until when nothing of it is claimed. Reset by a delivery.
ALTER TABLE webhook_endpoints ADD COLUMN delivery_failures integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN backoff_until timestamptz;

-- One claim index per lane, so that a backlog in one lane is never scanned by the other's claim.
DROP INDEX outbox_due;
CREATE INDEX outbox_mail_due ON outbox (next_attempt_at, created_at) WHERE state = 'queued' AND channel = 'mail';
CREATE INDEX outbox_webhook_due ON outbox (endpoint_id, next_attempt_at, created_at) WHERE state = 'queued' AND channel = 'webhook';
-- The live claims of an endpoint (few rows: only messages being delivered, or whose worker died mid-claim).
CREATE INDEX outbox_leased ON outbox (endpoint_id, lease_holder) WHERE state = 'queued' AND leased_until IS NOT NULL;
