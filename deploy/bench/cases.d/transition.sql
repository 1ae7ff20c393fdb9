-- POST /api/v1/cases/{n}/transitions escalate (If-Match "1"): the statements the service runs, in order: the session,
-- then one transaction (the case, the guarded update, the hash-chained event, the case's evidence for the mail's
-- guidance, the customer's mail and the webhook fan-out in the outbox). The writes nobody reads an answer of leave in
-- one pipeline with the next statement that needs one, or with COMMIT (PostgresConnection.executeLater), as here.
SELECT s.id, s.agent_id, s.last_seen_at, s.expires_at, a.email, a.name, a.tier, a.is_admin
FROM sessions s JOIN agents a ON a.id = s.agent_id
WHERE s.token_hash = :token AND s.expires_at > :now AND s.last_seen_at > :idle AND NOT a.disabled;
BEGIN;
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.case_number = :num \gset p_
-- An escalated case has no path clock and is not paused: the service binds NULL, which pgbench cannot.
-- bind $5 = NULL
-- bind $7 = NULL
UPDATE cases SET state = :to_state, tier = :to_tier, path = :to_path,
    state_entered_at = :now, path_clock_started_at = NULL,
    paused_seconds = :zero, paused_since = NULL,
    due_at = :due, updated_at = :now, version = version + 1
WHERE id = :p_id AND version = :p_version;
SELECT seq, hash FROM case_events WHERE case_id = :p_id ORDER BY seq DESC LIMIT 1 \gset e_
\set next :e_seq + 1
-- The chain hash is a placeholder: `reclaim audit verify` afterwards reports exactly the cases pgbench touched.
\startpipeline
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
VALUES (:p_id, :next, :now, :actor, :event_type, :event_data, :e_hash, :event_hash);
-- Is the recipient a rescue address of the account (api.md v1.3: every one any case of the account recorded)?
-- bind $1 = lower(:p_account_email)
-- bind $2 = lower(:p_account_email)
SELECT DISTINCT a.address FROM case_search s JOIN cases c ON c.id = s.case_id,
    unnest(c.former_rescue_emails || c.rescue_email) AS a(address)
WHERE s.term = lower(:p_account_email) AND lower(c.account_email) = lower(:p_account_email) AND a.address IS NOT NULL
ORDER BY a.address;
\endpipeline
-- The mail says what the status page says: the page's guidance needs the case's evidence (and its merged cases').
SELECT e.id, e.case_id, e.kind, e.matched, e.summary, e.sha256, e.size, e.media_type, e.filed_by, e.filed_at,
    COALESCE((SELECT r.decision FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1), 'pending') AS status,
    (SELECT r.customer_reason FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS customer_reason,
    (SELECT r.accepted_as FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS accepted_as
FROM evidence e
WHERE e.case_id IN (SELECT :p_id::uuid UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = :p_id) ORDER BY e.filed_at, e.id;
-- The mail, the reply flag, the webhooks and COMMIT: one round trip.
\startpipeline
-- A new message id each time (pgbench has no UUID variable) and no secret (NULL).
-- bind $1 = gen_random_uuid()
-- bind $7 = NULL
-- bind $8 = NULL
INSERT INTO outbox (id, channel, case_id, recipient, kind, payload, secret_sealed, secret_key_id, next_attempt_at, created_at)
VALUES (gen_random_uuid(), :mail_channel, :p_id, :recipient, :mail_kind, :mail_payload,
        NULL, NULL, :now, :now);
-- A mail to the customer answers them: the case no longer awaits a reply (a no-op unless it did).
-- bind $1 = false
-- bind $3 = false
UPDATE cases SET awaiting_reply = false WHERE id = :p_id AND awaiting_reply <> false;
INSERT INTO outbox (id, channel, case_id, endpoint_id, kind, payload, next_attempt_at, created_at)
SELECT gen_random_uuid(), 'webhook', :p_id, e.id, :webhook_event, :webhook_body, :now, :now
FROM webhook_endpoints e
WHERE e.deleted_at IS NULL AND e.disabled_at IS NULL AND :webhook_event = ANY (e.events)
  AND 'client:' || e.client_id::text IN (
      SELECT created_by FROM cases WHERE id = :p_id
      UNION SELECT filed_by FROM evidence WHERE case_id = :p_id);
COMMIT;
\endpipeline
