import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// The transparency log's tables on a real database: every committed event becomes exactly one leaf, in commit order,
/// one sequencer at a time; roots and proofs read from the stored subtrees equal the tree computed in memory; the
/// tables refuse changes like the timelines do.
@Suite struct TransparencyLogStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A case row to hang events on.
    static func newCase(on connection: PostgresConnection) throws -> UUID {
        var generator = SystemRandomNumberGenerator()
        let snapshot = Workflow().opening(kind: .accountTakeover, facts: CaseFacts(), at: t0)
        let new = NewCase(
            id: UUID(), number: CaseNumber.generate(using: &generator), accessCodeHash: [1], accessCodeKeyID: "k", snapshot: snapshot,
            dueAt: t0, accountEmail: "ann@example.net", customerName: "Ann", customerContactEmail: "ann@example.net", devices: [],
            summary: "Locked out", createdBy: "test", now: t0)
        try CaseStore.insert(new, on: connection)
        return new.id
    }

    static func append(_ caseID: UUID, _ n: Int, on connection: PostgresConnection) throws {
        try CaseStore.lock(id: caseID, on: connection)
        try CaseEventStore.append(
            caseID: caseID, at: t0.addingTimeInterval(Double(n)), actor: "test", type: "note_added", data: ["n": .int(Int64(n))],
            on: connection)
    }

    /// One sequencer pass in its own transaction.
    @discardableResult
    static func sequence(_ connection: PostgresConnection, limit: Int = 1000) throws -> Int {
        try connection.withTransaction { connection in
            #expect(try TransparencyLogStore.trySequencerLock(on: connection))
            return try TransparencyLogStore.sequence(limit: limit, on: connection).appended
        }
    }

    /// The events' hashes in leaf order, read back through the event tables.
    static func eventHashes(_ connection: PostgresConnection) throws -> [[UInt8]] {
        try connection.query(
            """
            SELECT coalesce(c.hash, a.hash) AS hash FROM log_leaves l
            LEFT JOIN case_events c ON c.case_id = l.case_id AND c.seq = l.seq LEFT JOIN admin_events a ON l.case_id IS NULL AND a.seq = l.seq
            ORDER BY l.leaf_index
            """
        ).map { Hex.decode(try $0.decode("hash", as: String.self))! }
    }

    @Test func everyEventBecomesOneLeafAndTheStoredTreeAnswersAsTheMemoryOne() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let cases = try (0..<3).map { _ in try Self.newCase(on: connection) }
        for n in 0..<37 {
            try Self.append(cases[n % 3], n, on: connection)
            if n % 5 == 0 { try AdminEventStore.append(at: Self.t0, actor: "cli", type: "agent_added", data: ["n": .int(Int64(n))], on: connection) }
        }
        let events = 37 + 8
        // In batches of 10: the frontier carries over from one pass to the next.
        while try Self.sequence(connection, limit: 10) > 0 {}
        #expect(try TransparencyLogStore.size(on: connection) == events)
        #expect(try TransparencyLogStore.pendingCount(on: connection) == 0)

        let leaves = try Self.eventHashes(connection).map { MerkleTree.leafHash($0) }
        #expect(leaves.count == events)
        var memory = MerkleTree.Frontier()
        var nodes: [MerkleTree.Node: MerkleTree.Hash] = [:]
        for leaf in leaves { for (node, hash) in memory.append(leafHash: leaf) { nodes[node] = hash } }
        for size in 1...events {
            #expect(try TransparencyLogStore.root(size: size, on: connection) == MerkleTree.root(size: size, hashes: nodes))
            for leaf in stride(from: 0, to: size, by: 7) {
                #expect(
                    try TransparencyLogStore.inclusionProof(leaf: leaf, size: size, on: connection)
                        == MerkleTree.inclusionProof(leaf: leaf, size: size, hashes: nodes))
            }
            for from in stride(from: 1, through: size, by: 5) {
                #expect(
                    try TransparencyLogStore.consistencyProof(from: from, to: size, on: connection)
                        == MerkleTree.consistencyProof(from: from, to: size, hashes: nodes))
            }
        }
        let rebuilt = try TransparencyLogStore.recompute(page: 8, on: connection)
        #expect(rebuilt.size == events && rebuilt.root == memory.root && rebuilt.mismatchedLeaves.isEmpty && rebuilt.missingEvents == 0)

        // Each timeline lists its events' leaves, in its own order; the admin log too.
        for id in cases {
            let indexes = try CaseEventStore.list(caseID: id, on: connection).map(\.leafIndex)
            #expect(indexes.allSatisfy { $0 != nil } && indexes == indexes.sorted { $0! < $1! })
        }
        #expect(try AdminEventStore.list(limit: 100, on: connection).compactMap(\.leafIndex).count == 8)
        #expect(Set(try connection.query("SELECT leaf_index FROM log_leaves").map { try $0.decode("leaf_index", as: Int.self) }) == Set(0..<events))
    }

    /// Ids are drawn before commit: an event that commits late is sequenced after those that committed before it,
    /// whatever its queue id, and never skipped.
    @Test func leavesFollowCommitOrderNotIdOrder() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let early = try database.connect()
        let late = try database.connect()
        defer {
            early.close()
            late.close()
        }
        let slowCase = try Self.newCase(on: early)
        let fastCase = try Self.newCase(on: early)
        try Self.sequence(early)
        try late.execute("BEGIN")
        try Self.append(slowCase, 1, on: late)  // queued first, committed last
        try Self.append(fastCase, 2, on: early)
        #expect(try Self.sequence(early) == 1)
        #expect(try CaseEventStore.list(caseID: slowCase, on: early).isEmpty)
        try late.execute("COMMIT")
        #expect(try Self.sequence(early) == 1)
        #expect(try CaseEventStore.list(caseID: fastCase, on: early).map(\.leafIndex) == [0])
        #expect(try CaseEventStore.list(caseID: slowCase, on: early).map(\.leafIndex) == [1])
    }

    @Test func oneSequencerAtATime() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let first = try database.connect()
        let second = try database.connect()
        defer {
            first.close()
            second.close()
        }
        try first.execute("BEGIN")
        #expect(try TransparencyLogStore.trySequencerLock(on: first))
        try second.execute("BEGIN")
        #expect(try !TransparencyLogStore.trySequencerLock(on: second))
        try second.execute("ROLLBACK")
        try first.execute("COMMIT")  // released with the transaction
        try second.execute("BEGIN")
        #expect(try TransparencyLogStore.trySequencerLock(on: second))
        try second.execute("ROLLBACK")
    }

    /// Many writers and two sequencers at once: every event exactly one leaf, each case's leaves in its seq order.
    @Test func concurrentWritersAndSequencersLoseAndDuplicateNothing() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let setup = try database.connect()
        defer { setup.close() }
        let cases = try (0..<4).map { _ in try Self.newCase(on: setup) }
        let pool = database.makePool(maximumConnections: 8)
        defer { pool.close() }
        let group = DispatchGroup()
        for writer in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for n in 0..<40 {
                    try? pool.withTransaction { connection in
                        try Self.append(cases[(writer + n) % 4], n, on: connection)
                        if n % 10 == 0 { try AdminEventStore.append(at: Self.t0, actor: "cli", type: "t", data: [:], on: connection) }
                    }
                }
            }
        }
        for _ in 0..<2 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<60 {
                    _ = try? pool.withTransaction { connection in
                        try TransparencyLogStore.trySequencerLock(on: connection)
                            ? try TransparencyLogStore.sequence(limit: 7, on: connection).appended : 0
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        while try Self.sequence(setup) > 0 {}
        let total = try setup.query("SELECT (SELECT count(*) FROM case_events) + (SELECT count(*) FROM admin_events) AS n").first!.decode(
            "n", as: Int.self)
        #expect(total == 4 * 40 + 4 * 4)
        #expect(try TransparencyLogStore.size(on: setup) == total)
        #expect(try setup.query("SELECT count(*) AS n FROM log_leaves").first!.decode("n", as: Int.self) == total)
        for id in cases {
            let indexes = try CaseEventStore.list(caseID: id, on: setup).map { $0.leafIndex! }
            #expect(indexes == indexes.sorted())
        }
        let admin = try AdminEventStore.list(limit: 100, on: setup).map { $0.leafIndex! }
        #expect(admin == admin.sorted())
        #expect(try TransparencyLogStore.recompute(on: setup).mismatchedLeaves.isEmpty)
    }

    @Test func theTreeAndItsCheckpointsRefuseChanges() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        try Self.append(try Self.newCase(on: connection), 1, on: connection)
        try Self.append(try Self.newCase(on: connection), 2, on: connection)
        try Self.sequence(connection)
        try TransparencyLogStore.insertCheckpoint(
            StoredCheckpoint(
                size: 2, root: try TransparencyLogStore.root(size: 2, on: connection), createdAt: Self.t0,
                keyID: "checkpoint-1", note: "n"), on: connection)
        for statement: PostgresQuery in [
            "UPDATE log_leaves SET leaf_hash = leaf_hash", "DELETE FROM log_leaves", "TRUNCATE log_leaves",
            "UPDATE log_nodes SET hash = hash", "DELETE FROM log_nodes", "TRUNCATE log_nodes",
            "UPDATE log_checkpoints SET note = 'x'", "DELETE FROM log_checkpoints", "TRUNCATE log_checkpoints",
        ] {
            #expect(throws: PostgresError.self, "\(statement)") { try connection.execute(statement) }
        }
        #expect(try TransparencyLogStore.latestCheckpoint(on: connection)?.size == 2)
    }
}
