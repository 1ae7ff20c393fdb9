-- Whether a case has a document without a review, as a column the queue's `unreviewed` filter reads through a partial
-- index (as `cases_queue_risk` and `cases_awaiting_reply` serve theirs). Before, the filter walked the queue in due
-- order and probed each case's evidence: new cases are due first and have no documents, so at 180,000 open cases
-- a page read ~108,000 of them, 0.6–3 s (`deploy/bench/cases`, 2026-12-02). EvidenceStore maintains it in the
-- transaction that files a document (true) and the one that records a review (recomputed).
ALTER TABLE cases ADD COLUMN documents_pending boolean NOT NULL DEFAULT false;
UPDATE cases c SET documents_pending = true
WHERE EXISTS (
    SELECT 1 FROM evidence d WHERE d.case_id = c.id AND d.document AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id));
CREATE INDEX cases_documents_pending ON cases (due_at, id) WHERE documents_pending;
