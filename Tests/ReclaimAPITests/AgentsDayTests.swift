import Foundation
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

extension CaseWorld {
    /// The customer uploads a document on the status route (multipart, with the case number and access code).
    @discardableResult
    func customerUpload(_ number: String, code: String, type: String) throws -> [String: Any] {
        let body = EvidenceWorld.form([("case_number", number), ("access_code", code), ("type", type)], file: (EvidenceWorld.png(type), "image/png"))
        let response = try client.request(
            "POST", "/api/v1/status/evidence",
            headers: [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")], body: body)
        guard response.status == 201 else { throw CaseTestError("customer upload answered \(response.status): \(response.text)") }
        return try response.json()
    }

    /// Reviews one piece of evidence; must succeed.
    /// Reviews a document; a rejection names the customer's reason (api.md v1.2).
    func mustReview(_ id: String, _ decision: String, as session: AgentSession, customerReason: String = "unreadable") throws {
        var json: [String: Any] = ["decision": decision, "reason": "Checked against the device."]
        if decision == "rejected" { json["customer_reason"] = customerReason }
        let response = try post("/api/v1/evidence/\(id)/review", as: session, json: json)
        guard response.status == 200 else { throw CaseTestError("review answered \(response.status): \(response.text)") }
    }

    /// The ids of the documents still pending on the case.
    func pendingDocuments(_ number: String, as session: AgentSession) throws -> [String] {
        let items = try get("/api/v1/cases/\(number)/evidence", as: session).json()["items"] as? [[String: Any]] ?? []
        let documents = Set(DocumentType.allCases.map(\.rawValue))
        return items.filter { documents.contains($0["type"] as? String ?? "") && $0["status"] as? String == "pending" }.compactMap {
            $0["id"] as? String
        }
    }

    func caseBody(_ number: String, as session: AgentSession) throws -> [String: Any] {
        try get("/api/v1/cases/\(number)", as: session).json()
    }

    /// Opens a case, escalates it and requests documents: version 3, `awaiting_documents`.
    func awaitingDocuments(
        facts: [String: Bool] = ["rescue_email_added": true], kind: String = "account_takeover",
        tier1: AgentSession, tier2: AgentSession
    ) throws -> (number: String, code: String) {
        let created = try openCase(as: tier1, CaseWorld.caseBody(kind: kind, facts: facts))
        let number = created["case_number"] as! String
        try must(number, "escalate", as: tier1, version: 1)
        try must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "No factor matched."])
        return (number, created["access_code"] as! String)
    }
}

@Suite(.serialized) struct DocumentsGateAPITests {
    @Test func approveIsRefusedUntilEveryRequirementHasAnAcceptedDocumentAndNothingIsPending() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        // Begun by hand, with nothing filed: approve with nothing accepted is refused with what is missing.
        try world.must(number, "begin_review", as: tier3, version: 3)
        let nothing = try world.act(number, "approve", as: tier3, version: 4)
        #expect(nothing.status == 409)
        #expect(try nothing.json()["code"] as? String == "documents_missing")
        #expect(try nothing.json()["missing"] as? [String] == ["proof_of_purchase", "imei_photo"])
        // Filed but pending does not count; the case is unchanged.
        try world.customerUpload(number, code: code, type: "invoice")
        try world.customerUpload(number, code: code, type: "imei_photo")
        #expect(try world.caseBody(number, as: tier3)["unreviewed_documents"] as? Int == 2)
        #expect(try world.act(number, "approve", as: tier3, version: 4).json()["code"] as? String == "documents_missing")
        let pending = try world.pendingDocuments(number, as: tier3)
        try world.mustReview(pending[0], "accepted", as: tier3)
        // A rejected document does not meet its requirement either (a police report still pending keeps the case under
        // review: with nothing pending, the rejection would send it back to the customer by itself).
        try world.customerUpload(number, code: code, type: "police_report")
        try world.mustReview(pending[1], "rejected", as: tier3)
        let stillMissing = try world.act(number, "approve", as: tier3, version: 4)
        #expect(try stillMissing.json()["missing"] as? [String] == ["imei_photo"])
        // Every requirement met, but another document still pending.
        try world.customerUpload(number, code: code, type: "imei_photo")
        for id in try world.pendingDocuments(number, as: tier3) where id != pending[1] {
            let items = try world.get("/api/v1/cases/\(number)/evidence", as: tier3).json()["items"] as? [[String: Any]] ?? []
            if items.first(where: { $0["id"] as? String == id })?["type"] as? String == "imei_photo" {
                try world.mustReview(id, "accepted", as: tier3)
            }
        }
        let waiting = try world.act(number, "approve", as: tier3, version: 4)
        #expect(waiting.status == 409)
        #expect(try waiting.json()["code"] as? String == "documents_pending")
        #expect(try world.caseBody(number, as: tier3)["unreviewed_documents"] as? Int == 1)
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
        let approved = try world.must(number, "approve", as: tier3, version: 4)
        #expect(approved["state"] as? String == "engineering")
        #expect(approved["unreviewed_documents"] as? Int == 0)
    }

    @Test func documentsArrivingMoveTheCaseToReviewByItself() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        // Tier 3's queue of unreviewed documents: nothing yet.
        let empty = try world.get("/api/v1/cases?unreviewed=true&tier=tier3", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(!empty.contains { $0["case_number"] as? String == number })
        try world.customerUpload(number, code: code, type: "invoice")
        var body = try world.caseBody(number, as: tier3)
        #expect(body["state"] as? String == "awaiting_documents")
        #expect(body["unreviewed_documents"] as? Int == 1)
        #expect(body["due_at"] is NSNull)
        let listed = try world.get("/api/v1/cases?unreviewed=true", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(listed.first { $0["case_number"] as? String == number }?["unreviewed_documents"] as? Int == 1)
        let others = try world.get("/api/v1/cases?unreviewed=false", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(!others.contains { $0["case_number"] as? String == number })
        #expect(try world.get("/api/v1/cases?unreviewed=maybe", as: tier3).status == 422)
        // The last requirement arrives (filed by an agent this time): the case moves itself, as `system`, clock resumed.
        let agentUpload = try world.client.request(
            "POST", "/api/v1/cases/\(number)/evidence",
            headers: tier1.headers + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")],
            body: EvidenceWorld.form([("type", "imei_photo")], file: (EvidenceWorld.png("imei"), "image/png")))
        #expect(agentUpload.status == 201)
        body = try world.caseBody(number, as: tier3)
        #expect(body["state"] as? String == "document_review")
        #expect(body["due_at"] is String)
        #expect(body["version"] as? Int == 4)
        #expect(body["unreviewed_documents"] as? Int == 2)
        let events = try world.events(number, as: tier3)
        #expect(events.filter { $0["type"] as? String == "document_arrived" }.count == 2)
        let moved = try #require(events.last { $0["type"] as? String == "transition" })
        #expect(moved["actor"] as? String == "system")
        #expect((moved["data"] as? [String: Any])?["action"] as? String == "begin_review")
        let status = try world.status(number, code).json()
        #expect(status["state"] as? String == "document_review")
    }
}

@Suite(.serialized) struct UnlockChecklistAPITests {
    static let twoChanges = ["rescue_email_added": true, "security_questions_changed": true]

    /// Opens a case with both changes and walks it to engineering by verification (card and device on file).
    func engineeringCase(_ w: EvidenceWorld, facts: [String: Bool] = twoChanges) throws -> (number: String, version: Int) {
        let opened = try w.world.openCase(as: w.tier1, CaseWorld.caseBody(accountEmail: "owner@example.com", facts: facts, devices: []))
        let number = opened["case_number"] as! String
        let tier2 = try w.world.agent(.tier2)
        try w.world.must(number, "escalate", as: w.tier1, version: 1)
        for json: [String: Any] in [
            ["type": "card", "number": EvidenceWorld.onFileCard, "exp_month": 12, "exp_year": 2031],
            ["type": "device", "serial": EvidenceWorld.onFileSerial],
        ] {
            #expect(try w.world.post("/api/v1/cases/\(number)/evidence", as: tier2, json: json).status == 201)
        }
        let verified = try w.world.must(number, "verify", as: tier2, version: 2)
        let required = [("rescue_email_added", "remove_rescue_email"), ("security_questions_changed", "reset_security_questions")]
            .filter { facts[$0.0] == true }.map(\.1)
        let checklist = verified["unlocks"] as? [String: Any]
        #expect(checklist?["required"] as? [String] == required && checklist?["done"] as? [String] == [])
        return (number, 3)
    }

    @Test func completeWaitsForEveryStepAndSchedulesTheOneGiven() throws {
        let w = try EvidenceWorld()
        let engineer = try w.world.agent(.engineering)
        let tier3 = try w.world.agent(.tier3)
        let (number, version) = try engineeringCase(w)
        // One unlock, two changes: refused, but the step given is scheduled (the cooling-off) and the version moves on.
        let partial = try w.world.act(number, "complete", as: engineer, version: version, extra: ["unlock": "remove_rescue_email"])
        #expect(partial.status == 409)
        #expect(try partial.json()["code"] as? String == "unlocks_outstanding")
        #expect(try partial.json()["outstanding"] as? [String] == ["remove_rescue_email", "reset_security_questions"])
        #expect(partial.header("ETag") == "\"\(version + 1)\"")
        var body = try w.world.caseBody(number, as: engineer)
        #expect(body["state"] as? String == "engineering")
        #expect((body["unlocks"] as? [String: Any])?["done"] as? [String] == [])
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [[String: Any]])?.map { $0["step"] as? String } == ["remove_rescue_email"])
        // The checklist route: a step not required, one already done, another tier, a stale version.
        let unlocks = "/api/v1/cases/\(number)/unlocks"
        let notRequired = try w.world.post(unlocks, as: engineer, json: ["step": "remove_activation_lock"], ifMatch: version + 1)
        #expect(notRequired.status == 422)
        #expect(try notRequired.json()["code"] as? String == "unlock_not_allowed")
        let again = try w.world.post(unlocks, as: engineer, json: ["step": "remove_rescue_email"], ifMatch: version + 1)
        #expect(again.status == 409)
        #expect(try again.json()["code"] as? String == "already_done")
        #expect(try w.world.post(unlocks, as: tier3, json: ["step": "reset_security_questions"], ifMatch: version + 1).status == 403)
        #expect(try w.world.post(unlocks, as: engineer, json: ["step": "reset_security_questions"], ifMatch: version).status == 412)
        #expect(try w.world.post(unlocks, as: engineer, json: ["step": "reset_security_questions"]).status == 428)
        #expect(try w.world.post(unlocks, as: engineer, json: ["step": "undo_everything"], ifMatch: version + 1).status == 422)
        let second = try w.world.post(
            unlocks, as: engineer, json: ["step": "reset_security_questions", "reason": "Questions reset."], ifMatch: version + 1)
        #expect(second.status == 200, "\(second.text)")
        // The cooling-off (api.md v1.2): the step is scheduled, not done; the service does it when its time comes.
        let checklist = try #require(try second.json()["unlocks"] as? [String: Any])
        #expect(checklist["done"] as? [String] == [])
        #expect(
            (checklist["scheduled"] as? [[String: Any]])?.map { $0["step"] as? String } == ["remove_rescue_email", "reset_security_questions"])
        #expect(try w.world.act(number, "complete", as: engineer, version: version + 2).status == 409)
        w.world.service.clock.advance(by: 86_401)
        let later = try w.world.agent(.engineering)  // a day later: the first one's session has expired
        #expect(
            try eventually(10) {
                Set((try w.world.caseBody(number, as: later)["unlocks"] as? [String: Any])?["done"] as? [String] ?? [])
                    == ["remove_rescue_email", "reset_security_questions"]
            })
        // Nothing outstanding: complete needs no further unlock.
        let done = try w.world.must(number, "complete", as: later, version: version + 4)
        #expect(done["state"] as? String == "resolved")
        let types = try w.world.events(number, as: later).compactMap { $0["type"] as? String }
        #expect(types.filter { $0 == "unlock_done" }.count == 2)
        #expect(types.contains("denied"))  // tier 3's attempt
        body = try w.world.caseBody(number, as: later)
        // A finished case takes no more steps.
        #expect(try w.world.post(unlocks, as: later, json: ["step": "remove_rescue_email"], ifMatch: body["version"] as! Int).status == 409)
    }

    @Test func completeOnceTheStepGivenIsDoneOrWithNoneRequired() throws {
        let w = try EvidenceWorld()
        let engineer = try w.world.agent(.engineering)
        // Nothing the thief changed is known: an unlock is needed as before, and there is no step to wait for.
        let (plain, plainVersion) = try engineeringCase(w, facts: [:])
        let refused = try w.world.act(plain, "complete", as: engineer, version: plainVersion)
        #expect(try refused.json()["code"] as? String == "unlock_required")
        #expect(
            try w.world.must(plain, "complete", as: engineer, version: plainVersion, extra: ["unlock": "reset_security_questions"])["state"]
                as? String == "resolved")
        // The only step, given with complete: scheduled, not done (the cooling-off); complete once the service did it.
        let (number, version) = try engineeringCase(w, facts: ["rescue_email_added": true])
        let waiting = try w.world.act(number, "complete", as: engineer, version: version, extra: ["unlock": "remove_rescue_email"])
        #expect(try waiting.status == 409 && (waiting.json()["code"] as? String) == "unlocks_outstanding", "\(waiting.text)")
        w.world.service.clock.advance(by: 86_401)
        let later = try w.world.agent(.engineering)  // a day later: the first one's session has expired
        #expect(
            try eventually(10) {
                (try w.world.caseBody(number, as: later)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_rescue_email"]
            })
        let done = try w.world.must(number, "complete", as: later, version: version + 2)
        #expect(done["state"] as? String == "resolved")
        #expect((done["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_rescue_email"])
    }
}

@Suite(.serialized) struct FreezeAndDeskAPITests {
    @Test func unfreezeLiftsAFreezeAndFinishingTheCaseLiftsItByItself() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let number = try world.openCase(as: tier1)["case_number"] as! String
        let unfreeze = "/api/v1/cases/\(number)/actions/unfreeze"
        let notFrozen = try world.post(unfreeze, as: tier2, json: [String: Any](), ifMatch: 1)
        #expect(notFrozen.status == 409)
        #expect(try notFrozen.json()["code"] as? String == "not_frozen")
        #expect(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [String: Any](), ifMatch: 1).status == 200)
        #expect(try world.post(unfreeze, as: tier1, json: [String: Any](), ifMatch: 2).status == 403)
        #expect(try world.post(unfreeze, as: tier2, json: [String: Any](), ifMatch: 1).status == 412)
        let lifted = try world.post(unfreeze, as: tier2, json: [String: Any](), ifMatch: 2)
        #expect(lifted.status == 200)
        #expect(try lifted.json()["frozen"] as? Bool == false)
        #expect(try lifted.json()["version"] as? Int == 3)
        // Frozen again, then rejected: the freeze does not outlive the case.
        #expect(try world.post("/api/v1/cases/\(number)/actions/freeze", as: tier2, json: [String: Any](), ifMatch: 3).status == 200)
        try world.must(number, "escalate", as: tier1, version: 4)
        try world.must(number, "request_documents", as: tier2, version: 5, extra: ["reason": "No match."])
        let tier3 = try world.agent(.tier3)
        try world.must(number, "begin_review", as: tier3, version: 6)
        let rejected = try world.must(number, "reject", as: tier3, version: 7, extra: ["reason": "No proof."])
        #expect(rejected["frozen"] as? Bool == false)
        let events = try world.events(number, as: tier3).filter { $0["type"] as? String == "unfrozen" }
        #expect(events.compactMap { ($0["data"] as? [String: Any])?["cause"] as? String } == ["lifted", "rejected"])
    }

    @Test func aHandOffAboveTheAssigneesTierClearsTheAssignee() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let number = try world.openCase(as: tier1)["case_number"] as! String
        #expect(
            try world.post("/api/v1/cases/\(number)/assign", as: tier1, json: ["agent_id": tier1.agentID.uuidString.lowercased()], ifMatch: 1).status
                == 200)
        let escalated = try world.must(number, "escalate", as: tier1, version: 2)
        #expect(escalated["assignee"] is NSNull)
        #expect(
            try world.post("/api/v1/cases/\(number)/assign", as: tier2, json: ["agent_id": tier2.agentID.uuidString.lowercased()], ifMatch: 3).status
                == 200)
        let awaiting = try world.must(number, "request_documents", as: tier2, version: 4, extra: ["reason": "No match."])
        #expect(awaiting["assignee"] is NSNull)
        // A tier-3 assignee stays through the documents desk; an engineer assigned there stays through engineering.
        let tier3 = try world.agent(.tier3)
        #expect(
            try world.post("/api/v1/cases/\(number)/assign", as: tier3, json: ["agent_id": tier3.agentID.uuidString.lowercased()], ifMatch: 5).status
                == 200)
        let review = try world.must(number, "begin_review", as: tier3, version: 6)
        #expect((review["assignee"] as? [String: Any])?["tier"] as? String == "tier3")
        let events = try world.events(number, as: tier3)
        let unassigned = events.filter { $0["type"] as? String == "unassigned" }.compactMap { $0["data"] as? [String: Any] }
        #expect(unassigned.map { $0["previous"] as? String } == [tier1.agentID.uuidString.lowercased(), tier2.agentID.uuidString.lowercased()])
    }
}

@Suite(.serialized) struct PossibleDuplicatesAPITests {
    @Test func theCreatedAnswerListsOtherOpenCasesForTheSameAccountSerialOrIMEI() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let first = try world.openCase(as: tier1)
        #expect(first["possible_duplicates"] as? [[String: String]] == [])
        let firstNumber = first["case_number"] as! String
        // Same account e-mail, no device.
        let second = try world.openCase(as: tier1, CaseWorld.caseBody(devices: []))
        #expect(second["possible_duplicates"] as? [[String: String]] == [["case_number": firstNumber, "state": "new"]])
        // Another account, but the first case's IMEI (typed with spaces).
        let third = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "other@example.com", devices: [.init(imei: "49015 42032 37518")]))
        #expect((third["possible_duplicates"] as? [[String: String]])?.compactMap { $0["case_number"] } == [firstNumber])
        // Nothing in common: none; a finished case is not a duplicate.
        let unrelated = try world.openCase(
            as: tier1, CaseWorld.caseBody(accountEmail: "stranger@example.com", devices: [.init(serial: "F2LZZZ000111")]))
        #expect(unrelated["possible_duplicates"] as? [[String: String]] == [])
        let connection = try world.database()
        defer { connection.close() }
        try connection.execute("UPDATE cases SET state = 'closed' WHERE case_number = \(firstNumber)")
        let fourth = try world.openCase(as: tier1, CaseWorld.caseBody(devices: []))
        #expect((fourth["possible_duplicates"] as? [[String: String]])?.compactMap { $0["case_number"] } == [second["case_number"] as! String])
        // Never in a later representation.
        #expect(try world.caseBody(fourth["case_number"] as! String, as: tier1)["possible_duplicates"] == nil)
    }
}

@Suite(.serialized) struct SecurityQuestionsAPITests {
    @Test func questionsOnFileNeverAnAnswerAndWhichMatched() throws {
        let w = try EvidenceWorld()
        let path = "/api/v1/cases/\(w.number)/questions"
        let before = try w.world.get(path, as: w.tier1)
        #expect(before.status == 200)
        let items = try before.json()["items"] as? [[String: Any]] ?? []
        #expect(
            items.map { "\($0["id"] as? String ?? "")|\($0["question"] as? String ?? "")|\($0["matched"] as? Bool ?? true)" }
                == ["q1|City of birth?|false", "q2|First pet?|false"])
        #expect(!before.text.contains(EvidenceWorld.onFileAnswer) && !before.text.contains("argon2"))
        #expect(
            try w.file([
                "type": "security_answers", "answers": [["question_id": "q1", "answer": "new york"], ["question_id": "q2", "answer": "Felix"]],
            ]).status == 201)
        let after = try w.world.get(path, as: w.tier1).json()["items"] as? [[String: Any]]
        #expect(after?.map { $0["matched"] as? Bool } == [true, false])
        // Not for API clients or anonymous callers; an account not on file is said so.
        let client = try w.world.service.addClient()
        let signed = try w.world.client.request("GET", path, headers: w.world.service.clientHeaders(client, method: "GET", target: path, body: []))
        #expect(signed.status == 403)
        #expect(try w.world.get(path, as: nil).status == 401)
        let stranger =
            try w.world.openCase(as: w.tier1, CaseWorld.caseBody(accountEmail: "nobody@example.com", devices: []))["case_number"] as! String
        let none = try w.world.get("/api/v1/cases/\(stranger)/questions", as: w.tier1)
        #expect(none.status == 404)
        #expect(try none.json()["code"] as? String == "no_account_on_file")
    }
}

@Suite(.serialized) struct AccessCodeAPITests {
    @Test func aNewCodeReplacesTheOldOneAndLiftsTheStatusLock() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created["case_number"] as! String
        let old = created["access_code"] as! String
        // Nine wrong tries lock the number, even to the right code.
        for _ in 0..<9 { _ = try world.status(number, "AAAA-AAAA-AAAA-AAAA") }
        #expect(try world.status(number, old).status == 429)
        #expect(try world.post("/api/v1/cases/\(number)/access-code", as: nil, json: [String: Any]()).status == 401)
        // Tier 2, having checked the caller, is answered the code to read out (api.md v1.2).
        let tier2 = try world.agent(.tier2)
        let issued = try world.post("/api/v1/cases/\(number)/access-code", as: tier2, json: ["caller_check": "Called back on the number on file"])
        #expect(issued.status == 201)
        #expect(issued.header("Cache-Control") == "no-store")
        let code = try #require(try issued.json()["access_code"] as? String)
        #expect(code != old)
        #expect(try world.status(number, code).status == 200)
        // The old code answers like any wrong one.
        #expect(try world.status(number, old).status == 404)
        let event = try #require(try world.events(number, as: tier1).last)
        #expect(event["type"] as? String == "access_code_reissued")
        #expect(event["actor"] as? String == "agent:\(tier2.agentID.uuidString.lowercased())")
        #expect((event["data"] as? [String: Any])?["caller_check"] as? String == "Called back on the number on file")
        #expect(!(try world.get("/api/v1/cases/\(number)/events", as: tier1).text.contains(AccessCodeSymbols.of(code))))
        // Never shown again.
        #expect(!(try world.get("/api/v1/cases/\(number)", as: tier1).text.contains(code)))
        #expect(try world.post("/api/v1/cases/482109375519/access-code", as: tier1, json: [String: Any]()).status == 404)
    }
}

enum AccessCodeSymbols {
    static func of(_ display: String) -> String { display.replacingOccurrences(of: "-", with: "") }
}

@Suite(.serialized) final class APIClientReachTests {
    // Each request signed at its own second: the same signature twice is refused as a replay. Counted back from one
    // start, not from each call's clock: a second passing between two calls would otherwise give both the same one.
    let start = Int64(Date().timeIntervalSince1970)
    var skew: Int64 = 0

    func signed(
        _ world: CaseWorld, _ client: NewAPIClient, _ method: String, _ target: String, json: String? = nil,
        extra: [(String, String)] = []
    ) throws -> TestHTTPResponse {
        let body = Array((json ?? "").utf8)
        skew += 1
        let t = start - skew
        var headers = world.service.clientHeaders(client, method: method, target: target, body: body, timestamp: t) + extra
        if json != nil { headers.append(("Content-Type", "application/json")) }
        return try world.client.request(method, target, headers: headers, body: body)
    }

    @Test func clientsReadTheCustomersViewOfTheirOwnCasesOnly() throws {
        let world = try CaseWorld()
        let (partner, rival) = (try world.service.addClient(), try world.service.addClient())
        let body = String(decoding: try CaseWorld.caseBody().bytes, as: UTF8.self)
        let opened = try signed(world, partner, "POST", "/api/v1/cases", json: body)
        #expect(opened.status == 201)
        let number = try opened.json()["case_number"] as! String
        let code = try opened.json()["access_code"] as! String
        let mine = try signed(world, partner, "GET", "/api/v1/cases/\(number)/status")
        #expect(mine.status == 200)
        #expect(mine.header("Cache-Control") == "no-store")
        // Exactly what the customer sees with the access code.
        let customer = try world.status(number, code)
        #expect(try mine.json()["stage"] as? String == (try customer.json()["stage"] as? String))
        #expect(try mine.json()["next_step"] as? String == (try customer.json()["next_step"] as? String))
        #expect(!mine.text.contains("victim@example.com") && !mine.text.contains("allowed_actions"))
        // Another partner's case, an agent's case, an unknown one: the same 404.
        #expect(try signed(world, rival, "GET", "/api/v1/cases/\(number)/status").status == 404)
        let tier1 = try world.agent(.tier1)
        let agents = try world.openCase(as: tier1)["case_number"] as! String
        #expect(try signed(world, partner, "GET", "/api/v1/cases/\(agents)/status").status == 404)
        // Agents use the case itself.
        #expect(try world.get("/api/v1/cases/\(number)/status", as: tier1).status == 403)
    }

    @Test func clientsFileIntoTheirOwnCasesOrWithTheCasesAccessCode() throws {
        let world = try CaseWorld()
        let (partner, rival) = (try world.service.addClient(), try world.service.addClient())
        let device = #"{"type":"device","serial":"C02XK1ZJH3QD"}"#
        let body = String(decoding: try CaseWorld.caseBody().bytes, as: UTF8.self)
        let number = try signed(world, partner, "POST", "/api/v1/cases", json: body).json()["case_number"] as! String
        let target = "/api/v1/cases/\(number)/evidence"
        #expect(try signed(world, partner, "POST", target, json: device).status == 201)
        // Another partner, by number alone: 404, like an unknown case.
        #expect(try signed(world, rival, "POST", target, json: device).status == 404)
        // With the case's access code: allowed (an agent's case, here).
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let other = "/api/v1/cases/\(created["case_number"] as! String)/evidence"
        #expect(try signed(world, rival, "POST", other, json: device, extra: [("Reclaim-Access-Code", "AAAA-AAAA-AAAA-AAAA")]).status == 404)
        let withCode = try signed(world, rival, "POST", other, json: device, extra: [("Reclaim-Access-Code", created["access_code"] as! String)])
        #expect(withCode.status == 201, "\(withCode.text)")
        // A wrong code counts against the case number like a customer's: nine lock it.
        for _ in 0..<8 { _ = try signed(world, rival, "POST", other, json: device, extra: [("Reclaim-Access-Code", "BBBB-BBBB-BBBB-BBBB")]) }
        #expect(try world.status(created["case_number"] as! String, created["access_code"] as! String).status == 429)
        // A finished case: 409 case_not_open, for the client that may know it.
        let connection = try world.database()
        defer { connection.close() }
        try connection.execute("UPDATE cases SET state = 'resolved' WHERE case_number = \(number)")
        let finished = try signed(world, partner, "POST", target, json: device)
        #expect(finished.status == 409)
        #expect(try finished.json()["code"] as? String == "case_not_open")
        #expect(try signed(world, rival, "POST", target, json: device).status == 404)
    }
}

@Suite(.serialized) struct MergeAPITests {
    @Test func mergeMovesEverythingToTheTargetAndUnmergeBringsItBack() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let target = try world.openCase(as: tier1)
        let source = try world.openCase(as: tier1, CaseWorld.caseBody(devices: []))
        let (into, from) = (target["case_number"] as! String, source["case_number"] as! String)
        #expect(try world.post("/api/v1/cases/\(from)/notes", as: tier1, json: ["body": "Second call.", "visibility": "customer"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/evidence", as: tier1, json: ["type": "device", "serial": "C02XK1ZJH3QD"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/actions/freeze", as: tier2, json: [String: Any](), ifMatch: 1).status == 200)
        let merge = "/api/v1/cases/\(from)/merge"
        // Tier 1 may not; a stale If-Match; no If-Match; the case itself; an unknown target.
        #expect(try world.post(merge, as: tier1, json: ["into": into], ifMatch: 2).status == 403)
        #expect(try world.post(merge, as: tier2, json: ["into": into], ifMatch: 1).status == 412)
        #expect(try world.post(merge, as: tier2, json: ["into": into]).status == 428)
        #expect(try world.post(merge, as: tier2, json: ["into": from], ifMatch: 2).json()["code"] as? String == "case_not_open")
        #expect(try world.post(merge, as: tier2, json: ["into": "12345"], ifMatch: 2).status == 422)
        // Another account: refused.
        let stranger =
            try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "someone.else@example.com", devices: []))["case_number"] as! String
        let other = try world.post(merge, as: tier2, json: ["into": stranger], ifMatch: 2)
        #expect(other.status == 409)
        #expect(try other.json()["code"] as? String == "not_same_account")
        let merged = try world.post(merge, as: tier2, json: ["into": into, "reason": "Same caller, second channel."], ifMatch: 2)
        #expect(merged.status == 200, "\(merged.text)")
        let body = try merged.json()
        #expect(body["state"] as? String == "merged")
        #expect(body["merged_into"] as? String == into)
        #expect(body["frozen"] as? Bool == false)
        // Merged: no transition; an internal note, the undo, a new access code (tier 2 may also be answered it).
        #expect(body["allowed_actions"] as? [String] == ["note_internal", "unmerge", "reissue_access_code", "give_access_code"])
        // The target shows and counts the merged case's items.
        let evidence = try world.get("/api/v1/cases/\(into)/evidence", as: tier2).json()["items"] as? [[String: Any]] ?? []
        #expect(evidence.map { $0["from_case"] as? String } == [from])
        let notes = try world.get("/api/v1/cases/\(into)/notes", as: tier2).json()["items"] as? [[String: Any]] ?? []
        #expect(notes.compactMap { $0["from_case"] as? String } == [from])
        // No account is on file here: the merged device counts on the target, as mismatched.
        #expect((try world.get("/api/v1/cases/\(into)/verification", as: tier2).json()["factors"] as? [String: String])?["device"] == "mismatched")
        #expect(try world.events(from, as: tier2).contains { $0["type"] as? String == "merged" })
        #expect(try world.events(into, as: tier2).contains { $0["type"] as? String == "merge_received" })
        // The customer with the merged case's own code sees the target's status.
        let status = try world.status(from, source["access_code"] as! String).json()
        #expect(status["case_number"] as? String == into)
        #expect(status["merged_from"] as? String == from)
        #expect((status["notes"] as? [[String: Any]])?.first?["body"] as? String == "Second call.")
        // Merged is terminal: no second merge, no transition.
        #expect(try world.post(merge, as: tier2, json: ["into": into], ifMatch: body["version"] as! Int).json()["code"] as? String == "case_not_open")
        // Unmerge: stale first, then back to the state it left; items leave the target.
        let unmerge = "/api/v1/cases/\(from)/unmerge"
        #expect(try world.post(unmerge, as: tier2, json: [String: Any](), ifMatch: 1).status == 412)
        #expect(try world.post(unmerge, as: tier1, json: [String: Any](), ifMatch: body["version"] as! Int).status == 403)
        let back = try world.post(unmerge, as: tier2, json: ["reason": "Different incident after all."], ifMatch: body["version"] as! Int)
        #expect(back.status == 200, "\(back.text)")
        #expect(try back.json()["state"] as? String == "new")
        #expect(try back.json()["merged_into"] is NSNull)
        #expect((try world.get("/api/v1/cases/\(into)/evidence", as: tier2).json()["items"] as? [Any])?.isEmpty == true)
        #expect(try world.status(from, source["access_code"] as! String).json()["case_number"] as? String == from)
        #expect(try world.events(into, as: tier2).contains { $0["type"] as? String == "unmerge_left" })
        // An open case cannot be unmerged.
        #expect(
            try world.post(unmerge, as: tier2, json: [String: Any](), ifMatch: try back.json()["version"] as! Int).json()["code"] as? String
                == "case_not_open")
    }

    /// A merged case's documents count on the case it joined (its page lists and counts them), so the queue's
    /// `unreviewed` filter finds that case too and its row's count says how many: one fact (`documents_pending`, 0026),
    /// kept by the database whoever files, reviews, merges or unmerges.
    @Test func aMergedCasesUnreviewedDocumentPutsItsTargetInTheUnreviewedQueue() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let into = try world.openCase(as: tier1)["case_number"] as! String
        let (from, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        try world.customerUpload(from, code: code, type: "invoice")
        func unreviewed(_ value: Bool) throws -> [String: Int] {
            let items = try world.get("/api/v1/cases?unreviewed=\(value)", as: tier3).json()["items"] as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["case_number"] as! String, $0["unreviewed_documents"] as! Int) })
        }
        #expect(try unreviewed(true) == [from: 1])
        #expect(try unreviewed(false)[into] == 0)
        let merged = try world.post("/api/v1/cases/\(from)/merge", as: tier2, json: ["into": into], ifMatch: 3)
        #expect(merged.status == 200, "\(merged.text)")
        // The target: in the filter, with the merged document counted, on its row and its page alike.
        #expect(try unreviewed(true)[into] == 1)
        #expect(try world.caseBody(into, as: tier3)["unreviewed_documents"] as? Int == 1)
        // Unmerged, the document leaves with its case.
        let back = try world.post("/api/v1/cases/\(from)/unmerge", as: tier2, json: [String: Any](), ifMatch: try merged.json()["version"] as! Int)
        #expect(back.status == 200, "\(back.text)")
        #expect(try unreviewed(true) == [from: 1])
        #expect(try world.caseBody(into, as: tier3)["unreviewed_documents"] as? Int == 0)
        // Merged again and the document reviewed there: neither case is waiting for a review any more.
        #expect(
            try world.post("/api/v1/cases/\(from)/merge", as: tier2, json: ["into": into], ifMatch: try back.json()["version"] as! Int).status == 200)
        let document = try #require(try world.pendingDocuments(into, as: tier3).first)
        try world.mustReview(document, "accepted", as: tier3)
        #expect(try unreviewed(true).isEmpty)
        #expect(try unreviewed(false)[into] == 0)
        #expect(try world.caseBody(into, as: tier3)["unreviewed_documents"] as? Int == 0)
    }

    /// v1.1 Merge: "each item carries `from_case`", in the customer's status too (the target's own code, or the merged
    /// number's): the customer can tell what they said on the second call from what was said on the first.
    @Test func theCustomersStatusOfTheTargetSaysWhichCaseEachItemCameFrom() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let target = try world.openCase(as: tier1)
        let source = try world.openCase(as: tier1, CaseWorld.caseBody(devices: []))
        let (into, from) = (target["case_number"] as! String, source["case_number"] as! String)
        #expect(try world.post("/api/v1/cases/\(into)/notes", as: tier1, json: ["body": "First call.", "visibility": "customer"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(into)/evidence", as: tier1, json: ["type": "device", "serial": "C02XK1ZJH3QD"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/notes", as: tier1, json: ["body": "Second call.", "visibility": "customer"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/notes", as: tier1, json: ["body": "Agents only.", "visibility": "internal"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/evidence", as: tier1, json: ["type": "device", "serial": "F2LXBROWSER1"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(from)/merge", as: tier2, json: ["into": into], ifMatch: 1).status == 200)

        // The target's own code sees both; the merged number's code only what its own case brought (api.md v1.2:
        // its code was given to its customer, and the target's items are the target's customer's).
        for (number, code, seen) in [(into, target["access_code"] as! String, [nil, from]), (from, source["access_code"] as! String, [from])] {
            let status = try world.status(number, code)
            #expect(status.status == 200, "\(status.text)")
            let body = try status.json()
            #expect(body["case_number"] as? String == into)
            let notes = body["notes"] as? [[String: Any]] ?? []
            #expect(notes.map { $0["body"] as? String } == (seen.count == 2 ? ["First call.", "Second call."] : ["Second call."]))
            #expect(notes.map { $0["from_case"] as? String } == seen)
            let evidence = body["evidence"] as? [[String: Any]] ?? []
            #expect(evidence.map { $0["from_case"] as? String } == seen)
        }
        // Unmerged, the items are the source's own again: no from_case anywhere.
        let version = try world.get("/api/v1/cases/\(from)", as: tier2).json()["version"] as! Int
        #expect(try world.post("/api/v1/cases/\(from)/unmerge", as: tier2, json: [String: Any](), ifMatch: version).status == 200)
        let own = try world.status(from, source["access_code"] as! String).json()
        #expect((own["notes"] as? [[String: Any]])?.map { $0["from_case"] == nil } == [true])
        #expect((own["evidence"] as? [[String: Any]])?.map { $0["from_case"] == nil } == [true])
    }

    /// api.md v1.2 "Merge knows whose case it is": two cases on one account e-mail but naming different people are
    /// refused (409 `different_customer`, naming the fields) unless the agent confirms they are one person; the event
    /// records the confirmation.
    @Test func casesOfDifferentCustomersMergeOnlyWhenConfirmed() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let into = try world.openCase(as: tier1)["case_number"] as! String
        var stranger = CaseWorld.caseBody(contactEmail: "eve@elsewhere.example", devices: [])
        stranger.customer.name = "Eve Stranger"
        let from = try world.openCase(as: tier1, stranger)["case_number"] as! String
        let merge = "/api/v1/cases/\(from)/merge"
        let refused = try world.post(merge, as: tier2, json: ["into": into], ifMatch: 1)
        #expect(refused.status == 409)
        #expect(try refused.json()["code"] as? String == "different_customer")
        #expect(try refused.json()["differing"] as? [String] == ["customer.name", "customer.contact_email"])
        #expect(try world.post(merge, as: tier2, json: ["into": into, "same_customer_confirmed": false], ifMatch: 1).status == 409)
        // Nothing moved: the case is still open at its version.
        #expect(try world.get("/api/v1/cases/\(from)", as: tier2).json()["state"] as? String == "new")
        let merged = try world.post(
            merge, as: tier2, json: ["into": into, "same_customer_confirmed": true, "reason": "Her maiden name; she called."],
            ifMatch: 1)
        #expect(merged.status == 200, "\(merged.text)")
        let event = try world.events(from, as: tier2).first { $0["type"] as? String == "merged" }
        let data = event?["data"] as? [String: Any] ?? [:]
        #expect(data["same_customer_confirmed"] as? Bool == true)
        #expect(data["differing"] as? [String] == ["customer.name", "customer.contact_email"])

        // The same person written alike (case, spacing) needs no confirmation; only one field differing is refused.
        let a = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "two@example.com", devices: []))["case_number"] as! String
        var alike = CaseWorld.caseBody(accountEmail: "two@example.com", contactEmail: "Victim.Home@example.net ", devices: [])
        alike.customer.name = "  ada   VICTIM"
        let b = try world.openCase(as: tier1, alike)["case_number"] as! String
        #expect(try world.post("/api/v1/cases/\(b)/merge", as: tier2, json: ["into": a], ifMatch: 1).status == 200)
        let c =
            try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "two@example.com", contactEmail: "other@example.net", devices: []))[
                "case_number"] as! String
        let one = try world.post("/api/v1/cases/\(c)/merge", as: tier2, json: ["into": a], ifMatch: 1)
        #expect(try one.json()["differing"] as? [String] == ["customer.contact_email"])
    }

    /// The attacker's side of a merge: customer A (whose case was merged away) holds A's access code; after the merge,
    /// neither the status page's API nor the API client's customer view shows A anything of B's notes or evidence.
    @Test func theMergedCustomersCodeSeesNothingOfTheOtherCustomers() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let partner = try world.service.addClient()
        let victim = try world.openCase(as: tier1)
        let b = victim["case_number"] as! String
        #expect(
            try world.post("/api/v1/cases/\(b)/notes", as: tier1, json: ["body": "Call B at +1 555 0100.", "visibility": "customer"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(b)/evidence", as: tier1, json: ["type": "device", "serial": "C02XK1ZJH3QD"]).status == 201)
        // A is opened by a partner, for someone else on the same account e-mail.
        var other = CaseWorld.caseBody(contactEmail: "mallory@elsewhere.example", devices: [])
        other.customer.name = "Mallory"
        let client = APIClientReachTests()
        let opened = try client.signed(world, partner, "POST", "/api/v1/cases", json: String(decoding: try other.bytes, as: UTF8.self))
        #expect(opened.status == 201, "\(opened.text)")
        let (a, code) = (try opened.json()["case_number"] as! String, try opened.json()["access_code"] as! String)
        #expect(try world.post("/api/v1/cases/\(a)/notes", as: tier1, json: ["body": "Hello A.", "visibility": "customer"]).status == 201)
        #expect(try world.post("/api/v1/cases/\(a)/merge", as: tier2, json: ["into": b, "same_customer_confirmed": true], ifMatch: 1).status == 200)

        let page = try world.status(a, code)
        let api = try client.signed(world, partner, "GET", "/api/v1/cases/\(a)/status")
        for view in [page, api] {
            #expect(view.status == 200, "\(view.text)")
            let body = try view.json()
            #expect(body["case_number"] as? String == b)
            #expect(body["merged_from"] as? String == a)
            #expect((body["notes"] as? [[String: Any]])?.map { $0["body"] as? String } == ["Hello A."])
            #expect((body["evidence"] as? [[String: Any]])?.isEmpty == true)
            #expect(!view.text.contains("555 0100") && !view.text.contains("C02XK1ZJH3QD"))
        }
        // B's own code still sees B's items.
        let own = try world.status(b, victim["access_code"] as! String).json()
        #expect((own["evidence"] as? [[String: Any]])?.count == 1)
    }

    @Test func noUnmergeOnceTheTargetIsFinished() throws {
        let world = try CaseWorld()
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let into = try world.openCase(as: tier1)["case_number"] as! String
        let opened = try world.openCase(as: tier1)
        let from = opened["case_number"] as! String
        let merged = try world.post("/api/v1/cases/\(from)/merge", as: tier2, json: ["into": into], ifMatch: 1).json()
        // The merged number's customer uploads into the case it went into.
        try world.customerUpload(from, code: opened["access_code"] as! String, type: "invoice")
        let items = try world.get("/api/v1/cases/\(into)/evidence", as: tier2).json()["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["type"] as? String } == ["invoice"] && items.first?["from_case"] == nil)
        try world.must(into, "escalate", as: tier1, version: 1)
        try world.must(into, "request_documents", as: tier2, version: 2, extra: ["reason": "x"])
        let tier3 = try world.agent(.tier3)
        try world.must(into, "begin_review", as: tier3, version: 3)
        try world.must(into, "reject", as: tier3, version: 4, extra: ["reason": "No proof."])
        let refused = try world.post("/api/v1/cases/\(from)/unmerge", as: tier2, json: [String: Any](), ifMatch: merged["version"] as! Int)
        #expect(refused.status == 409)
        #expect(try refused.json()["code"] as? String == "case_not_open")
    }
}
