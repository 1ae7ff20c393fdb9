-- 0019: the thief on the phone (api.md v1.2, issue 21): a case's risk signals, and the indexes their look-ups need so
-- that opening a case or filing a device or a document stays one or two index probes at millions of cases.

-- The vocabulary (ReclaimCore.RiskSignal), a lookup table as 0012's and 0017's.
CREATE TABLE risk_signal_kinds (signal text PRIMARY KEY);
INSERT INTO risk_signal_kinds (signal) VALUES
    ('device_claimed_elsewhere'), ('document_reused'), ('mail_from_rescue_address'), ('repudiated'), ('flagged');
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON risk_signal_kinds FROM reclaim_service;

-- One row per raise. At most one uncleared row per case and signal (a second raise while it stands adds the other
-- cases it names to that row); clearing stamps cleared_at/cleared_by/clear_reason and a later fact raises a new row.
-- other_cases: the case numbers the detail names (agents only; the dashboard links them).
CREATE TABLE case_risk_signals (
    id uuid PRIMARY KEY,
    case_id uuid NOT NULL CONSTRAINT case_risk_signals_case_fkey REFERENCES cases (id),
    signal text NOT NULL CONSTRAINT case_risk_signals_signal_fkey REFERENCES risk_signal_kinds (signal),
    detail text NOT NULL CONSTRAINT case_risk_signals_detail_length CHECK (length(detail) <= 4000),
    other_cases text[] NOT NULL DEFAULT '{}',
    raised_by text NOT NULL,
    raised_at timestamptz NOT NULL,
    cleared_at timestamptz,
    cleared_by text,
    clear_reason text CONSTRAINT case_risk_signals_clear_reason_length CHECK (length(clear_reason) BETWEEN 1 AND 2000),
    CONSTRAINT case_risk_signals_cleared CHECK ((cleared_at IS NULL) = (cleared_by IS NULL) AND (cleared_at IS NULL) = (clear_reason IS NULL))
);
CREATE UNIQUE INDEX case_risk_signals_uncleared ON case_risk_signals (case_id, signal) WHERE cleared_at IS NULL;
CREATE INDEX case_risk_signals_case ON case_risk_signals (case_id, raised_at, id);

-- Maintained by the operations that raise and clear (one writer per case under its row lock): true while any signal of
-- the case is uncleared. A column, not a subquery, so the queue's pages stay two index range scans; the partial index
-- serves `?risk=true` the same way `cases_queue` serves the whole queue.
ALTER TABLE cases ADD COLUMN risk boolean NOT NULL DEFAULT false;
CREATE INDEX cases_queue_risk ON cases (due_at ASC NULLS LAST, id) WHERE risk;

-- document_reused: documents by digest.
CREATE INDEX evidence_document_sha256 ON evidence (sha256) WHERE document AND sha256 IS NOT NULL;
-- device_claimed_elsewhere: devices filed as evidence by serial and IMEI (a case's own devices are found through
-- case_search's primary key, accounts' through account_devices_serial/_imei of 0003).
CREATE INDEX evidence_device_serial ON evidence ((details ->> 'serial')) WHERE kind = 'device' AND details ->> 'serial' IS NOT NULL;
CREATE INDEX evidence_device_imei ON evidence ((details ->> 'imei')) WHERE kind = 'device' AND details ->> 'imei' IS NOT NULL;
