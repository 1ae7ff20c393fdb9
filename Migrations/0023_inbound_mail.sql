-- 0023: the conversation (api.md v1.2, issue 22). The customer's replies are read from a mailbox and kept: matched to
-- a case (by the reply token, the threading headers or the subject's number from the contact address) or unmatched
-- with the reason, for an agent to attach or discard. Each message once: by its Message-ID, or by the digest of its
-- bytes when it has none. The raw message is sealed like a document (the `documents` key, associated data its id).

-- How a message found its case: a vocabulary (a lookup table as 0012's, 0017's).
CREATE TABLE inbound_matches (matched_by text PRIMARY KEY);
INSERT INTO inbound_matches (matched_by) VALUES ('reply_token'), ('references'), ('subject'), ('agent');
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON inbound_matches FROM reclaim_service;

CREATE TABLE inbound_messages (
    id uuid PRIMARY KEY,
    -- The case it belongs to; null while unmatched.
    case_id uuid REFERENCES cases (id),
    matched_by text CONSTRAINT inbound_messages_matched_by_fkey REFERENCES inbound_matches (matched_by),
    -- `Message-ID` without angle brackets; null when the message has none (then the digest keeps it once).
    message_id text,
    -- SHA-256 of the raw bytes as read.
    digest bytea NOT NULL,
    -- The sender's address (`From`), the decoded subject, the plain text (never HTML).
    from_address text,
    subject text,
    text text NOT NULL DEFAULT '',
    received_at timestamptz NOT NULL,
    -- RFC 3834 / Precedence: an automatic message, recorded and never acted on.
    auto boolean NOT NULL DEFAULT false,
    -- Sent from the case's rescue address (the thief's): kept, files nothing, raises a risk signal.
    from_rescue_address boolean NOT NULL DEFAULT false,
    -- Why it is unmatched (no_match, too_large, sender_limit, not_a_message, ...); null once matched.
    unmatched_reason text,
    -- The raw message, sealed (nonce || ciphertext || tag), its key and size.
    raw bytea NOT NULL,
    raw_key_id text NOT NULL,
    raw_size integer NOT NULL,
    -- An agent discarded it from the unmatched list (who, when, why).
    discarded_at timestamptz,
    discarded_by text,
    discard_reason text,
    CONSTRAINT inbound_messages_matched CHECK ((case_id IS NULL) = (matched_by IS NULL)),
    CONSTRAINT inbound_messages_discarded CHECK ((discarded_at IS NULL) = (discarded_by IS NULL))
);
ALTER TABLE inbound_messages ALTER COLUMN raw SET STORAGE EXTERNAL;
-- Exactly once: by Message-ID, else by digest.
CREATE UNIQUE INDEX inbound_messages_message_id ON inbound_messages (message_id) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX inbound_messages_digest ON inbound_messages (digest) WHERE message_id IS NULL;
-- The case's conversation, the unmatched list, the per-sender hourly limit.
CREATE INDEX inbound_messages_case ON inbound_messages (case_id, received_at) WHERE case_id IS NOT NULL;
CREATE INDEX inbound_messages_unmatched ON inbound_messages (received_at) WHERE case_id IS NULL AND discarded_at IS NULL;
CREATE INDEX inbound_messages_sender ON inbound_messages (lower(from_address), received_at);

-- Attachments of a received mail become documents of their own kind, unreviewed; accepting one names what it proves
-- (`accepted_as`, a document kind one may upload), and it then counts for the documents gate as that kind.
INSERT INTO evidence_kinds (kind, document) VALUES ('mail_attachment', true);
ALTER TABLE evidence_reviews
    ADD COLUMN accepted_as text CONSTRAINT evidence_reviews_accepted_as_fkey REFERENCES evidence_kinds (kind),
    ADD CONSTRAINT evidence_reviews_accepted_as_accepted CHECK (accepted_as IS NULL OR (decision = 'accepted' AND accepted_as <> 'mail_attachment'));

-- Whether the newest human message on the case is the customer's (no customer mail queued after it): maintained by the
-- inbound worker (true) and by every queued customer mail (false), so the queue filters on a column.
ALTER TABLE cases ADD COLUMN awaiting_reply boolean NOT NULL DEFAULT false;
CREATE INDEX cases_awaiting_reply ON cases (due_at, id) WHERE awaiting_reply;
