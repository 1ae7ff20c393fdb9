-- A real tree of :leaves leaves, as the sequencer would have stored it: leaf i's hash SHA-256(0x00 ‖ SHA-256(i)), each
-- complete subtree SHA-256(0x01 ‖ left ‖ right), level by level (admin-log leaves: no case, seq = i).
INSERT INTO log_leaves (leaf_index, case_id, seq, leaf_hash)
SELECT i, NULL, i, sha256('\x00'::bytea || sha256(int8send(i))) FROM generate_series(0, :leaves - 1) i;
INSERT INTO log_nodes (level, idx, hash)
SELECT 1, l.leaf_index / 2, sha256('\x01'::bytea || l.leaf_hash || r.leaf_hash)
FROM log_leaves l JOIN log_leaves r ON r.leaf_index = l.leaf_index + 1 WHERE l.leaf_index % 2 = 0;
DO $$
DECLARE
    height integer := 2;
BEGIN
    LOOP
        INSERT INTO log_nodes (level, idx, hash)
        SELECT height, a.idx / 2, sha256('\x01'::bytea || a.hash || b.hash)
        FROM log_nodes a JOIN log_nodes b ON b.level = height - 1 AND b.idx = a.idx + 1
        WHERE a.level = height - 1 AND a.idx % 2 = 0;
        EXIT WHEN NOT FOUND;
        height := height + 1;
    END LOOP;
END
$$;
VACUUM ANALYZE log_leaves;
VACUUM ANALYZE log_nodes;
