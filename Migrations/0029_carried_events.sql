-- 0029: history is its leaves (api.md v1.3 "The thief's other doors"; docs/decisions.md "Which events may hash to a
-- legacy value").
--
-- The events 0022's carry-over rewrote keep their old hash in case_events.legacy_hash, and their leaves hash it. Any
-- row's legacy_hash is only a column: set on another event, with its chain recomputed, it let a rewritten event match
-- its leaf. The set of carried-over events is fixed here, once: those carried already, and those `reclaim migrate`
-- carries after this file (EventCommitments.carryOver, as the owner). Only they hash to legacy_hash (the sequencer and
-- `reclaim audit verify` read this table, never the column alone), and verify recomputes that legacy hash from the
-- event's data in its form before commitments.
CREATE TABLE case_events_carried (
    case_id uuid NOT NULL,
    seq integer NOT NULL,
    CONSTRAINT case_events_carried_pkey PRIMARY KEY (case_id, seq),
    CONSTRAINT case_events_carried_event_fkey FOREIGN KEY (case_id, seq) REFERENCES case_events (case_id, seq)
);
INSERT INTO case_events_carried (case_id, seq) SELECT case_id, seq FROM case_events WHERE legacy_hash IS NOT NULL;

-- Written once by the owner, never changed; the service reads it only.
CREATE TRIGGER case_events_carried_append_only BEFORE UPDATE OR DELETE ON case_events_carried FOR EACH ROW EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER case_events_carried_no_truncate BEFORE TRUNCATE ON case_events_carried FOR EACH STATEMENT EXECUTE FUNCTION log_refuse_change();
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON case_events_carried FROM reclaim_service;

-- A committed value goes only with its case's erasure: a deletion from case_event_values commits only when the case is
-- erased (erased_at set) and its timeline records it (`case_erased`, a leaf of the log) in the same transaction. The
-- check waits for the commit because the erasure deletes the values before it marks the case (CaseErasure.steps).
CREATE FUNCTION case_event_values_only_erased() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM cases c WHERE c.id = OLD.case_id AND c.erased_at IS NOT NULL)
       OR NOT EXISTS (SELECT 1 FROM case_events e WHERE e.case_id = OLD.case_id AND e.type = 'case_erased') THEN
        RAISE EXCEPTION 'committed values are deleted only by erasing their case (case %)', OLD.case_id USING ERRCODE = '42501';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER case_event_values_only_erased AFTER DELETE ON case_event_values
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION case_event_values_only_erased();
-- Nor are they changed, or truncated past the trigger.
REVOKE UPDATE, TRUNCATE ON case_event_values FROM reclaim_service;
CREATE FUNCTION case_event_values_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'committed values are never changed (% refused)', TG_OP USING ERRCODE = '42501';
END;
$$;
CREATE TRIGGER case_event_values_no_update BEFORE UPDATE ON case_event_values FOR EACH ROW EXECUTE FUNCTION case_event_values_refuse_change();
CREATE TRIGGER case_event_values_no_truncate BEFORE TRUNCATE ON case_event_values FOR EACH STATEMENT EXECUTE FUNCTION case_event_values_refuse_change();
