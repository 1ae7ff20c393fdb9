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
    /// Details, as canonical JSON: committed members show their value (null once erased).
    public var data: JSONValue
    /// The previous event's hash (nil for the first).
    public let prevHash: String?
    /// Lower-case hex SHA-256 of the chain link.
    public let hash: String
    /// Its leaf in the transparency log's tree; nil until the sequencer has appended it (and on a fresh append).
    public var leafIndex: Int? = nil
    /// The personal members of `data` that the hash covers only as commitments, by member name (empty for most events).
    public var commitments: [String: CaseEventCommitment] = [:]
    /// For an event written before commitments (migration 0020) and carried over: its hash then, which its leaf in the
    /// transparency log hashes (the tree is append-only). Nil for every event written since.
    public var legacyHash: String? = nil
    /// Whether migration 0022's carry-over rewrote it (`case_events_carried`, fixed by 0029): only then may its leaf hash
    /// `legacyHash`, which `reclaim audit verify` recomputes from its data in the form before commitments.
    public var carried = false

    /// `{seq, at, actor, type, data, prev_hash, hash, leaf_index}` as in api.md, with `commitments` when the event has
    /// personal members and `legacy_hash` when it was carried over.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "at": Timestamp.json(at), "actor": .string(actor), "type": .string(type), "data": data,
            "prev_hash": .optional(prevHash), "hash": .string(hash), "leaf_index": leafIndex.map { .int(Int64($0)) } ?? .null,
        ]
        if !commitments.isEmpty { members["commitments"] = .object(commitments.mapValues(\.json)) }
        if let legacyHash { members["legacy_hash"] = .string(legacyHash) }
        return .object(members)
    }

    /// `data` as the hash covers it: each committed member replaced by `{"commitment": <hex>}`.
    public var hashedData: JSONValue {
        guard !commitments.isEmpty, case .object(var members) = data else { return data }
        for (key, commitment) in commitments { members[key] = CaseEventCommitment.marker(commitment.commitment) }
        return .object(members)
    }
}

/// A personal value of an event, committed: the hash chain covers `commitment` = hex SHA-256 of (the salt's hex followed
/// by the value's JCS form), never the value. The value and its salt are kept apart (`case_event_values`), so erasure
/// deletes both and the chain still verifies; a random salt per value keeps an IMEI or an address from being found by
/// hashing candidates.
public struct CaseEventCommitment: Sendable, Equatable {
    /// Lower-case hex SHA-256 of salt hex ‖ JCS(value).
    public let commitment: String
    /// 16 random bytes in hex; nil once the value is erased.
    public let salt: String?

    /// A commitment and its salt (nil: erased).
    public init(commitment: String, salt: String?) {
        self.commitment = commitment
        self.salt = salt
    }

    /// The commitment to `value` under `salt`.
    public static func commit(_ value: JSONValue, salt: String) -> String { SHA256.hexDigest(salt + value.canonical) }

    /// What the hashed data holds in the value's place.
    public static func marker(_ commitment: String) -> JSONValue { ["commitment": .string(commitment)] }

    /// The commitment in a stored member, when the member is a marker.
    static func commitment(in member: JSONValue) -> String? {
        guard case .object(let object) = member, object.count == 1, case .string(let commitment)? = object["commitment"],
            commitment.utf8.count == 64
        else { return nil }
        return commitment
    }

    /// `{"commitment", "salt"}`, the salt absent once erased.
    var json: JSONValue {
        var members: [String: JSONValue] = ["commitment": .string(commitment)]
        if let salt { members["salt"] = .string(salt) }
        return .object(members)
    }

    /// `data` with each member named in `personal` (and not null) committed under a fresh salt: the data as hashed and
    /// stored, and each value with its salt (to keep apart).
    public static func commit(_ data: JSONValue, personal: Set<String>) -> (
        hashed: JSONValue, values: [(field: String, value: JSONValue, salt: String, commitment: String)]
    ) {
        guard !personal.isEmpty, case .object(var members) = data else { return (data, []) }
        var values: [(field: String, value: JSONValue, salt: String, commitment: String)] = []
        for key in personal.sorted() {
            guard let value = members[key], value != .null else { continue }
            let salt = Hex.encode(SecureRandom.bytes(16))
            let commitment = commit(value, salt: salt)
            members[key] = marker(commitment)
            values.append((key, value, salt, commitment))
        }
        return (.object(members), values)
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

    /// The first break in `events` (in seq order), or nil when the chain holds. Besides each link and hash: a committed
    /// value is missing only when the timeline records the case's erasure (`case_erased`); and only events carried over by
    /// 0022 (`carried`) have a `legacyHash`, they open the timeline, and each recomputes to it in its form before
    /// commitments (its values in clear, linked to the previous legacy hash) or, its values erased, is bound by a later
    /// event of the committed form (whose hash covers the chain before it, and whose leaf hashes that hash).
    public static func firstBreak(caseNumber: String, events: [CaseEvent]) -> Break? {
        var previous: String?
        var previousLegacy: String?
        let erased = events.contains { $0.type == erasedType }
        // A carried-over event whose legacy form could not be recomputed, until a committed-form event follows it.
        var unbound: Int?
        for (index, event) in events.enumerated() {
            if event.seq != index + 1 {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "expected seq \(index + 1) (an event is missing)")
            }
            if event.prevHash != previous {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "prev_hash does not match the previous event's hash")
            }
            for (key, commitment) in event.commitments.sorted(by: { $0.key < $1.key }) {
                let value: JSONValue = if case .object(let members) = event.data, let value = members[key] { value } else { .null }
                if let salt = commitment.salt {
                    if CaseEventCommitment.commit(value, salt: salt) != commitment.commitment {
                        return Break(caseNumber: caseNumber, seq: event.seq, reason: "data.\(key) does not match its commitment")
                    }
                } else if value != .null {
                    return Break(caseNumber: caseNumber, seq: event.seq, reason: "data.\(key) is shown although its value was erased")
                } else if !erased {
                    return Break(
                        caseNumber: caseNumber, seq: event.seq, reason: "the committed value of data.\(key) is missing and the case was never erased")
                }
            }
            let expected = hash(
                previous: previous, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.hashedData)
            if expected != event.hash {
                return Break(caseNumber: caseNumber, seq: event.seq, reason: "hash does not match the event's content (expected \(expected))")
            }
            if let broken = legacyBreak(caseNumber: caseNumber, event: event, index: index, previousLegacy: previousLegacy, unbound: &unbound) {
                return broken
            }
            previousLegacy = event.carried ? event.legacyHash : nil
            previous = event.hash
        }
        if let unbound {
            return Break(
                caseNumber: caseNumber, seq: unbound,
                reason: "carried over with its values erased, its legacy hash cannot be recomputed and no later event binds it")
        }
        return nil
    }

    /// The type of the event that records a case's erasure (the only reason a committed value may be missing).
    static let erasedType = "case_erased"

    /// The legacy rules of `firstBreak` for one event (index `index`, whose chain link and hash hold).
    private static func legacyBreak(caseNumber: String, event: CaseEvent, index: Int, previousLegacy: String?, unbound: inout Int?) -> Break? {
        guard event.carried else {
            if event.legacyHash != nil {
                return Break(
                    caseNumber: caseNumber, seq: event.seq, reason: "legacy_hash is set but migration 0022 did not carry this event over")
            }
            // A committed-form event: its hash, which its leaf hashes, covers every event before it.
            unbound = nil
            return nil
        }
        guard let legacyHash = event.legacyHash else {
            return Break(caseNumber: caseNumber, seq: event.seq, reason: "carried over by migration 0022 but has no legacy_hash")
        }
        if index > 0 && previousLegacy == nil {
            return Break(caseNumber: caseNumber, seq: event.seq, reason: "carried over by migration 0022 after an event that was not")
        }
        guard event.commitments.values.allSatisfy({ $0.salt != nil }) else {
            if unbound == nil { unbound = event.seq }
            return nil
        }
        // Its form before commitments: the values in clear, linked to the previous event's legacy hash.
        let expected = hash(previous: previousLegacy, seq: event.seq, at: event.at, actor: event.actor, type: event.type, data: event.data)
        if expected != legacyHash {
            return Break(
                caseNumber: caseNumber, seq: event.seq,
                reason: "legacy_hash does not match the event's content in its form before commitments (expected \(expected))")
        }
        return nil
    }
}

/// The `case_events` table: append-only (the database refuses UPDATE and DELETE).
public enum CaseEventStore {
    /// Appends an event to the case's chain. The caller must hold the case row's lock (an UPDATE of the
    /// row or `CaseStore.find(lock: true)`) in the same transaction, so appends to one case are serial.
    /// The members of `data` named in `personal` are committed (`CaseEventCommitment`): the stored and hashed data
    /// holds their commitments, `case_event_values` their values and salts.
    @discardableResult
    public static func append(
        caseID: UUID, at: Date, actor: String, type: String, data: JSONValue, personal: Set<String> = [],
        on connection: PostgresConnection
    ) throws -> CaseEvent {
        let at = Timestamp.truncated(at)
        let last = try connection.query("SELECT seq, hash FROM case_events WHERE case_id = \(caseID) ORDER BY seq DESC LIMIT 1").first
        let seq = (try last?.decode("seq", as: Int.self) ?? 0) + 1
        let previous: String? = try last?.decode("hash", as: String.self)
        let (hashed, values) = CaseEventCommitment.commit(data, personal: personal)
        let hash = CaseEventChain.hash(previous: previous, seq: seq, at: at, actor: actor, type: type, data: hashed)
        // Nothing reads the insert's answer: it leaves with the transaction's next statement that needs one (or COMMIT).
        try connection.executeLater(
            """
            INSERT INTO case_events (case_id, seq, at, actor, type, data, prev_hash, hash)
            VALUES (\(caseID), \(seq), \(at), \(actor), \(type), \(hashed.canonical), \(previous), \(hash))
            """)
        try insertValues(caseID: caseID, seq: seq, values.map { ($0.field, $0.value, $0.salt) }, on: connection)
        var event = CaseEvent(seq: seq, at: at, actor: actor, type: type, data: data, prevHash: previous, hash: hash)
        for value in values { event.commitments[value.field] = CaseEventCommitment(commitment: value.commitment, salt: value.salt) }
        return event
    }

    /// Keeps committed values and their salts apart from the event (what erasure deletes).
    static func insertValues(caseID: UUID, seq: Int, _ values: [(field: String, value: JSONValue, salt: String)], on connection: PostgresConnection)
        throws
    {
        guard !values.isEmpty else { return }
        try connection.executeLater(
            """
            INSERT INTO case_event_values (case_id, seq, field, value, salt)
            SELECT \(caseID), \(seq), f, v, s FROM unnest(\(values.map(\.field)), \(values.map(\.value.canonical)), \(values.map(\.salt))) AS u(f, v, s)
            """)
    }

    /// Deletes the committed values and salts of a case's events: the events keep their commitments and still verify.
    public static func eraseValues(caseID: UUID, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM case_event_values WHERE case_id = \(caseID)")
    }

    // The committed values of event `e`, as `{field: [value JCS text, salt]}` (null when it has none), its legacy hash and
    // whether 0022 carried it over.
    static let revealed: PostgresQuery = """
        (SELECT json_object_agg(v.field, json_build_array(v.value, v.salt))::text FROM case_event_values v
         WHERE v.case_id = e.case_id AND v.seq = e.seq) AS revealed, e.legacy_hash,
        EXISTS (SELECT 1 FROM case_events_carried k WHERE k.case_id = e.case_id AND k.seq = e.seq) AS carried
        """

    /// Events of a case in seq order, those after `afterSeq`, at most `limit`, each with its leaf index once sequenced.
    public static func list(caseID: UUID, afterSeq: Int = 0, limit: Int = Int(Int32.max), on connection: PostgresConnection) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index, \(revealed) FROM case_events e
            LEFT JOIN log_leaves l ON l.case_id = e.case_id AND l.seq = e.seq
            WHERE e.case_id = \(caseID) AND e.seq > \(afterSeq) ORDER BY e.seq LIMIT \(limit)
            """
        ).decodeEvents()
    }

    /// Events of a case of one `type` (say, `mail_refused` for the case's messages), in seq order.
    public static func list(caseID: UUID, type: String, on connection: PostgresConnection) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, l.leaf_index, \(revealed) FROM case_events e
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
                    SELECT c.case_number, e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, \(revealed)
                    FROM cases c LEFT JOIN case_events e ON e.case_id = c.id WHERE c.case_number = \(caseNumber) ORDER BY e.seq
                    """)
            } else {
                try connection.query(
                    """
                    SELECT c.case_number, e.seq, e.at, e.actor, e.type, e.data, e.prev_hash, e.hash, \(revealed)
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
        /// `{field: [value, salt]}` of committed values, and the carried-over hash, where selected (not for the admin log).
        let revealed, legacyHash, carried: PostgresColumn?

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
            revealed = try? columns("revealed")
            legacyHash = try? columns("legacy_hash")
            carried = try? columns("carried")
        }

        func decode(_ row: PostgresRow) throws -> CaseEvent {
            let text: String = try row.decode(data)
            var event = CaseEvent(
                seq: try row.decode(seq), at: try row.decode(at), actor: try row.decode(actor), type: try row.decode(type),
                data: try JSONValue.parse(text), prevHash: try row.decode(prevHash), hash: try row.decode(hash),
                leafIndex: try leafIndex.flatMap { try row.decode($0, as: Int?.self) },
                legacyHash: try legacyHash.flatMap { try row.decode($0, as: String?.self) },
                carried: try carried.map { try row.decode($0, as: Bool.self) } ?? false)
            // Committed members: the value and salt when kept, else null (erased).
            guard text.contains("\"commitment\""), case .object(var members) = event.data else { return event }
            var kept: [String: JSONValue] = [:]
            if let revealed, let json = try row.decode(revealed, as: String?.self), case .object(let object) = try JSONValue.parse(json) {
                kept = object
            }
            for (key, member) in members {
                guard let commitment = CaseEventCommitment.commitment(in: member) else { continue }
                if case .array(let pair)? = kept[key], pair.count == 2, case .string(let value) = pair[0], case .string(let salt) = pair[1] {
                    members[key] = try JSONValue.parse(value)
                    event.commitments[key] = CaseEventCommitment(commitment: commitment, salt: salt)
                } else {
                    members[key] = .null
                    event.commitments[key] = CaseEventCommitment(commitment: commitment, salt: nil)
                }
            }
            event.data = .object(members)
            return event
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

// MARK: Carrying events written before commitments over (migration 0020)

extension CaseEventStore {
    /// Cases with events still in the form before commitments (hashing their personal values in clear).
    public static func casesToCarryOver(on connection: PostgresConnection) throws -> [UUID] {
        try connection.query("SELECT DISTINCT case_id FROM case_events WHERE NOT committed ORDER BY case_id").map { try $0.decode("case_id") }
    }

    /// One event rewritten into the committed form: its new data (as hashed), link and hash, the values kept apart.
    public struct CarriedEvent: Sendable {
        /// The event.
        public let seq: Int
        /// The data as hashed (commitments in place of personal values).
        public let hashedData: JSONValue
        /// The new chain's link and hash.
        public let prevHash: String?
        public let hash: String
        /// The event's hash before, which its transparency-log leaf hashes.
        public let legacyHash: String
        /// The committed values and their salts.
        public let values: [(field: String, value: JSONValue, salt: String)]

        /// An event as carried over.
        public init(
            seq: Int, hashedData: JSONValue, prevHash: String?, hash: String, legacyHash: String,
            values: [(field: String, value: JSONValue, salt: String)]
        ) {
            self.seq = seq
            self.hashedData = hashedData
            self.prevHash = prevHash
            self.hash = hash
            self.legacyHash = legacyHash
            self.values = values
        }
    }

    /// Rewrites a case's events as carried over. Only the schema's owner may: the append-only trigger is switched off for
    /// this transaction's statements and on again before it commits (`ALTER TABLE` holds the table's lock until then).
    public static func carryOver(caseID: UUID, events: [CarriedEvent], on connection: PostgresConnection) throws {
        try connection.execute("ALTER TABLE case_events DISABLE TRIGGER case_events_append_only")
        for event in events {
            try connection.execute(
                """
                UPDATE case_events SET data = \(event.hashedData.canonical), prev_hash = \(event.prevHash), hash = \(event.hash),
                    legacy_hash = \(event.legacyHash), committed = true
                WHERE case_id = \(caseID) AND seq = \(event.seq)
                """)
            // The fixed set of events whose leaves hash their legacy hash (0029).
            try connection.execute("INSERT INTO case_events_carried (case_id, seq) VALUES (\(caseID), \(event.seq))")
            try insertValues(caseID: caseID, seq: event.seq, event.values, on: connection)
        }
        try connection.execute("ALTER TABLE case_events ENABLE TRIGGER case_events_append_only")
    }

    /// Events not yet carried over, anywhere.
    public static func uncarriedCount(on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) AS n FROM case_events WHERE NOT committed").first?.decode("n", as: Int.self) ?? 0
    }
}
