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

    @Test func completeWaitsForEveryStepAndNeverPerformsOne() throws {
        let w = try EvidenceWorld()
        let engineer = try w.world.agent(.engineering)
        let tier3 = try w.world.agent(.tier3)
        let (number, version) = try engineeringCase(w)
        // `complete` never performs a step (api.md v1.3): one it names that is not done is refused, and nothing is scheduled.
        let named = try w.world.act(number, "complete", as: engineer, version: version, extra: ["unlock": "remove_rescue_email"])
        #expect(named.status == 409)
        #expect(try named.json()["code"] as? String == "unlock_not_scheduled")
        var body = try w.world.caseBody(number, as: engineer)
        #expect(body["version"] as? Int == version)
        #expect(((body["unlocks"] as? [String: Any])?["scheduled"] as? [[String: Any]])?.isEmpty == true)
        let first = try w.world.post("/api/v1/cases/\(number)/unlocks", as: engineer, json: ["step": "remove_rescue_email"], ifMatch: version)
        #expect(first.status == 200, "\(first.text)")
        body = try w.world.caseBody(number, as: engineer)
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

    @Test func completeWithNoStepRequiredStillWaitsForOneDoneAfterTheCoolingOff() throws {
        let w = try EvidenceWorld()
        let engineer = try w.world.agent(.engineering)
        // Nothing the thief changed is known (api.md v1.3): `complete` still needs a step, done through the cooling-off.
        let (plain, plainVersion) = try engineeringCase(w, facts: [:])
        let refused = try w.world.act(plain, "complete", as: engineer, version: plainVersion)
        #expect(try refused.json()["code"] as? String == "unlock_required")
        let named = try w.world.act(plain, "complete", as: engineer, version: plainVersion, extra: ["unlock": "reset_security_questions"])
        #expect(named.status == 409)
        #expect(try named.json()["code"] as? String == "unlock_not_scheduled")
        let scheduled = try w.world.post(
            "/api/v1/cases/\(plain)/unlocks", as: engineer, json: ["step": "reset_security_questions"], ifMatch: plainVersion)
        #expect(scheduled.status == 200, "\(scheduled.text)")
        #expect(try w.world.act(plain, "complete", as: engineer, version: plainVersion + 1).status == 409)
        w.world.service.clock.advance(by: 86_401)
        let later = try w.world.agent(.engineering)  // a day later: the first one's session has expired
        #expect(
            try eventually(10) {
                (try w.world.caseBody(plain, as: later)["unlocks"] as? [String: Any])?["done"] as? [String] == ["reset_security_questions"]
            })
        let done = try w.world.must(plain, "complete", as: later, version: plainVersion + 2, extra: ["unlock": "reset_security_questions"])
        #expect(done["state"] as? String == "resolved")
    }
}
