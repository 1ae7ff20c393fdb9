-- 0010: the case talks back (api.md v1.1 "Notifications"). Every message leaves through `outbox`, written in the
-- same transaction as the change that caused it; a worker in every instance claims due rows with
-- FOR UPDATE SKIP LOCKED. Webhook endpoints belong to API clients; their secrets are sealed (never in clear).
CREATE TABLE webhook_endpoints (
    id uuid PRIMARY KEY,
    client_id uuid NOT NULL REFERENCES api_clients (id),
    url text NOT NULL CONSTRAINT webhook_endpoints_url_check CHECK (length(url) BETWEEN 8 AND 2000),
    events text[] NOT NULL,
    -- The whsec_ secret's bytes sealed with the `signing` key (associated data: the endpoint id).
    secret_sealed bytea NOT NULL,
    secret_key_id text NOT NULL,
    created_at timestamptz NOT NULL,
    -- Set when a receiver answered 410 Gone: nothing more is sent to it.
    disabled_at timestamptz,
    deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id) WHERE deleted_at IS NULL;

CREATE TABLE outbox (
    -- The stable message id: the mail's Message-ID and the webhook-id header, the same on every attempt.
    id uuid PRIMARY KEY,
    channel text NOT NULL CONSTRAINT outbox_channel_check CHECK (channel IN ('mail', 'webhook')),
    case_id uuid REFERENCES cases (id),
    endpoint_id uuid REFERENCES webhook_endpoints (id),
    -- A mail's address (the customer's contact address); null for webhooks.
    recipient text,
    -- The mail's template (case_opened, state_changed, ...) or the webhook's event type (case.opened, ...).
    kind text NOT NULL,
    -- Non-secret data the message is rendered from at delivery (a webhook's exact body).
    payload text NOT NULL,
    -- A secret the message carries (a new access code), sealed with the `documents` key (associated data: the id).
    secret_sealed bytea,
    secret_key_id text,
    state text NOT NULL DEFAULT 'queued' CONSTRAINT outbox_state_check CHECK (state IN ('queued', 'sent', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    sent_at timestamptz,
    last_error text,
    CONSTRAINT outbox_target_check CHECK ((channel = 'mail') = (recipient IS NOT NULL) AND (channel = 'webhook') = (endpoint_id IS NOT NULL))
);
-- The worker's claim: due queued rows, oldest first.
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state = 'queued';
CREATE INDEX outbox_case ON outbox (case_id, created_at);
CREATE INDEX outbox_endpoint ON outbox (endpoint_id, created_at) WHERE endpoint_id IS NOT NULL;

-- One row per delivery attempt (webhooks and mail): when, the answer, how long, what failed.
CREATE TABLE outbox_attempts (
    id bigserial PRIMARY KEY,
    message_id uuid NOT NULL REFERENCES outbox (id),
    attempted_at timestamptz NOT NULL,
    status integer,
    duration_ms integer NOT NULL,
    error text
);
CREATE INDEX outbox_attempts_message ON outbox_attempts (message_id, attempted_at);
