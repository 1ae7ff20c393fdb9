import Foundation
import Postgres
import ReclaimCore

/// The `cases` and `case_search` tables.
public enum CaseStore {
    // The select list `Columns` reads by name (joined columns aliased so no two share a name); order does not matter.
    // The documents count is written as `IN (this case UNION ALL its merged cases)`, not `= c.id OR IN (…)`: the OR
    // kept the planner from the `evidence_documents` index, and with `cases_merged_into` (0011) a queue page is
    // estimated at ~1,750, not ~600,000, so it is never JIT-compiled (see BENCHMARKS.md, "Cases"). The count and the
    // scheduled steps run only where the row's flags (`documents_pending`, `unlocks_pending`, kept by 0026's triggers)
    // say there is something to find: most cases on a page have neither, and the two look-ups were most of a page's cost.
    static let columns: PostgresQuery = """
        c.id, c.case_number, c.access_code_hash, c.access_code_key_id, c.kind, c.state, c.tier, c.path,
        c.rescue_email_added, c.security_questions_changed, c.two_step_enabled, c.lost_mode_enabled,
        c.opened_at, c.state_entered_at, c.path_clock_started_at, c.paused_seconds, c.paused_since, c.due_at,
        c.account_email, c.customer_name, c.customer_contact_email, c.customer_phone, c.devices::text AS devices, c.summary,
        c.assignee_id, a.name AS assignee_name, a.tier AS assignee_tier, c.frozen, c.created_at, c.updated_at, c.version,
        c.rescue_email, array_to_string(c.former_rescue_emails, ' ') AS former_rescue_emails, c.language, array_to_string(c.unlocks_done, ',') AS unlocks_done, c.created_by,
        (SELECT m.case_number FROM cases m WHERE m.id = c.merged_into) AS merged_into_number, c.merged_from_state, c.risk, c.erased_at, c.awaiting_reply,
        CASE WHEN c.documents_pending THEN
            (SELECT count(*) FROM evidence d WHERE d.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
                AND \(documentKinds) AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id))
        ELSE 0 END AS unreviewed_documents,
        CASE WHEN c.unlocks_pending THEN
            (SELECT string_agg(su.step || ' ' || (extract(epoch FROM su.effective_at) * 1000000)::bigint, ',' ORDER BY su.effective_at, su.step)
             FROM scheduled_unlocks su WHERE su.case_id = c.id AND su.status = 'scheduled')
        END AS unlocks_scheduled
        """
    // What decides the work a case offers beyond its columns (`CaseRecord.standing`), selected only when one case is read
    // (`find`): on a queue page it would price each row's answers (the page plan must stay below JIT), so queue rows'
    // `allowed_actions` leave out `send_reset` and `unmerge` (the case's own GET has them).
    static let standingColumns: PostgresQuery = """
        \(answerProgress) AS answer_progress,
        CASE WHEN c.merged_into IS NOT NULL THEN (SELECT m.state FROM cases m WHERE m.id = c.merged_into) END AS merged_into_state
        """
    // "<on file>,<matched>": the security questions on file for the case's account, and how many of them an answer filed on
    // the case (or a case merged into it), not rejected, matched; only in the states `send_reset` is taken from (literal
    // text, no bind, so pgbench runs it as is; CaseWorkTests checks the list), so it is offered only once every one
    // matched (api.md v1.2). Elsewhere it costs nothing: "0,0".
    static let answerProgress: PostgresQuery = """
        CASE WHEN c.state IN ('new', 'identity_check') THEN
            (SELECT count(*) || ',' || count(*) FILTER (WHERE q.question_id IN (\(EvidenceStore.matchedQuestionIDs(ofCase: "c.id"))))
             FROM accounts ac JOIN account_security_questions q ON q.account_id = ac.id WHERE ac.email_key = lower(c.account_email))
        ELSE '0,0' END
        """
    // Evidence `d` is a document: the predicate of the `evidence_documents` index (0012), so that it is used.
    static let documentKinds: PostgresQuery = "d.document"
    static let from: PostgresQuery = "cases c LEFT JOIN agents a ON a.id = c.assignee_id"

    /// Inserts a case and its search terms; a taken case number fails with 23505 on `cases_case_number_unique`.
    public static func insert(_ new: NewCase, on connection: PostgresConnection) throws {
        let s = new.snapshot
        let devices = JSONValue.array(new.devices.map(\.json)).canonical
        try connection.execute(
            """
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path,
                rescue_email_added, security_questions_changed, two_step_enabled, lost_mode_enabled,
                account_email, customer_name, customer_contact_email, devices, summary,
                opened_at, state_entered_at, path_clock_started_at, paused_seconds, paused_since, due_at,
                created_by, created_at, updated_at, version, rescue_email, language, customer_phone)
            VALUES (\(new.id), \(new.number.digits), \(new.accessCodeHash), \(new.accessCodeKeyID), \(s.kind.rawValue), \(s.state.rawValue),
                \(s.tier.rawValue), \(s.path.rawValue), \(s.facts.rescueEmailAdded), \(s.facts.securityQuestionsChanged),
                \(s.facts.twoStepEnabled), \(s.facts.lostModeEnabled), \(new.accountEmail), \(new.customerName),
                \(new.customerContactEmail), \(devices)::jsonb, \(new.summary), \(s.clock.openedAt), \(s.clock.stateEnteredAt),
                \(s.clock.pathClockStartedAt), \(s.clock.pausedSeconds), \(s.clock.pausedSince), \(new.dueAt),
                \(new.createdBy), \(new.now), \(new.now), 1, \(new.rescueEmail), \(new.language?.rawValue), \(new.customerPhone))
            """)
        let terms = CaseSearch.indexTerms(
            number: new.number.digits, accountEmail: new.accountEmail, contactEmail: new.customerContactEmail, phone: new.customerPhone,
            name: new.customerName, devices: new.devices
        ).sorted()
        // One statement for all terms: one text[] parameter.
        try connection.execute(
            """
            INSERT INTO case_search (term, case_id) SELECT unnest(\(terms)), \(new.id) ON CONFLICT DO NOTHING
            """)
    }

    // MARK: An account's cases (api.md v1.3 "One account, one story")

    /// The cases of this account e-mail (compared as `case_search` keeps it, in lower case), oldest number first:
    /// id, number, state, and whether it was erased (an erased case keeps no account e-mail, so it is never found).
    public static func accountCases(email: String, on connection: PostgresConnection) throws -> [(id: UUID, number: String, state: CaseState)] {
        guard let term = CaseSearch.term(for: email) else { return [] }
        let rows = try connection.query(
            """
            SELECT c.id, c.case_number, c.state FROM case_search s JOIN cases c ON c.id = s.case_id
            WHERE s.term = \(term) AND lower(c.account_email) = \(term) ORDER BY c.case_number
            """)
        return try rows.compactMap { row in
            guard let state = CaseState(rawValue: try row.decode("state", as: String.self)) else { return nil }
            return (try row.decode("id", as: UUID.self), try row.decode("case_number", as: String.self), state)
        }
    }

    /// Every rescue address any case of this account e-mail recorded, the current ones and the former: all the thief's.
    public static func accountRescueAddresses(email: String, on connection: PostgresConnection) throws -> [String] {
        guard let term = CaseSearch.term(for: email) else { return [] }
        let rows = try connection.query(
            """
            SELECT DISTINCT a.address FROM case_search s JOIN cases c ON c.id = s.case_id,
                unnest(c.former_rescue_emails || c.rescue_email) AS a(address)
            WHERE s.term = \(term) AND lower(c.account_email) = \(term) AND a.address IS NOT NULL
            ORDER BY a.address
            """)
        return try rows.map { try $0.decode("address", as: String.self) }
    }

    /// A case near another: what `related` is built from (the other cases sharing one of `terms`: the account e-mail,
    /// a serial or IMEI, the contact address, the phone), open or finished since `since`, never erased.
    public struct Neighbour: Sendable {
        public let number: String
        public let state: CaseState
        public let tier: Tier
        public let openedAt: Date
        public let accountEmail: String
        public let customerName: String
        public let contactEmail: String
        public let phone: String?
        public let devices: [CaseDevice]
    }

    /// The other cases found by any of `terms` (never the case number), open or finished since `since`, by number; at
    /// most 50.
    public static func neighbours(matching terms: [String], except id: UUID, finishedSince since: Date, on connection: PostgresConnection)
        throws -> [Neighbour]
    {
        guard !terms.isEmpty else { return [] }
        let open = CaseState.allCases.filter(\.isOpen).map(\.rawValue)
        let rows = try connection.query(
            """
            SELECT c.case_number, c.state, c.tier, c.opened_at, c.account_email, c.customer_name, c.customer_contact_email,
                c.customer_phone, c.devices::text AS devices
            FROM cases c WHERE c.id IN (SELECT s.case_id FROM case_search s WHERE s.term = ANY(\(terms)))
                AND c.id <> \(id) AND c.erased_at IS NULL AND (c.state = ANY(\(open)) OR c.state_entered_at >= \(since))
            ORDER BY c.case_number LIMIT 50
            """)
        return try rows.compactMap { row in
            guard let state = CaseState(rawValue: try row.decode("state", as: String.self)),
                let tier = Tier(rawValue: try row.decode("tier", as: String.self))
            else { return nil }
            var devices: [CaseDevice] = []
            if case .array(let items)? = try? JSONValue.parse(try row.decode("devices", as: String.self)) {
                devices = items.map(CaseDevice.init(json:))
            }
            return Neighbour(
                number: try row.decode("case_number", as: String.self), state: state, tier: tier,
                openedAt: try row.decode("opened_at", as: Date.self),
                accountEmail: try row.decode("account_email", as: String.self), customerName: try row.decode("customer_name", as: String.self),
                contactEmail: try row.decode("customer_contact_email", as: String.self),
                phone: try row.decode("customer_phone", as: String?.self), devices: devices)
        }
    }

    /// The case with this number, or nil.
    public static func find(number: String, on connection: PostgresConnection) throws -> CaseRecord? {
        try connection.query("SELECT \(columns), \(standingColumns) FROM \(from) WHERE c.case_number = \(number)").decodeCases().first
    }

    /// The id of the case with this number, or nil; `lock` takes its row lock for the rest of the transaction
    /// (events, notes and evidence of one case are then written one transaction at a time, in order).
    public static func id(number: String, lock: Bool = false, on connection: PostgresConnection) throws -> UUID? {
        let rows =
            lock
            ? try connection.query("SELECT id FROM cases WHERE case_number = \(number) FOR UPDATE")
            : try connection.query("SELECT id FROM cases WHERE case_number = \(number)")
        return try rows.first?.decode("id", as: UUID.self)
    }

    /// The case's id, its row locked for the rest of the transaction, and whether it was erased; nil when no case has
    /// this number.
    public static func lockForChange(number: String, on connection: PostgresConnection) throws -> (id: UUID, erased: Bool)? {
        let rows = try connection.query("SELECT id, erased_at IS NOT NULL AS erased FROM cases WHERE case_number = \(number) FOR UPDATE")
        guard let row = rows.first else { return nil }
        return (try row.decode("id", as: UUID.self), try row.decode("erased", as: Bool.self))
    }

    /// Takes the case's row lock for the rest of the transaction, before appending to its timeline.
    public static func lock(id: UUID, on connection: PostgresConnection) throws {
        _ = try connection.query("SELECT 1 FROM cases WHERE id = \(id) FOR UPDATE")
    }

    /// The case with this id, or nil.
    public static func find(id: UUID, on connection: PostgresConnection) throws -> CaseRecord? {
        try connection.query("SELECT \(columns), \(standingColumns) FROM \(from) WHERE c.id = \(id)").decodeCases().first
    }

    /// Stores a decided transition if the case is still at `expectedVersion`; false when someone else changed it first.
    /// The row stays locked until the transaction ends, so the caller appends the event next.
    public static func applyTransition(
        id: UUID, expectedVersion: Int, after: CaseSnapshot, dueAt: Date?, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE cases SET state = \(after.state.rawValue), tier = \(after.tier.rawValue), path = \(after.path.rawValue),
                state_entered_at = \(after.clock.stateEnteredAt), path_clock_started_at = \(after.clock.pathClockStartedAt),
                paused_seconds = \(after.clock.pausedSeconds), paused_since = \(after.clock.pausedSince),
                due_at = \(dueAt), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// Sets the assignee if the case is still at `expectedVersion`.
    public static func assign(id: UUID, expectedVersion: Int, agentID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
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
        try connection.execute(
            """
            UPDATE cases SET frozen = \(frozen), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }

    /// Replaces the access code's hash (no version bump: the case's state is unchanged), keeping the replaced one's hash and
    /// the time for the old code's hint (`ReplacedAccessCode`). The caller holds the row lock.
    public static func setAccessCode(id: UUID, hash: [UInt8], keyID: String, now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE cases SET previous_access_code_hash = access_code_hash, previous_access_code_key_id = access_code_key_id,
                access_code_replaced_at = \(now), access_code_hash = \(hash), access_code_key_id = \(keyID), updated_at = \(now)
            WHERE id = \(id)
            """)
    }

    /// Merges the case into `target` if still at `expectedVersion`: state `merged`, no due date, the state it left kept.
    public static func merge(
        id: UUID, expectedVersion: Int, into target: UUID, from state: CaseState, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE cases SET state = 'merged', merged_into = \(target), merged_from_state = \(state.rawValue), due_at = NULL,
                state_entered_at = \(now), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion) AND merged_into IS NULL
            """) == 1
    }

    /// Undoes a merge if still at `expectedVersion`: back to `state` with `dueAt`.
    public static func unmerge(
        id: UUID, expectedVersion: Int, to state: CaseState, dueAt: Date?, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
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

    /// Moves the version on (a change held in another table, such as a scheduled unlock) if the case is still at
    /// `expectedVersion`.
    public static func touch(id: UUID, expectedVersion: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE cases SET updated_at = \(now), version = version + 1 WHERE id = \(id) AND version = \(expectedVersion)") == 1
    }

    /// Records one unlock step if the case is still at `expectedVersion`.
    public static func recordUnlock(_ step: UnlockKind, id: UUID, expectedVersion: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE cases SET unlocks_done = array_append(unlocks_done, \(step.rawValue)), updated_at = \(now), version = version + 1
            WHERE id = \(id) AND version = \(expectedVersion)
            """) == 1
    }
}

extension CaseStore {
    /// The customer status look-up in one statement: the case (or nil), the latest lock in force among `throttleKeys`,
    /// and its thread: the customer-visible notes, oldest first, with the number of the merged case each came from (nil:
    /// its own), and when the customer's latest reply arrived.
    public static func findForStatus(
        number: String, throttleKeys: [String], now: Date,
        on connection: PostgresConnection
    ) throws -> (CaseRecord?, Date?, CustomerThread, ReplacedAccessCode?) {
        let rows = try connection.query(
            """
            SELECT \(columns),
                (SELECT max(t.locked_until) FROM throttles t WHERE t.key = ANY(\(throttleKeys)) AND t.locked_until > \(now)) AS locked_until,
                (SELECT json_agg(json_build_array(n.body, (extract(epoch FROM n.created_at) * 1000)::bigint,
                    CASE WHEN n.case_id = c.id THEN NULL ELSE (SELECT m.case_number FROM cases m WHERE m.id = n.case_id) END) ORDER BY n.created_at, n.id)::text
                 FROM case_notes n WHERE n.case_id IN (SELECT c.id UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = c.id)
                   AND n.visibility = 'customer' AND n.body IS NOT NULL) AS customer_notes,
                (SELECT json_agg(json_build_array(r.from_address, (extract(epoch FROM r.received_at) * 1000)::bigint, r.matched_by)
                    ORDER BY r.received_at, r.id)::text
                 FROM inbound_messages r WHERE r.case_id = c.id AND NOT r.auto AND NOT r.from_rescue_address) AS received_mail,
                c.previous_access_code_hash, c.previous_access_code_key_id, c.access_code_replaced_at
            FROM (SELECT 1) AS one LEFT JOIN cases c ON c.case_number = \(number) LEFT JOIN agents a ON a.id = c.assignee_id
            """)
        guard let row = rows.first else { return (nil, nil, CustomerThread(), nil) }
        let columns = try Columns(rows)
        var extra = rows.columns()
        let lockedColumn = try extra("locked_until")
        let notesColumn = try extra("customer_notes")
        let receivedColumn = try extra("received_mail")
        let previousHashColumn = try extra("previous_access_code_hash")
        let previousKeyColumn = try extra("previous_access_code_key_id")
        let replacedAtColumn = try extra("access_code_replaced_at")
        var replaced: ReplacedAccessCode?
        if let hash = try row.decode(previousHashColumn, as: [UInt8]?.self), let keyID = try row.decode(previousKeyColumn, as: String?.self),
            let at = try row.decode(replacedAtColumn, as: Date?.self)
        {
            replaced = ReplacedAccessCode(hash: hash, keyID: keyID, replacedAt: at)
        }
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
        var received: [ReceivedMail] = []
        if let text = try row.decode(receivedColumn, as: String?.self), case .array(let items) = try JSONValue.parse(text) {
            for item in items {
                guard case .array(let triple) = item, triple.count == 3, case .int(let millis) = triple[1], case .string(let matchedBy) = triple[2]
                else {
                    throw PostgresError(.decoding, message: "received mail is not [from, milliseconds, matched_by] triples")
                }
                let from: String? = if case .string(let address) = triple[0] { address } else { nil }
                received.append(ReceivedMail(from: from, at: Date(timeIntervalSince1970: Double(millis) / 1000), matchedBy: matchedBy))
            }
        }
        return (record, locked, CustomerThread(notes: notes, received: received), replaced)
    }
}

/// The access code a re-issue replaced: its keyed hash (never the code), the key's id and when it was replaced.
public struct ReplacedAccessCode: Sendable {
    public let hash: [UInt8]
    public let keyID: String
    public let replacedAt: Date
}
