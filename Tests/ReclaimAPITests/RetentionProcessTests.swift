import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 23, "retention runs once across three instances and survives a kill -9 mid-erasure", with real processes: three
/// `reclaim serve` on one database holding 200 finished cases past retention, each with personal data in every table
/// erasure touches; one instance killed with SIGKILL while it is inside a case's erasure. Every case is erased exactly
/// once, none is ever half-erased, the chains, the admin log and the tree verify (`reclaim audit verify --checkpoint`
/// and the independent verifier), and a dump greps clean. Bounded: every wait shares one 90 s deadline.
@Suite(.serialized) struct RetentionProcessTests {
    static let caseCount = 200
    /// The case whose erasure the test holds half-way (a row lock on its evidence): the instance erasing it is killed.
    static let heldCase = 60

    /// Case `i`'s values: each text one of `ErasureTests.canaries` with `i` added, so that a dump is grepped for the
    /// canaries themselves; serials and IMEIs (fixed lengths, a check digit) share the canaries' first digits.
    struct Values {
        let i: Int
        var name: String { "\(ErasureTests.name) \(i)" }
        var contact: String { "c\(i).\(ErasureTests.contact)" }
        var account: String { "a\(i).\(ErasureTests.account)" }
        var rescue: String { "r\(i).\(ErasureTests.rescue)" }
        var serial: String { String(ErasureTests.serial.prefix(8)) + String(format: "%04d", i) }
        var imei: String {
            let body = String(ErasureTests.imei.prefix(10)) + String(format: "%04d", i)
            // The Luhn check digit over the fourteen digits.
            let sum = body.reversed().enumerated().reduce(0) { sum, item in
                let digit = Int(String(item.element))!
                let doubled = item.offset % 2 == 0 ? digit * 2 : digit
                return sum + (doubled > 9 ? doubled - 9 : doubled)
            }
            return body + String((10 - sum % 10) % 10)
        }
        var summary: String { "\(ErasureTests.summary) \(i)" }
        var note: String { "\(ErasureTests.note) \(i)" }
        var customerNote: String { "\(ErasureTests.customerNote) \(i)" }
        var reason: String { "\(ErasureTests.reason) \(i)" }
        var reviewReason: String { "\(ErasureTests.reviewReason) \(i)" }
        var transcript: String { "\(ErasureTests.transcript) \(i)" }
        var document: String { "\(ErasureTests.document)-\(i)" }
    }

    /// Opens case `i` with every kind of personal value and takes it to `rejected`, in one transaction.
    static func seed(_ i: Int, operations: CaseOperations, at start: Date, on connection: PostgresConnection) throws -> UUID {
        let values = Values(i: i)
        var tick = 0.0
        func now() -> Date {
            tick += 0.001
            return start.addingTimeInterval(Double(i) + tick)
        }
        let agent = "agent:00000000-0000-0000-0000-000000000023"
        let opened = try operations.open(
            CaseOperations.Opening(
                kind: .accountTakeover, accountEmail: values.account, customerName: values.name, customerContactEmail: values.contact,
                devices: [.init(serial: values.serial, imei: values.imei, model: "Phone 12")], facts: CaseFacts(rescueEmailAdded: true),
                summary: values.summary, rescueEmail: values.rescue), by: agent, at: now(), on: connection)
        let number = try CaseNumber(parsing: opened.record.number)
        _ = try operations.addNote(number, body: values.note, visibility: .internal, by: agent, at: now(), on: connection)
        _ = try operations.addNote(number, body: values.customerNote, visibility: .customer, by: agent, at: now(), on: connection)
        func transition(_ action: CaseAction, _ reason: String?, _ tier: Tier) throws {
            _ = try operations.transition(
                number, expectedVersion: nil, CaseOperations.Transition(action: action, reason: reason), actorTier: tier, by: agent, at: now(),
                on: connection
            ).taken()
        }
        try transition(.requestDocuments, values.reason, .tier2)
        _ = try operations.fileTyped(
            .device(try SerialNumber.validate(values.serial).get(), try IMEI.validate(values.imei).get()), number: number, by: agent, at: now(),
            on: connection)
        _ = try operations.fileTyped(.transcript(values.transcript), number: number, by: agent, at: now(), on: connection)
        let document = try operations.fileDocument(
            type: DocumentType(.invoice)!, bytes: EvidenceWorld.png(values.document), declaredType: "image/png", number: number, by: agent,
            at: now(), on: connection)
        try transition(.beginReview, nil, .tier3)
        _ = try operations.review(
            evidence: document.id, decision: .accepted, reason: values.reviewReason, actorTier: .tier3, by: agent, at: now(), on: connection)
        try transition(.reject, values.reason, .tier3)
        return opened.record.id
    }

    /// What one case holds of its customer, counted in every table erasure clears.
    struct Holding: Equatable, CustomStringConvertible {
        var erased = false
        var fields = 0, notes = 0, documents = 0, details = 0, values = 0, terms = 0, recipients = 0, reviews = 0, erasures = 0
        var description: String {
            "erased \(erased), fields \(fields), notes \(notes), documents \(documents), details \(details), values \(values), "
                + "terms \(terms), recipients \(recipients), reviews \(reviews), case_erased events \(erasures)"
        }
        /// Nothing personal left, and one `case_erased`.
        static let erasedWhole = Holding(erased: true, erasures: 1)
    }

    /// Every case's holding, read in one snapshot (REPEATABLE READ): what any reader could see at one moment.
    static func holdings(_ pool: PostgresPool) throws -> [UUID: Holding] {
        try pool.withTransaction(isolation: .repeatableRead) { connection in
            var holdings: [UUID: Holding] = [:]
            for row in try connection.query(
                """
                SELECT c.id, c.erased_at IS NOT NULL AS erased,
                    (c.customer_name <> '')::int + (c.customer_contact_email <> '')::int + (c.account_email <> '')::int
                        + (c.devices <> '[]'::jsonb)::int + (c.summary <> '')::int + (c.rescue_email IS NOT NULL)::int AS fields,
                    (SELECT count(*)::int FROM case_notes n WHERE n.case_id = c.id AND n.body IS NOT NULL) AS notes,
                    (SELECT count(*)::int FROM evidence e WHERE e.case_id = c.id AND e.content IS NOT NULL) AS documents,
                    (SELECT count(*)::int FROM evidence e WHERE e.case_id = c.id AND (e.details <> '{}'::jsonb OR e.sha256 IS NOT NULL))
                        AS details,
                    (SELECT count(*)::int FROM case_event_values v WHERE v.case_id = c.id) AS values,
                    (SELECT count(*)::int FROM case_search s WHERE s.case_id = c.id AND s.term <> c.case_number) AS terms,
                    (SELECT count(*)::int FROM outbox o WHERE o.case_id = c.id AND o.channel = 'mail' AND o.recipient <> '') AS recipients,
                    (SELECT count(*)::int FROM evidence_reviews r JOIN evidence e ON e.id = r.evidence_id
                        WHERE e.case_id = c.id AND r.reason IS NOT NULL) AS reviews,
                    (SELECT count(*)::int FROM case_events v WHERE v.case_id = c.id AND v.type = 'case_erased') AS erasures
                FROM cases c
                """)
            {
                holdings[try row.decode("id")] = Holding(
                    erased: try row.decode("erased"), fields: try row.decode("fields"), notes: try row.decode("notes"),
                    documents: try row.decode("documents"), details: try row.decode("details"), values: try row.decode("values"),
                    terms: try row.decode("terms"), recipients: try row.decode("recipients"), reviews: try row.decode("reviews"),
                    erasures: try row.decode("erasures"))
            }
            return holdings
        }
    }

    @Test func retentionErasesEachCaseOnceAcrossThreeServeProcessesAndAKillNineMidErasureLeavesNoCaseHalfErased() throws {
        // The 90 s bound starts once the cases are seeded and probed (their time grows with the machine's load, not the
        // erasure's): every wait of the instances counts against it.
        var deadline = Date().addingTimeInterval(600)
        func left() -> Double { max(0, deadline.timeIntervalSinceNow) }
        let database = try TestDatabase.create()
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "reclaim-retention-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keys = KeyFile.generate()
        try keys.write(to: directory + "/keys")
        let pool = database.makePool(maximumConnections: 2)
        defer { pool.close() }
        let operations = CaseOperations(keys: keys)

        // 200 cases finished now (not yet due with a day's retention), oldest first by a second each.
        let start = Date()
        let ids = try (0..<Self.caseCount).map { i in try pool.withTransaction { try Self.seed(i, operations: operations, at: start, on: $0) } }
        let whole = try Self.holdings(pool)
        #expect(whole.count == Self.caseCount)
        for (id, holding) in whole {
            // Every table erasure clears holds something of each case, or "all gone" would prove nothing.
            #expect(
                !holding.erased && holding.fields == 6 && holding.notes == 2 && holding.documents == 2 && holding.details == 3
                    && holding.values >= 2 && holding.terms > 0 && holding.recipients > 0 && holding.reviews == 1 && holding.erasures == 0,
                "case \(id) seeded as \(holding)")
        }
        /// `grep -F` of a `pg_dump` for every canary of every case (clear and hex), the serials' stem and every IMEI, in one pass.
        func grepDump() throws -> (status: Int32, found: [String], error: String) {
            try ErasureTests.dump(database).write(toFile: directory + "/dump.sql", atomically: false, encoding: .utf8)
            func hex(_ text: String) -> String { Array(text.utf8).map { String(format: "%02x", $0) }.joined() }
            let texts = ErasureTests.canaries.filter { $0 != ErasureTests.serial && $0 != ErasureTests.imei }
            let patterns = texts + texts.map(hex) + [String(ErasureTests.serial.prefix(8))] + (0..<Self.caseCount).map { Values(i: $0).imei }
            try patterns.joined(separator: "\n").write(toFile: directory + "/patterns", atomically: false, encoding: .utf8)
            let grep = try Shell.capture(["grep", "-F", "-i", "-o", "-f", directory + "/patterns", directory + "/dump.sql"])
            return (grep.status, Set(grep.output.split(separator: "\n").map(String.init)).sorted(), grep.error)
        }
        // The probe: before any erasure the grep finds every case's IMEI and the canaries.
        let seeded = try grepDump()
        let found = Set(seeded.found.map { $0.lowercased() })
        let expected = [ErasureTests.name, ErasureTests.contact, ErasureTests.note, ErasureTests.reason].map { $0.lowercased() }
        #expect(
            seeded.status == 0 && found.isSuperset(of: (0..<Self.caseCount).map { Values(i: $0).imei }) && found.isSuperset(of: expected),
            "the grep found \(found.count) values: \(seeded.error)")
        /// Every case whole as seeded or erased whole; the others named.
        func halfErased(_ holdings: [UUID: Holding]) -> [String] {
            holdings.compactMap { id, holding in holding == whole[id] || holding == .erasedWhole ? nil : "\(id): \(holding)" }
        }

        deadline = Date().addingTimeInterval(90)
        // The held case's evidence locked by the test: its erasure stops at that step, the steps before it done, uncommitted.
        let held = ids[Self.heldCase]
        let lock = try database.connect()
        defer { lock.close() }
        try lock.execute("BEGIN")
        _ = try lock.query("SELECT id FROM evidence WHERE case_id = \(held) FOR UPDATE")

        // Three instances, each naming itself to PostgreSQL (application_name), a pass every 0.2 s.
        let environment = [
            "PATH": "/usr/bin:/bin", "RECLAIM_KEY_FILE": directory + "/keys", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations", "RECLAIM_DATA_DIR": directory + "/data", "RECLAIM_THREADS": "2",
            "RECLAIM_LOG_LEVEL": "warning", "RECLAIM_RETENTION_DAYS": "1", "RECLAIM_RETENTION_POLL_SECONDS": "0.2",
            "RECLAIM_CHECKPOINT_SECONDS": "1",
        ]
        var instances: [String: ServeProcess] = [:]
        defer { for instance in instances.values { instance.killNine() } }
        for n in 1...3 {
            var settings = environment
            settings["DATABASE_URL"] = database.connectionString + " application_name='retention-\(n)'"
            instances["retention-\(n)"] = try ServeProcess(
                environment: settings, arguments: ["serve", "--no-migrate"], logDirectory: directory, readyWithin: min(30, left()))
        }
        /// A client for an instance still running (the killed one may be any).
        func client() -> TestHTTPClient { instances.sorted { $0.key < $1.key }[0].value.client() }
        /// The end of each instance's log, for a failure's message.
        func logs() -> String {
            instances.sorted { $0.key < $1.key }.map { "\($0.key) (running: \($0.value.process.isRunning)):\n\($0.value.log.suffix(1500))" }
                .joined(separator: "\n")
        }
        func count(_ sql: PostgresQuery) throws -> Int { try pool.withConnection { try $0.query(sql).first?.decode("n", as: Int.self) ?? -1 } }
        /// The latest checkpoint once it covers every leaf, queue empty.
        func settledCheckpoint() throws -> (note: String, size: Int, root: String) {
            var note = ""
            let settled = try eventually(left()) {
                guard try count("SELECT count(*)::int AS n FROM log_pending") == 0 else { return false }
                let leaves = try count("SELECT count(*)::int AS n FROM log_leaves")
                guard let response = try? client().request("GET", "/api/v1/audit/checkpoint") else { return false }
                note = response.text
                return response.status == 200 && note.split(separator: "\n").dropFirst().first.flatMap { Int($0) } == leaves
            }
            #expect(settled, "no checkpoint over the whole tree: \(note)\n\(logs())")
            let lines = note.split(separator: "\n").map(String.init) + ["", "", ""]
            return (note, Int(lines[1]) ?? -1, lines[2])
        }
        // A checkpoint over every seeded event, before any erasure: what a partner would hold.
        let before = try settledCheckpoint()
        try before.note.write(toFile: directory + "/before.note", atomically: true, encoding: .utf8)
        #expect(try Self.holdings(pool) == whole)

        // Due at once, for every instance at the same moment.
        try pool.withConnection { try $0.execute("UPDATE cases SET state_entered_at = state_entered_at - interval '2 days'") }
        var victim = ""
        var victimBackend: Int32 = 0
        let caught = try eventually(left()) {
            let rows = try pool.withConnection {
                try $0.query(
                    """
                    SELECT application_name, pid FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE evidence SET summary%'
                    """)
            }
            guard let row = rows.first else { return false }
            victim = try row.decode("application_name")
            victimBackend = try row.decode("pid")
            return true
        }
        #expect(caught && instances[victim] != nil, "no instance stopped in the held case's erasure (\(victim))\n\(logs())")
        let erasedBeforeKill = try Self.holdings(pool).values.filter(\.erased).count
        try #require(instances[victim]).killNine()
        instances[victim] = nil

        // The killed instance's erasure never commits: the case is whole, others are whole or erased, never between.
        let afterKill = try Self.holdings(pool)
        #expect(afterKill[held] == whole[held], "the held case after the kill: \(String(describing: afterKill[held]))")
        let broken = halfErased(afterKill)
        #expect(broken.count == 0, "half-erased after the kill: \(broken.prefix(5))")
        try lock.execute("ROLLBACK")

        // The two left erase everything, the held case included once its dead session ends; every snapshot meanwhile
        // shows each case whole or erased.
        var seen: Set<String> = []
        let done = try eventually(left()) {
            let holdings = try Self.holdings(pool)
            seen.formUnion(halfErased(holdings))
            return holdings.values.allSatisfy { $0 == .erasedWhole }
        }
        #expect(seen.count == 0, "half-erased cases seen: \(seen.sorted().prefix(5))")
        let unerased = try Self.holdings(pool).values.filter { !$0.erased }.count
        #expect(done, "not every case was erased within the deadline: \(unerased) left")
        #expect(erasedBeforeKill > 0 && erasedBeforeKill < Self.caseCount - 1, "\(erasedBeforeKill) erased when the instance was killed")
        #expect(try count("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = \(victimBackend)") == 0)

        // Once each: one case_erased event per case (above), one admin-log entry per case number.
        #expect(try count("SELECT count(*)::int AS n FROM admin_events WHERE type = 'case_erased'") == Self.caseCount)
        #expect(
            try count("SELECT count(DISTINCT data::jsonb ->> 'case_number')::int AS n FROM admin_events WHERE type = 'case_erased'")
                == Self.caseCount)
        #expect(
            try count(
                "SELECT count(*)::int AS n FROM admin_events WHERE type = 'case_erased' AND actor = 'system' AND data::jsonb ->> 'cause' = 'retention'"
            ) == Self.caseCount)

        // The history: today's checkpoint extends the one before (the independent verifier), its root is the tree of
        // every event's hash, and `reclaim audit verify --checkpoint` (chains, admin log, the tree rebuilt) holds.
        let latest = try settledCheckpoint()
        let key = try client().request("GET", "/api/v1/audit/key").text
        let proof = try TransparencyLogTests.hashes(try client().request("GET", "/api/v1/audit/consistency?from=\(before.size)&to=\(latest.size)"))
        let hashes = try pool.withConnection { try TransparencyLogTests.eventHashes(on: $0) }
        let verdicts = try AuditVerifier.run([
            ["kind": "note", "note": before.note, "key": key], ["kind": "note", "note": latest.note, "key": key],
            ["kind": "consistency", "from": before.size, "to": latest.size, "from_root": before.root, "to_root": latest.root, "proof": proof],
            ["kind": "root", "event_hashes": hashes],
        ])
        #expect(verdicts[0]["ok"] as? Bool == true && verdicts[1]["ok"] as? Bool == true, "\(verdicts)")
        #expect(verdicts[2]["ok"] as? Bool == true, "consistency: \(verdicts[2])")
        #expect(verdicts[3]["root"] as? String == latest.root)
        for instance in instances.values { instance.stop() }
        instances = [:]
        var cli = environment
        cli["DATABASE_URL"] = database.connectionString
        let audit = try Shell.capture(
            [RepositoryPaths.executable, "audit", "verify", "--checkpoint", directory + "/before.note"], environment: cli)
        #expect(audit.status == 0, "reclaim audit verify: \(audit.output) \(audit.error)")
        #expect(audit.output.contains("ok: today's tree extends the checkpoint"), "\(audit.output)")

        // The dump: no canary of any case, in clear or hex, no serial or IMEI (the probe above: the same grep found them).
        let after = try grepDump()
        #expect(after.status == 1, "the dump holds: \(after.found.prefix(10)) \(after.error)")
        let number = try #require(try pool.withConnection { try CaseStore.find(id: held, on: $0) }).number
        #expect(try Shell.capture(["grep", "-q", "-F", number, directory + "/dump.sql"]).status == 0, "the case numbers stay")
    }
}
