-- 0015: the service runs as a role that cannot switch the timelines' protection off (issue 25).
--
-- The migrations run as the schema's owner (RECLAIM_MIGRATION_DATABASE_URL); the service logs in as a member of the
-- NOLOGIN group reclaim_service (`reclaim db roles` prints the SQL that makes both), owns nothing, so it can neither
-- ALTER a table, drop or replace a trigger nor set session_replication_role, and gets only these grants. Tables and
-- sequences of later migrations get the same by the default privileges below (for the role applying them: always
-- the owner); a later append-only table revokes UPDATE, DELETE and TRUNCATE as below.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reclaim_service') THEN
        RAISE EXCEPTION 'the role reclaim_service does not exist: create the database roles first (`reclaim db roles` prints the SQL to run as a superuser; docs/operations.md, "Database roles"), then migrate as the owner role';
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO reclaim_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO reclaim_service;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO reclaim_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO reclaim_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO reclaim_service;

-- The timelines and the admin log: read and append only (their triggers stay, for the owner's own mistakes).
REVOKE UPDATE, DELETE, TRUNCATE ON case_events, admin_events FROM reclaim_service;
-- The migrations' own record: the service reads it (is the schema current?) and never writes it.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON schema_migrations FROM reclaim_service;
-- The vocabularies (0012): a new word is a row of a migration, never the service's to add.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON tiers, case_kinds, case_states, recovery_paths, languages, unlock_steps, factors,
    evidence_kinds FROM reclaim_service;
