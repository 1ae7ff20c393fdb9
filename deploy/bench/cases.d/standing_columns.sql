CASE WHEN c.state IN ('new', 'identity_check') THEN
    (SELECT count(*) || ',' || count(*) FILTER (WHERE q.question_id IN (SELECT mq.id FROM evidence me CROSS JOIN LATERAL jsonb_array_elements_text(me.details -> 'matched_question_ids') AS mq(id)
        WHERE me.case_id IN (SELECT c.id UNION ALL SELECT mm.id FROM cases mm WHERE mm.merged_into = c.id) AND me.kind = 'security_answers'
          AND COALESCE((SELECT r.decision FROM evidence_reviews r WHERE r.evidence_id = me.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1), 'pending') <> 'rejected'))
     FROM accounts ac JOIN account_security_questions q ON q.account_id = ac.id WHERE ac.email_key = lower(c.account_email))
ELSE '0,0' END AS answer_progress,
CASE WHEN c.merged_into IS NOT NULL THEN (SELECT m.state FROM cases m WHERE m.id = c.merged_into) END AS merged_into_state
