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
        let mine = try world.openCase(
            as: tier1,
            CaseWorld.caseBody(
                accountEmail: "Ada.Lovelace@Example.org",
                devices: [.init(serial: "F17ZK2ABCD", imei: "356938035643809")])
        ).caseNumber
        let other = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "someone@example.org", devices: [])).caseNumber
        for q in [mine, String(mine.prefix(4)) + "%20" + String(mine.dropFirst(4)), "ada.lovelace%40example.org", "f17zk2abcd", "35-693803-564380-9"]
        {
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

    /// The queue starts with open work: finished cases (rejected, merged) only with `state=any` or their own state;
    /// `assignee=me` lists the caller's own cases, paged across the dated and undated sections.
    @Test func openByDefaultFinishedOnAskAndMine() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        var opened: [String] = []
        for _ in 0..<5 {
            opened.append(try world.openCase(as: tier1).caseNumber)
            world.service.clock.advance(by: 60)
        }
        let (rejected, merged, target, waiting, fresh) = (opened[0], opened[1], opened[2], opened[3], opened[4])
        try world.must(rejected, "escalate", as: tier1, version: 1)
        try world.must(rejected, "request_documents", as: tier2, version: 2, extra: ["reason": "Not verified."])
        try world.must(rejected, "begin_review", as: tier3, version: 3)
        #expect(try world.must(rejected, "reject", as: tier3, version: 4, extra: ["reason": "No proof."]).state == "rejected")
        #expect(
            try world.post("/api/v1/cases/\(merged)/merge", as: tier2, json: ["into": target], ifMatch: 1).decode(CaseView.self).state == "merged")
        // Waiting for documents: open, without a due date, in the undated section with the finished ones.
        let paused = try world.must(waiting, "request_documents", as: tier2, version: 1, extra: ["reason": "r"])
        #expect(paused.dueAt == nil)

        let open = try page(world, tier1, "limit=50")
        #expect(Set(open.numbers) == [target, waiting, fresh], "\(open.items.map(\.state))")
        #expect(open.numbers.last == waiting)
        let all = try page(world, tier1, "state=any&limit=50")
        #expect(Set(all.numbers) == Set(opened))
        #expect(try page(world, tier1, "state=rejected").numbers == [rejected])
        #expect(try page(world, tier1, "state=merged").numbers == [merged])
        // Paging one at a time over the default view meets the same cases, never a finished one.
        var seen: [String] = []
        var cursor: String?
        repeat {
            let result = try page(world, tier1, "limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
            seen += result.numbers
            cursor = result.next
        } while cursor != nil && seen.count < 10
        #expect(seen == open.numbers)

        // Mine: tier3 takes the waiting case (undated) and the fresh one (dated); its rejected case is finished, not listed.
        let current = try world.get("/api/v1/cases/\(fresh)", as: tier3).decode(CaseView.self)
        for (number, version) in [(waiting, paused.version), (fresh, current.version)] {
            let assigned = try world.post(
                "/api/v1/cases/\(number)/assign", as: tier3, json: ["agent_id": tier3.agentID.uuidString.lowercased()], ifMatch: version)
            #expect(assigned.status == 200, "\(assigned.text)")
        }
        let mine = try page(world, tier3, "assignee=me&limit=50")
        #expect(mine.numbers == [fresh, waiting])
        #expect(mine.items.allSatisfy { $0.assignee?.id.lowercased() == tier3.agentID.uuidString.lowercased() })
        let first = try page(world, tier3, "assignee=me&limit=1")
        #expect(first.numbers == [fresh])
        let second = try page(world, tier3, "assignee=me&limit=1&cursor=\(try #require(first.next))")
        #expect(second.numbers == [waiting])
        #expect(second.next == nil)
        // Only one's own cases, and tier1 holds none of these.
        #expect(
            try page(world, tier1, "assignee=me&limit=50").items.allSatisfy { $0.assignee?.id.lowercased() == tier1.agentID.uuidString.lowercased() })
        #expect(!(try page(world, tier1, "assignee=me&limit=50").numbers.contains(fresh)))
        #expect(try page(world, tier3, "assignee=me&state=new").numbers == [fresh])

        // Another agent's cases by their id (the reports link an agent's workload to them): the same as theirs.
        #expect(try page(world, tier2, "assignee=\(tier3.agentID.uuidString.lowercased())").numbers == mine.numbers)
        for query in ["assignee=someone", "assignee=\(tier1.agentID.uuidString.lowercased())x", "state=open"] {
            let bad = try world.get("/api/v1/cases?\(query)", as: tier2)
            #expect(bad.status == 422, "\(query)")
            #expect(try bad.problem().code == "validation_failed" && bad.problem().fields == [String(query.prefix { $0 != "=" })], "\(query)")
        }
    }
}
