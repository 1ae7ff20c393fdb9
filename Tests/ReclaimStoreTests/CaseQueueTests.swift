import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// `CaseQueueOrder`: pages walk the indexes' order exactly, each page is an index range scan priced far below
/// `jit_above_cost`, and the cursor is opaque text that round-trips.
@Suite struct CaseQueueTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// `count` cases: due dates shared by three cases each (ties broken by id), every seventh undated (awaiting
    /// documents), states and tiers alternating; one search term each (the account e-mail); every fourth case holds an
    /// invoice not reviewed yet.
    static func seed(_ count: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path, rescue_email_added,
                security_questions_changed, two_step_enabled, lost_mode_enabled, account_email, customer_name, customer_contact_email,
                opened_at, state_entered_at, due_at, created_by, created_at, updated_at)
            SELECT gen_random_uuid(), (100000000000 + g)::text, '\\x00', 'k', 'account_takeover',
                CASE WHEN g % 7 = 0 THEN 'awaiting_documents' WHEN g % 2 = 0 THEN 'identity_check' ELSE 'new' END,
                CASE WHEN g % 7 = 0 THEN 'tier3' WHEN g % 2 = 0 THEN 'tier2' ELSE 'tier1' END, 'undetermined', false, false, false, false,
                'user' || g || '@example.com', 'n', 'c@example.com', \(t0), \(t0),
                CASE WHEN g % 7 = 0 THEN NULL ELSE \(t0) + (g / 3) * interval '1 second' END, 'test', \(t0), \(t0)
            FROM generate_series(1, \(count)) g
            """)
        try connection.execute("INSERT INTO case_search (term, case_id) SELECT account_email, id FROM cases")
        try connection.execute(
            """
            INSERT INTO evidence (id, case_id, kind, document, summary, filed_by, filed_at)
            SELECT gen_random_uuid(), id, 'invoice', true, 'Invoice', 'test', \(t0) FROM cases WHERE case_number::bigint % 4 = 0
            """)
        // Written here as EvidenceStore.insert keeps it (0024).
        try connection.execute("UPDATE cases SET documents_pending = true WHERE case_number::bigint % 4 = 0")
        try connection.executeScript("ANALYZE cases; ANALYZE case_search; ANALYZE evidence")
    }

    /// `count` finished cases after `seed`'s (every fourth resolved, rejected, closed or merged; undated), each with its
    /// account e-mail as a term; every `nameEvery`-th finished case and `openNameEvery`-th open one also the name token
    /// `~ashford`.
    static func seedHistory(_ count: Int, nameEvery: Int, openNameEvery: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path, rescue_email_added,
                security_questions_changed, two_step_enabled, lost_mode_enabled, account_email, customer_name, customer_contact_email,
                opened_at, state_entered_at, due_at, created_by, created_at, updated_at)
            SELECT gen_random_uuid(), (200000000000 + g)::text, '\\x00', 'k', 'account_takeover',
                (ARRAY['resolved', 'rejected', 'closed', 'merged'])[1 + g % 4], 'tier1', 'undetermined', false, false, false, false,
                'old' || g || '@example.com', 'n', 'c@example.com', \(t0), \(t0), NULL, 'test', \(t0), \(t0)
            FROM generate_series(1, \(count)) g
            """)
        try connection.execute("INSERT INTO case_search (term, case_id) SELECT account_email, id FROM cases WHERE case_number LIKE '2%'")
        // Inserted as the service inserts terms: 0025's trigger marks the open cases' terms.
        try connection.execute(
            """
            INSERT INTO case_search (term, case_id) SELECT '~ashford', id FROM cases
            WHERE case_number::bigint % (CASE WHEN case_number LIKE '2%' THEN \(nameEvery) ELSE \(openNameEvery) END) = 0
            """)
        // As autovacuum leaves a table that is mostly inserted into: its pages all-visible, so index-only scans are.
        try connection.executeScript("VACUUM ANALYZE case_search")
        try connection.executeScript("ANALYZE cases")
    }

    /// Every case the filter admits, page by page (`limit` a page), following each page's cursor.
    static func walk(_ filter: CaseQueueFilter, limit: Int, now: Date, on connection: PostgresConnection) throws -> [UUID] {
        var seen: [UUID] = []
        var cursor: CaseQueueOrder.Cursor?
        for _ in 0..<1000 {
            let page = try CaseStore.queue(filter: filter, after: cursor, limit: limit, now: now, on: connection)
            seen += page.map(\.id)
            guard page.count == limit, let last = page.last else { break }
            // The cursor travels as its opaque text, as it does over the API.
            cursor = try #require(CaseQueueOrder.Cursor(encoded: CaseQueueOrder.Cursor(after: last).encoded))
        }
        return seen
    }

    @Test func pagesWalkTheIndexOrderExactly() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        try Self.seed(60, on: connection)
        let now = Self.t0.addingTimeInterval(10)
        func expected(_ condition: PostgresQuery) throws -> [UUID] {
            // The order of the queue indexes (0003), written as they are.
            try connection.query("SELECT c.id FROM cases c WHERE \(condition) ORDER BY c.due_at ASC NULLS LAST, c.id")
                .map { try $0.decode(0, as: UUID.self) }
        }
        let cases: [(CaseQueueFilter, PostgresQuery)] = [
            (CaseQueueFilter(), "true"),
            (CaseQueueFilter(state: .identityCheck), "c.state = 'identity_check'"),
            (CaseQueueFilter(tier: .tier3), "c.tier = 'tier3'"),
            (CaseQueueFilter(overdue: true), "c.due_at < \(now)"),
            (CaseQueueFilter(overdue: false), "(c.due_at >= \(now) OR c.due_at IS NULL)"),
            (CaseQueueFilter(unreviewed: true), "EXISTS (SELECT 1 FROM evidence e WHERE e.case_id = c.id)"),
            (CaseQueueFilter(unreviewed: false), "NOT EXISTS (SELECT 1 FROM evidence e WHERE e.case_id = c.id)"),
        ]
        for (filter, condition) in cases {
            let all = try expected(condition)
            for limit in [1, 4, 7, 100] {
                #expect(try Self.walk(filter, limit: limit, now: now, on: connection) == all, "\(filter) by \(limit): \(condition)")
            }
        }
        #expect(try expected("true").count == 60)
    }

    @Test func aSearchFindsOpenCasesByDueDateThenTheHistoryByIdEachOnce() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        try Self.seed(60, on: connection)
        try Self.seedHistory(40, nameEvery: 3, openNameEvery: 3, on: connection)
        // A case the exact term and the name both find is listed once; a case that finishes takes its terms along
        // (0025's trigger), and one reopened brings them back.
        try connection.execute(
            "INSERT INTO case_search (term, case_id) SELECT 'ASHFORD', id FROM cases WHERE case_number IN ('100000000003', '200000000004')")
        try connection.execute("UPDATE cases SET state = 'resolved', due_at = NULL WHERE case_number IN ('100000000005', '100000000008')")
        try connection.execute("UPDATE cases SET state = 'new', due_at = \(Self.t0) WHERE case_number = '200000000007'")
        let now = Self.t0.addingTimeInterval(10)
        let named = "EXISTS (SELECT 1 FROM case_search s WHERE s.case_id = c.id AND s.term IN ('~ashford', 'ASHFORD'))"
        let open = "c.state NOT IN ('resolved', 'rejected', 'closed', 'merged')"
        func expected(_ condition: String) throws -> [UUID] {
            try connection.query(PostgresQuery(unsafeSQL: "SELECT c.id FROM cases c WHERE \(condition) ORDER BY c.due_at ASC NULLS LAST, c.id"))
                .map { try $0.decode(0, as: UUID.self) }
        }
        let query = CaseSearchQuery(term: "ASHFORD", nameTokens: ["~ashford"])
        let cases: [(CaseQueueFilter, String)] = [
            (CaseQueueFilter(search: query), named),
            (CaseQueueFilter(search: query, openOnly: true), "\(named) AND \(open)"),
            (CaseQueueFilter(state: .awaitingDocuments, search: query), "\(named) AND c.state = 'awaiting_documents'"),
            (CaseQueueFilter(state: .resolved, search: query), "\(named) AND c.state = 'resolved'"),
            (CaseQueueFilter(search: CaseSearchQuery(term: "old7@example.com")), "c.account_email = 'old7@example.com'"),
        ]
        for (filter, condition) in cases {
            let all = try expected(condition)
            #expect(all.count > 0, "\(condition)")
            for limit in [1, 4, 7, 100] {
                #expect(try Self.walk(filter, limit: limit, now: now, on: connection) == all, "\(filter) by \(limit): \(condition)")
            }
        }
        #expect(try expected(named).count == 35, "20 open and 14 finished by name, one more by the exact term")
    }

    @Test func eachPageIsAnIndexRangeScanPricedBelowJIT() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        // As the schema's owner: only an owner's ANALYZE gives the planner the seeded statistics (the service's role
        // would be skipped with a warning, leaving the planner's defaults).
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try Self.seed(20_000, on: connection)
        // A desk's history: three finished cases for every open one, and a surname one finished case in ten holds (a
        // long history's common surname), one open case in 200.
        try Self.seedHistory(60_000, nameEvery: 10, openNameEvery: 200, on: connection)
        // About one case in 256 at risk (`cases.risk`, 0019), as a desk would see it.
        try connection.execute("UPDATE cases SET risk = true WHERE right(id::text, 2) = '00'")
        try connection.execute("ANALYZE cases")
        let now = Self.t0.addingTimeInterval(3000)
        let deep = try connection.query("SELECT id, due_at FROM cases WHERE due_at IS NOT NULL ORDER BY due_at, id OFFSET 12000 LIMIT 1").first
        let dated = CaseQueueOrder.Cursor(dueAt: try deep?.decode("due_at", as: Date.self), id: try #require(try deep?.decode("id", as: UUID.self)))
        let undated = CaseQueueOrder.Cursor(dueAt: nil, id: UUID(uuidString: "80000000-0000-0000-0000-000000000000")!)
        let pages: [(String, CaseQueueOrder.Section, CaseQueueFilter, CaseQueueOrder.Cursor?)] = [
            ("first page", .dated, CaseQueueFilter(), nil),
            ("deep page", .dated, CaseQueueFilter(), dated),
            ("undated page", .undated, CaseQueueFilter(), undated),
            ("by state", .dated, CaseQueueFilter(state: .identityCheck), dated),
            ("by tier", .dated, CaseQueueFilter(tier: .tier2), nil),
            ("overdue", .dated, CaseQueueFilter(overdue: true), nil),
            ("unreviewed", .dated, CaseQueueFilter(unreviewed: true), nil),
            ("reviewed", .undated, CaseQueueFilter(unreviewed: false), undated),
            ("open only, undated", .undated, CaseQueueFilter(openOnly: true), undated),
            ("open only, dated", .dated, CaseQueueFilter(openOnly: true), dated),
            ("at risk", .dated, CaseQueueFilter(openOnly: true, risk: true), nil),
            ("at risk, deep", .dated, CaseQueueFilter(openOnly: true, risk: true), dated),
            ("at risk, undated", .undated, CaseQueueFilter(openOnly: true, risk: true), undated),
            ("mine", .dated, CaseQueueFilter(openOnly: true, assignee: UUID(uuidString: "00000000-0000-0000-0000-000000000077")!), nil),
        ]
        var costs: [String: Double] = [:]
        for (name, section, filter, cursor) in pages {
            let statement = try #require(CaseStore.queueStatement(section, filter: filter, after: cursor, limit: 51, now: now))
            for (kind, plan) in try Self.plans(statement, on: connection) {
                let name = "\(name) (\(kind) plan)"
                #expect(
                    plan.contains { $0.contains("Index Scan using cases_") && $0.contains(" on cases c ") },
                    "\(name): \(plan.joined(separator: "\n"))")
                #expect(!plan.contains { $0.contains("Seq Scan on cases") }, "\(name): \(plan.joined(separator: "\n"))")
                // Each case's unreviewed documents are counted from the documents index, not by reading the evidence.
                #expect(
                    plan.contains { $0.contains("evidence_documents") } && !plan.contains { $0.contains("Seq Scan on evidence") },
                    "\(name): \(plan.joined(separator: "\n"))")
                // The page's price decides JIT: past jit_above_cost (100,000) each page compiled for ~430 ms (BENCHMARKS.md).
                let cost = try #require(plan.first.flatMap(Self.totalCost), "\(name)")
                #expect(plan.first?.hasPrefix("Limit") == true && cost < 5_000, "\(name) is priced at \(cost)")
                if kind == "custom" { costs[name] = cost }
            }
        }
        // A deep page is the same range scan as the first, starting further on.
        let first = try #require(costs["first page (custom plan)"])
        let deepCost = try #require(costs["deep page (custom plan)"])
        #expect(deepCost < first * 1.5, "first \(first), deep \(deepCost)")
        for name in ["first page", "deep page"] {
            let (_, section, filter, cursor) = try #require(pages.first { $0.0 == name })
            let statement = try #require(CaseStore.queueStatement(section, filter: filter, after: cursor, limit: 51, now: now))
            for (kind, plan) in try Self.plans(statement, on: connection) {
                #expect(plan.contains { $0.contains("Index Scan using cases_queue on cases c") }, "\(name), \(kind)")
            }
        }
        // The risk filter reads its own partial index (0019), so a page of the few cases at risk never walks the queue.
        for name in ["at risk", "at risk, deep", "at risk, undated"] {
            let (_, section, filter, cursor) = try #require(pages.first { $0.0 == name })
            let statement = try #require(CaseStore.queueStatement(section, filter: filter, after: cursor, limit: 51, now: now))
            for (kind, plan) in try Self.plans(statement, on: connection) {
                #expect(
                    plan.contains { $0.contains("Index Scan using cases_queue_risk on cases c") }, "\(name), \(kind): \(plan.joined(separator: "\n"))"
                )
            }
        }
        // The open queue's paused cases are read from their own partial index (0025), not filtered out of the history.
        for (name, filter) in [
            ("open only, undated", CaseQueueFilter(openOnly: true)), ("awaiting documents", CaseQueueFilter(state: .awaitingDocuments)),
        ] {
            let statement = try #require(CaseStore.queueStatement(.undated, filter: filter, after: undated, limit: 51, now: now))
            for (kind, plan) in try Self.plans(statement, on: connection) {
                #expect(plan.joined(separator: "\n").contains("cases_queue_open_undated on cases c"), "\(name), \(kind): \(plan)")
            }
        }
        // A name 6,100 cases share: the dated section reads the open cases' terms alone (case_search_open); the history's
        // section streams case_search_pkey in case_id order and stops at the page's end (no sort of every match).
        let surname = CaseQueueFilter(search: CaseSearchQuery(term: "ASHFORD", nameTokens: ["~ashford"]))
        for (section, index) in [(CaseQueueOrder.Section.dated, "case_search_open"), (.undated, "case_search_pkey")] {
            let statement = try #require(CaseStore.queueStatement(section, filter: surname, after: nil, limit: 51, now: now))
            for (_, plan) in try Self.plans(statement, on: connection) {
                let text = plan.joined(separator: "\n")
                #expect(text.contains(index) && !text.contains("Seq Scan") && !text.contains("cases_queue"), "\(section): \(text)")
                let cost = try #require(plan.first.flatMap(Self.totalCost))
                #expect(cost < 5_000, "\(section) is priced at \(cost): \(text)")
                if section == .undated {
                    // The streams are merged, neither they nor the joined cases sorted (the per-case document count's own
                    // sort is by "(c.id)").
                    #expect(
                        text.contains("Merge Append") && !text.contains("Sort Key: s_1") && !text.contains("Sort Key: c.id"), "\(text)")
                }
            }
        }
        // A search drives from case_search's indexes, never walking the queue index.
        for (section, index) in [(CaseQueueOrder.Section.dated, "case_search_open"), (.undated, "case_search_pkey")] {
            let search = try #require(
                CaseStore.queueStatement(
                    section, filter: CaseQueueFilter(search: CaseSearchQuery(term: "user77@example.com")), after: nil, limit: 51, now: now))
            for (kind, lines) in try Self.plans(search, on: connection) {
                let plan = lines.joined(separator: "\n")
                #expect(
                    !plan.contains("Seq Scan on cases") && !plan.contains("Seq Scan on case_search") && plan.contains(index)
                        && !plan.contains("cases_queue"), "\(kind): \(plan)")
            }
        }
    }

    /// The statement's plans: the one made for its values (a custom plan, as PostgreSQL makes for the first executions
    /// of a prepared statement) and the generic one it caches once it stops planning per execution (the connection
    /// prepares every statement, so a page's later executions may run this one, made without any bind's value).
    static func plans(_ statement: PostgresQuery, on connection: PostgresConnection) throws -> [(String, [String])] {
        let custom = try connection.query("EXPLAIN \(statement)").map { try $0.decode(0, as: String.self) }
        try connection.executeScript(PostgresQuery(unsafeSQL: "PREPARE queue_page AS " + statement.sql))
        defer { try? connection.executeScript("DEALLOCATE queue_page; RESET plan_cache_mode") }
        try connection.executeScript("SET plan_cache_mode = force_generic_plan")
        // A generic plan does not depend on the values, so NULLs stand in for them.
        let values = statement.binds.isEmpty ? "" : "(" + Array(repeating: "NULL", count: statement.binds.count).joined(separator: ", ") + ")"
        let generic = try connection.query(PostgresQuery(unsafeSQL: "EXPLAIN EXECUTE queue_page" + values)).map {
            try $0.decode(0, as: String.self)
        }
        return [("custom", custom), ("generic", generic)]
    }

    /// The upper cost of a text plan's line: `Limit  (cost=0.43..1739.22 rows=51 width=446)` → 1739.22.
    static func totalCost(_ line: String) -> Double? {
        guard let range = line.range(of: "..") else { return nil }
        return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    @Test func theCursorIsOpaqueTextThatRoundTrips() throws {
        let id = UUID()
        let due = Date(timeIntervalSince1970: 1_800_000_123.456789)
        let dated = CaseQueueOrder.Cursor(dueAt: due, id: id)
        let back = try #require(CaseQueueOrder.Cursor(encoded: dated.encoded))
        #expect(back.id == id && abs(back.dueAt!.timeIntervalSince(due)) < 0.000_001)
        #expect(CaseQueueOrder.Cursor(encoded: CaseQueueOrder.Cursor(dueAt: nil, id: id).encoded) == CaseQueueOrder.Cursor(dueAt: nil, id: id))
        #expect(!dated.encoded.contains(id.uuidString.lowercased()) && !dated.encoded.contains("="), "base64url, unpadded")
        for forged in ["", "garbage", "bi4xMjM", String(repeating: "A", count: 200), "ZDEyMy5ub3QtYS11dWlk", "eDEyMy4" + "0"] {
            #expect(CaseQueueOrder.Cursor(encoded: forged) == nil, "\(forged)")
        }
        // The sections a page reads: an undated cursor is past every dated case.
        #expect(CaseQueueOrder.Section.after(nil) == [.dated, .undated])
        #expect(CaseQueueOrder.Section.after(dated) == [.dated, .undated])
        #expect(CaseQueueOrder.Section.after(CaseQueueOrder.Cursor(dueAt: nil, id: id)) == [.undated])
    }
}
