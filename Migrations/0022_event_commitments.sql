-- 0022: personal data has an end, history cannot be rewritten (api.md v1.2; docs/privacy.md).
--
-- A timeline event's personal members (an address, an agent's free-text reason, how a caller was verified) are hashed
-- only as salted commitments: `case_events.data` holds {"commitment": hex SHA-256(salt hex ‖ JCS(value))} in their
-- place and case_event_values the value and its salt, which erasure deletes. The events stay append-only and verify.
--
-- Events written before this migration hash their values in clear: `reclaim migrate` carries them over after this
-- file (ReclaimOperations.EventCommitments.carryOver): it verifies each chain first, then rewrites its events into the
-- committed form with a new chain, keeping the old hash in legacy_hash, which their leaves in the transparency log
-- (append-only) go on hashing. `committed` says which events are in the new form (false only before the carry-over).

CREATE TABLE case_event_values (
    case_id uuid NOT NULL,
    seq integer NOT NULL,
    -- The data member committed (`to`, `reason`, `account_email`, `caller_check`).
    field text NOT NULL,
    -- The value's JCS text.
    value text NOT NULL,
    -- 16 random bytes, hex.
    salt text NOT NULL CONSTRAINT case_event_values_salt_check CHECK (salt ~ '^[0-9a-f]{32}$'),
    CONSTRAINT case_event_values_pkey PRIMARY KEY (case_id, seq, field),
    CONSTRAINT case_event_values_event_fkey FOREIGN KEY (case_id, seq) REFERENCES case_events (case_id, seq)
);

ALTER TABLE case_events ADD COLUMN committed boolean NOT NULL DEFAULT false;
ALTER TABLE case_events ALTER COLUMN committed SET DEFAULT true;
ALTER TABLE case_events ADD COLUMN legacy_hash text;
-- What the carry-over has left to do (empty afterwards), so `serve`'s start-up check reads no table.
CREATE INDEX case_events_uncommitted ON case_events (case_id) WHERE NOT committed;

-- Erasure (CaseErasure in ReclaimStore): the case keeps its number, kind, path, states, times and actors.
ALTER TABLE cases ADD COLUMN erased_at timestamptz;
-- Retention: finished cases not yet erased, by when they finished.
CREATE INDEX cases_retention ON cases (state_entered_at) WHERE erased_at IS NULL AND state IN ('resolved', 'rejected', 'closed', 'merged');
-- An erased note or review reason is null (the length checks hold for every other).
ALTER TABLE case_notes ALTER COLUMN body DROP NOT NULL;
ALTER TABLE evidence_reviews ALTER COLUMN reason DROP NOT NULL;
