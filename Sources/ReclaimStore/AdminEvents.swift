import Foundation
import Postgres

/// The `admin_events` table: one append-only hash chain of administrative changes, built exactly like a
/// case timeline (`CaseEventChain`), so the dashboard verifies it with the same code.
public enum AdminEventStore {
    /// Appends an event. Takes a transaction-scoped advisory lock first, so concurrent appends are serial
    /// and each links to the one before (the lock is released at commit or rollback).
    @discardableResult
    public static func append(at: Date, actor: String, type: String, data: JSONValue, on connection: PostgresConnection) throws -> CaseEvent {
        let at = Timestamp.truncated(at)
        try connection.execute("SELECT pg_advisory_xact_lock(\(lockKey))")
        let last = try connection.query("SELECT seq, hash FROM admin_events ORDER BY seq DESC LIMIT 1").first
        let seq = (try last?.decode("seq", as: Int.self) ?? 0) + 1
        let previous: String? = try last?.decode("hash", as: String.self)
        let hash = CaseEventChain.hash(previous: previous, seq: seq, at: at, actor: actor, type: type, data: data)
        try connection.execute(
            """
            INSERT INTO admin_events (seq, at, actor, type, data, prev_hash, hash)
            VALUES (\(seq), \(at), \(actor), \(type), \(data.canonical), \(previous), \(hash))
            """)
        return CaseEvent(seq: seq, at: at, actor: actor, type: type, data: data, prevHash: previous, hash: hash)
    }

    /// Events after `afterSeq` in seq order, at most `limit`, each with its leaf index once sequenced.
    public static func list(afterSeq: Int = 0, limit: Int, on connection: PostgresConnection) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index FROM admin_events e
            LEFT JOIN log_leaves l ON l.case_id IS NULL AND l.seq = e.seq
            WHERE e.seq > \(afterSeq) ORDER BY e.seq LIMIT \(limit)
            """
        ).decodeEvents()
    }

    /// Recomputes the whole chain: the first break, or nil when it holds, and the number of events checked.
    public static func verify(on connection: PostgresConnection) throws -> (firstBreak: CaseEventChain.Break?, events: Int) {
        let events = try list(limit: Int(Int32.max), on: connection)
        return (CaseEventChain.firstBreak(caseNumber: "admin", events: events), events.count)
    }

    // An arbitrary constant that names this chain's lock ("ADMN").
    private static let lockKey: Int64 = 0x4144_4D4E
}
