-- 0009: administration in the browser (issue 14): when each agent last signed in, signing-secret
-- rotation with an overlap, and the admin audit log.

-- Set on each successful sign-in, shown in the admin agents list.
ALTER TABLE agents ADD COLUMN last_sign_in_at timestamptz;

-- A rotated client keeps its previous signing secret (sealed like the current one, same associated
-- data) until previous_signing_expires_at, so partners can switch without an outage.
ALTER TABLE api_clients
    ADD COLUMN previous_signing_secret bytea,
    ADD COLUMN previous_signing_key_id text,
    ADD COLUMN previous_signing_expires_at timestamptz,
    ADD COLUMN rotated_at timestamptz,
    ADD CONSTRAINT api_clients_previous_signing_check CHECK (
        (previous_signing_secret IS NULL AND previous_signing_key_id IS NULL AND previous_signing_expires_at IS NULL)
        OR (previous_signing_secret IS NOT NULL AND previous_signing_key_id IS NOT NULL AND previous_signing_expires_at IS NOT NULL));

-- Every administrative change, from the command line or the browser: one SHA-256 chain over the JCS
-- form of {seq, at, actor, type, data}, exactly like a case timeline (data as canonical JSON text).
CREATE TABLE admin_events (
    seq integer PRIMARY KEY CONSTRAINT admin_events_seq_positive CHECK (seq >= 1),
    at timestamptz NOT NULL,
    actor text NOT NULL,
    type text NOT NULL,
    data text NOT NULL,
    prev_hash text,
    hash text NOT NULL
);

-- Append-only, like case_events: the database refuses UPDATE, DELETE and TRUNCATE.
CREATE FUNCTION admin_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'admin events are append-only (% refused)', TG_OP USING ERRCODE = '42501';
END;
$$;
CREATE TRIGGER admin_events_append_only BEFORE UPDATE OR DELETE ON admin_events
    FOR EACH ROW EXECUTE FUNCTION admin_events_refuse_change();
CREATE TRIGGER admin_events_no_truncate BEFORE TRUNCATE ON admin_events
    FOR EACH STATEMENT EXECUTE FUNCTION admin_events_refuse_change();

-- Supervision (GET /api/v1/reports/summary, /metrics): each figure reads an index, never the whole table.
-- The backlog by state and tier: an index-only scan over open cases alone (finished ones, the bulk, are not in it).
CREATE INDEX cases_open_state_tier ON cases (state, tier) WHERE state NOT IN ('resolved', 'rejected', 'closed');
-- Cases opened per day of the window.
CREATE INDEX cases_opened_at ON cases (opened_at);
-- Cases resolved in the window (a resolved case entered that state when it was resolved), with what the figures need.
CREATE INDEX cases_resolved_at ON cases (state_entered_at) INCLUDE (opened_at, path, paused_seconds) WHERE state = 'resolved';

-- Passkeys (WebAuthn, ES256, attestation none). An admin may require one for an agent: then password + TOTP
-- no longer signs that agent in.
ALTER TABLE agents ADD COLUMN passkey_required boolean NOT NULL DEFAULT false;

CREATE TABLE passkeys (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL CONSTRAINT passkeys_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
    -- The authenticator's credential id (public, what the browser names the key by).
    credential_id bytea NOT NULL CONSTRAINT passkeys_credential_id_key UNIQUE
        CONSTRAINT passkeys_credential_id_length CHECK (length(credential_id) BETWEEN 1 AND 1023),
    -- The P-256 public key as a 65-byte uncompressed point: nothing secret is stored.
    public_key bytea NOT NULL CONSTRAINT passkeys_public_key_length CHECK (length(public_key) = 65),
    sign_count bigint NOT NULL CONSTRAINT passkeys_sign_count_check CHECK (sign_count >= 0),
    name text NOT NULL CONSTRAINT passkeys_name_check CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL,
    last_used_at timestamptz
);
CREATE INDEX passkeys_agent_id_idx ON passkeys (agent_id);

-- Challenges, single use and short-lived, in the database so every instance agrees: one row per ceremony,
-- deleted when used (DELETE … RETURNING, so two uses race and one loses).
CREATE TABLE webauthn_challenges (
    -- SHA-256 of the 32 random bytes sent to the browser.
    challenge_hash bytea PRIMARY KEY,
    purpose text NOT NULL CONSTRAINT webauthn_challenges_purpose_check CHECK (purpose IN ('register', 'sign_in')),
    -- The agent registering (nil for a sign-in, where the credential names the agent).
    agent_id uuid CONSTRAINT webauthn_challenges_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE INDEX webauthn_challenges_expires_at_idx ON webauthn_challenges (expires_at);
