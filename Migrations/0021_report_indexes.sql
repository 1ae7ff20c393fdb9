-- 0021: the reports' supervision figures (api.md v1.2, issue 20), each an index-only scan: open cases per agent (workload,
-- overdue among them), open cases by age (the backlog by age), and cases resolved per agent in a window (throughput).
-- The open predicate is CaseState.isOpen's: a state with a tier (merged, resolved, rejected and closed have none).
-- `state` is included although the predicate fixes it: PostgreSQL plans an index-only scan only when every column the
-- query names is in the index (without it, 300,000 cases with 60,000 open took 480 ms instead of 32).
CREATE INDEX cases_open_assignee ON cases (assignee_id, due_at) INCLUDE (state)
    WHERE assignee_id IS NOT NULL AND state NOT IN ('resolved', 'rejected', 'closed', 'merged');
CREATE INDEX cases_open_opened_at ON cases (opened_at) INCLUDE (state) WHERE state NOT IN ('resolved', 'rejected', 'closed', 'merged');
CREATE INDEX cases_resolved_by_assignee ON cases (state_entered_at) INCLUDE (assignee_id, state) WHERE state = 'resolved';
