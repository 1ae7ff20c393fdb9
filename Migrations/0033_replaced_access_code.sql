-- 0033: the replaced access code's hint (api.md v1.3, "The victim's side, without contradictions"; issue 37).

-- When an access code is replaced, the keyed hash of the one it replaced (HMAC-SHA-256 under the key file's access_code
-- key named by previous_access_code_key_id, never the code) and when: a look-up with the old code within 30 days is
-- told that a new code was mailed, and to which (masked) address. Erasure clears all three.
ALTER TABLE cases
    ADD COLUMN previous_access_code_hash bytea,
    ADD COLUMN previous_access_code_key_id text,
    ADD COLUMN access_code_replaced_at timestamptz;
