-- One reply matched by its reply token, with an invoice photo attached: the statements the inbound worker sends to store it
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
    :photo, :key_id, :raw_size)
ON CONFLICT (digest) DO NOTHING;
SELECT seq, hash FROM case_events WHERE case_id = :p_id ORDER BY seq DESC LIMIT 1 \gset e_
\set next :e_seq + 1
-- The chain hash is a placeholder (as in cases.d/transition.sql). Writes nobody reads an answer of leave with the next
-- statement that needs one, or with COMMIT, in one pipeline (PostgresConnection.executeLater), as here.
\startpipeline
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
VALUES (:p_id, :next, :now, :actor, :received_type, :received_data, :e_hash, :event_hash);
-- The room left under the case's document limit (RECLAIM_CASE_DOCUMENTS), before its attachments are filed.
SELECT count(*) AS n FROM evidence WHERE case_id = :p_id AND document;
\endpipeline
-- The attachment (an invoice photo, sniffed as image/png): filed as evidence, which reads the case, counts its
-- documents again under the case's lock (the limit, for every filer), appends evidence_filed, fans out evidence.filed,
-- looks for the same document on another account's case, and reads the case again (a document arrived: a case awaiting
-- documents would move to review; these are new).
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.id = :p_id;
SELECT count(*) AS n FROM evidence WHERE case_id = :p_id AND document;
-- unrecorded: the service writes the evidence row with a binary COPY (the sealed content streamed), which the
-- statement recorder does not see and pgbench cannot send: here the same row as an INSERT.
INSERT INTO evidence (id, case_id, kind, document, factor, matched, summary, details, card_fingerprint, card_fingerprint_key_id,
                      content_key_id, sha256, size, media_type, filed_by, filed_at, content)
VALUES (gen_random_uuid(), :p_id, 'mail_attachment', true, NULL, NULL, :photo_summary, :photo_details, NULL, NULL,
        :key_id, sha256((:m || 'photo')::bytea), :photo_size, 'image/png', 'system', :now, :photo::bytea);
-- (The case's documents_pending follows in the INSERT's own trigger, 0026, on both sides.)
SELECT seq, hash FROM case_events WHERE case_id = :p_id ORDER BY seq DESC LIMIT 1 \gset f_
\set next :f_seq + 1
\startpipeline
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
VALUES (:p_id, :next, :now, :actor, :filed_type, :filed_data, :f_hash, :event_hash);
INSERT INTO outbox (id, channel, case_id, endpoint_id, kind, payload, next_attempt_at, created_at)
SELECT gen_random_uuid(), 'webhook', :p_id, e.id, :filed_event, :webhook_body, :now, :now
FROM webhook_endpoints e
WHERE e.deleted_at IS NULL AND e.disabled_at IS NULL AND :filed_event = ANY (e.events)
  AND 'client:' || e.client_id::text IN (
      SELECT created_by FROM cases WHERE id = :p_id
      UNION SELECT filed_by FROM evidence WHERE case_id = :p_id);
-- bind $1 = sha256((:m || 'photo')::bytea)
SELECT DISTINCT c.case_number FROM evidence e JOIN cases c ON c.id = e.case_id
WHERE e.document AND e.sha256 IS NOT NULL AND e.sha256 = sha256((:m || 'photo')::bytea) AND c.id <> :p_id
    AND lower(c.account_email) <> lower(:p_account_email)
ORDER BY c.case_number LIMIT 50;
\endpipeline
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.id = :p_id \gset q_
\startpipeline
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
