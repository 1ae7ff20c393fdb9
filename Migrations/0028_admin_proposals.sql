-- 0028: two people means two people (api.md v1.3). While more than one admin exists, creating an agent, raising a
-- tier, granting (or taking) admin, lifting a passkey requirement and resetting another agent's password or TOTP are
-- proposed by one admin and take effect only when a different admin confirms. Until then nothing of the change is in
-- `agents`: a proposed agent has no row (the id it will have is kept here), a proposed reset replaces nothing.
CREATE TABLE admin_proposals (
    id uuid PRIMARY KEY,
    kind text NOT NULL CONSTRAINT admin_proposals_kind_check
        CHECK (kind IN ('agent_add', 'agent_change', 'password_reset', 'totp_reset')),
    -- The agent the change is for; for agent_add the id the new agent gets when confirmed (no row yet: no foreign key).
    target_agent_id uuid NOT NULL,
    target_email text NOT NULL,
    -- What was asked, as canonical JSON text (agent_add: name, tier, admin; agent_change: the members sent). No secret.
    change text NOT NULL,
    -- agent_add only: the argon2id hash of the password shown to the proposer (the confirmer is shown the TOTP seed);
    -- cleared when the proposal is decided.
    password_hash text,
    proposed_by text NOT NULL,
    proposed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'pending' CONSTRAINT admin_proposals_status_check
        CHECK (status IN ('pending', 'confirmed', 'expired', 'withdrawn')),
    decided_by text,
    decided_at timestamptz,
    CONSTRAINT admin_proposals_expiry_check CHECK (expires_at > proposed_at),
    CONSTRAINT admin_proposals_decision_check CHECK ((status = 'pending') = (decided_at IS NULL)),
    CONSTRAINT admin_proposals_password_check CHECK (password_hash IS NULL OR (kind = 'agent_add' AND status = 'pending'))
);

-- The list, newest first (keyset on proposed_at, id); the sweep of pending proposals past their time.
CREATE INDEX admin_proposals_by_time ON admin_proposals (proposed_at DESC, id DESC);
CREATE INDEX admin_proposals_pending ON admin_proposals (expires_at) WHERE status = 'pending';
