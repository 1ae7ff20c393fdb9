-- 0027: the thief's other doors (api.md v1.3, issue 35).

-- Two new risk signals: a second case on the same account or device naming another customer, and a correction of the
-- contact address, the rescue facts or the devices while an unlock step waited (the steps were cancelled).
INSERT INTO risk_signal_kinds (signal) VALUES ('parallel_case'), ('contact_changed');

-- Every rescue address a case ever recorded and no longer holds (a correction removed or replaced it): it stays the
-- thief's, for mail and for the contact rule, on this case and on every case of the account.
ALTER TABLE cases ADD COLUMN former_rescue_emails text[] NOT NULL DEFAULT '{}';
