import Foundation
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

/// api.md v1.2 "A rejected document leads somewhere": the customer reason (validated, stored, shown in the customer's
/// language, mailed), the automatic return to `awaiting_documents`, and `request_documents` from review.
@Suite(.serialized) struct RejectedDocumentTests {
    /// A case under review with an invoice and an IMEI photo filed by the customer: (number, code, invoice id, photo id).
    func underReview(_ world: CaseWorld, tier1: AgentSession, tier2: AgentSession, tier3: AgentSession) throws -> (String, String, String, String) {
        let (number, code) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        try world.customerUpload(number, code: code, type: "invoice")
        try world.customerUpload(number, code: code, type: "imei_photo")
        let items = try world.get("/api/v1/cases/\(number)/evidence", as: tier3).json()["items"] as? [[String: Any]] ?? []
        func id(_ type: String) -> String { items.first { $0["type"] as? String == type }?["id"] as? String ?? "" }
        return (number, code, id("invoice"), id("imei_photo"))
    }

    func review(_ world: CaseWorld, _ id: String, as session: AgentSession, _ json: [String: Any]) throws -> TestHTTPResponse {
        try world.post("/api/v1/evidence/\(id)/review", as: session, json: ["reason": "Checked against the device on file."].merging(json) { $1 })
    }

    func status(_ world: CaseWorld, _ number: String, _ code: String, language: String) throws -> [String: Any] {
        try world.client.request("POST", "/api/v1/status", json: ["case_number": number, "access_code": code, "language": language]).json()
    }

    func fieldErrors(_ response: TestHTTPResponse) throws -> [String] {
        (try response.json()["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }

    @Test func aDocumentsRejectionNeedsACustomerReasonFromTheVocabularyAndNothingElseTakesOne() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, _, invoice, _) = try underReview(world, tier1: tier1, tier2: tier2, tier3: tier3)
        // Missing, unknown, of the wrong type, or with an acceptance: 422 naming customer_reason; nothing recorded.
        for json: [String: Any] in [
            ["decision": "rejected"], ["decision": "rejected", "customer_reason": "ugly"],
            ["decision": "rejected", "customer_reason": 3], ["decision": "accepted", "customer_reason": "unreadable"],
        ] {
            let refused = try review(world, invoice, as: tier3, json)
            #expect(refused.status == 422, "\(json): \(refused.text)")
            #expect(try refused.json()["code"] as? String == "validation_failed")
            #expect(try fieldErrors(refused) == ["customer_reason"], "\(json)")
        }
        #expect(try world.pendingDocuments(number, as: tier3).count == 2)
        // Typed details are shown to the customer only as received: a reason there would tell them a match result.
        let card = try world.post(
            "/api/v1/cases/\(number)/evidence", as: tier1,
            json: ["type": "card", "number": "4111111111111111", "exp_month": 12, "exp_year": 2030])
        let cardID = try #require(try card.json()["id"] as? String)
        let typed = try review(world, cardID, as: tier2, ["decision": "rejected", "customer_reason": "unreadable"])
        let typedFields = try fieldErrors(typed)
        #expect(typed.status == 422 && typedFields == ["customer_reason"])
        #expect(try review(world, cardID, as: tier2, ["decision": "rejected"]).status == 200)
        // Every word of the vocabulary is taken, and the review answers with it.
        let rejected = try review(world, invoice, as: tier3, ["decision": "rejected", "customer_reason": "wrong_document"])
        #expect(rejected.status == 200, "\(rejected.text)")
        #expect(try rejected.json()["customer_reason"] as? String == "wrong_document")
        let vocabulary = try world.get("/api/v1/vocabulary", as: nil).json()
        #expect(vocabulary["customer_reasons"] as? [String] == ["unreadable", "wrong_document", "does_not_match", "incomplete", "other"])
    }

    @Test func aRejectionThatLeavesARequirementUnmetSendsTheCaseBackToTheCustomerWithItsReason() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, code, invoice, photo) = try underReview(world, tier1: tier1, tier2: tier2, tier3: tier3)
        #expect(try world.caseBody(number, as: tier3)["state"] as? String == "document_review")
        try world.mustReview(photo, "accepted", as: tier3)
        let rejected = try review(world, invoice, as: tier3, ["decision": "rejected", "customer_reason": "unreadable"])
        #expect(rejected.status == 200, "\(rejected.text)")

        // Back with the customer by itself: the system's request_documents, the clock paused.
        let body = try world.caseBody(number, as: tier3)
        #expect(body["state"] as? String == "awaiting_documents")
        #expect(body["due_at"] is NSNull)
        let events = try world.events(number, as: tier3)
        let reviewed = try #require(events.last { $0.type == "evidence_reviewed" })
        #expect(reviewed.data["customer_reason"] == .string("unreadable"))
        let returned = try #require(events.last { $0.type == "transition" })
        #expect(
            returned.actor == "system" && returned.data["action"] == .string("request_documents")
                && returned.data["from"] == .string("document_review") && returned.data["to"] == .string("awaiting_documents"))
        // Agents see the reason on the evidence.
        let items = try world.get("/api/v1/cases/\(number)/evidence", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(items.first { $0["id"] as? String == invoice }?["customer_reason"] as? String == "unreadable")
        #expect(items.first { $0["id"] as? String == photo }?["customer_reason"] is NSNull)

        // One mail says why, in the same transaction (no documents-requested mail beside it).
        let messages = try world.get("/api/v1/cases/\(number)/messages", as: tier3).json()["items"] as? [[String: Any]] ?? []
        let mails = messages.filter { $0["channel"] as? String == "mail" }.compactMap { $0["kind"] as? String }
        #expect(mails.suffix(2) == ["state_changed", "document_rejected"], "\(mails)")

        // The customer reads it in their language; heading, next step, progress and lists agree.
        let page = try status(world, number, code, language: "zh-Hant")
        let catalogue = CustomerCatalogue.traditionalChinese
        #expect(page["stage"] as? String == catalogue[.stageDocumentRejected])
        #expect(page["next_step_key"] as? String == CustomerText.nextUploadAgainPaused.rawValue)
        let progress = page["progress"] as? [[String: Any]] ?? []
        #expect(progress.first { $0["key"] as? String == "documents" }?["mark"] as? String == "current")
        #expect(page["missing"] as? [String] == ["proof_of_purchase"])
        let shown = page["evidence"] as? [[String: Any]] ?? []
        let invoiceShown = try #require(shown.first { $0["type"] as? String == "invoice" })
        #expect(invoiceShown["status"] as? String == "rejected" && invoiceShown["customer_reason"] as? String == "unreadable")
        #expect(invoiceShown["customer_reason_text"] as? String == catalogue[.reasonUnreadable])
        #expect(shown.first { $0["type"] as? String == "imei_photo" }?["customer_reason"] == nil)
        // Another invoice arrives: under review again by itself, the rejected one still shown with its reason.
        try world.customerUpload(number, code: code, type: "invoice")
        #expect(try world.caseBody(number, as: tier3)["state"] as? String == "document_review")
        let again = try status(world, number, code, language: "en")
        #expect(again["stage_key"] as? String == CustomerText.stageReview.rawValue)
        #expect(
            (again["evidence"] as? [[String: Any]] ?? []).contains {
                $0["customer_reason_text"] as? String == CustomerCatalogue.english[.reasonUnreadable]
            })
    }

    @Test func whileAnotherDocumentWaitsForReviewTheCaseStaysButThePageSaysWhatToSendAgain() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, code, invoice, _) = try underReview(world, tier1: tier1, tier2: tier2, tier3: tier3)
        #expect(try review(world, invoice, as: tier3, ["decision": "rejected", "customer_reason": "does_not_match"]).status == 200)
        // The photo is still pending: no move, but the page no longer says "we are reviewing" nor ticks the documents.
        #expect(try world.caseBody(number, as: tier3)["state"] as? String == "document_review")
        let page = try status(world, number, code, language: "zh-Hans")
        #expect(page["stage"] as? String == CustomerCatalogue.simplifiedChinese[.stageDocumentRejected])
        #expect(page["next_step_key"] as? String == CustomerText.nextUploadAgain.rawValue)
        let marks = (page["progress"] as? [[String: Any]] ?? []).map { "\($0["key"] as? String ?? ""):\($0["mark"] as? String ?? "")" }
        #expect(marks.contains("documents:current") && marks.contains("review:upcoming"))
        #expect(
            (page["evidence"] as? [[String: Any]] ?? []).contains {
                $0["customer_reason_text"] as? String == CustomerCatalogue.simplifiedChinese[.reasonDoesNotMatch]
            })
        let messages = try world.get("/api/v1/cases/\(number)/messages", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(messages.filter { $0["channel"] as? String == "mail" }.last?["kind"] as? String == "document_rejected")
    }

    @Test func aDocumentBroughtByAMergedCaseSendsTheCaseItWentIntoBack() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (target, _) = try world.awaitingDocuments(tier1: tier1, tier2: tier2)
        let duplicate = try world.openCase(as: tier1)
        try world.customerUpload(duplicate.caseNumber, code: try #require(duplicate.accessCode), type: "invoice")
        try world.customerUpload(duplicate.caseNumber, code: try #require(duplicate.accessCode), type: "imei_photo")
        let merged = try world.post(
            "/api/v1/cases/\(duplicate.caseNumber)/merge", as: tier2, json: ["into": target, "reason": "Same victim."], ifMatch: 1)
        #expect(merged.status == 200, "\(merged.text)")
        try world.must(target, "begin_review", as: tier3, version: try #require(try world.caseBody(target, as: tier3)["version"] as? Int))
        let items = try world.get("/api/v1/cases/\(target)/evidence", as: tier3).json()["items"] as? [[String: Any]] ?? []
        func id(_ type: String) throws -> String { try #require(items.first { $0["type"] as? String == type }?["id"] as? String) }
        try world.mustReview(try id("imei_photo"), "accepted", as: tier3)
        try world.mustReview(try id("invoice"), "rejected", as: tier3, customerReason: "incomplete")
        #expect(try world.caseBody(target, as: tier3)["state"] as? String == "awaiting_documents")
        let messages = try world.get("/api/v1/cases/\(target)/messages", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(messages.filter { $0["channel"] as? String == "mail" }.last?["kind"] as? String == "document_rejected")
    }

    @Test func tierThreeMayRequestDocumentsAgainFromReview() throws {
        let world = try CaseWorld()
        let (tier1, tier2, tier3) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier3))
        let (number, _, _, _) = try underReview(world, tier1: tier1, tier2: tier2, tier3: tier3)
        let body = try world.caseBody(number, as: tier3)
        let version = try #require(body["version"] as? Int)
        #expect((body["allowed_actions"] as? [String] ?? []).contains("request_documents"))
        // Tier 2 does not hold a case under review.
        let refused = try world.act(number, "request_documents", as: tier2, version: version, extra: ["reason": "Ask again."])
        let refusedCode = try refused.json()["code"] as? String
        #expect(refused.status == 403 && refusedCode == "insufficient_tier")
        let asked = try world.must(number, "request_documents", as: tier3, version: version, extra: ["reason": "The invoice is for another device."])
        #expect(asked.state == "awaiting_documents")
        #expect(try world.caseBody(number, as: tier3)["due_at"] is NSNull)
        let messages = try world.get("/api/v1/cases/\(number)/messages", as: tier3).json()["items"] as? [[String: Any]] ?? []
        #expect(messages.filter { $0["channel"] as? String == "mail" }.last?["kind"] as? String == "documents_requested")
    }
}
