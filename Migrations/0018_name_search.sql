-- 0018: `q` finds a case by the customer's name and contact address too (api.md v1.2, "Finding a case"). The terms are
-- made by the service (`CaseSearch.indexTerms`: Han character bigrams, folded words, the contact address), never by
-- SQL, so that one normalisation serves the index and the query. The cases opened before this migration are listed
-- here and given their new terms by the migrator's data step after the SQL (`CaseStore.backfillSearchTerms`, in
-- batches), which deletes each row it has done: an empty table is a finished backfill.
CREATE TABLE case_search_backfill (
    case_id uuid PRIMARY KEY REFERENCES cases (id) ON DELETE CASCADE
);
INSERT INTO case_search_backfill (case_id) SELECT id FROM cases;
