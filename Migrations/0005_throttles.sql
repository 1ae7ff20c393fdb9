-- 0005: one throttle table for sign-in, the customer status look-up and security-answer checks.
--
-- The rule (ThrottleRule / ThrottleState in ReclaimCore) decides; this table only keeps each key's
-- state. Keys keep their names, whose prefixes never overlap:
--   sign-in:        account:<sha256 hex of the lower-cased email>, address:<client address>
--   status look-up: case:<case number>, addr:<client address>
--   answer checks:  account:<lower-cased email> (an email has an @, a SHA-256 hex digest has none)
-- `failures` is the current count, `window_started_at` when it began, `locked_until` the lock it
-- reached (kept after it expires; the next failure then starts a fresh count).
CREATE TABLE throttles (
    key text PRIMARY KEY,
    failures integer NOT NULL CONSTRAINT throttles_failures_check CHECK (failures >= 0),
    window_started_at timestamptz NOT NULL,
    locked_until timestamptz
);
-- The purge looks for old, unlocked rows.
CREATE INDEX throttles_window_started_at_idx ON throttles (window_started_at);

-- Locks in force and counts under way carry over; the two old rules read the same three columns.
INSERT INTO throttles (key, failures, window_started_at, locked_until)
SELECT key, failures, window_started_at, locked_until FROM login_throttles;
INSERT INTO throttles (key, failures, window_started_at, locked_until)
SELECT key, greatest(failures, 0), window_started_at, locked_until FROM status_throttle
ON CONFLICT (key) DO UPDATE SET
    failures = greatest(throttles.failures, excluded.failures),
    window_started_at = least(throttles.window_started_at, excluded.window_started_at),
    locked_until = greatest(throttles.locked_until, excluded.locked_until);

DROP TABLE login_throttles;
DROP TABLE status_throttle;
