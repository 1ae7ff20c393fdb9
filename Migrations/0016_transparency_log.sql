-- 0016: one RFC 9162 Merkle tree over every timeline event and admin-log entry, in the order they were committed
-- (api.md v1.2 "Signed checkpoints"; docs/decisions.md "The transparency log").
--
-- The events' own tables stay append-only and untouched: an AFTER INSERT trigger queues each new event in
-- log_pending within the writer's transaction, so the queue holds exactly the committed events; the sequencer (one at a
-- time across instances, under an advisory lock) moves them into log_leaves in the order its snapshot sees them, and
-- stores every perfect subtree it completes in log_nodes. Roots and proofs then read O(log n) rows.

-- Events committed but not yet in the tree (case_id null: an admin-log entry). `id` orders one case's (or the admin
-- log's) events as they were written: the next one is inserted only after the previous one committed.
CREATE TABLE log_pending (
    id bigserial PRIMARY KEY,
    case_id uuid,
    seq integer NOT NULL
);

CREATE FUNCTION case_events_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO log_pending (case_id, seq) VALUES (NEW.case_id, NEW.seq);
    RETURN NULL;
END;
$$;
CREATE TRIGGER case_events_enqueue AFTER INSERT ON case_events FOR EACH ROW EXECUTE FUNCTION case_events_enqueue();

CREATE FUNCTION admin_events_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO log_pending (case_id, seq) VALUES (NULL, NEW.seq);
    RETURN NULL;
END;
$$;
CREATE TRIGGER admin_events_enqueue AFTER INSERT ON admin_events FOR EACH ROW EXECUTE FUNCTION admin_events_enqueue();

-- The events already written join the tree first, oldest first (each chain in its own order).
INSERT INTO log_pending (case_id, seq)
SELECT case_id, seq FROM (
    SELECT case_id, seq, at FROM case_events
    UNION ALL
    SELECT NULL, seq, at FROM admin_events
) AS written
ORDER BY at, case_id NULLS FIRST, seq;

-- Leaf i of the tree: which event, and its leaf hash SHA-256(0x00 ‖ the event's hash bytes) (level 0 of the tree).
CREATE TABLE log_leaves (
    leaf_index bigint PRIMARY KEY CONSTRAINT log_leaves_index_check CHECK (leaf_index >= 0),
    case_id uuid,
    seq integer NOT NULL,
    leaf_hash bytea NOT NULL CONSTRAINT log_leaves_hash_check CHECK (length(leaf_hash) = 32),
    -- One leaf per event; the timeline and the admin log find their events' leaf indexes by it.
    CONSTRAINT log_leaves_event_key UNIQUE NULLS NOT DISTINCT (case_id, seq)
);

-- Every complete perfect subtree above the leaves: the 2^level leaves from idx · 2^level, hashed.
CREATE TABLE log_nodes (
    level integer NOT NULL CONSTRAINT log_nodes_level_check CHECK (level BETWEEN 1 AND 62),
    idx bigint NOT NULL CONSTRAINT log_nodes_idx_check CHECK (idx >= 0),
    hash bytea NOT NULL CONSTRAINT log_nodes_hash_check CHECK (length(hash) = 32),
    CONSTRAINT log_nodes_pkey PRIMARY KEY (level, idx)
);

-- Signed checkpoints (C2SP tlog-checkpoint in a signed note), at most one per tree size.
CREATE TABLE log_checkpoints (
    tree_size bigint PRIMARY KEY,
    root bytea NOT NULL,
    created_at timestamptz NOT NULL,
    -- The key file's id of the key that signed it (`checkpoint-N`).
    key_id text NOT NULL,
    note text NOT NULL
);

-- The tree and its checkpoints are append-only too: the database refuses UPDATE, DELETE and TRUNCATE.
CREATE FUNCTION log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the transparency log is append-only (% on % refused)', TG_OP, TG_TABLE_NAME USING ERRCODE = '42501';
END;
$$;
CREATE TRIGGER log_leaves_append_only BEFORE UPDATE OR DELETE ON log_leaves FOR EACH ROW EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER log_leaves_no_truncate BEFORE TRUNCATE ON log_leaves FOR EACH STATEMENT EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER log_nodes_append_only BEFORE UPDATE OR DELETE ON log_nodes FOR EACH ROW EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER log_nodes_no_truncate BEFORE TRUNCATE ON log_nodes FOR EACH STATEMENT EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER log_checkpoints_append_only BEFORE UPDATE OR DELETE ON log_checkpoints FOR EACH ROW EXECUTE FUNCTION log_refuse_change();
CREATE TRIGGER log_checkpoints_no_truncate BEFORE TRUNCATE ON log_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION log_refuse_change();

-- Under the service role (0015): the queue is read, appended to (by the events' trigger, as the writer) and emptied;
-- the tree and its checkpoints are read and appended to only.
GRANT SELECT, INSERT, DELETE ON log_pending TO reclaim_service;
GRANT USAGE, SELECT ON SEQUENCE log_pending_id_seq TO reclaim_service;
GRANT SELECT, INSERT ON log_leaves, log_nodes, log_checkpoints TO reclaim_service;
REVOKE UPDATE, TRUNCATE ON log_pending FROM reclaim_service;
REVOKE UPDATE, DELETE, TRUNCATE ON log_leaves, log_nodes, log_checkpoints FROM reclaim_service;
