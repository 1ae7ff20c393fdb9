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
