import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// The four recovery paths of domain.md, end to end over HTTP.
@Suite(.serialized) struct WorkflowPathTests {
    nonisolated(unsafe) static let account: [String: Any] = [  // immutable
        "email": "Victim@Example.com",
        "security_questions": [
            ["id": "q1", "question": "First pet?", "answer": "Rex the Dog"],
            ["id": "q2", "question": "City of birth?", "answer": "Berlin"],
        ],
        "cards": [["number": "4111 1111 1111 1111", "exp_month": 12, "exp_year": 2031]],
        "devices": [["serial": "C02XK1ZJH3QD", "imei": "490154203237518", "model": "Phone 12"]],
    ]

    func putAccountOnFile(_ world: CaseWorld) throws {
        let admin = try world.agent(.tier1, admin: true)
        let response = try world.post("/api/v1/accounts", as: admin, json: Self.account)
        #expect(response.status == 201, "\(response.text)")
    }

    /// 1. Answers known: every answer matches at tier 1, a reset goes to the primary address on file, resolved.
    /// The thief's rescue address (given here as the "customer contact") never receives it.
    @Test func answersKnownSendsResetToThePrimaryAddressOnFile() throws {
        let world = try CaseWorld()
        try putAccountOnFile(world)
        let tier1 = try world.agent(.tier1)
        let thief = "rescue.thief@evil.example"
        let created = try world.openCase(as: tier1, CaseWorld.caseBody(accountEmail: "victim@example.com", contactEmail: thief))
        let number = created.caseNumber

        // One wrong answer: refused, nothing changes.
        let wrong = try world.act(
            number, "send_reset", as: tier1, version: 1,
            extra: [
                "answers": [
                    ["question_id": "q1", "answer": "rex the dog"], ["question_id": "q2", "answer": "Paris"],
                ]
            ])
        #expect(wrong.status == 409)
        #expect(try wrong.problem().code == "answers_not_matched")
        // Only one of two answers: refused too.
        let partial = try world.act(
            number, "send_reset", as: tier1, version: 1, extra: ["answers": [["question_id": "q1", "answer": "Rex the Dog"]]])
        #expect(try partial.problem().code == "answers_not_matched")

        // Normalised: case, spacing and full-width letters do not matter.
        let resolved = try world.must(
            number, "send_reset", as: tier1, version: 1,
            extra: [
                "answers": [
                    ["question_id": "q1", "answer": "  REX   the dog "], ["question_id": "q2", "answer": "ＢＥＲＬＩＮ"],
                ]
            ])
        #expect(resolved.state == "resolved")
        #expect(resolved.path == "reset")
        #expect(resolved.version == 2)
        #expect(resolved.dueAt == nil)

        let events = try world.events(number, as: tier1)
        let resets = events.filter { $0.type == "reset_sent" }
        #expect(resets.count == 1)
        #expect(resets.first?.data["to"] == "Victim@example.com")  // the domain is lower-cased on file
        // The rescue address appears in no event: nothing was ever sent there.
        let timeline = try world.get("/api/v1/cases/\(number)/events?limit=200", as: tier1).text
        #expect(!timeline.contains(thief))

        let status = try world.status(number, created.accessCode!)
        #expect(status.status == 200)
        #expect(try status.decode(StatusView.self).nextStep == CustomerText.nextDoneReset.text(.english, contact: ""))
        #expect(!status.text.contains(thief))
    }

    /// 2. Identity verified: tier 2 verifies. Evidence (issue 5) is not filed yet, so `verify` is refused with the factor
    /// outcomes and nothing changes; the rest of the path (engineering removes the rescue address) is walked after approval below.
    @Test func verifyWithoutTwoFactorsIsRefusedAndChangesNothing() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let escalated = try world.must(number, "escalate", as: tier1, version: 1)
        #expect(escalated.state == "identity_check")
        #expect(escalated.tier == "tier2")
        #expect(escalated.transitions == [])  // tier 1 holds nothing at tier 2

        let refused = try world.act(number, "verify", as: tier2, version: 2)
        #expect(refused.status == 409)
        let problem = try refused.problem()
        #expect(problem.code == "verification_failed")
        #expect(problem.factors == ["security_answer": "missing", "card": "missing", "device": "missing"])
        let after = try world.get("/api/v1/cases/\(number)", as: tier2)
        #expect(after.header("ETag") == "\"2\"")
        #expect(try after.decode(CaseView.self).state == "identity_check")
        // No reset offered while no answer on file has matched.
        #expect(try after.decode(CaseView.self).transitions == ["verify", "request_documents"])
    }

    /// 3. Not verified: documents, review, approval, engineering removes the rescue address; then closed.
    @Test func documentsPathEndToEnd() throws {
        // A cooling-off of nothing: the service does a recorded step at its next pass.
        let world = try CaseWorld {
            $0.unlockDelay = 0
            $0.unlockPollSeconds = 0.05
        }
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let engineer = try world.agent(.engineering)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let code = created.accessCode!
        try world.must(number, "escalate", as: tier1, version: 1)
        // request_documents needs a reason.
        #expect(try world.act(number, "request_documents", as: tier2, version: 2).status == 422)
        let awaiting = try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Answers and card did not match."])
        #expect(awaiting.state == "awaiting_documents")
        #expect(awaiting.path == "documents")
        #expect(awaiting.dueAt == nil)  // the customer's turn: clock paused
        let status = try world.status(number, code).decode(StatusView.self)
        #expect(status.missing == ["proof_of_purchase", "imei_photo"])
        #expect(status.nextStep.hasPrefix("Please upload"))

        // The customer uploads what is missing: the case moves itself to review.
        try world.customerUpload(number, code: code, type: "invoice")
        try world.customerUpload(number, code: code, type: "imei_photo")
        let review = try world.caseBody(number, as: tier3)
        #expect(review["state"] as? String == "document_review")
        #expect(review["due_at"] is String)
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
        let approved = try world.must(number, "approve", as: tier3, version: 4)
        #expect(approved["state"] as? String == "engineering")
        #expect(approved["tier"] as? String == "engineering")
        // Only engineering completes, and only once the rescue address is removed.
        #expect(try world.act(number, "complete", as: tier3, version: 5).status == 403)
        #expect(try world.act(number, "complete", as: engineer, version: 5).json()["code"] as? String == "unlocks_outstanding")
        // The step is scheduled (version 6), never done at once, nor by complete; the service does it (7).
        let named = try world.act(number, "complete", as: engineer, version: 5, extra: ["unlock": "remove_rescue_email"])
        #expect(try named.json()["code"] as? String == "unlock_not_scheduled")
        #expect(try world.scheduleUnlock(number, "remove_rescue_email", as: engineer, version: 5).status == 200)
        #expect(
            try eventually(10) {
                (try world.caseBody(number, as: engineer)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_rescue_email"]
            })
        let done = try world.must(number, "complete", as: engineer, version: 7)
        #expect(done["state"] as? String == "resolved")
        #expect(done["tier"] as? String == "engineering")  // keeps the tier that held it last
        #expect(done["version"] as? Int == 8)
        let closed = try world.must(number, "close", as: tier1, version: 8, extra: ["reason": "Customer confirmed access."])
        #expect(closed["state"] as? String == "closed")
        // Finished: no transition, no work but notes and a new access code.
        #expect(closed["allowed_actions"] as? [String] == ["note_internal", "note_customer", "reissue_access_code"])

        let types = try world.events(number, as: tier1).map(\.type)
        #expect(types.filter { $0 == "transition" }.count == 6)
        #expect(types.contains("denied"))  // tier 3's attempt at complete
    }

    /// 4. Two-step turned on by the thief: the account cannot be recovered, only the device (activation lock).
    @Test func activationLockPathEndToEnd() throws {
        let world = try CaseWorld {
            $0.unlockDelay = 0
            $0.unlockPollSeconds = 0.05
        }
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let tier3 = try world.agent(.tier3)
        let engineer = try world.agent(.engineering)
        let created = try world.openCase(as: tier1, CaseWorld.caseBody(facts: ["two_step_enabled": true, "lost_mode_enabled": true]))
        let number = created.caseNumber
        #expect(created.path == "activation_lock")
        #expect(created.transitions == ["escalate"])  // no reset for a device-only case
        let reset = try world.act(number, "send_reset", as: tier1, version: 1)
        #expect(reset.status == 409)
        #expect(try reset.problem().code == "not_recoverable")
        try world.must(number, "escalate", as: tier1, version: 1)
        #expect(try world.act(number, "verify", as: tier2, version: 2).status == 409)
        try world.must(number, "request_documents", as: tier2, version: 2, extra: ["reason": "Two-step is on: device only."])
        let code = created["access_code"] as! String
        for type in ["box_photo", "imei_photo", "lock_screen_photo"] { try world.customerUpload(number, code: code, type: type) }
        #expect(try world.caseBody(number, as: tier3)["state"] as? String == "document_review")
        for id in try world.pendingDocuments(number, as: tier3) { try world.mustReview(id, "accepted", as: tier3) }
        let approved = try world.must(number, "approve", as: tier3, version: 4)
        #expect(approved.path == "activation_lock")
        let wrongUnlock = try world.act(number, "complete", as: engineer, version: 5, extra: ["unlock": "remove_rescue_email"])
        #expect(wrongUnlock.status == 422)
        #expect(try wrongUnlock.problem().code == "unlock_not_allowed")
        #expect(try world.scheduleUnlock(number, "remove_activation_lock", as: engineer, version: 5).status == 200)
        #expect(
            try eventually(10) {
                (try world.caseBody(number, as: engineer)["unlocks"] as? [String: Any])?["done"] as? [String] == ["remove_activation_lock"]
            })
        let done = try world.must(number, "complete", as: engineer, version: 7)
        #expect(done.state == "resolved")
        let status = try world.status(number, created.accessCode!).decode(StatusView.self)
        #expect(status.nextStep == CustomerText.nextDoneLock.text(.english, contact: ""))
    }

    /// Guessing answers through send_reset spends the account's budget: after 9 wrong answers even the right ones wait 8 hours.
    @Test func wrongAnswersLockTheAccountsAnswers() throws {
        let world = try CaseWorld()
        try putAccountOnFile(world)
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        for guess in 0..<5 {  // two wrong answers a try: 10 failures
            let response = try world.act(
                number, "send_reset", as: tier1, version: 1,
                extra: [
                    "answers": [
                        ["question_id": "q1", "answer": "guess \(guess)"], ["question_id": "q2", "answer": "city \(guess)"],
                    ]
                ])
            #expect(response.status == (guess < 5 ? 409 : 429))
        }
        let right = try world.act(
            number, "send_reset", as: tier1, version: 1,
            extra: [
                "answers": [
                    ["question_id": "q1", "answer": "Rex the Dog"], ["question_id": "q2", "answer": "Berlin"],
                ]
            ])
        #expect(right.status == 429)
        #expect(try right.problem().code == "locked_out")
        world.service.clock.advance(by: 8 * 3600 + 1)
        let later = try world.agent(.tier1)
        let resolved = try world.must(
            number, "send_reset", as: later, version: 1,
            extra: [
                "answers": [
                    ["question_id": "q1", "answer": "Rex the Dog"], ["question_id": "q2", "answer": "Berlin"],
                ]
            ])
        #expect(resolved.state == "resolved")
    }
}
