import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "No dead ends, no contradictions": finished cases take no work, `send_reset` is offered only once every
/// answer on file matched, and a new access code is answered only to a caller the agent verified (v1.3).
@Suite(.serialized) struct FinishedCaseAPITests {
    /// The work a finished case refuses with 409 `case_not_open` (and does not offer), for an agent who could do it open.
    func expectNoWork(
        _ world: CaseWorld, _ number: String, evidenceID: String?, as agent: AgentSession, version: Int,
        _ place: String
    ) throws {
        func evidenceCount() throws -> Int { (try world.get("/api/v1/cases/\(number)/evidence", as: agent).json()["items"] as? [Any] ?? []).count }
        let before = try evidenceCount()
        func refused(_ response: TestHTTPResponse, _ what: String) throws {
            #expect(response.status == 409, "\(what) on \(place): \(response.text)")
            #expect(try response.problem().code == "case_not_open", "\(what) on \(place)")
        }
        try refused(try world.post("/api/v1/cases/\(number)/evidence", as: agent, json: ["type": "device", "serial": "C02XK1ZJH3QD"]), "evidence")
        try refused(
            try world.post(
                "/api/v1/cases/\(number)/assign", as: agent, json: ["agent_id": agent.agentID.uuidString.lowercased()],
                ifMatch: version), "take")
        // (A merged case's items are reviewed on the case they went into: below.)
        if let evidenceID {
            try refused(
                try world.post("/api/v1/evidence/\(evidenceID)/review", as: agent, json: ["decision": "accepted", "reason": "Matches."]), "review")
        }
        try refused(try world.post("/api/v1/cases/\(number)/actions/freeze", as: agent, json: [String: Any](), ifMatch: version), "freeze")
        // An internal note stays possible.
        #expect(
            try world.post("/api/v1/cases/\(number)/notes", as: agent, json: ["body": "Customer called after.", "visibility": "internal"]).status
                == 201)
        let view = try world.get("/api/v1/cases/\(number)", as: agent).decode(CaseView.self)
        for word in ["file_evidence", "review", "assign", "freeze", "record_unlock", "merge"] {
            #expect(!view.allowedActions.contains(word), "\(word) offered on \(place)")
        }
        #expect(view.allowedActions.contains("note_internal"))
        // Nothing was filed or reviewed.
        #expect(try evidenceCount() == before, "\(place)")
    }

    @Test func resolvedRejectedAndMergedCasesTakeNoWork() throws {
        let w = try EvidenceWorld()
        let reviewer = try w.world.agent(.tier3)
        let world = w.world
        // Resolved: by a reset once both answers matched.
        let answers = try w.mustFile([
            "type": "security_answers",
            "answers": [
                ["question_id": "q1", "answer": EvidenceWorld.onFileAnswer],
                ["question_id": "q2", "answer": "Rex"],
            ],
        ])
        let resolved = try world.must(w.number, "send_reset", as: w.tier1, version: 1)
        #expect(resolved.state == "resolved")
        try expectNoWork(world, w.number, evidenceID: answers.id, as: reviewer, version: resolved.version, "resolved")

        // Rejected: documents requested, reviewed, rejected.
        let (tier1, tier2) = (w.tier1, try world.agent(.tier2))
        let other = try world.openCase(as: tier1).caseNumber
        let early = try world.post("/api/v1/cases/\(other)/evidence", as: tier1, json: ["type": "device", "serial": "XYZ1234567"]).decode(
            EvidenceView.self)
        try world.must(other, "escalate", as: tier1, version: 1)
        try world.must(other, "request_documents", as: tier2, version: 2, extra: ["reason": "Not verified."])
        try world.must(other, "begin_review", as: reviewer, version: 3)
        let rejected = try world.must(other, "reject", as: reviewer, version: 4, extra: ["reason": "No proof."])
        try expectNoWork(world, other, evidenceID: early.id, as: reviewer, version: rejected.version, "rejected")
        // A customer note is still possible on a finished case the customer reads.
        #expect(try world.post("/api/v1/cases/\(other)/notes", as: tier1, json: ["body": "Call us.", "visibility": "customer"]).status == 201)

        // Merged: its evidence counts on the target; the merged case itself takes no work, not even a customer note.
        let into = try world.openCase(as: tier1).caseNumber
        let from = try world.openCase(as: tier1).caseNumber
        let filed = try world.post("/api/v1/cases/\(from)/evidence", as: tier1, json: ["type": "device", "serial": "ABC7654321"]).decode(
            EvidenceView.self)
        let merged = try world.post("/api/v1/cases/\(from)/merge", as: tier2, json: ["into": into], ifMatch: 1).decode(CaseView.self)
        #expect(merged.state == "merged")
        try expectNoWork(world, from, evidenceID: nil, as: reviewer, version: merged.version, "merged")
        let note = try world.post("/api/v1/cases/\(from)/notes", as: tier1, json: ["body": "Hello.", "visibility": "customer"])
        #expect(try note.status == 409 && note.problem().code == "case_not_open")
        #expect(!merged.allowedActions.contains("note_customer") && merged.allowedActions.contains("unmerge"))
        // Its item is reviewed on the open target; once the target is finished, no longer.
        #expect(
            try world.post("/api/v1/evidence/\(filed.id)/review", as: tier2, json: ["decision": "rejected", "reason": "Not this device."]).status
                == 200)
        try world.must(into, "escalate", as: tier1, version: 1)
        try world.must(into, "request_documents", as: tier2, version: 2, extra: ["reason": "x"])
        try world.must(into, "begin_review", as: reviewer, version: 3)
        try world.must(into, "reject", as: reviewer, version: 4, extra: ["reason": "No proof."])
        let late = try world.post("/api/v1/evidence/\(filed.id)/review", as: tier2, json: ["decision": "accepted", "reason": "On second look."])
        #expect(try late.status == 409 && late.problem().code == "case_not_open")
    }

    @Test func sendResetIsOfferedAndTakenOnlyOnceEveryAnswerOnFileMatched() throws {
        let w = try EvidenceWorld()
        let world = w.world
        func transitions() throws -> [String] { try world.get("/api/v1/cases/\(w.number)", as: w.tier1).decode(CaseView.self).transitions }
        #expect(try transitions() == ["escalate"])
        // One of two matched (and one wrong answer): still not offered, and refused.
        try w.mustFile([
            "type": "security_answers",
            "answers": [
                ["question_id": "q1", "answer": EvidenceWorld.onFileAnswer],
                ["question_id": "q2", "answer": "Felix"],
            ],
        ])
        #expect(try transitions() == ["escalate"])
        let early = try world.act(w.number, "send_reset", as: w.tier1, version: 1)
        #expect(try early.status == 409 && early.problem().code == "answers_not_matched")
        // The second matches: offered now, and taken.
        try w.mustFile(["type": "security_answers", "answers": [["question_id": "q2", "answer": "Rex"]]])
        #expect(try transitions() == ["send_reset", "escalate"])
        #expect(try world.must(w.number, "send_reset", as: w.tier1, version: 1).state == "resolved")
    }

    @Test func aNewAccessCodeIsAnsweredOnlyToAVerifiedCallerFromTier2() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let old = try #require(created.accessCode)
        let path = "/api/v1/cases/\(number)/access-code"
        let view = try world.get("/api/v1/cases/\(number)", as: tier1).decode(CaseView.self)
        #expect(view.work.contains("reissue_access_code") && !view.work.contains("give_access_code"))
        #expect(try world.get("/api/v1/cases/\(number)", as: tier2).decode(CaseView.self).work.contains("give_access_code"))

        // The thief on the phone talks a tier-1 agent into reading one out: refused, nothing issued, the attempt recorded.
        try world.verifyCaller(number, accessCode: old, as: tier1)
        let pretended = try world.post(path, as: tier1, json: ["read_out": true])
        #expect(try pretended.status == 403 && pretended.problem().code == "insufficient_tier", "\(pretended.text)")
        #expect(try world.status(number, old).status == 200)
        #expect(try world.events(number, as: tier1).last?.type == "denied")
        // v1.2's typed check is retired: 422 naming the new way, nothing issued.
        let typed = try world.post(path, as: tier2, json: ["caller_check": "Called back on the number on file"])
        #expect(typed.status == 422 && typed.text.contains("caller_check") && typed.text.contains("caller-verification"), "\(typed.text)")
        #expect(try world.status(number, old).status == 200)

        // Without read_out: a new code, mailed to the contact address, and not in the answer.
        let mailed = try world.post(path, as: tier1, json: [String: Any]())
        #expect(mailed.status == 201, "\(mailed.text)")
        let body = try mailed.json()
        #expect(body["access_code"] == nil && body["mailed"] as? Bool == true)
        #expect(mailed.text.range(of: #"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}"#, options: .regularExpression) == nil)
        #expect(try world.status(number, old).status == 404)  // the old code stopped working
        let messages = try world.get("/api/v1/cases/\(number)/messages", as: tier1).json()["items"] as? [[String: Any]] ?? []
        #expect(messages.contains { $0["kind"] as? String == "access_code_reissued" })
        let event = try #require(try world.events(number, as: tier1).last)
        #expect(event.type == "access_code_reissued")
        #expect((event["data"] as? [String: Any])?["read_out_after"] == nil)
    }
}
