-- GET /api/v1/cases/{n}: the statements the service runs, in order (SessionStore.find, CaseStore.find, the caller
-- verifications, RiskSignalStore.list, CaseStore.neighbours for `related`).
SELECT s.id, s.agent_id, s.last_seen_at, s.expires_at, a.email, a.name, a.tier, a.is_admin
FROM sessions s JOIN agents a ON a.id = s.agent_id
WHERE s.token_hash = :token AND s.expires_at > :now AND s.last_seen_at > :idle AND NOT a.disabled;
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.case_number = :num \gset r_
-- The caller verifications in force (api.md v1.3 "The call, verified both ways"): the case's `caller_verified` events.
-- bind $2 = 'caller_verified'
SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index,
    (SELECT json_object_agg(v.field, json_build_array(v.value, v.salt))::text FROM case_event_values v
     WHERE v.case_id = e.case_id AND v.seq = e.seq) AS revealed, e.legacy_hash,
    EXISTS (SELECT 1 FROM case_events_carried k WHERE k.case_id = e.case_id AND k.seq = e.seq) AS carried FROM case_events e
LEFT JOIN log_leaves l ON l.case_id = e.case_id AND l.seq = e.seq
WHERE e.case_id = :r_id AND e.type = 'caller_verified' ORDER BY e.seq;
SELECT id, signal, detail, array_to_string(other_cases, ',') AS other_cases, raised_by, raised_at, cleared_at, cleared_by,
    clear_reason
FROM case_risk_signals WHERE case_id = :r_id ORDER BY raised_at, id;
-- The related cases (api.md v1.3): the other cases found by the account e-mail, the devices and the contact address, open
-- or finished within RECLAIM_RELATED_DAYS. The service's terms also hold the case's serials and IMEIs; here the two
-- addresses stand for them (the same index probes, one term fewer or more).
-- bind $1 = ARRAY[lower(:r_account_email), lower(:r_customer_contact_email)]
-- bind $3 = ARRAY['new', 'identity_check', 'awaiting_documents', 'document_review', 'engineering']
-- bind $4 = now() - interval '90 days'
SELECT c.case_number, c.state, c.tier, c.opened_at, c.account_email, c.customer_name, c.customer_contact_email, c.customer_phone,
    c.devices::text AS devices
FROM cases c WHERE c.id IN (SELECT s.case_id FROM case_search s WHERE s.term = ANY(ARRAY[lower(:r_account_email), lower(:r_customer_contact_email)]))
    AND c.id <> :r_id AND c.erased_at IS NULL AND (c.state = ANY(ARRAY['new', 'identity_check', 'awaiting_documents', 'document_review', 'engineering']) OR c.state_entered_at >= now() - interval '90 days')
ORDER BY c.case_number LIMIT 50;
