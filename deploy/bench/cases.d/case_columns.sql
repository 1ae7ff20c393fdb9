c.id, c.case_number, c.access_code_hash, c.access_code_key_id, c.kind, c.state, c.tier, c.path,
c.rescue_email_added, c.security_questions_changed, c.two_step_enabled, c.lost_mode_enabled,
c.opened_at, c.state_entered_at, c.path_clock_started_at, c.paused_seconds, c.paused_since, c.due_at,
c.account_email, c.customer_name, c.customer_contact_email, c.customer_phone, c.devices::text AS devices, c.summary,
c.assignee_id, a.name AS assignee_name, a.tier AS assignee_tier, c.frozen, c.created_at, c.updated_at, c.version,
c.rescue_email, array_to_string(c.former_rescue_emails, ' ') AS former_rescue_emails, c.language, array_to_string(c.unlocks_done, ',') AS unlocks_done, c.created_by,
(SELECT m.case_number FROM cases m WHERE m.id = c.merged_into) AS merged_into_number, c.merged_from_state, c.risk, c.erased_at, c.awaiting_reply,
CASE WHEN c.documents_pending THEN
    (SELECT count(*) FROM evidence d WHERE d.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
        AND d.document
        AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id))
ELSE 0 END AS unreviewed_documents,
CASE WHEN c.unlocks_pending THEN
    (SELECT string_agg(su.step || ' ' || (extract(epoch FROM su.effective_at) * 1000000)::bigint, ',' ORDER BY su.effective_at, su.step)
        FROM scheduled_unlocks su WHERE su.case_id = c.id AND su.status = 'scheduled')
END AS unlocks_scheduled
