-- 0018: the reports' supervision figures (api.md v1.2, issue 20), each an index-only scan: open cases per agent (workload,
-- overdue among them), open cases by age (the backlog by age), and cases resolved per agent in a window (throughput).
-- The open predicate is CaseState.isOpen's: a state with a tier (merged, resolved, rejected and closed have none).
CREATE INDEX cases_open_assignee ON cases (assignee_id, due_at)
    WHERE assignee_id IS NOT NULL AND state NOT IN ('resolved', 'rejected', 'closed', 'merged');
CREATE INDEX cases_open_opened_at ON cases (opened_at) WHERE state NOT IN ('resolved', 'rejected', 'closed', 'merged');
CREATE INDEX cases_resolved_by_assignee ON cases (state_entered_at) INCLUDE (assignee_id) WHERE state = 'resolved';
