import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The customer status look-up: plain words, identical refusals, and the throttles.
@Suite(.serialized) struct StatusTests {
    @Test func rightCodeShowsPlainWordsAndAnyTypingOfTheCodeWorks() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let code = created.accessCode!
        let typed = code.lowercased().replacingOccurrences(of: "-", with: " ")
        let response = try world.status(number.prefix(4) + " " + number.dropFirst(4), typed)
        #expect(response.status == 200)
        let body = try response.decode(StatusView.self)
        #expect(body.caseNumber == number)
        #expect(body.state == "new")
        #expect(body.stage == CustomerText.stageReceived.text(.english, contact: ""))
        #expect(!body.nextStep.isEmpty)
        #expect(body.progress.map(\.key) == ["received", "identity_check", "restoring", "finished"])
        #expect(body.progress.map(\.mark) == ["current", "upcoming", "upcoming", "upcoming"])
        #expect(body.dueAt != nil)
        #expect(body.evidence.isEmpty)  // an array (decoding proves it), and nothing filed yet
        #expect(body.missing == ["security_answer", "card", "device"])
        // Nothing an agent sees beyond that: no account e-mail, no devices.
        #expect(!response.text.contains("victim@example.com"))
        #expect(!response.text.contains("C02XK1ZJH3QD"))
    }

    @Test func unknownCaseAndWrongCodeAnswerTheSame404() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        var generator = SystemRandomNumberGenerator()
        let unknown = CaseNumber.generate(using: &generator).digits
        let otherCode = AccessCode.generate(using: &generator).display
        let wrong = try world.status(number, otherCode)
        let missing = try world.status(unknown, otherCode)
        #expect(wrong.status == 404 && missing.status == 404)
        func strip(_ response: TestHTTPResponse) throws -> [String: JSONValue] {
            var body = try #require(try response.value().objectValue)
            body["request_id"] = nil
            return body
        }
        #expect(try strip(wrong) == strip(missing))
        #expect(wrong.headers.map(\.name).sorted() == missing.headers.map(\.name).sorted())

        let mistyped = try world.status(String(number.dropLast()) + String((Int(String(number.last!))! + 1) % 10), otherCode)
        #expect(mistyped.status == 404)
        #expect(try mistyped.problem().code == "invalid_case_number")
    }

    @Test func nineFailuresLockTheNumberForEightHoursEvenToTheRightCode() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let code = created.accessCode!
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<9 {
            #expect(try world.status(number, AccessCode.generate(using: &generator).display).status == 404)
        }
        let locked = try world.status(number, code)
        #expect(locked.status == 429)
        #expect(try locked.problem().code == "locked_out")
        let retryAfter = Int(locked.header("Retry-After") ?? "") ?? 0
        #expect(retryAfter > 7 * 3600 && retryAfter <= 8 * 3600)
        // Another case is unaffected.
        let other = try world.openCase(as: tier1)
        #expect(try world.status(other.caseNumber, other.accessCode!).status == 200)

        world.service.clock.advance(by: 8 * 3600 + 1)
        #expect(try world.status(number, code).status == 200)
    }

    @Test func unknownNumbersLockToo() throws {
        let world = try CaseWorld()
        var generator = SystemRandomNumberGenerator()
        let unknown = CaseNumber.generate(using: &generator).digits
        for _ in 0..<9 { #expect(try world.status(unknown, "0000-0000-0000-0000").status == 404) }
        #expect(try world.status(unknown, "0000-0000-0000-0000").status == 429)
    }

    @Test func anAddressThatKeepsGuessingIsLimited() throws {
        let world = try CaseWorld()
        var generator = SystemRandomNumberGenerator()
        // 50 failures an hour from one address, spread over many numbers (mistyped ones count too).
        for index in 0..<50 {
            let number = index % 2 == 0 ? CaseNumber.generate(using: &generator).digits : "123456789012"
            #expect(try world.status(number, "0000-0000-0000-0000").status == 404)
        }
        let blocked = try world.status(CaseNumber.generate(using: &generator).digits, "0000-0000-0000-0000")
        #expect(blocked.status == 429)
        #expect(try world.status("123456789012", "x").status == 429)
        let connection = try world.database()
        defer { connection.close() }
        #expect(
            try connection.query("SELECT count(*) FROM throttles WHERE key LIKE 'addr:%' AND locked_until IS NOT NULL").first!.decode(0, as: Int.self)
                == 1)
    }

    @Test func anAgentsSessionCookieDoesNotGetInTheWayOfTheStatusPage() throws {
        // An agent checking what a customer sees, in the browser they are signed in with: the cookie goes along
        // (same site) without a CSRF token; the look-up and the upload must work as for anyone, and not as the agent.
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let created = try world.openCase(as: tier1)
        let number = created.caseNumber
        let code = created.accessCode!
        let look = try world.client.request(
            "POST", "/api/v1/status", headers: [("Cookie", tier1.cookie)],
            json: ["case_number": number, "access_code": code])
        #expect(look.status == 200, "\(look.text)")
        let form = EvidenceWorld.form(
            [("case_number", number), ("access_code", code), ("type", "box_photo")],
            file: (EvidenceWorld.png("box"), "image/png"))
        let upload = try world.client.request(
            "POST", "/api/v1/status/evidence",
            headers: [
                ("Cookie", tier1.cookie), ("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)"),
            ], body: form)
        #expect(upload.status == 201, "\(upload.text)")
        let filed = try world.events(number, as: tier1).last
        #expect(filed?.type == "evidence_filed" && filed?.actor == "customer")
        // Agent routes still insist on the token.
        #expect(
            try world.client.request(
                "POST", "/api/v1/cases/\(number)/notes", headers: [("Cookie", tier1.cookie)],
                json: ["body": "x", "visibility": "internal"]
            ).status == 403)
    }

    @Test func aFinishedCaseTakesNoMoreDocumentsFromTheCustomer() throws {
        // Resolved, rejected or closed, the case is in nobody's queue: a document would wait for no one.
        let w = try EvidenceWorld()
        let answers = [["question_id": "q1", "answer": EvidenceWorld.onFileAnswer], ["question_id": "q2", "answer": "Rex"]]
        try w.world.must(w.number, "send_reset", as: w.tier1, version: 1, extra: ["answers": answers])
        let form = EvidenceWorld.form(
            [("case_number", w.number), ("access_code", w.accessCode), ("type", "invoice")],
            file: (EvidenceWorld.png("late"), "image/png"))
        let late = try w.world.client.request(
            "POST", "/api/v1/status/evidence",
            headers: [
                ("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")
            ], body: form)
        #expect(late.status == 409)
        #expect(try late.problem().code == "case_not_open")
        #expect(try w.world.get("/api/v1/cases/\(w.number)/evidence", as: w.tier1).decode(ListView<EvidenceView>.self).items.isEmpty)
    }

    @Test func behindATrustedProxyTheBudgetIsPerClientNotPerProxy() throws {
        let world = try CaseWorld { $0.trustedProxies = try! AddressRanges(parsing: "127.0.0.1") }
        let created = try world.openCase(as: try world.agent(.tier1))
        // One guesser behind the proxy uses up its own budget...
        for _ in 0..<50 {
            #expect(try world.status("123456789012", "x", forwardedFor: "203.0.113.9").status == 404)
        }
        #expect(try world.status("123456789012", "x", forwardedFor: "203.0.113.9").status == 429)
        // ...and cannot pick another address by writing its own header: the proxy appends the real one.
        #expect(try world.status("123456789012", "x", forwardedFor: "192.0.2.1, 203.0.113.9").status == 429)
        // Another customer through the same proxy still gets in.
        let other = try world.status(created.caseNumber, created.accessCode!, forwardedFor: "198.51.100.4")
        #expect(other.status == 200)
    }
}
