import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Synchronization
import Testing

/// The attacker's side: wrong tier, stale or missing versions, races, notes that must stay internal.
@Suite(.serialized) struct CaseAttackerTests {
    @Test func wrongTierIsRefusedAndRecordedOnTheTimeline() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let refused = try world.act(number, "request_documents", as: tier1, version: 1, extra: ["reason": "try"])
        #expect(refused.status == 403)
        #expect(try refused.problem().code == "insufficient_tier")
        // Freezing needs tier 2 (the permission table refuses before the workflow is asked).
        #expect(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier1, json: [:] as [String: Any], ifMatch: 1).status == 403)
        let denied = try world.events(number, as: tier1).filter { $0.type == "denied" }
        #expect(denied.count == 2)
        #expect(denied.allSatisfy { $0.actor == "agent:\(tier1.agentID.uuidString.lowercased())" })
        #expect(denied.first?.data["attempted"] == "request_documents")
        // Nothing changed.
        #expect(try world.get("/api/v1/cases/\(number)", as: tier1).header("ETag") == "\"1\"")
    }

    @Test func ifMatchIsRequiredAndMustBeCurrent() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let number = try world.openCase(as: tier1).caseNumber
        let missing = try world.act(number, "escalate", as: tier1, version: nil)
        #expect(missing.status == 428)
        #expect(try missing.problem().code == "if_match_required")
        try world.must(number, "escalate", as: tier1, version: 1)
        let stale = try world.act(number, "request_documents", as: tier2, version: 1, extra: ["reason": "x"])
        #expect(stale.status == 412)
        #expect(try stale.problem().code == "stale_version")
        #expect(stale.header("ETag") == "\"2\"")
        #expect(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [:] as [String: Any]).status == 428)
        #expect(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [:] as [String: Any], ifMatch: 1).status == 412)
        let frozen = try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [:] as [String: Any], ifMatch: 2)
        #expect(frozen.status == 200)
        #expect(try frozen.decode(CaseView.self).frozen == true)
        #expect(frozen.header("ETag") == "\"3\"")
        #expect(try world.post("/api/v1/cases/\(number)/assign", as: tier2, json: ["agent_id": tier2.agentID.uuidString]).status == 428)
        let assigned = try world.post("/api/v1/cases/\(number)/assign", as: tier2, json: ["agent_id": tier2.agentID.uuidString], ifMatch: 3)
        #expect(assigned.status == 200)
        #expect(try assigned.decode(CaseView.self).assignee?.id == tier2.agentID.uuidString.lowercased())
        // Handing a tier-2 case to a tier-1 agent is refused: they could not act on it.
        let handOff = try world.post("/api/v1/cases/\(number)/assign", as: tier2, json: ["agent_id": tier1.agentID.uuidString], ifMatch: 4)
        #expect(handOff.status == 403)
    }

    @Test func colleaguesForHandOverAreListedByTierWithoutEmailsAndOnlyToAgents() throws {
        let world = try CaseWorld()
        let tier1 = try world.service.signIn(tier: .tier1, name: "Ada Tier1")
        let tier2 = try world.service.signIn(tier: .tier2, name: "Bea Tier2")
        let tier3 = try world.service.signIn(tier: .tier3, name: "Cy Tier3")
        let gone = try world.service.signIn(tier: .tier3, name: "Dee Gone")
        _ = try world.service.identityAdministration.disableAgent(email: gone.email, now: Date())
        let response = try world.get("/api/v1/agents?tier=tier2", as: tier1)
        #expect(response.status == 200)
        let items = try response.decode(ListView<ColleagueView>.self).items
        #expect(items.map(\.name) == ["Bea Tier2", "Cy Tier3"])  // by name; tier 1 and the disabled agent left out
        #expect(items.first?.id == tier2.agentID.uuidString.lowercased())
        #expect(items.last?.tier == "tier3")
        #expect(!response.text.contains("@") && !response.text.contains(tier3.email))
        #expect(try world.get("/api/v1/agents", as: tier1).decode(ListView<ColleagueView>.self).items.count == 3)
        #expect(try world.get("/api/v1/agents?tier=boss", as: tier1).status == 422)
        #expect(try world.get("/api/v1/agents", as: nil).status == 401)
        let client = try world.service.addClient()
        let asClient = try world.client.request(
            "GET", "/api/v1/agents",
            headers: world.service.clientHeaders(client, method: "GET", target: "/api/v1/agents", body: []))
        #expect(asClient.status == 403)

        // Handed over: the timeline names the new holder, who has not acted yet.
        let number = try world.openCase(as: tier1).caseNumber
        try world.must(number, "escalate", as: tier1, version: 1)
        #expect(try world.post("/api/v1/cases/\(number)/assign", as: tier2, json: ["agent_id": tier3.agentID.uuidString], ifMatch: 2).status == 200)
        let actors = try world.get("/api/v1/cases/\(number)/events", as: tier1).decode(ListView<EventView>.self).actors
        #expect(actors?["agent:\(tier3.agentID.uuidString.lowercased())"] == "Cy Tier3")
        #expect(actors?["agent:\(tier2.agentID.uuidString.lowercased())"] == "Bea Tier2")
    }

    @Test func twoConcurrentTransitionsWithTheSameVersionExactlyOneWins() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        for _ in 0..<5 {
            let number = try world.openCase(as: tier1).caseNumber
            let port = world.service.service.port
            let statuses = Mutex<[Int]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (action, session) in [("escalate", tier1), ("request_documents", tier2)] {
                group.enter()
                Thread {
                    defer { group.leave() }
                    start.wait()
                    let client = TestHTTPClient(port: port)
                    let response = try? client.request(
                        "POST", "/api/v1/cases/\(number)/transitions",
                        headers: session.headers + [("If-Match", "\"1\"")],
                        json: ["action": action, "reason": "race"])
                    statuses.withLock { $0.append(response?.status ?? -1) }
                }.start()
            }
            start.signal()
            start.signal()
            group.wait()
            #expect(statuses.withLock { $0.sorted() } == [200, 412])
            let read = try world.get("/api/v1/cases/\(number)", as: tier2)
            #expect(read.header("ETag") == "\"2\"")
            #expect(try world.events(number, as: tier2).filter { $0.type == "transition" }.count == 1)
        }
    }

    @Test func internalNotesNeverReachTheCustomer() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let secret = "Caller sounded like the thief; voice did not match."
        let internalNote = try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": secret, "visibility": "internal"])
        #expect(internalNote.status == 201)
        let visible = try world.post(
            "/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "We received your request.", "visibility": "customer"])
        #expect(visible.status == 201)
        #expect(try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "x", "visibility": "public"]).status == 422)
        // Notes do not change the case's version.
        #expect(try world.get("/api/v1/cases/\(number)", as: tier1).header("ETag") == "\"1\"")

        let status = try world.status(number, created.accessCode!)
        #expect(status.status == 200)
        #expect(!status.text.contains(secret))
        #expect(try status.decode(StatusView.self).notes.map(\.body) == ["We received your request."])
        let all = try world.get("/api/v1/cases/\(number)/notes", as: tier1)
        #expect(try all.decode(ListView<NoteView>.self).items.count == 2)
        // Agents see who wrote each note by name; the status page never sees names or authors.
        #expect(try all.decode(ListView<NoteView>.self).actors == ["agent:\(tier1.agentID.uuidString.lowercased())": "Test Agent"])
        #expect(!status.text.contains("Test Agent") && !status.text.contains("author"))
    }
}
