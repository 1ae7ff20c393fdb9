-- 0003: cases, their tamper-evident timeline, notes, the accounts on file and the customer
-- status throttle.

CREATE TABLE cases (
    id uuid PRIMARY KEY,
    case_number text NOT NULL CONSTRAINT cases_case_number_unique UNIQUE
        CONSTRAINT cases_case_number_format CHECK (case_number ~ '^[1-9][0-9]{11}$'),
    -- HMAC-SHA256 of the canonical access code under the key named by access_code_key_id:
    -- a dump alone neither reveals a code nor lets anyone test one.
    access_code_hash bytea NOT NULL,
    access_code_key_id text NOT NULL,
    kind text NOT NULL CONSTRAINT cases_kind_known CHECK (kind IN ('account_takeover', 'activation_lock')),
    state text NOT NULL CONSTRAINT cases_state_known CHECK (state IN
        ('new', 'identity_check', 'awaiting_documents', 'document_review', 'engineering', 'resolved', 'rejected', 'closed')),
    tier text NOT NULL CONSTRAINT cases_tier_known CHECK (tier IN ('tier1', 'tier2', 'tier3', 'engineering')),
    path text NOT NULL CONSTRAINT cases_path_known CHECK (path IN
        ('undetermined', 'reset', 'verified_identity', 'documents', 'activation_lock')),
    rescue_email_added boolean NOT NULL,
    security_questions_changed boolean NOT NULL,
    two_step_enabled boolean NOT NULL,
    lost_mode_enabled boolean NOT NULL,
    account_email text NOT NULL,
    customer_name text NOT NULL,
    customer_contact_email text NOT NULL,
    -- [{"serial", "imei", "model"}] as typed at creation (validated).
    devices jsonb NOT NULL DEFAULT '[]',
    summary text NOT NULL DEFAULT '',
    assignee_id uuid CONSTRAINT cases_assignee_fkey REFERENCES agents (id),
    frozen boolean NOT NULL DEFAULT false,
    -- The SLA clock (ReclaimCore.SLAClock).
    opened_at timestamptz NOT NULL,
    state_entered_at timestamptz NOT NULL,
    path_clock_started_at timestamptz,
    paused_seconds double precision NOT NULL DEFAULT 0,
    paused_since timestamptz,
    due_at timestamptz,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL DEFAULT 1
);

-- The queue: oldest due first, null due dates last, case id as the tie-breaker (keyset cursor).
CREATE INDEX cases_queue ON cases (due_at ASC NULLS LAST, id);
CREATE INDEX cases_queue_by_state ON cases (state, due_at ASC NULLS LAST, id);
CREATE INDEX cases_queue_by_tier ON cases (tier, due_at ASC NULLS LAST, id);
CREATE INDEX cases_assignee ON cases (assignee_id) WHERE assignee_id IS NOT NULL;

-- What `q` matches, one normalised term a row: the case number, the account e-mail
-- (lower case), device serials (upper case) and IMEIs (digits).
CREATE TABLE case_search (
    term text NOT NULL,
    case_id uuid NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    CONSTRAINT case_search_pkey PRIMARY KEY (term, case_id)
);
CREATE INDEX case_search_case ON case_search (case_id);

-- The timeline: one SHA-256 chain per case (see api.md). `data` holds the event's data as
-- RFC 8785 canonical JSON text, exactly as hashed and as returned by the API.
CREATE TABLE case_events (
    case_id uuid NOT NULL REFERENCES cases (id),
    seq integer NOT NULL CONSTRAINT case_events_seq_positive CHECK (seq >= 1),
    at timestamptz NOT NULL,
    actor text NOT NULL,
    type text NOT NULL,
    data text NOT NULL,
    prev_hash text,
    hash text NOT NULL,
    CONSTRAINT case_events_pkey PRIMARY KEY (case_id, seq)
);

-- Events are append-only: the database itself refuses UPDATE, DELETE and TRUNCATE.
CREATE FUNCTION case_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'case events are append-only (% refused)', TG_OP USING ERRCODE = '42501';
END;
$$;
CREATE TRIGGER case_events_append_only BEFORE UPDATE OR DELETE ON case_events
    FOR EACH ROW EXECUTE FUNCTION case_events_refuse_change();
CREATE TRIGGER case_events_no_truncate BEFORE TRUNCATE ON case_events
    FOR EACH STATEMENT EXECUTE FUNCTION case_events_refuse_change();

CREATE TABLE case_notes (
    id uuid PRIMARY KEY,
    case_id uuid NOT NULL REFERENCES cases (id),
    body text NOT NULL CONSTRAINT case_notes_body_length CHECK (length(body) BETWEEN 1 AND 10000),
    visibility text NOT NULL CONSTRAINT case_notes_visibility_known CHECK (visibility IN ('internal', 'customer')),
    author text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX case_notes_case ON case_notes (case_id, created_at);

-- The accounts on file: what identity is checked against.
CREATE TABLE accounts (
    id uuid PRIMARY KEY,
    email text NOT NULL,
    -- Lower-cased e-mail: one account per address, found case-insensitively.
    email_key text NOT NULL CONSTRAINT accounts_email_unique UNIQUE,
    created_at timestamptz NOT NULL
);

CREATE TABLE account_security_questions (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    question_id text NOT NULL,
    question text NOT NULL,
    -- argon2id PHC string of SecurityAnswer.normalize(answer); never the answer.
    answer_hash text NOT NULL,
    CONSTRAINT account_security_questions_pkey PRIMARY KEY (account_id, question_id)
);

CREATE TABLE account_cards (
    id uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    first_six text NOT NULL,
    last_four text NOT NULL,
    number_length integer NOT NULL,
    -- HMAC-SHA256 of the full number under the card_fingerprint key named by fingerprint_key_id.
    fingerprint bytea NOT NULL,
    fingerprint_key_id text NOT NULL,
    exp_month integer NOT NULL,
    exp_year integer NOT NULL
);
CREATE INDEX account_cards_account ON account_cards (account_id);
CREATE INDEX account_cards_fingerprint ON account_cards (fingerprint);

CREATE TABLE account_devices (
    id uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    serial text,
    imei text,
    model text,
    CONSTRAINT account_devices_identified CHECK (serial IS NOT NULL OR imei IS NOT NULL)
);
CREATE INDEX account_devices_account ON account_devices (account_id);
CREATE INDEX account_devices_serial ON account_devices (serial) WHERE serial IS NOT NULL;
CREATE INDEX account_devices_imei ON account_devices (imei) WHERE imei IS NOT NULL;

-- Failed customer status look-ups, shared by every instance: `key` is `case:<number>` or
-- `addr:<client address>`. Failures count within a window; reaching the limit locks the key.
CREATE TABLE status_throttle (
    key text PRIMARY KEY,
    failures integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    locked_until timestamptz
);
