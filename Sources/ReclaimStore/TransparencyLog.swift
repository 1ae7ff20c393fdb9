import Crypto
import Foundation
import Postgres

/// A signed checkpoint as stored.
public struct StoredCheckpoint: Sendable, Equatable {
    /// Leaves the checkpoint covers.
    public let size: Int
    /// Their RFC 9162 root.
    public let root: MerkleTree.Hash
    /// When it was signed.
    public let createdAt: Date
    /// The key file's id of the signing key (`checkpoint-N`).
    public let keyID: String
    /// The whole signed note, as served.
    public let note: String

    /// A checkpoint to store.
    public init(size: Int, root: MerkleTree.Hash, createdAt: Date, keyID: String, note: String) {
        self.size = size
        self.root = root
        self.createdAt = createdAt
        self.keyID = keyID
        self.note = note
    }
}

/// The transparency log's tables (migration 0016): `log_pending` (committed events not yet in the tree, filled by the
/// event tables' insert triggers), `log_leaves` (leaf index → event, with its leaf hash: level 0), `log_nodes` (every
/// complete perfect subtree above it) and `log_checkpoints`. Roots and proofs read O(log n) rows by primary key.
public enum TransparencyLogStore {
    /// Takes the sequencer's transaction-scoped advisory lock if no other session holds it (released at commit or
    /// rollback, or when the session dies): at most one instance sequences at a time.
    public static func trySequencerLock(on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT pg_try_advisory_xact_lock(\(sequencerLock)) AS held").first?.decode("held", as: Bool.self) ?? false
    }

    /// Leaves in the tree now.
    public static func size(on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT coalesce(max(leaf_index) + 1, 0) AS size FROM log_leaves").first?.decode("size", as: Int.self) ?? 0
    }

    /// Events committed but not yet in the tree.
    public static func pendingCount(on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) AS pending FROM log_pending").first?.decode("pending", as: Int.self) ?? 0
    }

    /// Appends up to `limit` pending events to the tree, in the order this transaction's snapshot holds them (only
    /// committed ones: each is queued by its own writer's transaction), storing each leaf and every subtree it
    /// completes, and empties those queue rows. The caller holds `trySequencerLock` in the same transaction.
    /// Returns the tree's right edge afterwards and how many leaves were appended.
    public static func sequence(limit: Int, on connection: PostgresConnection) throws -> (frontier: MerkleTree.Frontier, appended: Int) {
        let size = try self.size(on: connection)
        let edge = MerkleTree.nodesForRoot(size: size)
        let stored = try hashes(of: edge, on: connection)
        var frontier = try MerkleTree.Frontier(
            size: size,
            hashes: try edge.map { node throws(MerkleTree.Failure) in
                guard let hash = stored[node] else { throw .missingNode(node) }
                return hash
            })
        let rows = try connection.query(
            """
            SELECT p.id, p.case_id, p.seq, coalesce(CASE WHEN k.seq IS NULL THEN c.hash ELSE c.legacy_hash END, a.hash) AS hash
            FROM (SELECT id, case_id, seq FROM log_pending ORDER BY id LIMIT \(limit)) p
            LEFT JOIN case_events c ON p.case_id IS NOT NULL AND c.case_id = p.case_id AND c.seq = p.seq
            LEFT JOIN case_events_carried k ON p.case_id IS NOT NULL AND k.case_id = p.case_id AND k.seq = p.seq
            LEFT JOIN admin_events a ON p.case_id IS NULL AND a.seq = p.seq
            ORDER BY p.id
            """)
        guard !rows.isEmpty else { return (frontier, 0) }
        var pendingIDs: [Int] = []
        var leafIndexes: [Int] = []
        var leafCases: [String] = []
        var leafSeqs: [Int32] = []
        var leafHashes: [String] = []
        var nodeLevels: [Int32] = []
        var nodeIndexes: [Int] = []
        var nodeHashes: [String] = []
        for row in rows {
            let caseID: UUID? = try row.decode("case_id")
            let seq: Int32 = try row.decode("seq")
            guard let eventHash = Hex.decode(try row.decode("hash", as: String?.self) ?? "x") else {
                throw TransparencyLogError.unreadableEvent(caseID: caseID, seq: Int(seq))
            }
            pendingIDs.append(try row.decode("id"))
            for (node, hash) in frontier.append(leafHash: MerkleTree.leafHash(eventHash)) {
                if node.level == 0 {
                    leafIndexes.append(node.index)
                    leafCases.append(caseID?.uuidString.lowercased() ?? "")
                    leafSeqs.append(seq)
                    leafHashes.append(Hex.encode(hash))
                } else {
                    nodeLevels.append(Int32(node.level))
                    nodeIndexes.append(node.index)
                    nodeHashes.append(Hex.encode(hash))
                }
            }
        }
        try connection.execute(
            """
            INSERT INTO log_leaves (leaf_index, case_id, seq, leaf_hash)
            SELECT i, nullif(c, '')::uuid, s, decode(h, 'hex') FROM unnest(\(leafIndexes), \(leafCases), \(leafSeqs), \(leafHashes)) AS l(i, c, s, h)
            """)
        if !nodeLevels.isEmpty {
            try connection.execute(
                """
                INSERT INTO log_nodes (level, idx, hash)
                SELECT l, i, decode(h, 'hex') FROM unnest(\(nodeLevels), \(nodeIndexes), \(nodeHashes)) AS n(l, i, h)
                """)
        }
        try connection.execute("DELETE FROM log_pending WHERE id = ANY(\(pendingIDs))")
        return (frontier, pendingIDs.count)
    }

    /// The root of the tree's first `size` leaves (`size` ≤ the tree's size).
    public static func root(size: Int, on connection: PostgresConnection) throws -> MerkleTree.Hash {
        try MerkleTree.root(size: size, hashes: try hashes(of: MerkleTree.nodesForRoot(size: size), on: connection))
    }

    /// RFC 9162 inclusion proof of `leaf` in the tree's first `size` leaves.
    public static func inclusionProof(leaf: Int, size: Int, on connection: PostgresConnection) throws -> [MerkleTree.Hash] {
        try MerkleTree.inclusionProof(
            leaf: leaf, size: size, hashes: try hashes(of: try MerkleTree.nodesForInclusion(leaf: leaf, size: size), on: connection))
    }

    /// RFC 9162 consistency proof from the first `from` leaves to the first `to`.
    public static func consistencyProof(from: Int, to: Int, on connection: PostgresConnection) throws -> [MerkleTree.Hash] {
        try MerkleTree.consistencyProof(
            from: from, to: to, hashes: try hashes(of: try MerkleTree.nodesForConsistency(from: from, to: to), on: connection))
    }

    /// The stored hashes of `nodes` (leaves from `log_leaves`, the rest from `log_nodes`), by primary key; absent ones
    /// are left out (the tree math then names the missing node).
    static func hashes(of nodes: [MerkleTree.Node], on connection: PostgresConnection) throws -> [MerkleTree.Node: MerkleTree.Hash] {
        guard !nodes.isEmpty else { return [:] }
        let leaves = nodes.filter { $0.level == 0 }.map(\.index)
        let inner = nodes.filter { $0.level > 0 }
        let rows = try connection.query(
            """
            SELECT 0 AS level, leaf_index AS idx, leaf_hash AS hash FROM log_leaves WHERE leaf_index = ANY(\(leaves))
            UNION ALL
            SELECT n.level, n.idx, n.hash FROM unnest(\(inner.map { Int32($0.level) }), \(inner.map(\.index))) AS w(level, idx)
            JOIN log_nodes n ON n.level = w.level AND n.idx = w.idx
            """)
        var found: [MerkleTree.Node: MerkleTree.Hash] = [:]
        for row in rows {
            found[MerkleTree.Node(level: try row.decode("level"), index: try row.decode("idx"))] = try row.decode("hash")
        }
        return found
    }

    // MARK: Checkpoints

    /// The newest checkpoint, or nil before the first.
    public static func latestCheckpoint(on connection: PostgresConnection) throws -> StoredCheckpoint? {
        try connection.query(
            """
            SELECT tree_size, root, created_at, key_id, note FROM log_checkpoints ORDER BY tree_size DESC LIMIT 1
            """
        ).first.map { row in
            StoredCheckpoint(
                size: try row.decode("tree_size"), root: try row.decode("root"), createdAt: try row.decode("created_at"),
                keyID: try row.decode("key_id"), note: try row.decode("note"))
        }
    }

    /// Stores a checkpoint.
    public static func insertCheckpoint(_ checkpoint: StoredCheckpoint, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO log_checkpoints (tree_size, root, created_at, key_id, note)
            VALUES (\(checkpoint.size), \(checkpoint.root), \(checkpoint.createdAt), \(checkpoint.keyID), \(checkpoint.note))
            """)
    }

    // MARK: Recomputing from the events (`reclaim audit verify`)

    /// The tree recomputed from the events themselves, leaf by leaf in leaf order, pages of `page` leaves: each stored
    /// leaf hash compared with SHA-256(0x00 ‖ its event's hash), the root rebuilt without reading `log_nodes`; and the
    /// events in neither the tree nor the queue (lost to it). An event's hash is its `legacy_hash` only when 0022 carried
    /// it over (`case_events_carried`), never because the column is set; `CaseEventStore.verify` recomputes both hashes
    /// from the event's data, so together they recompute each leaf from the row as it stands.
    public static func recompute(page: Int = 50_000, on connection: PostgresConnection) throws -> Recomputation {
        var frontier = MerkleTree.Frontier()
        var mismatches: [Int] = []
        var events: [String] = []
        while true {
            let rows = try connection.query(
                """
                SELECT l.leaf_index, l.leaf_hash, l.seq, n.case_number,
                    coalesce(CASE WHEN k.seq IS NULL THEN c.hash ELSE c.legacy_hash END, a.hash) AS hash
                FROM log_leaves l
                LEFT JOIN case_events c ON l.case_id IS NOT NULL AND c.case_id = l.case_id AND c.seq = l.seq
                LEFT JOIN case_events_carried k ON l.case_id IS NOT NULL AND k.case_id = l.case_id AND k.seq = l.seq
                LEFT JOIN cases n ON l.case_id IS NOT NULL AND n.id = l.case_id
                LEFT JOIN admin_events a ON l.case_id IS NULL AND a.seq = l.seq
                WHERE l.leaf_index >= \(frontier.size) ORDER BY l.leaf_index LIMIT \(page)
                """)
            for row in rows {
                let index: Int = try row.decode("leaf_index")
                let stored: [UInt8] = try row.decode("leaf_hash")
                let chain = try row.decode("case_number", as: String?.self).map { "case \($0)" } ?? "admin log"
                let event = "leaf \(index) (\(chain) event \(try row.decode("seq", as: Int.self)))"
                // A gap in the indexes, or a leaf whose event is gone or unreadable: the tree no longer describes the events.
                guard index == frontier.size, let eventHash = try row.decode("hash", as: String?.self).flatMap(Hex.decode) else {
                    mismatches.append(index)
                    events.append(event)
                    return Recomputation(
                        size: frontier.size, root: frontier.root, mismatchedLeaves: mismatches, mismatchedEvents: events,
                        missingEvents: try missing(on: connection))
                }
                let leaf = MerkleTree.leafHash(eventHash)
                if leaf != stored, mismatches.count < 100 {
                    mismatches.append(index)
                    events.append(event)
                }
                _ = frontier.append(leafHash: leaf)
            }
            if rows.count < page { break }
        }
        return Recomputation(
            size: frontier.size, root: frontier.root, mismatchedLeaves: mismatches, mismatchedEvents: events,
            missingEvents: try missing(on: connection))
    }

    /// What `recompute` found.
    public struct Recomputation: Sendable {
        /// Leaves read.
        public let size: Int
        /// The root of the events' own hashes in leaf order.
        public let root: MerkleTree.Hash
        /// Leaves whose stored hash is not their event's (at most 100), or the first leaf without its event.
        public let mismatchedLeaves: [Int]
        /// The same leaves, each with its event named (`leaf 7 (case R-… event 3)`).
        public let mismatchedEvents: [String]
        /// Events neither in the tree nor waiting for it.
        public let missingEvents: Int
    }

    private static func missing(on connection: PostgresConnection) throws -> Int {
        try connection.query(
            """
            SELECT (SELECT count(*) FROM case_events e WHERE NOT EXISTS (SELECT 1 FROM log_leaves l WHERE l.case_id = e.case_id AND l.seq = e.seq)
                      AND NOT EXISTS (SELECT 1 FROM log_pending p WHERE p.case_id = e.case_id AND p.seq = e.seq))
                 + (SELECT count(*) FROM admin_events e WHERE NOT EXISTS (SELECT 1 FROM log_leaves l WHERE l.case_id IS NULL AND l.seq = e.seq)
                      AND NOT EXISTS (SELECT 1 FROM log_pending p WHERE p.case_id IS NULL AND p.seq = e.seq)) AS missing
            """
        ).first?.decode("missing", as: Int.self) ?? 0
    }

    // An arbitrary constant that names the sequencer's lock ("TLOG").
    private static let sequencerLock: Int64 = 0x544C_4F47
}

/// A queued event the sequencer cannot read: it has no hash (its row is gone) or the hash is not hex.
public enum TransparencyLogError: Error, CustomStringConvertible {
    /// The event of a queue row is unreadable.
    case unreadableEvent(caseID: UUID?, seq: Int)

    /// One line, naming the event (never its data).
    public var description: String {
        switch self {
        case .unreadableEvent(let caseID, let seq):
            "queued event \(caseID.map { "case \($0.uuidString.lowercased())" } ?? "admin log") seq \(seq) has no readable hash"
        }
    }
}
