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

-- 2. A reply is never lost to another message that used its `Message-ID` first: anyone can write any `Message-ID`, and
--    a stranger's mail sent under the customer's reply's id made the real reply a "duplicate" to remove unread. The
--    same message is now the same bytes: one row per SHA-256 of the raw message as read (a mailbox's copy read twice,
--    by a retry or a second worker, is byte for byte the same); two different messages under one `Message-ID` are
--    both kept. Nothing looks a message up by its `Message-ID`, so it keeps no index.
DROP INDEX inbound_messages_message_id;
DROP INDEX inbound_messages_digest;
CREATE UNIQUE INDEX inbound_messages_digest ON inbound_messages (digest);

-- 3. Cases erased before this migration lose their received Message-IDs too (erasure clears them from now on).
UPDATE inbound_messages SET message_id = NULL
WHERE message_id IS NOT NULL AND case_id IN (SELECT id FROM cases WHERE erased_at IS NOT NULL);
