-- One timeline append, as CaseEventStore.append runs it (the case row locked first, so one case's appends are serial).
-- (No colon inside a literal: pgbench would read it as a variable.)
\set n random(1, 1000)
BEGIN;
SELECT id AS case_id FROM bench_cases WHERE n = :n \gset
SELECT id FROM cases WHERE id = :case_id FOR UPDATE;
SELECT seq AS last_seq, hash AS last_hash FROM case_events WHERE case_id = :case_id ORDER BY seq DESC LIMIT 1 \gset
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
VALUES (:case_id::uuid, :last_seq::integer + 1, now(), 'agent' || chr(58) || 'bench', 'note_added', '{"visibility":"internal"}', :last_hash::text,
        encode(sha256(convert_to(:last_hash::text || 'next', 'UTF8')), 'hex'));
END;
