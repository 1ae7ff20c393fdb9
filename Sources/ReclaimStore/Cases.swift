import Foundation
import Crypto
import Postgres
import ReclaimCore

/// A device as typed in when the case was opened (validated: serial 8–14 letters and digits, IMEI with its check digit).
public struct CaseDevice: Sendable, Hashable {
    /// Serial as printed on the box (upper case), if given.
    public var serial: String?
    /// IMEI digits, if given.
    public var imei: String?
    /// Free-text model name.
    public var model: String?

    /// A device from its parts (already validated).
    public init(serial: String?, imei: String?, model: String?) {
        self.serial = serial
        self.imei = imei
        self.model = model
    }

    /// `{"serial", "imei", "model"}`, absent values as null.
    public var json: JSONValue { ["serial": .optional(serial), "imei": .optional(imei), "model": .optional(model)] }

    init(json: JSONValue) {
        guard case .object(let members) = json else { self.init(serial: nil, imei: nil, model: nil); return }
        func text(_ key: String) -> String? { if case .string(let value)? = members[key] { value } else { nil } }
        self.init(serial: text("serial"), imei: text("imei"), model: text("model"))
    }
}

/// One row of `cases`, with the assignee's name and tier joined in.
public struct CaseRecord: Sendable {
    /// Primary key.
    public let id: UUID
    /// The 12-digit case number.
    public let number: String
    /// HMAC-SHA256 of the access code.
    public let accessCodeHash: [UInt8]
    /// Key-file id of the key that made `accessCodeHash`.
    public let accessCodeKeyID: String
    /// The workflow columns.
    public let snapshot: CaseSnapshot
    /// When the case is due (nil when paused or finished).
    public let dueAt: Date?
    /// The account the case is about.
    public let accountEmail: String
    /// The customer's name.
    public let customerName: String
    /// Where the customer can be reached (never a reset destination).
    public let customerContactEmail: String
    /// Devices typed in at creation.
    public let devices: [CaseDevice]
    /// What happened, in the agent's words.
    public let summary: String
    /// The assigned agent.
    public let assigneeID: UUID?
    /// The assigned agent's name (joined).
    public let assigneeName: String?
    /// The assigned agent's tier (joined).
    public let assigneeTier: Tier?
    /// Purchases and cloud operations frozen.
    public let frozen: Bool
    /// When the case was opened.
    public let createdAt: Date
    /// Last change.
    public let updatedAt: Date
    /// Optimistic-concurrency version (the ETag).
    public let version: Int
    /// The rescue address the thief added, when known: nothing is ever sent to it.
    public let rescueEmail: String?
    /// The customer's language; nil when nobody said (the reader's `Accept-Language` decides, mail goes in English).
    public let language: CustomerLanguage?
    /// The unlock steps engineering has recorded, in the order done.
    public let unlocksDone: [UnlockKind]
    /// Documents on the case not reviewed yet (pending).
    public let unreviewedDocuments: Int
    /// Who opened the case (`agent:<uuid>` or `client:<uuid>`).
    public let createdBy: String
    /// The case this one was merged into (state `merged`), by number.
    public let mergedInto: String?
    /// The state it left when merged (restored by unmerge).
    public let mergedFromState: CaseState?

    /// A record from its fields.
    public init(id: UUID, number: String, accessCodeHash: [UInt8], accessCodeKeyID: String, snapshot: CaseSnapshot, dueAt: Date?,
                accountEmail: String, customerName: String, customerContactEmail: String, devices: [CaseDevice], summary: String,
                assigneeID: UUID?, assigneeName: String?, assigneeTier: Tier?, frozen: Bool, createdAt: Date, updatedAt: Date, version: Int,
                rescueEmail: String? = nil, language: CustomerLanguage? = nil, unlocksDone: [UnlockKind] = [], unreviewedDocuments: Int = 0,
                createdBy: String = "", mergedInto: String? = nil, mergedFromState: CaseState? = nil) {
        self.createdBy = createdBy
        self.mergedInto = mergedInto
        self.mergedFromState = mergedFromState
        self.unlocksDone = unlocksDone
        self.unreviewedDocuments = unreviewedDocuments
        self.id = id
        self.number = number
        self.accessCodeHash = accessCodeHash
        self.accessCodeKeyID = accessCodeKeyID
        self.snapshot = snapshot
        self.dueAt = dueAt
        self.accountEmail = accountEmail
        self.customerName = customerName
        self.customerContactEmail = customerContactEmail
        self.devices = devices
        self.summary = summary
        self.assigneeID = assigneeID
        self.assigneeName = assigneeName
        self.assigneeTier = assigneeTier
        self.frozen = frozen
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.rescueEmail = rescueEmail
        self.language = language
    }
}

/// A case about to be inserted.
public struct NewCase: Sendable {
    /// See `CaseRecord`.
    public var id: UUID
    /// See `CaseRecord`.
    public var number: CaseNumber
    /// See `CaseRecord`.
    public var accessCodeHash: [UInt8]
    /// See `CaseRecord`.
    public var accessCodeKeyID: String
    /// See `CaseRecord`.
    public var snapshot: CaseSnapshot
    /// See `CaseRecord`.
    public var dueAt: Date?
    /// See `CaseRecord`.
    public var accountEmail: String
    /// See `CaseRecord`.
    public var customerName: String
    /// See `CaseRecord`.
    public var customerContactEmail: String
    /// See `CaseRecord`.
    public var devices: [CaseDevice]
    /// See `CaseRecord`.
    public var summary: String
    /// See `CaseRecord`.
    public var createdBy: String
    /// See `CaseRecord`.
    public var now: Date
    /// See `CaseRecord`.
    public var rescueEmail: String?
    /// See `CaseRecord`.
    public var language: CustomerLanguage?

    /// A case from its parts.
    public init(id: UUID, number: CaseNumber, accessCodeHash: [UInt8], accessCodeKeyID: String, snapshot: CaseSnapshot, dueAt: Date?,
                accountEmail: String, customerName: String, customerContactEmail: String, devices: [CaseDevice], summary: String,
                createdBy: String, now: Date, rescueEmail: String? = nil, language: CustomerLanguage? = nil) {
        self.id = id
        self.number = number
        self.accessCodeHash = accessCodeHash
        self.accessCodeKeyID = accessCodeKeyID
        self.snapshot = snapshot
        self.dueAt = dueAt
        self.accountEmail = accountEmail
        self.customerName = customerName
        self.customerContactEmail = customerContactEmail
        self.devices = devices
        self.summary = summary
        self.createdBy = createdBy
        self.now = now
        self.rescueEmail = rescueEmail
        self.language = language
    }
}

/// Queue filters (all optional) for `CaseStore.queue`.
public struct CaseQueueFilter: Sendable {
    /// Only cases in this state.
    public var state: CaseState?
    /// Only cases held by this tier.
    public var tier: Tier?
    /// Only overdue (true) or not overdue (false) cases.
    public var overdue: Bool?
    /// A normalised search term (see `CaseSearch.term`).
    public var term: String?
    /// Only cases with (true) or without (false) an unreviewed document.
    public var unreviewed: Bool?

    /// A filter; nil fields do not filter.
    public init(state: CaseState? = nil, tier: Tier? = nil, overdue: Bool? = nil, term: String? = nil, unreviewed: Bool? = nil) {
        self.unreviewed = unreviewed
        self.state = state
        self.tier = tier
        self.overdue = overdue
        self.term = term
    }
}

/// Where the previous queue page ended: the last case's due date (nil: in the null section) and id.
public struct CaseQueueCursor: Sendable, Equatable {
    /// The last case's due date (nil: the undated section).
    public var dueAt: Date?
    /// The last case's id.
    public var id: UUID

    /// A cursor after this case.
    public init(dueAt: Date?, id: UUID) {
        self.dueAt = dueAt
        self.id = id
    }

    /// Opaque text: `d<microseconds>.<uuid>` or `n.<uuid>`, base64url-encoded.
    public var encoded: String {
        let micros = dueAt.map { "d" + String(Int64(($0.timeIntervalSince1970 * 1_000_000).rounded())) } ?? "n"
        return Base64URL.encode((micros + "." + id.uuidString.lowercased()).utf8)
    }

    /// Parses `encoded`; nil for anything else.
    public init?(encoded text: String) {
        guard text.utf8.count <= 128 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let raw = String(data: data, encoding: .utf8),
              let dot = raw.firstIndex(of: ".") else { return nil }
        let head = raw[..<dot]
        guard let id = UUID(uuidString: String(raw[raw.index(after: dot)...])) else { return nil }
        if head == "n" {
            self.init(dueAt: nil, id: id)
        } else if head.hasPrefix("d"), let micros = Int64(head.dropFirst()) {
            self.init(dueAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000), id: id)
        } else {
            return nil
        }
    }
}

/// The one normalisation of what `q` matches: indexed terms and queries go through it alike.
public enum CaseSearch {
    /// E-mail addresses lower-cased; anything else (case numbers, serials, IMEIs) without spaces or dashes, upper-cased.
    public static func term(for text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 254 else { return nil }
        if trimmed.contains("@") { return trimmed.lowercased() }
        let compact = trimmed.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "-" }
        let term = String(String.UnicodeScalarView(compact)).uppercased()
        return term.isEmpty ? nil : term
    }

    /// The terms a case is found by.
    public static func terms(number: String, accountEmail: String, devices: [CaseDevice]) -> Set<String> {
        var terms: Set<String> = [number]
        if let email = term(for: accountEmail) { terms.insert(email) }
        for device in devices {
            if let serial = device.serial.flatMap(term(for:)) { terms.insert(serial) }
            if let imei = device.imei.flatMap(term(for:)) { terms.insert(imei) }
        }
        return terms
    }
}

/// The `cases` and `case_search` tables.
public enum CaseStore {
    // The select list `Columns` reads by name (joined columns aliased so no two share a name); order does not matter.
    // The documents count is written as `IN (this case UNION ALL its merged cases)`, not `= c.id OR IN (…)`: the OR
    // kept the planner from the `evidence_documents` index, and with `cases_merged_into` (0011) a queue page is
    // estimated at ~1,750, not ~600,000, so it is never JIT-compiled (see BENCHMARKS.md, "Cases").
    static let columns = """
        c.id, c.case_number, c.access_code_hash, c.access_code_key_id, c.kind, c.state, c.tier, c.path,
        c.rescue_email_added, c.security_questions_changed, c.two_step_enabled, c.lost_mode_enabled,
        c.opened_at, c.state_entered_at, c.path_clock_started_at, c.paused_seconds, c.paused_since, c.due_at,
        c.account_email, c.customer_name, c.customer_contact_email, c.devices::text AS devices, c.summary,
        c.assignee_id, a.name AS assignee_name, a.tier AS assignee_tier, c.frozen, c.created_at, c.updated_at, c.version,
        c.rescue_email, c.language, array_to_string(c.unlocks_done, ',') AS unlocks_done, c.created_by,
        (SELECT m.case_number FROM cases m WHERE m.id = c.merged_into) AS merged_into_number, c.merged_from_state,
        (SELECT count(*) FROM evidence d WHERE d.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
            AND \(documentKinds) AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id)) AS unreviewed_documents
        """
    // Evidence `d` is a document: the predicate of the `evidence_documents` index (0012), so that it is used.
    static let documentKinds = "d.document"
    static let from = "cases c LEFT JOIN agents a ON a.id = c.assignee_id"

    /// Inserts a case and its search terms; a taken case number fails with 23505 on `cases_case_number_unique`.
    public static func insert(_ new: NewCase, on connection: PostgresConnection) throws {
        let s = new.snapshot
        let devices = JSONValue.array(new.devices.map(\.json)).canonical
        try connection.execute("""
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path,
                rescue_email_added, security_questions_changed, two_step_enabled, lost_mode_enabled,
                account_email, customer_name, customer_contact_email, devices, summary,
                opened_at, state_entered_at, path_clock_started_at, paused_seconds, paused_since, due_at,
                created_by, created_at, updated_at, version, rescue_email, language)
            VALUES (\(new.id), \(new.number.digits), \(new.accessCodeHash), \(new.accessCodeKeyID), \(s.kind.rawValue), \(s.state.rawValue),
                \(s.tier.rawValue), \(s.path.rawValue), \(s.facts.rescueEmailAdded), \(s.facts.securityQuestionsChanged),
                \(s.facts.twoStepEnabled), \(s.facts.lostModeEnabled), \(new.accountEmail), \(new.customerName),
                \(new.customerContactEmail), \(devices)::jsonb, \(new.summary), \(s.clock.openedAt), \(s.clock.stateEnteredAt),
                \(s.clock.pathClockStartedAt), \(s.clock.pausedSeconds), \(s.clock.pausedSince), \(new.dueAt),
                \(new.createdBy), \(new.now), \(new.now), 1, \(new.rescueEmail), \(new.language?.rawValue))
            """)
        let terms = CaseSearch.terms(number: new.number.digits, accountEmail: new.accountEmail, devices: new.devices).sorted()
        // One statement for all terms: one text[] parameter.
        try connection.execute("""
            INSERT INTO case_search (term, case_id) SELECT unnest(\(terms)), \(new.id) ON CONFLICT DO NOTHING
            """)
    }

    /// The other open cases found by any of `terms` (account e-mail, serials, IMEIs: never the case number), by number.
    public static func openCases(matching terms: [String], except id: UUID, on connection: PostgresConnection) throws -> [(number: String, state: CaseState)] {
        guard !terms.isEmpty else { return [] }
        let rows = try connection.query("""
            SELECT DISTINCT c.case_number, c.state FROM case_search s JOIN cases c ON c.id = s.case_id
            WHERE s.term = ANY(\(terms)) AND c.id <> \(id) AND c.state = ANY(\(CaseState.allCases.filter(\.isOpen).map(\.rawValue)))
            ORDER BY c.case_number LIMIT 50
            """)
        var found: [(number: String, state: CaseState)] = []
        for row in rows {
            guard let state = CaseState(rawValue: try row.decode("state", as: String.self)) else { continue }
            found.append((try row.decode("case_number", as: String.self), state))
        }
        return found
    }

    /// The case with this number, or nil.
    public static func find(number: String, on connection: PostgresConnection) throws -> CaseRecord? {
        try connection.query("SELECT \(unescaped: columns) FROM \(unescaped: from) WHERE c.case_number = \(number)").decodeCases().first
    }

    /// The id of the case with this number, or nil; `lock` takes its row lock for the rest of the transaction
    /// (events, notes and evidence of one case are then written one transaction at a time, in order).
    public static func id(number: String, lock: Bool = false, on connection: PostgresConnection) throws -> UUID? {
        let rows = lock
            ? try connection.query("SELECT id FROM cases WHERE case_number = \(number) FOR UPDATE")
            : try connection.query("SELECT id FROM cases WHERE case_number = \(number)")
        return try rows.first?.decode("id", as: UUID.self)
    }

    /// Takes the case's row lock for the rest of the transaction, before appending to its timeline.
    public static func lock(id: UUID, on connection: PostgresConnection) throws {
        _ = try connection.query("SELECT 1 FROM cases WHERE id = \(id) FOR UPDATE")
    }

    /// The case with this id, or nil.
    public static func find(id: UUID, on connection: PostgresConnection) throws -> CaseRecord? {
        try connection.query("SELECT \(unescaped: columns) FROM \(unescaped: from) WHERE c.id = \(id)").decodeCases().first
    }

    /// Stores a decided transition if the case is still at `expectedVersion`; false when someone else changed it first.
    /// The row stays locked until the transaction ends, so the caller appends the event next.
    public static func applyTransition(id: UUID, expectedVersion: Int, after: CaseSnapshot, dueAt: Date?, now: Date,
                                       on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET state = \(after.state.rawValue), tier = \(after.tier.rawValue), path = \(after.path.rawValue),
                state_entered_at = \(after.clock.stateEnteredAt), path_clock_started_at = \(after.clock.pathClockStartedAt),
                paused_seconds = \(after.clock.pausedSeconds), paused_since = \(after.clock.pausedSince),
                due_at = \(dueAt), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// Sets the assignee if the case is still at `expectedVersion`.
    public static func assign(id: UUID, expectedVersion: Int, agentID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET assignee_id = \(agentID), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// Sets `frozen` if the case is still at `expectedVersion`.
    public static func freeze(id: UUID, expectedVersion: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try setFrozen(true, id: id, expectedVersion: expectedVersion, now: now, on: connection)
    }

    /// Sets or lifts `frozen` if the case is still at `expectedVersion`.
    public static func setFrozen(_ frozen: Bool, id: UUID, expectedVersion: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET frozen = \(frozen), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// Replaces the access code's hash (no version bump: the case's state is unchanged). The caller holds the row lock.
    public static func setAccessCode(id: UUID, hash: [UInt8], keyID: String, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE cases SET access_code_hash = \(hash), access_code_key_id = \(keyID), updated_at = \(now) WHERE id = \(id)")
    }

    /// Merges the case into `target` if still at `expectedVersion`: state `merged`, no due date, the state it left kept.
    public static func merge(id: UUID, expectedVersion: Int, into target: UUID, from state: CaseState, now: Date,
                             on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET state = 'merged', merged_into = \(target), merged_from_state = \(state.rawValue), due_at = NULL,
                state_entered_at = \(now), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion) AND merged_into IS NULL
            """) == 1
    }

    /// Undoes a merge if still at `expectedVersion`: back to `state` with `dueAt`.
    public static func unmerge(id: UUID, expectedVersion: Int, to state: CaseState, dueAt: Date?, now: Date,
                               on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET state = \(state.rawValue), merged_into = NULL, merged_from_state = NULL, due_at = \(dueAt),
                updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion) AND state = 'merged'
            """) == 1
    }

    /// The numbers of the cases merged into this one, by id (for `from_case` on the items they bring).
    public static func mergedSources(into id: UUID, on connection: PostgresConnection) throws -> [UUID: String] {
        var sources: [UUID: String] = [:]
        for row in try connection.query("SELECT id, case_number FROM cases WHERE merged_into = \(id)") {
            sources[try row.decode("id", as: UUID.self)] = try row.decode("case_number", as: String.self)
        }
        return sources
    }

    /// Clears the assignee (no version bump: the caller's change to the case already made one in this transaction).
    public static func clearAssignee(id: UUID, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE cases SET assignee_id = NULL WHERE id = \(id)")
    }

    /// Lifts a freeze as part of a change that already bumped the version in this transaction.
    public static func liftFreeze(id: UUID, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE cases SET frozen = false WHERE id = \(id)")
    }

    /// Records one unlock step if the case is still at `expectedVersion`.
    public static func recordUnlock(_ step: UnlockKind, id: UUID, expectedVersion: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE cases SET unlocks_done = array_append(unlocks_done, \(step.rawValue)), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// One queue page: oldest due first, null due dates last, then by id; cases strictly after `cursor`.
    /// Two index range scans (dated, then undated) so a deep page costs what the first does.
    public static func queue(filter: CaseQueueFilter, after cursor: CaseQueueCursor?, limit: Int, now: Date,
                             on connection: PostgresConnection) throws -> [CaseRecord] {
        var records: [CaseRecord] = []
        if cursor == nil || cursor?.dueAt != nil {
            records = try queueSection(dated: true, filter: filter, cursor: cursor, limit: limit, now: now, on: connection)
        }
        if records.count < limit, filter.overdue != true {
            let nullCursor = cursor?.dueAt == nil ? cursor : nil
            records += try queueSection(dated: false, filter: filter, cursor: nullCursor, limit: limit - records.count, now: now, on: connection)
        }
        return records
    }

    private static func queueSection(dated: Bool, filter: CaseQueueFilter, cursor: CaseQueueCursor?, limit: Int, now: Date,
                                     on connection: PostgresConnection) throws -> [CaseRecord] {
        var sql = ""
        var binds: [PostgresBind] = []
        func bind(_ value: some PostgresEncodable) -> String {
            binds.append(value.postgresBind)
            return "$\(binds.count)"
        }
        if let term = filter.term {
            // A search drives from its few matching terms; otherwise the planner may walk the whole queue index looking for them.
            sql += "WITH hits AS MATERIALIZED (SELECT s.case_id FROM case_search s WHERE s.term = \(bind(term))) "
            sql += "SELECT \(columns) FROM hits JOIN cases c ON c.id = hits.case_id LEFT JOIN agents a ON a.id = c.assignee_id WHERE "
        } else {
            sql += "SELECT \(columns) FROM \(from) WHERE "
        }
        sql += dated ? "c.due_at IS NOT NULL" : "c.due_at IS NULL"
        if dated, let cursor, let due = cursor.dueAt {
            sql += " AND (c.due_at, c.id) > (\(bind(due)), \(bind(cursor.id)))"
        } else if !dated, let cursor {
            sql += " AND c.id > \(bind(cursor.id))"
        }
        if let state = filter.state { sql += " AND c.state = \(bind(state.rawValue))" }
        if let tier = filter.tier { sql += " AND c.tier = \(bind(tier.rawValue))" }
        if let unreviewed = filter.unreviewed {
            sql += unreviewed ? " AND EXISTS" : " AND NOT EXISTS"
            sql += " (SELECT 1 FROM evidence d WHERE d.case_id = c.id AND \(documentKinds) AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id))"
        }
        if let overdue = filter.overdue, dated {
            // Only open states other than awaiting_documents have a due date, so the date alone decides.
            sql += overdue ? " AND c.due_at < \(bind(now))" : " AND c.due_at >= \(bind(now))"
        }
        sql += dated ? " ORDER BY c.due_at ASC, c.id ASC" : " ORDER BY c.id ASC"
        sql += " LIMIT \(bind(limit))"
        return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds)).decodeCases()
    }

    /// The columns of `columns` in a result, found by name once per result (in select-list order: one comparison each).
    struct Columns {
        let id, number, accessCodeHash, accessCodeKeyID, kind, state, tier, path: PostgresColumn
        let rescueEmailAdded, securityQuestionsChanged, twoStepEnabled, lostModeEnabled: PostgresColumn
        let openedAt, stateEnteredAt, pathClockStartedAt, pausedSeconds, pausedSince, dueAt: PostgresColumn
        let accountEmail, customerName, customerContactEmail, devices, summary: PostgresColumn
        let assigneeID, assigneeName, assigneeTier, frozen, createdAt, updatedAt, version: PostgresColumn
        let rescueEmail, language, unlocksDone, unreviewedDocuments, createdBy, mergedInto, mergedFromState: PostgresColumn

        init(_ rows: PostgresRows) throws {
            var c = rows.columns()
            id = try c("id"); number = try c("case_number"); accessCodeHash = try c("access_code_hash"); accessCodeKeyID = try c("access_code_key_id")
            kind = try c("kind"); state = try c("state"); tier = try c("tier"); path = try c("path")
            rescueEmailAdded = try c("rescue_email_added"); securityQuestionsChanged = try c("security_questions_changed")
            twoStepEnabled = try c("two_step_enabled"); lostModeEnabled = try c("lost_mode_enabled")
            openedAt = try c("opened_at"); stateEnteredAt = try c("state_entered_at"); pathClockStartedAt = try c("path_clock_started_at")
            pausedSeconds = try c("paused_seconds"); pausedSince = try c("paused_since"); dueAt = try c("due_at")
            accountEmail = try c("account_email"); customerName = try c("customer_name"); customerContactEmail = try c("customer_contact_email")
            devices = try c("devices"); summary = try c("summary")
            assigneeID = try c("assignee_id"); assigneeName = try c("assignee_name"); assigneeTier = try c("assignee_tier")
            frozen = try c("frozen"); createdAt = try c("created_at"); updatedAt = try c("updated_at"); version = try c("version")
            rescueEmail = try c("rescue_email"); language = try c("language")
            unlocksDone = try c("unlocks_done"); unreviewedDocuments = try c("unreviewed_documents"); createdBy = try c("created_by")
            mergedInto = try c("merged_into_number"); mergedFromState = try c("merged_from_state")
        }

        func decode(_ row: PostgresRow) throws -> CaseRecord {
            let facts = CaseFacts(rescueEmailAdded: try row.decode(rescueEmailAdded), securityQuestionsChanged: try row.decode(securityQuestionsChanged),
                                  twoStepEnabled: try row.decode(twoStepEnabled), lostModeEnabled: try row.decode(lostModeEnabled))
            let clock = SLAClock(openedAt: try row.decode(openedAt), stateEnteredAt: try row.decode(stateEnteredAt),
                                 pathClockStartedAt: try row.decode(pathClockStartedAt), pausedSeconds: try row.decode(pausedSeconds),
                                 pausedSince: try row.decode(pausedSince))
            let snapshot = CaseSnapshot(kind: try enumValue(row, kind), state: try enumValue(row, state), tier: try enumValue(row, tier),
                                        path: try enumValue(row, path), facts: facts, clock: clock)
            let devicesText: String = try row.decode(devices)
            var deviceList: [CaseDevice] = []
            if case .array(let items)? = try? JSONValue.parse(devicesText) { deviceList = items.map(CaseDevice.init(json:)) }
            let assigneeTierText: String? = try row.decode(assigneeTier)
            return CaseRecord(
                id: try row.decode(id), number: try row.decode(number), accessCodeHash: try row.decode(accessCodeHash),
                accessCodeKeyID: try row.decode(accessCodeKeyID), snapshot: snapshot, dueAt: try row.decode(dueAt),
                accountEmail: try row.decode(accountEmail), customerName: try row.decode(customerName),
                customerContactEmail: try row.decode(customerContactEmail), devices: deviceList, summary: try row.decode(summary),
                assigneeID: try row.decode(assigneeID), assigneeName: try row.decode(assigneeName),
                assigneeTier: assigneeTierText.flatMap(Tier.init(rawValue:)), frozen: try row.decode(frozen),
                createdAt: try row.decode(createdAt), updatedAt: try row.decode(updatedAt), version: try row.decode(version),
                rescueEmail: try row.decode(rescueEmail), language: row.isNull(language) ? nil : try enumValue(row, language),
                unlocksDone: try row.decode(unlocksDone, as: String.self).split(separator: ",").compactMap { UnlockKind(rawValue: String($0)) },
                unreviewedDocuments: try row.decode(unreviewedDocuments, as: Int.self), createdBy: try row.decode(createdBy, as: String.self),
                mergedInto: try row.decode(mergedInto, as: String?.self),
                mergedFromState: try row.decode(mergedFromState, as: String?.self).flatMap(CaseState.init(rawValue:)))
        }

        private func enumValue<T: RawRepresentable>(_ row: PostgresRow, _ column: PostgresColumn) throws -> T where T.RawValue == String {
            guard let value = T(rawValue: try row.decode(column, as: String.self)) else {
                throw PostgresError(.decoding, message: "column \"\(column.name)\" holds an unknown \(T.self)")
            }
            return value
        }
    }
}

extension PostgresRows {
    /// Every row of a `SELECT CaseStore.columns` as a `CaseRecord`, read by column name.
    func decodeCases() throws -> [CaseRecord] {
        guard !isEmpty else { return [] }
        let columns = try CaseStore.Columns(self)
        return try map(columns.decode)
    }
}

extension CaseStore {
    /// The customer status look-up in one statement: the case (or nil), the latest lock in force among `throttleKeys`,
    /// and the case's customer-visible notes, oldest first, with the number of the merged case each came from (nil: its own).
    public static func findForStatus(number: String, throttleKeys: [String], now: Date,
                                     on connection: PostgresConnection) throws -> (CaseRecord?, Date?, [CustomerNote]) {
        let rows = try connection.query("""
            SELECT \(unescaped: columns),
                (SELECT max(t.locked_until) FROM throttles t WHERE t.key = ANY(\(throttleKeys)) AND t.locked_until > \(now)) AS locked_until,
                (SELECT json_agg(json_build_array(n.body, (extract(epoch FROM n.created_at) * 1000)::bigint,
                    CASE WHEN n.case_id = c.id THEN NULL ELSE (SELECT m.case_number FROM cases m WHERE m.id = n.case_id) END) ORDER BY n.created_at, n.id)::text
                 FROM case_notes n WHERE n.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
                   AND n.visibility = 'customer') AS customer_notes
            FROM (SELECT 1) AS one LEFT JOIN cases c ON c.case_number = \(number) LEFT JOIN agents a ON a.id = c.assignee_id
            """)
        guard let row = rows.first else { return (nil, nil, []) }
        let columns = try Columns(rows)
        var extra = rows.columns()
        let lockedColumn = try extra("locked_until"), notesColumn = try extra("customer_notes")
        let locked: Date? = try row.decode(lockedColumn)
        let record = row.isNull(columns.id) ? nil : try columns.decode(row)
        var notes: [CustomerNote] = []
        if let text = try row.decode(notesColumn, as: String?.self), case .array(let items) = try JSONValue.parse(text) {
            for item in items {
                guard case .array(let triple) = item, triple.count == 3, case .string(let body) = triple[0], case .int(let millis) = triple[1] else {
                    throw PostgresError(.decoding, message: "customer notes are not [body, milliseconds, from case] triples")
                }
                let fromCase: String? = if case .string(let number) = triple[2] { number } else { nil }
                notes.append(CustomerNote(body: body, at: Date(timeIntervalSince1970: Double(millis) / 1000), fromCase: fromCase))
            }
        }
        return (record, locked, notes)
    }
}
