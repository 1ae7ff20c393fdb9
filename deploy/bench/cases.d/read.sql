-- GET /api/v1/cases/{n}: the statements the service runs, in order (SessionStore.find, CaseStore.find, RiskSignalStore.list).
SELECT s.id, s.agent_id, s.last_seen_at, s.expires_at, a.email, a.name, a.tier, a.is_admin
FROM sessions s JOIN agents a ON a.id = s.agent_id
WHERE s.token_hash = :token AND s.expires_at > :now AND s.last_seen_at > :idle AND NOT a.disabled;
SELECT {case_columns}, {standing_columns} FROM cases c LEFT JOIN agents a ON a.id = c.assignee_id WHERE c.case_number = :num \gset r_
SELECT id, signal, detail, array_to_string(other_cases, ',') AS other_cases, raised_by, raised_at, cleared_at, cleared_by,
    clear_reason
FROM case_risk_signals WHERE case_id = :r_id ORDER BY raised_at, id;
