-- 0011: every case read counts the unreviewed documents of the case and of the cases merged into it
-- (`SELECT m.id FROM cases m WHERE m.merged_into = c.id`). Without an index that subquery is estimated as a scan of
-- every case for each row, so a queue page of 50 costs ~600,000 in the planner's units, past jit_above_cost: each
-- page then spent ~430 ms compiling JIT code for a 0.3 ms query (5 queue pages a second at 200,000 cases).
-- Few cases are ever merged, so a partial index is small.
CREATE INDEX cases_merged_into ON cases (merged_into) WHERE merged_into IS NOT NULL;
