-- 0032: the call, verified both ways (api.md v1.3, issue 41).

-- Nine wrong call codes on a case (the customer code, or a mailed one-time code) lock its status look-up: someone is
-- guessing, and the case is flagged for it.
INSERT INTO risk_signal_kinds (signal) VALUES ('caller_code_guessed');

-- The one-time code mailed to a case's contact address to verify a caller, while it works: its keyed hash (HMAC-SHA-256
-- under the key file's access_code key, named by key_id), never the code. One per case: a new one replaces it, a used
-- one is deleted. The desk and customer codes are derived (docs/decisions.md), nothing of them is stored.
CREATE TABLE caller_mailed_codes (
    case_id uuid PRIMARY KEY REFERENCES cases (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    key_id text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
