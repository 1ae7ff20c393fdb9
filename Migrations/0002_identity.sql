-- 0002: identity and access (issue 3): agents, sessions, login throttles, API clients,
-- the signature replay store and stored idempotent responses.
--
-- No secret is stored in clear: passwords as argon2id PHC strings, TOTP seeds and signing
-- secrets sealed with XChaCha20-Poly1305 under a key-file key (its id kept beside them),
-- session tokens and API keys only as their SHA-256, idempotent responses sealed.

CREATE TABLE agents (
    id uuid PRIMARY KEY,
    email text NOT NULL CONSTRAINT agents_email_check CHECK (length(email) BETWEEN 3 AND 254),
    name text NOT NULL CONSTRAINT agents_name_check CHECK (length(name) BETWEEN 1 AND 200),
    tier text NOT NULL CONSTRAINT agents_tier_check CHECK (tier IN ('tier1', 'tier2', 'tier3', 'engineering')),
    is_admin boolean NOT NULL DEFAULT false,
    disabled boolean NOT NULL DEFAULT false,
    password_hash text NOT NULL,
    -- The 160-bit TOTP seed sealed with the `totp` key; associated data: the agent id.
    totp_secret bytea NOT NULL,
    totp_key_id text NOT NULL,
    -- The last accepted RFC 6238 time step: a code is accepted once only.
    totp_last_step bigint,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- Email addresses are unique regardless of case.
CREATE UNIQUE INDEX agents_email_key ON agents (lower(email));

CREATE TABLE sessions (
    id uuid PRIMARY KEY,
    -- SHA-256 of the 256-bit cookie token; the token itself is never stored.
    token_hash bytea NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE,
    agent_id uuid NOT NULL CONSTRAINT sessions_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    -- The absolute timeout (created_at + 12 h); the idle timeout is checked against last_seen_at.
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_agent_id_idx ON sessions (agent_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Failed sign-ins, per account (key "account:<sha256 of the lower-cased email>", whether or
-- not the account exists, so a lockout does not reveal existence) and per client address
-- (key "address:<ip>").
CREATE TABLE login_throttles (
    key text PRIMARY KEY,
    failures integer NOT NULL CONSTRAINT login_throttles_failures_check CHECK (failures >= 0),
    window_started_at timestamptz NOT NULL,
    locked_until timestamptz
);

CREATE TABLE api_clients (
    id uuid PRIMARY KEY,
    name text NOT NULL CONSTRAINT api_clients_name_check CHECK (length(name) BETWEEN 1 AND 200),
    -- SHA-256 of the 256-bit API key, for lookup; the key itself is never stored.
    key_hash bytea NOT NULL CONSTRAINT api_clients_key_hash_key UNIQUE,
    -- The signing secret sealed with the `signing` key; associated data: the client id.
    signing_secret bytea NOT NULL,
    signing_key_id text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

-- Signatures already accepted, kept until they could no longer pass the ±300 s window.
CREATE TABLE signature_replays (
    client_id uuid NOT NULL CONSTRAINT signature_replays_client_id_fkey REFERENCES api_clients (id) ON DELETE CASCADE,
    -- SHA-256 of the signature's MAC bytes.
    signature_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT signature_replays_pkey PRIMARY KEY (client_id, signature_hash)
);
CREATE INDEX signature_replays_expires_at_idx ON signature_replays (expires_at);

-- Idempotency-Key on API-client POSTs: one row per (client, key); `running` while the first
-- request is handled, `done` with its sealed 2xx response afterwards; kept 24 hours.
CREATE TABLE idempotency_keys (
    client_id uuid NOT NULL CONSTRAINT idempotency_keys_client_id_fkey REFERENCES api_clients (id) ON DELETE CASCADE,
    key text NOT NULL CONSTRAINT idempotency_keys_key_check CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of method, target and body: a reuse with another request is refused.
    request_hash bytea NOT NULL,
    state text NOT NULL CONSTRAINT idempotency_keys_state_check CHECK (state IN ('running', 'done')),
    -- The response sealed with the `idempotency` key (associated data: client id and key).
    response bytea,
    response_key_id text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (client_id, key),
    CONSTRAINT idempotency_keys_done_check CHECK (state = 'running' OR (response IS NOT NULL AND response_key_id IS NOT NULL))
);
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
