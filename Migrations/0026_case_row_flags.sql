-- Two flags on the case row, so that a queue page (50 cases) runs its per-row look-ups only for the cases that have
-- something to find (issue 24, 2026-12-02: at 1,000,000 cases the first page's statement ran at 2,830 tps in pgbench,
-- 7,200 without the unreviewed-documents count and the scheduled steps; most open cases have neither). Both are kept by
-- triggers, as 0025's `case_search.open` is, so no writer of documents, reviews, merges or steps can forget them.

-- 1. `documents_pending` (0024) now also holds for a case that has a case merged into it with a document without a
--    review: the documents of a merged case count on the case it was merged into (its page lists and counts them, and
--    its agents review them there), so the queue's `unreviewed` filter finds that case too. CaseStore.columns counts
--    the documents only where it is true.
CREATE FUNCTION cases_refresh_documents_pending(target uuid) RETURNS void LANGUAGE sql AS $$
    UPDATE cases c SET documents_pending = p.pending
    FROM (SELECT EXISTS (
        SELECT 1 FROM evidence d
        WHERE d.case_id IN (SELECT target UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = target)
            AND d.document AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id)) AS pending) p
    WHERE c.id = target AND c.documents_pending IS DISTINCT FROM p.pending;
$$;

-- A case and the case it is merged into, if any.
CREATE FUNCTION cases_refresh_documents_pending_with_target(source uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    target uuid;
BEGIN
    PERFORM cases_refresh_documents_pending(source);
    SELECT merged_into INTO target FROM cases WHERE id = source;
    IF target IS NOT NULL THEN
        PERFORM cases_refresh_documents_pending(target);
    END IF;
END $$;

-- A document filed or deleted.
CREATE FUNCTION evidence_documents_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cases_refresh_documents_pending_with_target(CASE WHEN TG_OP = 'DELETE' THEN OLD.case_id ELSE NEW.case_id END);
    RETURN NULL;
END $$;
CREATE TRIGGER evidence_documents_pending_on_insert AFTER INSERT ON evidence
    FOR EACH ROW WHEN (NEW.document) EXECUTE FUNCTION evidence_documents_pending();
CREATE TRIGGER evidence_documents_pending_on_delete AFTER DELETE ON evidence
    FOR EACH ROW WHEN (OLD.document) EXECUTE FUNCTION evidence_documents_pending();

-- A review recorded or deleted.
CREATE FUNCTION evidence_reviews_documents_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cases_refresh_documents_pending_with_target(
        (SELECT case_id FROM evidence WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.evidence_id ELSE NEW.evidence_id END));
    RETURN NULL;
END $$;
CREATE TRIGGER evidence_reviews_documents_pending AFTER INSERT OR DELETE ON evidence_reviews
    FOR EACH ROW EXECUTE FUNCTION evidence_reviews_documents_pending();

-- A case merged or unmerged: the case it left and the case it joined. (The refresh writes only documents_pending, so
-- it fires no `UPDATE OF merged_into` or `UPDATE OF state` trigger itself.)
CREATE FUNCTION cases_merge_documents_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.merged_into IS NOT NULL THEN
        PERFORM cases_refresh_documents_pending(OLD.merged_into);
    END IF;
    IF NEW.merged_into IS NOT NULL THEN
        PERFORM cases_refresh_documents_pending(NEW.merged_into);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER cases_documents_pending_follow_merge AFTER UPDATE OF merged_into ON cases
    FOR EACH ROW WHEN (OLD.merged_into IS DISTINCT FROM NEW.merged_into) EXECUTE FUNCTION cases_merge_documents_pending();

-- Merged cases' own flags already say whether they have a document without a review (0024): their targets take them.
UPDATE cases t SET documents_pending = true
WHERE NOT t.documents_pending AND EXISTS (SELECT 1 FROM cases m WHERE m.merged_into = t.id AND m.documents_pending);

-- 2. `unlocks_pending`: the case has an unlock step scheduled (cooling-off, 0020). CaseStore.columns reads the steps
--    only where it is true.
ALTER TABLE cases ADD COLUMN unlocks_pending boolean NOT NULL DEFAULT false;
UPDATE cases c SET unlocks_pending = true
WHERE EXISTS (SELECT 1 FROM scheduled_unlocks su WHERE su.case_id = c.id AND su.status = 'scheduled');

CREATE FUNCTION scheduled_unlocks_mark_case() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    target uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.case_id ELSE NEW.case_id END;
    pending boolean;
BEGIN
    pending := EXISTS (SELECT 1 FROM scheduled_unlocks su WHERE su.case_id = target AND su.status = 'scheduled');
    UPDATE cases SET unlocks_pending = pending WHERE id = target AND unlocks_pending IS DISTINCT FROM pending;
    RETURN NULL;
END $$;
CREATE TRIGGER scheduled_unlocks_mark_case AFTER INSERT OR DELETE OR UPDATE OF status ON scheduled_unlocks
    FOR EACH ROW EXECUTE FUNCTION scheduled_unlocks_mark_case();
