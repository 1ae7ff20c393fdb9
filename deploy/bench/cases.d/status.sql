-- POST /api/v1/status: the statements the service runs, in order (CaseStore.findForStatus, EvidenceStore.list).
-- The format of these scripts is described in helper.py (`script`), which expands them for pgbench.
SELECT {case_columns},
    (SELECT max(t.locked_until) FROM throttles t WHERE t.key = ANY(:keys) AND t.locked_until > :now) AS locked_until,
    (SELECT json_agg(json_build_array(n.body, (extract(epoch FROM n.created_at) * 1000)::bigint,
        CASE WHEN n.case_id = c.id THEN NULL ELSE (SELECT m.case_number FROM cases m WHERE m.id = n.case_id) END) ORDER BY n.created_at, n.id)::text
     FROM case_notes n WHERE n.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
       AND n.visibility = 'customer' AND n.body IS NOT NULL) AS customer_notes,
    (SELECT json_agg(json_build_array(r.from_address, (extract(epoch FROM r.received_at) * 1000)::bigint, r.matched_by)
        ORDER BY r.received_at, r.id)::text
     FROM inbound_messages r WHERE r.case_id = c.id AND NOT r.auto AND NOT r.from_rescue_address) AS received_mail,
    c.previous_access_code_hash, c.previous_access_code_key_id, c.access_code_replaced_at
FROM (SELECT 1) AS one LEFT JOIN cases c ON c.case_number = :num LEFT JOIN agents a ON a.id = c.assignee_id \gset s_
SELECT e.id, e.case_id, e.kind, e.matched, e.summary, e.sha256, e.size, e.media_type, e.filed_by, e.filed_at,
    COALESCE((SELECT r.decision FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1), 'pending') AS status,
    (SELECT r.customer_reason FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS customer_reason,
    (SELECT r.accepted_as FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS accepted_as
FROM evidence e
WHERE e.case_id IN (SELECT :s_id::uuid UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = :s_id) ORDER BY e.filed_at, e.id;
