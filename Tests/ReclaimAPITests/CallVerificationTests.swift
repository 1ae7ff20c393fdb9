import Foundation
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

/// api.md v1.3 "The call, verified both ways", over HTTP, from the impostor's side and the victim's: the desk and
/// customer codes, `caller-verification`, its budget and signal, and what a verified call unlocks.
@Suite(.serialized) final class CallVerificationTests {
    let world: CaseWorld

    init() throws { world = try CaseWorld() }

    func verification(_ number: String, as agent: AgentSession, _ json: [String: Any]) throws -> TestHTTPResponse {
        try world.post("/api/v1/cases/\(number)/caller-verification", as: agent, json: json)
    }

    func patchContact(_ number: String, as agent: AgentSession, _ address: String, version: Int) throws -> TestHTTPResponse {
        try world.client.request(
            "PATCH", "/api/v1/cases/\(number)", headers: agent.headers + [("If-Match", "\"\(version)\"")],
            json: ["customer": ["contact_email": address]])
    }

    func caseJSON(_ number: String, as agent: AgentSession) throws -> [String: Any] { try world.get("/api/v1/cases/\(number)", as: agent).json() }

    /// A code that is not `code` (six digits).
    static func other(than code: String) -> String { code == "000000" ? "000001" : "000000" }

    /// The impostor knows the case number only: no code is read out to him and the address stays, whatever he tells the
    /// agent; nothing of the victim's changes (her access code still works).
    @Test func anImpostorWhoKnowsOnlyTheNumberGetsNoCodeReadOutAndCannotMoveTheMail() throws {
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))

        let readOut = try world.post("/api/v1/cases/\(number)/access-code", as: tier2, json: ["read_out": true])
        #expect(readOut.status == 409, "\(readOut.text)")
        let problem = try readOut.problem()
        #expect(problem.code == "caller_not_verified")
        #expect(readOut.text.contains("status_code") && readOut.text.contains("mailed_code"), "the two ways are named")
        #expect(readOut.text.range(of: #"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}"#, options: .regularExpression) == nil)
        let moved = try patchContact(number, as: tier2, "impostor@evil.example", version: 1)
        #expect(try moved.status == 409 && moved.problem().code == "caller_not_verified", "\(moved.text)")
        let view = try caseJSON(number, as: tier2)
        #expect((view["customer"] as? [String: Any])?["contact_email"] as? String == "victim.home@example.net")
        #expect(view["version"] as? Int == 1)
        #expect(try world.status(number, code).status == 200, "the victim's code still works")
        #expect(try !world.events(number, as: tier2).contains { $0.type == "access_code_reissued" || $0.type == "case_corrected" })
        // The impostor's guess at the customer code is wrong (and counted), and still unlocks nothing.
        let guess = try verification(number, as: tier2, ["customer_code": "123456"])
        #expect(try guess.status == 422 && guess.problem().code == "caller_code_wrong", "\(guess.text)")
        #expect(try patchContact(number, as: tier2, "impostor@evil.example", version: 1).status == 409)
        // The agents see the desk code, never the customer's.
        let codes = try world.callCodes(number, code)
        let shown = try #require(view["call_codes"] as? [String: Any])
        #expect(shown["desk"] as? String == codes["desk"] as? String && shown["customer"] == nil)
        #expect(!(try world.get("/api/v1/cases/\(number)", as: tier2).text.contains(try #require(codes["customer"] as? String))))
        #expect(view["caller_verification"] is NSNull)
    }

    /// Nine wrong codes, then 429 with Retry-After even for the right one, a `caller_code_locked` event and the
    /// `caller_code_guessed` signal; the budget is the status look-up's, so the status page locks too.
    @Test func nineWrongGuessesLockTheCaseFlagItAndRefuseEvenTheRightCode() throws {
        let tier1 = try world.agent(.tier1)
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        let customer = try #require(try world.callCodes(number, code)["customer"] as? String)
        for attempt in 1...9 {
            let guess = try verification(number, as: tier1, ["customer_code": Self.other(than: customer)])
            #expect(guess.status == 422, "attempt \(attempt): \(guess.text)")
        }
        let right = try verification(number, as: tier1, ["customer_code": customer])
        #expect(right.status == 429, "\(right.text)")
        #expect(Int(right.header("retry-after") ?? "") ?? 0 > 3600)
        let events = try world.events(number, as: tier1)
        #expect(events.filter { $0.type == "caller_code_locked" }.count == 1)
        #expect(!events.contains { $0.type == "caller_verified" })
        let signals = try caseJSON(number, as: tier1)["risk_signals"] as? [[String: Any]] ?? []
        #expect(signals.contains { $0["signal"] as? String == "caller_code_guessed" && $0["cleared_at"] is NSNull })
        #expect(try world.status(number, code).status != 200, "the look-up budget is one budget")
        // At risk now: even a verified tier-1 agent could not correct the address.
        #expect(try patchContact(number, as: tier1, "impostor@evil.example", version: 1).status == 403)
    }

    /// The victim reads her customer code from her status page; the agent checks it and may, for 15 minutes, read her a
    /// new access code and correct her address. Another agent may not; the codes rotate with a minute's grace.
    @Test func theVictimReadsHerCustomerCodeAndTheAgentProceeds() throws {
        let (tier1, tier2, colleague) = (try world.agent(.tier1), try world.agent(.tier2), try world.agent(.tier2))
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        let codes = try world.callCodes(number, code)
        let customer = try #require(codes["customer"] as? String)
        #expect(customer.count == 6 && (codes["desk"] as? String)?.count == 6 && codes["desk"] as? String != customer)
        // The desk code the agent reads to her is the one her page shows.
        let deskShown = (try caseJSON(number, as: tier2)["call_codes"] as? [String: Any])?["desk"] as? String
        #expect(deskShown == codes["desk"] as? String)

        let verified = try verification(number, as: tier2, ["customer_code": "\(customer.prefix(3)) \(customer.dropFirst(3))"])
        #expect(verified.status == 200, "\(verified.text)")
        let until = try #require(try verified.json()["verified_until"] as? String)
        let expected = Timestamp.format(Timestamp.truncated(world.service.clock.now()).addingTimeInterval(900))
        #expect(until.prefix(16) == expected.prefix(16))
        let event = try #require(try world.events(number, as: tier2).last)
        #expect(event.type == "caller_verified" && event.actor == "agent:" + tier2.agentID.uuidString.lowercased())
        #expect((event["data"] as? [String: Any])?["method"] as? String == "status_code")
        let shown = try #require(try caseJSON(number, as: tier1)["caller_verification"] as? [String: Any])
        #expect(shown["verified_until"] as? String == until && shown["method"] as? String == "status_code")

        // The colleague did not verify her: refused.
        #expect(try world.post("/api/v1/cases/\(number)/access-code", as: colleague, json: ["read_out": true]).status == 409)
        let given = try world.post("/api/v1/cases/\(number)/access-code", as: tier2, json: ["read_out": true])
        #expect(given.status == 201, "\(given.text)")
        let newCode = try #require(try given.json()["access_code"] as? String)
        #expect(try world.status(number, newCode).status == 200 && world.status(number, code).status == 404)
        #expect((try world.events(number, as: tier2).last?["data"] as? [String: Any])?["read_out_after"] as? String == "status_code")
        let moved = try patchContact(number, as: tier2, "victim.new@example.net", version: 1)
        #expect(moved.status == 200, "\(moved.text)")
        // Her new access code gives new call codes: what the old page showed is dead within the grace minute.
        world.service.clock.advance(by: 61)
        #expect(try world.callCodes(number, newCode)["customer"] as? String != customer)

        // Fifteen minutes on, the verification has ended.
        world.service.clock.advance(by: 900)
        #expect(try caseJSON(number, as: tier1)["caller_verification"] is NSNull)
        let late = try patchContact(number, as: tier2, "victim.other@example.net", version: 2)
        #expect(try late.status == 409 && late.problem().code == "caller_not_verified", "\(late.text)")
    }

    /// Each code is shown for 10 minutes; once the next shows, the previous is accepted for one more minute, no longer.
    @Test func theCodesChangeEveryTenMinutesAndThePreviousWorksOneMoreMinute() throws {
        let tier1 = try world.agent(.tier1)
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        let before = try world.callCodes(number, code)
        let customer = try #require(before["customer"] as? String)
        let validUntil = try #require(before["valid_until"] as? String)
        let parsed = try #require(ISO8601DateFormatter.withFractions.date(from: validUntil))
        world.service.clock.advance(by: parsed.timeIntervalSince(world.service.clock.now()) + 30)
        let after = try world.callCodes(number, code)
        #expect(after["customer"] as? String != customer && after["desk"] as? String != before["desk"] as? String)
        #expect(try verification(number, as: tier1, ["customer_code": customer]).status == 200, "within the grace minute")
        world.service.clock.advance(by: 31)
        #expect(try verification(number, as: tier1, ["customer_code": customer]).status == 422, "past it")
        #expect(try verification(number, as: tier1, ["customer_code": try #require(after["customer"] as? String)]).status == 200)
    }

    /// A case at risk: a verified tier-1 agent still may not correct the address (tier 2 may), and the verification
    /// clears no signal.
    @Test func onACaseAtRiskAVerifiedCallNeedsTier2AndClearsNothing() throws {
        let (tier1, tier2) = (try world.agent(.tier1), try world.agent(.tier2))
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        #expect(try world.post("/api/v1/cases/\(number)/flags", as: tier1, json: ["reason": "The caller could not name the model."]).status == 200)
        let version = try #require(try caseJSON(number, as: tier1)["version"] as? Int)
        try world.verifyCaller(number, accessCode: code, as: tier1)
        let refused = try patchContact(number, as: tier1, "victim.new@example.net", version: version)
        #expect(try refused.status == 403 && refused.problem().code == "insufficient_tier", "\(refused.text)")
        try world.verifyCaller(number, accessCode: code, as: tier2)
        #expect(try patchContact(number, as: tier2, "victim.new@example.net", version: version).status == 200)
        let body = try caseJSON(number, as: tier2)
        #expect(body["risk"] as? Bool == true)
        #expect((body["risk_signals"] as? [[String: Any]])?.allSatisfy { $0["cleared_at"] is NSNull } == true)
    }

    /// Bad input is refused at the edge; a finished case has no call codes.
    @Test func badProofsAreRefusedAndAFinishedCaseHasNoCodes() throws {
        let tier1 = try world.agent(.tier1)
        let opened = try world.openCase(as: tier1)
        let (number, code) = (opened.caseNumber, try #require(opened.accessCode))
        #expect(try verification(number, as: tier1, [:]).status == 422)
        #expect(try verification(number, as: tier1, ["customer_code": "1", "mailed_code": "2"]).status == 422)
        #expect(try verification(number, as: tier1, ["method": "sms"]).status == 422)
        #expect(try world.post("/api/v1/cases/\(number)/caller-verification", as: nil, json: ["customer_code": "123456"]).status == 401)
        // Finished: merged into the same customer's other case.
        let other = try world.openCase(as: tier1).caseNumber
        let merged = try world.post(
            "/api/v1/cases/\(number)/merge", as: try world.agent(.tier2), json: ["into": other, "reason": "Same owner."], ifMatch: 1)
        #expect(merged.status == 200, "\(merged.text)")
        let status = try world.status(number, code).json()
        #expect(status["call_codes"] is NSNull)
        #expect(try caseJSON(number, as: tier1)["call_codes"] is NSNull)
        let finished = try verification(number, as: tier1, ["customer_code": "123456"])
        #expect(try finished.status == 409 && finished.problem().code == "case_not_open", "\(finished.text)")
    }
}

extension ISO8601DateFormatter {
    /// RFC 3339 with milliseconds, as the API writes times.
    nonisolated(unsafe) static let withFractions: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
