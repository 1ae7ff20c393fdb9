-- 0007: the unlock checklist (each step engineering performs, recorded once), the new terminal state `merged`
-- with the case it went into and the state it left, and an index for counting a case's unreviewed documents.
-- api.md v1.1 "Cases".
ALTER TABLE cases
    ADD COLUMN unlocks_done text[] NOT NULL DEFAULT '{}'
        CONSTRAINT cases_unlocks_done_known CHECK (unlocks_done <@ ARRAY['remove_rescue_email', 'reset_security_questions', 'remove_activation_lock']::text[]),
    ADD COLUMN merged_into uuid CONSTRAINT cases_merged_into_fkey REFERENCES cases (id),
    ADD COLUMN merged_from_state text;
ALTER TABLE cases DROP CONSTRAINT cases_state_known;
ALTER TABLE cases ADD CONSTRAINT cases_state_known CHECK (state IN
    ('new', 'identity_check', 'awaiting_documents', 'document_review', 'engineering', 'resolved', 'rejected', 'closed', 'merged'));
-- Documents are pending while no review exists; the partial index keeps the per-case count to a few rows.
CREATE INDEX evidence_documents ON evidence (case_id) WHERE kind IN
    ('invoice', 'warranty_card', 'box_photo', 'carrier_contract', 'police_report', 'imei_photo', 'lock_screen_photo');
