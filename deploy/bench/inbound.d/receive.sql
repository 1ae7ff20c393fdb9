-- One reply matched by its reply token, without an attachment: the statements the inbound worker sends to store it
-- (CaseOperations.receive in one transaction), in order: are its bytes stored, the sender's mails this hour, the
-- case the token names, its lock, the message (sealed raw bytes), the hash-chained message_received event, the case
-- marked awaiting a reply, the message.received webhook fan-out. BenchStatementsTests fails when they drift.
-- :c is a case of bench_inbound_cases (made by deploy/bench/inbound); :m makes the Message-ID and digest unique.
\set c random(1, :ncases)
\set m random(1, 4000000000000000)
BEGIN;
-- bind $1 = sha256((:m || 'raw')::bytea)
SELECT 1 FROM inbound_messages WHERE digest = sha256((:m || 'raw')::bytea);
-- bind $1 = (SELECT customer_contact_email FROM bench_inbound_cases WHERE i = :c)
SELECT count(*) AS n FROM inbound_messages WHERE from_mailbox = (SELECT customer_contact_email FROM bench_inbound_cases WHERE i = :c) AND received_at >= :since;
-- bind $1 = (SELECT case_number FROM bench_inbound_cases WHERE i = :c)
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.case_number = (SELECT case_number FROM bench_inbound_cases WHERE i = :c) \gset p_
SELECT 1 FROM cases WHERE id = :p_id FOR UPDATE;
-- Is the sender a rescue address of the account (api.md v1.3: every one any case of the account recorded)?
-- bind $1 = lower(:p_account_email)
-- bind $2 = lower(:p_account_email)
SELECT DISTINCT a.address FROM case_search s JOIN cases c ON c.id = s.case_id,
    unnest(c.former_rescue_emails || c.rescue_email) AS a(address)
WHERE s.term = lower(:p_account_email) AND lower(c.account_email) = lower(:p_account_email) AND a.address IS NOT NULL
ORDER BY a.address;
-- bind $1 = gen_random_uuid()
-- bind $4 = :m || '@bench.example'
-- bind $5 = sha256((:m || 'raw')::bytea)
-- bind $13 = NULL
INSERT INTO inbound_messages (id, case_id, matched_by, message_id, digest, from_address, from_mailbox, subject, text,
    received_at, auto, from_rescue_address, unmatched_reason, raw, raw_key_id, raw_size)
VALUES (gen_random_uuid(), :p_id, :matched_by, :m || '@bench.example', sha256((:m || 'raw')::bytea), :p_customer_contact_email,
    :p_customer_contact_email, :subject,
    :text, :now, :no, :no, NULL,
    :raw, :key_id, :raw_size)
ON CONFLICT (digest) DO NOTHING;
SELECT seq, hash FROM case_events WHERE case_id = :p_id ORDER BY seq DESC LIMIT 1 \gset e_
\set next :e_seq + 1
-- The chain hash is a placeholder (as in cases.d/transition.sql). The writes nobody reads an answer of leave with
-- COMMIT in one pipeline (PostgresConnection.executeLater), as here.
\startpipeline
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
VALUES (:p_id, :next, :now, :actor, :received_type, :received_data, :e_hash, :event_hash);
UPDATE cases SET awaiting_reply = :yes WHERE id = :p_id AND awaiting_reply <> :yes;
INSERT INTO outbox (id, channel, case_id, endpoint_id, kind, payload, next_attempt_at, created_at)
SELECT gen_random_uuid(), 'webhook', :p_id, e.id, :received_event, :webhook_body, :now, :now
FROM webhook_endpoints e
WHERE e.deleted_at IS NULL AND e.disabled_at IS NULL AND :received_event = ANY (e.events)
  AND 'client:' || e.client_id::text IN (
      SELECT created_by FROM cases WHERE id = :p_id
      UNION SELECT filed_by FROM evidence WHERE case_id = :p_id);
COMMIT;
\endpipeline
