-- 0020: the cooling-off (api.md v1.2 "The thief on the phone", issue 21). Recording an unlock step schedules it: the
-- step waits RECLAIM_UNLOCK_DELAY seconds, the victim is told at every address on file and may stop it with a link.
-- The state lives here, not in a process: any instance's scheduler does a due step, once, after any restart.
CREATE TABLE unlock_statuses (status text PRIMARY KEY);
INSERT INTO unlock_statuses (status) VALUES ('scheduled'), ('done'), ('cancelled');
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON unlock_statuses FROM reclaim_service;

CREATE TABLE scheduled_unlocks (
    id uuid PRIMARY KEY,
    case_id uuid NOT NULL REFERENCES cases (id),
    step text NOT NULL CONSTRAINT scheduled_unlocks_step_fkey REFERENCES unlock_steps (step),
    status text NOT NULL DEFAULT 'scheduled' CONSTRAINT scheduled_unlocks_status_fkey REFERENCES unlock_statuses (status),
    -- The engineer's reason for the step, carried into `unlock_done`.
    reason text,
    scheduled_by text NOT NULL,
    scheduled_at timestamptz NOT NULL,
    effective_at timestamptz NOT NULL,
    -- Done (by `system`) or cancelled (by an engineer, or `customer` through the stop link), and why.
    finished_at timestamptz,
    finished_by text,
    cancel_reason text,
    CONSTRAINT scheduled_unlocks_finished CHECK ((status = 'scheduled') = (finished_at IS NULL))
);
-- One scheduled instance of a step per case at a time (a cancelled step may be scheduled again).
CREATE UNIQUE INDEX scheduled_unlocks_one_pending ON scheduled_unlocks (case_id, step) WHERE status = 'scheduled';
-- The scheduler's claim: due scheduled steps, soonest first.
CREATE INDEX scheduled_unlocks_due ON scheduled_unlocks (effective_at) WHERE status = 'scheduled';
CREATE INDEX scheduled_unlocks_case ON scheduled_unlocks (case_id, scheduled_at);

-- The "this wasn't me" links: a random token per notice, held only as its SHA-256 (the clear token is sealed in the
-- outbox rows of the notice, like an access code, and exists in clear only in the mail).
CREATE TABLE unlock_stop_tokens (
    token_hash bytea PRIMARY KEY,
    case_id uuid NOT NULL REFERENCES cases (id),
    created_at timestamptz NOT NULL,
    -- The first use; a second use answers 200 and changes nothing.
    used_at timestamptz
);
CREATE INDEX unlock_stop_tokens_case ON unlock_stop_tokens (case_id);

-- The addresses the account had before the theft (api.md v1.2): told of every scheduled unlock, with the stop link.
ALTER TABLE accounts ADD COLUMN notice_addresses text[] NOT NULL DEFAULT '{}';
