-- 0004: evidence filed on cases (typed evidence and documents) and its reviews.
--
-- Evidence is immutable once filed; a review is a separate record and the evidence's status is
-- that of its latest review (pending when there is none). Nothing secret is kept in clear:
-- answers are not stored at all (only which question ids were given and whether any matched),
-- cards as first six + last four + a keyed fingerprint, transcripts and documents sealed with
-- XChaCha20-Poly1305 under the `documents` key named by content_key_id (associated data: the
-- evidence id).

CREATE TABLE evidence (
    id uuid PRIMARY KEY,
    case_id uuid NOT NULL REFERENCES cases (id),
    kind text NOT NULL CONSTRAINT evidence_kind_known CHECK (kind IN
        ('security_answers', 'card', 'device', 'transcript', 'invoice', 'warranty_card', 'box_photo',
         'carrier_contract', 'police_report', 'imei_photo', 'lock_screen_photo')),
    -- For typed evidence: the identity factor and whether it matched what was on file when filed.
    factor text CONSTRAINT evidence_factor_known CHECK (factor IN ('security_answer', 'card', 'device')),
    matched boolean,
    -- Shown to agents; never holds a secret ("623456******7890", "3 answers").
    summary text NOT NULL,
    -- Non-secret details as canonical JSON (question ids given, card first six/last four, device identifiers).
    details jsonb NOT NULL DEFAULT '{}',
    -- HMAC-SHA256 of the full card number under the card_fingerprint key named by card_fingerprint_key_id.
    card_fingerprint bytea,
    card_fingerprint_key_id text,
    -- Sealed transcript or document bytes (nonce || ciphertext || tag).
    content bytea,
    content_key_id text,
    sha256 bytea,
    size integer,
    media_type text,
    filed_by text NOT NULL,
    filed_at timestamptz NOT NULL,
    CONSTRAINT evidence_content_keyed CHECK (content IS NULL OR (content_key_id IS NOT NULL AND sha256 IS NOT NULL AND size IS NOT NULL)),
    CONSTRAINT evidence_factor_matched CHECK ((factor IS NULL) = (matched IS NULL))
);
CREATE INDEX evidence_case ON evidence (case_id, filed_at, id);
-- Keep the table's large sealed values out of line and uncompressed (ciphertext does not compress).
ALTER TABLE evidence ALTER COLUMN content SET STORAGE EXTERNAL;

CREATE TABLE evidence_reviews (
    id uuid PRIMARY KEY,
    evidence_id uuid NOT NULL REFERENCES evidence (id),
    decision text NOT NULL CONSTRAINT evidence_reviews_decision_known CHECK (decision IN ('accepted', 'rejected')),
    reason text NOT NULL CONSTRAINT evidence_reviews_reason_length CHECK (length(reason) BETWEEN 1 AND 2000),
    reviewed_by text NOT NULL,
    reviewed_at timestamptz NOT NULL
);
CREATE INDEX evidence_reviews_latest ON evidence_reviews (evidence_id, reviewed_at DESC, id DESC);
