-- 1,000 cases, each with its opening event (the seed of deploy/bench/cases, smaller), numbered for pgbench.
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
INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path,
    rescue_email_added, security_questions_changed, two_step_enabled, lost_mode_enabled,
    account_email, customer_name, customer_contact_email, devices, summary,
    opened_at, state_entered_at, due_at, created_by, created_at, updated_at, version)
SELECT gen_random_uuid(), pg_temp.damm((10000000000 + g)::text), sha256(g::text::bytea), 'seed', 'account_takeover', s.state, s.tier, s.path,
    true, false, false, false, 'user' || g || '@example.com', 'Seeded Customer', 'home' || g || '@example.net',
    ('[{"imei": null, "model": "Phone", "serial": "SN' || lpad(g::text, 8, '0') || '"}]')::jsonb, 'seeded',
    now() - interval '1 hour', now() - interval '1 hour', s.due, 'agent:seed', now() - interval '1 hour', now() - interval '1 hour', 1
FROM generate_series(1, 1000) g
CROSS JOIN LATERAL (SELECT
    CASE WHEN g <= 150000 THEN 'new' WHEN g <= 170000 THEN 'identity_check' WHEN g <= 180000 THEN 'awaiting_documents'
         WHEN g <= 190000 THEN 'engineering' ELSE 'resolved' END AS state,
    CASE WHEN g <= 150000 THEN 'tier1' WHEN g <= 170000 THEN 'tier2' WHEN g <= 180000 THEN 'tier3' ELSE 'engineering' END AS tier,
    CASE WHEN g <= 170000 THEN 'undetermined' WHEN g <= 180000 THEN 'documents' WHEN g <= 190000 THEN 'verified_identity' ELSE 'reset' END AS path,
    CASE WHEN g <= 150000 THEN now() + interval '1 day' - (g % 90000) * interval '1 second'
         WHEN g <= 170000 THEN now() + interval '2 days' - (g % 90000) * interval '1 second'
         WHEN g <= 180000 THEN NULL
         WHEN g <= 190000 THEN now() + interval '10 days' - (g % 90000) * interval '1 second'
         ELSE NULL END AS due) s;
INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
SELECT id, 1, at, 'agent:seed', 'case_opened', '{"kind":"account_takeover"}', NULL,
    -- The real chain hash: SHA-256 of the JCS form of {seq, at, actor, type, data} (no previous hash).
    encode(sha256(convert_to('{"actor":"agent:seed","at":"' || to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        || '","data":{"kind":"account_takeover"},"seq":1,"type":"case_opened"}', 'UTF8')), 'hex')
FROM (SELECT id, date_trunc('milliseconds', created_at) AS at FROM cases) c;
CREATE TABLE bench_cases AS SELECT row_number() OVER (ORDER BY id) AS n, id FROM cases;
CREATE UNIQUE INDEX ON bench_cases (n);
VACUUM ANALYZE cases, case_events, bench_cases;
