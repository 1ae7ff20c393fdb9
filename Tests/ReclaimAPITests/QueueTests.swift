import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// The queue: order, filters, search and a keyset cursor that neither repeats nor skips while cases change.
@Suite(.serialized) struct QueueTests {
    func page(_ world: CaseWorld, _ session: AgentSession, _ query: String) throws -> (numbers: [String], items: [CaseView], next: String?) {
        let response = try world.get("/api/v1/cases?\(query)", as: session)
        #expect(response.status == 200, "\(response.text)")
        let body = try response.decode(ListView<CaseView>.self)
        return (body.items.map(\.caseNumber), body.items, body.nextCursor)
    }

    @Test func oldestDueFirstNullsLastAndFilters() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        var opened: [String] = []
        for _ in 0..<4 {
            opened.append(try world.openCase(as: tier1).caseNumber)
            world.service.clock.advance(by: 60)
        }
        // One waits for documents (null due date), one is escalated (due in 2 days, later than the new ones).
        try world.must(opened[0], "escalate", as: tier1, version: 1)
        try world.must(opened[1], "request_documents", as: tier2, version: 1, extra: ["reason": "r"])
        let all = try page(world, tier1, "limit=50")
        #expect(all.numbers == [opened[2], opened[3], opened[0], opened[1]])
        #expect(all.next == nil)
        #expect(try page(world, tier1, "state=identity_check").numbers == [opened[0]])
        #expect(try page(world, tier1, "tier=tier3").numbers == [opened[1]])
        #expect(try page(world, tier1, "overdue=true").numbers == [])
        world.service.clock.advance(by: 86_400 + 1)
        let later = try world.agent(.tier1)  // the first session idled out meanwhile
        #expect(try page(world, later, "overdue=true").numbers == [opened[2], opened[3]])
        #expect(try page(world, later, "overdue=false").numbers == [opened[0], opened[1]])
        #expect((try page(world, later, "overdue=true").items.first?.overdue) == true)
        #expect(try world.get("/api/v1/cases?state=lost", as: later).status == 422)
        #expect(try world.get("/api/v1/cases?limit=500", as: later).status == 422)
        #expect(try world.get("/api/v1/cases?cursor=garbage", as: later).status == 422)
    }

    @Test func searchByNumberEmailSerialAndIMEI() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let mine = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "Ada.Lovelace@Example.org",
                                                                   devices: [.init(serial: "F17ZK2ABCD", imei: "356938035643809")])).caseNumber
        let other = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "someone@example.org", devices: [])).caseNumber
        for q in [mine, String(mine.prefix(4)) + "%20" + String(mine.dropFirst(4)), "ada.lovelace%40example.org", "f17zk2abcd", "35-693803-564380-9"] {
            #expect(try page(world, tier1, "q=\(q)").numbers == [mine], "q=\(q)")
        }
        #expect(try page(world, tier1, "q=someone%40example.org").numbers == [other])
        #expect(try page(world, tier1, "q=nothing-like-this").numbers == [])
    }

    /// Pages through while cases are opened and changed between pages: every case that existed at the start and did
    /// not move is seen exactly once.
    @Test func keysetCursorNeverRepeatsOrSkips() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        var initial: [String] = []
        for index in 0..<25 {
            initial.append(try world.openCase(as: tier1).caseNumber)
            if index % 5 == 0 { world.service.clock.advance(by: 1) }  // several cases share a due date: ties broken by id
        }
        // Five wait for documents: null due dates, listed last.
        let tier2 = try world.agent(.tier2)
        for number in initial.suffix(5) { try world.must(number, "request_documents", as: tier2, version: 1, extra: ["reason": "r"]) }
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let result = try page(world, tier1, "limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""))
            seen += result.numbers
            cursor = result.next
            pages += 1
            // Meanwhile: new cases arrive (due later than all existing ones) and notes are added.
            world.service.clock.advance(by: 1)
            _ = try world.openCase(as: tier1)
            _ = try world.post("/api/v1/cases/\(initial[pages % initial.count])/notes", as: tier1, json: ["body": "n", "visibility": "internal"])
        } while cursor != nil && pages < 30
        #expect(Set(seen).count == seen.count, "a case was listed twice")
        #expect(Set(initial).isSubset(of: Set(seen)), "a case was skipped")
    }

    @Test func searchAndQueueUseIndexes() throws {
        let world = try CaseWorld()
        let connection = try world.database()
        defer { connection.close() }
        // Enough rows that a sequential scan would be costed higher than the index.
        try connection.executeScript("""
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path, rescue_email_added,
                security_questions_changed, two_step_enabled, lost_mode_enabled, account_email, customer_name, customer_contact_email,
                opened_at, state_entered_at, due_at, created_by, created_at, updated_at)
            SELECT gen_random_uuid(), (100000000000 + g)::text, '\\x00', 'k', 'account_takeover', 'new', 'tier1', 'undetermined', false, false, false, false,
                'user' || g || '@example.com', 'n', 'c@example.com', now(), now(), now() + g * interval '1 second', 'test', now(), now()
            FROM generate_series(1, 20000) g;
            INSERT INTO case_search (term, case_id) SELECT account_email, id FROM cases;
            ANALYZE cases; ANALYZE case_search;
            """)
        func plan(_ sql: String) throws -> String {
            try connection.query(PostgresQuery(unsafeSQL: "EXPLAIN " + sql)).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
        }
        let queue = try plan("SELECT id FROM cases c WHERE c.due_at IS NOT NULL ORDER BY c.due_at, c.id LIMIT 51")
        #expect(queue.contains("Index") && !queue.contains("Seq Scan on cases"), "\(queue)")
        let after = try plan("SELECT id FROM cases c WHERE c.due_at IS NOT NULL AND (c.due_at, c.id) > (now(), gen_random_uuid()) ORDER BY c.due_at, c.id LIMIT 51")
        #expect(after.contains("Index") && !after.contains("Seq Scan on cases"), "\(after)")
        // The search drives from case_search's primary key, never walking the queue index.
        let search = try plan("WITH hits AS MATERIALIZED (SELECT s.case_id FROM case_search s WHERE s.term = 'user77@example.com') SELECT c.id FROM hits JOIN cases c ON c.id = hits.case_id WHERE c.due_at IS NOT NULL ORDER BY c.due_at, c.id LIMIT 51")
        #expect(!search.contains("Seq Scan") && search.contains("case_search_pkey") && !search.contains("cases_queue"), "\(search)")
    }
}
