-- The queue at five million cases (issue 24, `deploy/bench/cases --cases 5000000`, 2026-12-02): two statements read
-- through the whole history to find a few open cases.
--
-- 1. The open queue's undated section (the paused cases, awaiting_documents) shared `cases_queue`'s undated stretch
--    with every finished case: a page there filtered ~14,000 finished rows for 50 paused ones (87 ms p50). A partial
--    index holds only the undated open cases, in the section's order. Its predicate is CaseState.isOpen's, the one
--    the queue's open filter writes (`c.state <> ALL(finished)`, CaseQueueFilter.conditions) and 0021 uses.
CREATE INDEX cases_queue_open_undated ON cases (id)
    WHERE due_at IS NULL AND state NOT IN ('resolved', 'rejected', 'closed', 'merged');

-- 2. A name search matched thousands of cases across the history (a surname, two Chinese characters), and every one
--    was joined to find the few open ones and sort them (41–56 ms p50). Each search term now carries whether its case
--    is open, kept by the two triggers below (so no writer of terms or states can forget it), and a partial index
--    reads an open case's terms alone. Finished cases are still found: their section is read in case_id order
--    straight from case_search_pkey, so a page stops after the first matches instead of reading them all.
ALTER TABLE case_search ADD COLUMN open boolean NOT NULL DEFAULT false;
UPDATE case_search s SET open = true
FROM cases c
WHERE c.id = s.case_id AND c.state NOT IN ('resolved', 'rejected', 'closed', 'merged');
CREATE INDEX case_search_open ON case_search (term, case_id) WHERE open;
-- How a common term's cases split between open and finished, for the terms where it matters (the most common ones,
-- the MCV list): without it the planner multiplies a surname's share by the open share of all terms, and where the
-- two are not independent (a name common in this month's cases) it misjudges which section to read how.
CREATE STATISTICS case_search_term_open (mcv) ON term, open FROM case_search;

-- A new term takes its case's openness (the case row is written first in every transaction that adds terms).
CREATE FUNCTION case_search_take_open() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.open := EXISTS (
        SELECT 1 FROM cases c WHERE c.id = NEW.case_id AND c.state NOT IN ('resolved', 'rejected', 'closed', 'merged'));
    RETURN NEW;
END $$;
CREATE TRIGGER case_search_open_on_insert BEFORE INSERT ON case_search
    FOR EACH ROW EXECUTE FUNCTION case_search_take_open();

-- A case that finishes, reopens, is merged or unmerged moves its terms with it (only when its openness changes).
CREATE FUNCTION cases_move_search_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE case_search SET open = NEW.state NOT IN ('resolved', 'rejected', 'closed', 'merged') WHERE case_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER cases_search_terms_follow_state AFTER UPDATE OF state ON cases
    FOR EACH ROW
    WHEN ((OLD.state NOT IN ('resolved', 'rejected', 'closed', 'merged'))
        IS DISTINCT FROM (NEW.state NOT IN ('resolved', 'rejected', 'closed', 'merged')))
    EXECUTE FUNCTION cases_move_search_terms();
