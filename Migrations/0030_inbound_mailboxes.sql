-- api.md v1.3 "Smaller doors": received mail's senders compared as mailboxes.

-- 1. The per-sender limit counts by the mailbox a `From` reaches (`EmailAddress.mailbox`: case, `+tag`, comments and
--    the providers' own rules ignored), so `thief+1@`, `thief+2@` and `THIEF@` share one hourly budget. The store
--    writes it beside `from_address` (which agents read as sent); erasure clears both. Rows stored before are
--    given the address lower-cased with its `+tag` dropped: close enough for the one hour the limit looks back.
ALTER TABLE inbound_messages ADD COLUMN from_mailbox text;
UPDATE inbound_messages SET from_mailbox = regexp_replace(lower(from_address), '^([^+@]+)\+[^@]*@', '\1@')
WHERE from_address IS NOT NULL;
DROP INDEX inbound_messages_sender;
CREATE INDEX inbound_messages_sender ON inbound_messages (from_mailbox, received_at) WHERE from_mailbox IS NOT NULL;
