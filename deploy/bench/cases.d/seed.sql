-- The cases benchmark's data set (psql -v total=N -f seed.sql, as a superuser: it sets session_replication_role),
-- by SQL only, one INSERT … SELECT FROM generate_series per table. Case g (1..N) has the number damm(10000000000 + g)
-- (Damm check digit by a temporary function), the id md5(g)::uuid, the account address user<g>@example.com, the
-- contact address home<g>@example.net and a device with the serial SN<g, 8 digits> (and, for every second case, an
-- IMEI 35<g, 12 digits><Luhn digit>).
--
-- A desk's shape rather than a uniform one: the open backlog is the same at every size (90% of N, at most 180,000:
-- 60% new and tier 1, then identity_check, awaiting_documents (paused, undated), document_review and engineering),
-- and the rest is history: finished cases (70% resolved, 15% closed, 10% rejected, 5% merged into an open case), 5,000
-- finished a day going back from now (5,000,000 cases: about 2.6 years). Kinds, paths, tiers and languages are spread
-- (30% activation lock; en, zh-Hans, zh-Hant), names in Chinese (for the Chinese-speaking cases) and Latin scripts.
-- Each case has its opening event, and every case past `new` a transition event, with real chain hashes and their
-- leaves in the transparency tree (so the sequencer has nothing to catch up on); 40% a device filed as evidence, every
-- case past identity_check and one in five finished ones a document (the finished ones reviewed), 30% a note, one in
-- 200 a risk signal (uncleared on open cases), every open case its opening mail in the outbox (sent), 3% a matched reply
-- from the customer (open ones then awaiting the desk's reply), and the search terms the service would index.
--
-- Speed (5,000,000 cases must seed in under 15 minutes on 2 cores): foreign keys and triggers are off for the load
-- (session_replication_role = replica; every reference is made consistent by construction), and the seeded tables'
-- indexes and constraints are dropped first and rebuilt after (a sort per index instead of a random insert per row).
\set ON_ERROR_STOP on
SET session_replication_role = replica;
SET maintenance_work_mem = '1GB';
SET work_mem = '256MB';
SET temp_buffers = '2GB';
SET max_parallel_maintenance_workers = 2;
SELECT least(:total * 9 / 10, 180000) AS open \gset
SELECT :open * 60 / 100 AS new_cases \gset

CREATE FUNCTION pg_temp.damm(body text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    t int[] := ARRAY[[0,3,1,7,5,9,8,6,4,2],[7,0,9,2,1,5,4,8,6,3],[4,2,0,6,8,7,1,3,5,9],[1,7,5,0,9,8,3,4,2,6],[6,1,2,3,0,4,5,9,7,8],
                     [3,6,7,4,2,0,9,5,8,1],[5,8,6,9,7,2,0,1,3,4],[8,9,4,5,3,6,2,0,1,7],[9,4,3,8,6,1,7,2,0,5],[2,5,8,1,4,3,6,7,9,0]];
    i int := 0;
    c text;
BEGIN
    FOREACH c IN ARRAY regexp_split_to_array(body, '') LOOP i := t[i + 1][c::int + 1]; END LOOP;
    RETURN body || i;
END $$;
CREATE FUNCTION pg_temp.luhn(body text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    total int := 0;
    d int;
BEGIN
    FOR position IN 1..length(body) LOOP
        d := substr(body, length(body) - position + 1, 1)::int;
        IF position % 2 = 1 THEN d := d * 2; IF d > 9 THEN d := d - 9; END IF; END IF;
        total := total + d;
    END LOOP;
    RETURN body || ((10 - total % 10) % 10);
END $$;
-- The JCS text of {actor, at, data, seq, type} (keys in order), as CaseEventChain.hash writes it; data is canonical.
CREATE FUNCTION pg_temp.event_body(seq int, at timestamptz, data text, type text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT '{"actor":"agent:seed","at":"' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || data
        || ',"seq":' || seq || ',"type":"' || type || '"}'
$$;

-- Drop the seeded tables' foreign keys (also those pointing at them), constraint indexes and other indexes; rebuilt
-- after the load from these rows (step 1 constraint indexes, 2 the others, 3 foreign keys; dropped in the reverse order).
CREATE TEMP TABLE seed_tables (name text PRIMARY KEY);
INSERT INTO seed_tables VALUES ('cases'), ('case_events'), ('case_search'), ('evidence'), ('evidence_reviews'), ('case_notes'),
    ('case_risk_signals'), ('outbox'), ('inbound_messages'), ('log_leaves'), ('log_nodes');
CREATE TEMP TABLE seed_ddl (step int, drop_statement text, statement text);
INSERT INTO seed_ddl
SELECT CASE c.contype WHEN 'f' THEN 3 ELSE 1 END, format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname),
    format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid))
FROM pg_constraint c
WHERE (c.contype IN ('p', 'u') AND c.conrelid::regclass::text IN (SELECT name FROM seed_tables))
    OR (c.contype = 'f' AND (c.conrelid::regclass::text IN (SELECT name FROM seed_tables) OR c.confrelid::regclass::text IN (SELECT name FROM seed_tables)));
INSERT INTO seed_ddl
SELECT 2, format('DROP INDEX %I', indexname), indexdef FROM pg_indexes i
WHERE schemaname = 'public' AND tablename IN (SELECT name FROM seed_tables)
    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.indexname))::regclass);
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT drop_statement FROM seed_ddl ORDER BY step DESC LOOP EXECUTE r.drop_statement; END LOOP;
END $$;

-- Each case's shape, once: g, its id and number, state, tier, path, times.
CREATE TEMP TABLE seed_cases AS
SELECT g, md5(g::text)::uuid AS id, pg_temp.damm((10000000000 + g)::text) AS number, s.state, s.tier, s.path, s.kind, s.language,
    s.opened, s.entered, s.due
FROM generate_series(1, :total) g
CROSS JOIN LATERAL (SELECT
    CASE WHEN g <= :new_cases THEN 'new' WHEN g <= :open * 74 / 100 THEN 'identity_check'
         WHEN g <= :open * 84 / 100 THEN 'awaiting_documents' WHEN g <= :open * 92 / 100 THEN 'document_review'
         WHEN g <= :open THEN 'engineering'
         WHEN (g - :open) % 20 < 14 THEN 'resolved' WHEN (g - :open) % 20 < 17 THEN 'closed'
         WHEN (g - :open) % 20 < 19 THEN 'rejected' ELSE 'merged' END AS state,
    CASE WHEN g % 10 < 3 THEN 'activation_lock' ELSE 'account_takeover' END AS kind,
    CASE WHEN g % 10 < 5 THEN 'en' WHEN g % 10 < 8 THEN 'zh-Hans' ELSE 'zh-Hant' END AS language,
    -- Finished: 5,000 a day going back from an hour ago, each opened 1 to 10 days before it finished.
    CASE WHEN g > :open THEN now() - interval '1 hour' - (g - :open) * interval '17.28 seconds' END AS finished) f
CROSS JOIN LATERAL (SELECT f.state,
    CASE WHEN f.state = 'new' THEN 'tier1' WHEN f.state = 'identity_check' THEN 'tier2'
         WHEN f.state IN ('awaiting_documents', 'document_review') THEN 'tier3' WHEN f.state = 'engineering' THEN 'engineering'
         ELSE (ARRAY['tier1', 'tier2', 'tier3', 'engineering'])[g % 4 + 1] END AS tier,
    CASE WHEN f.state IN ('new', 'identity_check') THEN 'undetermined'
         WHEN f.state IN ('awaiting_documents', 'document_review') THEN 'documents'
         WHEN f.kind = 'activation_lock' THEN 'activation_lock'
         ELSE (ARRAY['reset', 'verified_identity', 'documents'])[g % 3 + 1] END AS path,
    f.kind, f.language,
    coalesce(f.finished - (1 + g % 10) * interval '1 day', now() - (g % 1800 + 2) * interval '1 minute') AS opened,
    coalesce(f.finished, now() - (g % 1800 + 1) * interval '1 minute') AS entered,
    CASE WHEN f.state = 'new' THEN now() + interval '1 day' - (g % 90000) * interval '1 second'
         WHEN f.state IN ('identity_check', 'document_review') THEN now() + interval '2 days' - (g % 90000) * interval '1 second'
         WHEN f.state = 'engineering' THEN now() + interval '10 days' - (g % 90000) * interval '1 second' END AS due) s;

INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path,
    rescue_email_added, security_questions_changed, two_step_enabled, lost_mode_enabled,
    account_email, customer_name, customer_contact_email, devices, summary, frozen,
    opened_at, state_entered_at, paused_since, due_at, created_by, created_at, updated_at, version,
    language, rescue_email, unlocks_done, merged_into, merged_from_state, risk, awaiting_reply, documents_pending)
SELECT c.id, c.number, sha256(c.g::text::bytea), 'seed', c.kind, c.state, c.tier, c.path,
    c.g % 10 < 7, c.g % 10 < 4, c.g % 10 < 2, c.kind = 'activation_lock',
    'user' || c.g || '@example.com',
    CASE WHEN c.language = 'en' THEN
        (ARRAY['Maria', 'James', 'Anna', 'David', 'Laura', 'Peter', 'Sofia', 'Lucas', 'Emma', 'Omar', 'Ines', 'Jonas', 'Clara',
               'Mateo', 'Nora', 'Hugo', 'Elena', 'Felix', 'Alice', 'Tomas', 'Julia', 'Samuel', 'Lea', 'Adam', 'Zoe', 'Ivan',
               'Rosa', 'Marco', 'Eva', 'Daniel', 'Amira', 'Leon', 'Sara', 'Noah', 'Mia', 'Oscar', 'Irene', 'Paul', 'Nina', 'Karim'])[c.g % 40 + 1]
        || ' ' || (ARRAY['Hart', 'Berg', 'Fair', 'Holm', 'Lind', 'Mor', 'Ash', 'Brook', 'Carr', 'Dal', 'Els', 'Frost', 'Gold', 'Hay',
               'Ire', 'Kings', 'Lang', 'Marsh', 'North', 'Oak', 'Pen', 'Quin', 'Ross', 'Stan', 'Thorn', 'Under', 'Vale', 'West',
               'Wood', 'Yar', 'Alder', 'Black', 'Crane', 'Dun', 'East', 'Fen', 'Glen', 'High', 'Lock', 'Mill', 'New', 'Park', 'Red',
               'Stone', 'Wick', 'Bell', 'Cole', 'Drake', 'Fox', 'Gray'])[c.g / 40 % 50 + 1]
        || (ARRAY['well', 'ton', 'ford', 'ley', 'wood', 'field', 'by', 'worth', 'stead', 'more', 'ham', 'dale', 'son', 'man',
               'er', 'ridge', 'brook', 'croft', 'hurst', 'wick'])[c.g / 2000 % 20 + 1]
    ELSE
        (ARRAY['王', '李', '张', '刘', '陈', '杨', '黄', '赵', '吴', '周', '徐', '孙', '马', '朱', '胡', '郭', '何', '高', '林', '罗'])[c.g % 20 + 1]
        || (ARRAY['小', '明', '美', '玲', '志', '强', '伟', '芳', '娜', '敏', '静', '丽', '军', '磊', '洋', '勇', '艳', '杰', '娟', '涛',
               '超', '秀', '霞', '平', '刚', '桂', '英', '华', '建', '国', '文', '红', '梅', '兰', '春', '玉', '宇', '浩', '欣', '婷'])[c.g / 20 % 40 + 1]
        || (ARRAY['明', '玲', '强', '伟', '芳', '娜', '敏', '静', '丽', '军', '磊', '洋', '勇', '艳', '杰', '娟', '涛', '超', '霞', '平',
               '刚', '英', '华', '国', '文', '红', '梅', '兰', '春', '玉', '宇', '浩', '欣', '婷', '琳', '晨', '阳', '雪', '飞', '鹏'])[c.g / 800 % 40 + 1]
    END,
    'home' || c.g || '@example.net',
    jsonb_build_array(jsonb_build_object('serial', 'SN' || lpad(c.g::text, 8, '0'), 'model', 'Phone',
        'imei', CASE WHEN c.g % 2 = 0 THEN pg_temp.luhn('35' || lpad(c.g::text, 12, '0')) END)),
    'seeded', false,
    c.opened, c.entered, CASE WHEN c.state = 'awaiting_documents' THEN c.entered END, c.due, 'agent:seed', c.opened, c.entered,
    CASE WHEN c.state = 'new' THEN 1 ELSE 2 END,
    c.language, CASE WHEN c.g % 10 < 7 THEN 'rescue' || c.g || '@example.org' END, '{}',
    CASE WHEN c.state = 'merged' THEN md5(((c.g % :open) + 1)::text)::uuid END, CASE WHEN c.state = 'merged' THEN 'new' END,
    c.g <= :open AND c.g % 200 = 7, c.g <= :open AND c.g % 33 = 5, c.state IN ('awaiting_documents', 'document_review')
FROM seed_cases c;

-- Events: the opening, and for every case past `new` the transition that put it where it is; real chain hashes.
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
SELECT id, 1, at, 'agent:seed', 'case_opened', data, NULL, encode(sha256(convert_to(pg_temp.event_body(1, at, data, 'case_opened'), 'UTF8')), 'hex')
FROM (SELECT id, date_trunc('milliseconds', opened) AS at, '{"kind":"' || kind || '"}' AS data FROM seed_cases) c;
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
SELECT e.case_id, 2, t.at, 'agent:seed', 'transition', t.data, e.hash,
    encode(sha256(convert_to(e.hash || pg_temp.event_body(2, t.at, t.data, 'transition'), 'UTF8')), 'hex')
FROM case_events e JOIN seed_cases c ON c.id = e.case_id
CROSS JOIN LATERAL (SELECT date_trunc('milliseconds', c.entered) AS at,
    '{"action":"' || CASE c.state WHEN 'identity_check' THEN 'escalate' WHEN 'awaiting_documents' THEN 'verify'
        WHEN 'document_review' THEN 'verify' WHEN 'engineering' THEN 'approve' WHEN 'resolved' THEN 'complete'
        WHEN 'rejected' THEN 'reject' ELSE 'close' END
    || '","due_at":null,"from":"new","path":"' || c.path || '","reason":null,"to":"' || c.state || '"}' AS data) t
WHERE e.seq = 1 AND c.state <> 'new';
-- The transparency tree over those events in write order (time, then case and seq): leaves, then each level of
-- complete subtrees from the one below (as the sequencer stores them).
INSERT INTO log_leaves (leaf_index, case_id, seq, leaf_hash)
SELECT row_number() OVER (ORDER BY at, case_id, seq) - 1, case_id, seq, sha256('\x00'::bytea || decode(hash, 'hex'))
FROM case_events;
CREATE TEMP TABLE seed_level AS SELECT leaf_index AS idx, leaf_hash AS hash FROM log_leaves;
DO $$
DECLARE
    height int := 1;
    made bigint;
BEGIN
    LOOP
        CREATE TEMP TABLE seed_next AS
        SELECT a.idx / 2 AS idx, sha256('\x01'::bytea || a.hash || a.next) AS hash
        FROM (SELECT idx, hash, lead(hash) OVER (ORDER BY idx) AS next FROM seed_level) a
        WHERE a.idx % 2 = 0 AND a.next IS NOT NULL;
        GET DIAGNOSTICS made = ROW_COUNT;
        EXIT WHEN made = 0;
        INSERT INTO log_nodes (level, idx, hash) SELECT height, idx, hash FROM seed_next;
        DROP TABLE seed_level;
        ALTER TABLE seed_next RENAME TO seed_level;
        height := height + 1;
    END LOOP;
END $$;

-- Evidence: a device for 40% (filed an hour after the opening), a document for every case past identity_check and
-- one finished case in five, reviewed on the finished ones.
INSERT INTO evidence (id, case_id, kind, document, factor, matched, summary, details, filed_by, filed_at)
SELECT md5('device' || c.g)::uuid, c.id, 'device', false, 'device', true, 'Phone SN' || lpad(c.g::text, 8, '0'),
    jsonb_build_object('serial', 'SN' || lpad(c.g::text, 8, '0'), 'model', 'Phone',
        'imei', CASE WHEN c.g % 2 = 0 THEN pg_temp.luhn('35' || lpad(c.g::text, 12, '0')) END),
    'agent:seed', c.opened + interval '1 hour'
FROM seed_cases c WHERE c.g % 5 < 2 AND c.state <> 'new';
INSERT INTO evidence (id, case_id, kind, document, summary, content, content_key_id, sha256, size, media_type, filed_by, filed_at)
SELECT md5('document' || c.g)::uuid, c.id, 'invoice', true, 'Invoice', sha256(c.g::text::bytea) || sha256(c.number::bytea), 'seed',
    sha256(('invoice ' || c.g)::bytea), 64, 'image/png', 'customer', c.opened + interval '2 hours'
FROM seed_cases c WHERE c.state IN ('awaiting_documents', 'document_review', 'engineering') OR (c.g > :open AND c.g % 5 = 0);
INSERT INTO evidence_reviews (id, evidence_id, decision, reason, reviewed_by, reviewed_at, accepted_as)
SELECT md5('review' || c.g)::uuid, md5('document' || c.g)::uuid, 'accepted', 'Matches the account', 'agent:seed',
    c.entered - interval '1 hour', 'invoice'
FROM seed_cases c WHERE (c.g > :open AND c.g % 5 = 0) OR c.state = 'engineering';
INSERT INTO case_notes (id, case_id, body, visibility, author, created_at)
SELECT md5('note' || c.g)::uuid, c.id, 'Called the customer; waiting for the receipt.', CASE WHEN c.g % 2 = 0 THEN 'internal' ELSE 'customer' END,
    'agent:seed', c.opened + interval '30 minutes'
FROM seed_cases c WHERE c.g % 10 < 3;
INSERT INTO case_risk_signals (id, case_id, signal, detail, other_cases, raised_by, raised_at, cleared_at, cleared_by, clear_reason)
SELECT md5('risk' || c.g)::uuid, c.id, 'device_claimed_elsewhere', 'The device SN' || lpad(c.g::text, 8, '0') || ' is on another case',
    ARRAY[pg_temp.damm((10000000000 + c.g + 1)::text)], 'system', c.opened,
    CASE WHEN c.g > :open THEN c.entered END, CASE WHEN c.g > :open THEN 'agent:seed' END,
    CASE WHEN c.g > :open THEN 'Same owner, second account' END
FROM seed_cases c WHERE c.g % 200 = 7;
INSERT INTO outbox (id, channel, case_id, recipient, kind, payload, state, attempts, next_attempt_at, created_at, sent_at)
SELECT md5('mail' || c.g)::uuid, 'mail', c.id, 'home' || c.g || '@example.net', 'case_opened',
    '{"case_number":"' || c.number || '","language":"' || c.language || '"}', 'sent', 1, c.opened, c.opened, c.opened + interval '2 seconds'
FROM seed_cases c WHERE c.g <= :open;
INSERT INTO inbound_messages (id, case_id, matched_by, message_id, digest, from_address, subject, text, received_at, raw, raw_key_id, raw_size)
SELECT md5('reply' || c.g)::uuid, c.id, 'reply_token', 'reply-' || c.g || '@mail.example.net', sha256(('reply ' || c.g)::bytea),
    'home' || c.g || '@example.net', 'Re: Case ' || c.number, 'Here are the photos of the receipt.', c.opened + interval '3 hours',
    sha256(c.g::text::bytea), 'seed', 32
FROM seed_cases c WHERE c.g % 33 = 5;
-- The search terms CaseSearch.indexTerms makes: number, account address, serial, IMEI, contact address, name tokens;
-- `open` as 0025's trigger (off during the load) would set it: the first :open cases are the open ones.
INSERT INTO case_search (term, case_id, open)
SELECT term, id, open FROM (
    SELECT number AS term, id, g <= :open AS open FROM seed_cases
    UNION ALL SELECT 'user' || g || '@example.com', id, g <= :open FROM seed_cases
    UNION ALL SELECT 'home' || g || '@example.net', id, g <= :open FROM seed_cases
    UNION ALL SELECT 'SN' || lpad(g::text, 8, '0'), id, g <= :open FROM seed_cases
    UNION ALL SELECT pg_temp.luhn('35' || lpad(g::text, 12, '0')), id, g <= :open FROM seed_cases WHERE g % 2 = 0
    UNION ALL SELECT '~' || t.token, c.id, c.state NOT IN ('resolved', 'rejected', 'closed', 'merged') FROM cases c CROSS JOIN LATERAL (
        SELECT lower(word) AS token FROM regexp_split_to_table(c.customer_name, ' ') word WHERE c.language = 'en'
        UNION ALL SELECT substr(c.customer_name, i, 2) FROM generate_series(1, 2) i WHERE c.language <> 'en') t
) terms;

-- Rebuild what was dropped: constraint indexes, the other indexes, then the foreign keys (validated).
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT statement FROM seed_ddl ORDER BY step LOOP EXECUTE r.statement; END LOOP;
END $$;
RESET session_replication_role;
VACUUM ANALYZE;
