-- 0012: every vocabulary the database stores is a lookup table that its columns reference (issue 19), instead of a
-- word list copied into a CHECK. The Swift enums in ReclaimCore are the one declaration; VocabularyTableTests
-- (ReclaimStoreTests) compares each table here with the `allCases` it mirrors and fails on drift. A new word is then a
-- row (`INSERT INTO evidence_kinds VALUES (...)` in the next migration), not a CHECK dropped and re-added, which would
-- lock and scan the whole table.
--
-- Each check costs a key look-up: measured at ~5 µs per column written (~25 µs for the five of a new case, whose
-- insert takes ~100 µs in the database; a transition checks only the columns it changes).
--
-- The referencing columns get no index of their own: a word is never deleted or renamed while rows use it (that
-- migration rewrites the rows first), and only a delete or rename of the word would read such an index.

CREATE TABLE tiers (tier text PRIMARY KEY);
INSERT INTO tiers (tier) VALUES ('tier1'), ('tier2'), ('tier3'), ('engineering');

CREATE TABLE case_kinds (kind text PRIMARY KEY);
INSERT INTO case_kinds (kind) VALUES ('account_takeover'), ('activation_lock');

CREATE TABLE case_states (state text PRIMARY KEY);
INSERT INTO case_states (state) VALUES
    ('new'), ('identity_check'), ('awaiting_documents'), ('document_review'), ('engineering'),
    ('resolved'), ('rejected'), ('closed'), ('merged');

CREATE TABLE recovery_paths (path text PRIMARY KEY);
INSERT INTO recovery_paths (path) VALUES ('undetermined'), ('reset'), ('verified_identity'), ('documents'), ('activation_lock');

CREATE TABLE languages (language text PRIMARY KEY);
INSERT INTO languages (language) VALUES ('en'), ('zh-Hans'), ('zh-Hant');

CREATE TABLE unlock_steps (step text PRIMARY KEY);
INSERT INTO unlock_steps (step) VALUES ('remove_rescue_email'), ('reset_security_questions'), ('remove_activation_lock');

CREATE TABLE factors (factor text PRIMARY KEY);
INSERT INTO factors (factor) VALUES ('security_answer'), ('card'), ('device');

-- `document` is EvidenceKind.isDocument. The pair is unique so that evidence can reference (kind, document).
CREATE TABLE evidence_kinds (
    kind text PRIMARY KEY,
    document boolean NOT NULL,
    CONSTRAINT evidence_kinds_kind_document_key UNIQUE (kind, document)
);
INSERT INTO evidence_kinds (kind, document) VALUES
    ('security_answers', false), ('card', false), ('device', false), ('transcript', false),
    ('invoice', true), ('warranty_card', true), ('box_photo', true), ('carrier_contract', true),
    ('police_report', true), ('imei_photo', true), ('lock_screen_photo', true);

ALTER TABLE agents
    DROP CONSTRAINT agents_tier_check,
    ADD CONSTRAINT agents_tier_fkey FOREIGN KEY (tier) REFERENCES tiers (tier);

ALTER TABLE cases
    DROP CONSTRAINT cases_kind_known,
    DROP CONSTRAINT cases_state_known,
    DROP CONSTRAINT cases_tier_known,
    DROP CONSTRAINT cases_path_known,
    DROP CONSTRAINT cases_language_check,
    DROP CONSTRAINT cases_unlocks_done_known,
    ADD CONSTRAINT cases_kind_fkey FOREIGN KEY (kind) REFERENCES case_kinds (kind),
    ADD CONSTRAINT cases_state_fkey FOREIGN KEY (state) REFERENCES case_states (state),
    ADD CONSTRAINT cases_tier_fkey FOREIGN KEY (tier) REFERENCES tiers (tier),
    ADD CONSTRAINT cases_path_fkey FOREIGN KEY (path) REFERENCES recovery_paths (path),
    ADD CONSTRAINT cases_language_fkey FOREIGN KEY (language) REFERENCES languages (language);

-- A foreign key cannot reach into an array: the steps done are checked against unlock_steps when they are written.
-- Only a non-empty list is looked at, so opening a case (always none done) does not run the function (~50 µs).
CREATE FUNCTION cases_unlocks_done_known() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM unnest(NEW.unlocks_done) AS done (step) WHERE NOT EXISTS (SELECT 1 FROM unlock_steps u WHERE u.step = done.step)) THEN
        RAISE EXCEPTION 'unknown unlock step in %', NEW.unlocks_done
            USING ERRCODE = '23514', TABLE = 'cases', CONSTRAINT = 'cases_unlocks_done_known';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER cases_unlocks_done_known BEFORE INSERT OR UPDATE OF unlocks_done ON cases
    FOR EACH ROW WHEN (cardinality(NEW.unlocks_done) > 0) EXECUTE FUNCTION cases_unlocks_done_known();

-- Evidence says whether it is a document, held true by the composite key, so the documents index (and the count of a
-- case's unreviewed documents, which must spell its predicate) reads `WHERE document` instead of a copy of the list.
-- The default fills the rows already there without rewriting the table; it is dropped so that every insert says.
ALTER TABLE evidence ADD COLUMN document boolean NOT NULL DEFAULT false;
UPDATE evidence e SET document = true FROM evidence_kinds k WHERE k.kind = e.kind AND k.document;
ALTER TABLE evidence
    ALTER COLUMN document DROP DEFAULT,
    DROP CONSTRAINT evidence_kind_known,
    DROP CONSTRAINT evidence_factor_known,
    ADD CONSTRAINT evidence_kind_fkey FOREIGN KEY (kind, document) REFERENCES evidence_kinds (kind, document),
    ADD CONSTRAINT evidence_factor_fkey FOREIGN KEY (factor) REFERENCES factors (factor);
DROP INDEX evidence_documents;
CREATE INDEX evidence_documents ON evidence (case_id) WHERE document;
