import Crypto
import Foundation
import Postgres

/// One event of a case's timeline, as stored and as the API returns it.
public struct CaseEvent: Sendable, Equatable {
    /// 1, 2, ... within the case.
    public let seq: Int
    /// When it happened (milliseconds).
    public let at: Date
    /// `agent:<uuid>`, `client:<uuid>` or `customer`.
    public let actor: String
    /// What happened (`transition`, `denied`, ...).
    public let type: String
    /// Details, as canonical JSON.
    public let data: JSONValue
    /// The previous event's hash (nil for the first).
    public let prevHash: String?
    /// Lower-case hex SHA-256 of the chain link.
    public let hash: String
    /// Its leaf in the transparency log's tree; nil until the sequencer has appended it (and on a fresh append).
    public var leafIndex: Int? = nil

    /// `{seq, at, actor, type, data, prev_hash, hash, leaf_index}` as in api.md.
    public var json: JSONValue {
        [
            "seq": .int(Int64(seq)), "at": Timestamp.json(at), "actor": .string(actor), "type": .string(type), "data": data,
            "prev_hash": .optional(prevHash), "hash": .string(hash), "leaf_index": leafIndex.map { .int(Int64($0)) } ?? .null,
        ]
    }
}

/// The hash chain of api.md: hash = hex SHA-256 of (previous hash's hex, or "" for the first) followed by
/// the JCS form of `{seq, at, actor, type, data}` exactly as the API returns them.
public enum CaseEventChain {
    /// The hash of one event given its predecessor's.
    public static func hash(previous: String?, seq: Int, at: Date, actor: String, type: String, data: JSONValue) -> String {
        let body: JSONValue = ["seq": .int(Int64(seq)), "at": Timestamp.json(at), "actor": .string(actor), "type": .string(type), "data": data]
        return SHA256.hexDigest((previous ?? "") + body.canonical)
    }

    /// Where a chain breaks: the first event whose sequence, link or hash does not hold.
    public struct Break: Sendable, Equatable, CustomStringConvertible {
        /// The case whose chain breaks.
        public let caseNumber: String
        /// The first event that does not hold.
        public let seq: Int
        /// Why, in words.
        public let reason: String
        /// `case N: event S: reason`.
        public var description: String { "case \(caseNumber): event \(seq): \(reason)" }
    }

    /// The first break in `events` (in seq order), or nil when the chain holds.
    public static func firstBreak(caseNumber: String, events: [CaseEvent]) -> Break? {
        var previous: String?
        for (index, event) in events.enumerated() {
            if event.seq != index + 1 {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "expected seq \(index + 1) (an event is missing)")
            }
            if event.prevHash != previous {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "prev_hash does not match the previous event's hash")
            }
            let expected = hash(previous: previous, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.data)
            if expected != event.hash {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "hash does not match the event's content (expected \(expected))")
            }
            previous = event.hash
        }
        return nil
    }
}

/// The `case_events` table: append-only (the database refuses UPDATE and DELETE).
public enum CaseEventStore {
    /// Appends an event to the case's chain. The caller must hold the case row's lock (an UPDATE of the
    /// row or `CaseStore.find(lock: true)`) in the same transaction, so appends to one case are serial.
    @discardableResult
    public static func append(
        caseID: UUID, at: Date, actor: String, type: String, data: JSONValue,
        on connection: PostgresConnection
    ) throws -> CaseEvent {
        let at = Timestamp.truncated(at)
        let last = try connection.query("SELECT seq, hash FROM case_events WHERE case_id = \(caseID) ORDER BY seq DESC LIMIT 1").first
        let seq = (try last?.decode("seq", as: Int.self) ?? 0) + 1
        let previous: String? = try last?.decode("hash", as: String.self)
        let hash = CaseEventChain.hash(previous: previous, seq: seq, at: at, actor: actor, type: type, data: data)
        try connection.execute(
            """
            INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
            VALUES (\(caseID), \(seq), \(at), \(actor), \(type), \(data.canonical), \(previous), \(hash))
            """)
        return CaseEvent(seq: seq, at: at, actor: actor, type: type, data: data, prevHash: previous, hash: hash)
    }

    /// Events of a case in seq order, those after `afterSeq`, at most `limit`, each with its leaf index once sequenced.
    public static func list(caseID: UUID, afterSeq: Int = 0, limit: Int = Int(Int32.max), on connection: PostgresConnection) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index FROM case_events e
            LEFT JOIN log_leaves l ON l.case_id = e.case_id AND l.seq = e.seq
            WHERE e.case_id = \(caseID) AND e.seq > \(afterSeq) ORDER BY e.seq LIMIT \(limit)
            """
        ).decodeEvents()
    }

    /// Events of a case of one `type` (say, `mail_refused` for the case's messages), in seq order.
    public static func list(caseID: UUID, type: String, on connection: PostgresConnection) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index FROM case_events e
            LEFT JOIN log_leaves l ON l.case_id = e.case_id AND l.seq = e.seq
            WHERE e.case_id = \(caseID) AND e.type = \(type) ORDER BY e.seq
            """
        ).decodeEvents()
    }

    /// Recomputes every chain (or the one of `caseNumber`) and returns the first break of each broken case,
    /// with the number of cases and events checked.
    public static func verify(caseNumber: String? = nil, on connection: PostgresConnection) throws -> (
        breaks: [CaseEventChain.Break], cases: Int, events: Int
    ) {
        let rows =
            if let caseNumber {
                try connection.query(
                    """
                    SELECT c.case_number, e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash
                    FROM cases c LEFT JOIN case_events e ON e.case_id = c.id WHERE c.case_number = \(caseNumber) ORDER BY e.seq
                    """)
            } else {
                try connection.query(
                    """
                    SELECT c.case_number, e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash
                    FROM cases c LEFT JOIN case_events e ON e.case_id = c.id ORDER BY c.case_number, e.seq
                    """)
            }
        var breaks: [CaseEventChain.Break] = []
        var cases = 0
        var eventCount = 0
        var current: String?
        var events: [CaseEvent] = []
        var unreadable: CaseEventChain.Break?
        var columns = rows.columns()
        let caseNumberColumn = try columns("case_number")
        let eventColumns = try EventColumns(rows)
        func finish() {
            guard let current else { return }
            cases += 1
            if let unreadable {
                breaks.append(unreadable)
            } else if events.isEmpty {
                // Every case is opened with an event, so an empty timeline lost it.
                breaks.append(CaseEventChain.Break(caseNumber: current, seq: 1, reason: "the case has no events (the opening event is missing)"))
            } else if let broken = CaseEventChain.firstBreak(caseNumber: current, events: events) {
                breaks.append(broken)
            }
        }
        for row in rows {
            let number: String = try row.decode(caseNumberColumn)
            if number != current {
                finish()
                current = number
                events = []
                unreadable = nil
            }
            guard !row.isNull(eventColumns.seq) else { continue }
            eventCount += 1
            do {
                events.append(try eventColumns.decode(row))
            } catch {
                let seq = (try? row.decode(eventColumns.seq, as: Int.self)) ?? 0
                if unreadable == nil { unreadable = CaseEventChain.Break(caseNumber: number, seq: seq, reason: "data is not valid JSON") }
            }
        }
        finish()
        return (breaks, cases, eventCount)
    }

    /// The event columns (`seq, at, actor, type, data, prev_hash, hash`, and `leaf_index` where selected) of a result,
    /// found by name once.
    struct EventColumns {
        let seq, at, actor, type, data, prevHash, hash: PostgresColumn
        let leafIndex: PostgresColumn?

        init(_ rows: PostgresRows) throws {
            var columns = rows.columns()
            seq = try columns("seq")
            at = try columns("at")
            actor = try columns("actor")
            type = try columns("type")
            data = try columns("data")
            prevHash = try columns("prev_hash")
            hash = try columns("hash")
            leafIndex = try? columns("leaf_index")
        }

        func decode(_ row: PostgresRow) throws -> CaseEvent {
            CaseEvent(
                seq: try row.decode(seq), at: try row.decode(at), actor: try row.decode(actor), type: try row.decode(type),
                data: try JSONValue.parse(try row.decode(data)), prevHash: try row.decode(prevHash), hash: try row.decode(hash),
                leafIndex: try leafIndex.flatMap { try row.decode($0, as: Int?.self) })
        }
    }
}

extension PostgresRows {
    /// Every row as a `CaseEvent`, read by column name.
    func decodeEvents() throws -> [CaseEvent] {
        let columns = try CaseEventStore.EventColumns(self)
        return try map(columns.decode)
    }
}
