import Foundation
import HTTPServer
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Synchronization
import Testing

/// Issue 25, from the attacker's side over real HTTP: races on the answer budget and on a new access code, the
/// rescue rule read as mail providers read addresses, addresses that route elsewhere, and an unthrottled challenge.
@Suite(.serialized) struct OutsideAttackTests {
    /// Sends `count` requests at once (each on its own connection, released together) and returns their answers.
    static func concurrently(_ count: Int, port: Int, _ send: @escaping @Sendable (TestHTTPClient, Int) throws -> TestHTTPResponse)
        -> [TestHTTPResponse?]
    {
        let answers = Mutex<[Int: TestHTTPResponse]>([:])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                defer { group.leave() }
                start.wait()
                let answer = try? send(TestHTTPClient(port: port, timeout: 30), index)
                answers.withLock { $0[index] = answer }
            }.start()
        }
        for _ in 0..<count { start.signal() }
        group.wait()
        return answers.withLock { all in (0..<count).map { all[$0] } }
    }

    @Test func thirtyConcurrentWrongAnswersAreEvaluatedExactlyNineTimes() throws {
        let w = try EvidenceWorld()
        let headers = w.tier1.headers
        let number = w.number
        let answers = Self.concurrently(30, port: w.world.service.service.port) { client, index in
            try client.request(
                "POST", "/api/v1/cases/\(number)/evidence", headers: headers,
                json: ["type": "security_answers", "answers": [["question_id": "q1", "answer": "wrong \(index)"]]])
        }
        let statuses = answers.map { $0?.status ?? -1 }
        // Evaluated (hashed and filed): exactly the budget; the rest refused before any hashing.
        #expect(statuses.filter { $0 == 201 }.count == 9, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count == 21, "\(statuses)")
        #expect(
            try answers.compactMap { $0 }.filter { $0.status == 429 }.allSatisfy {
                try $0.problem().code == "locked_out" && $0.header("retry-after") != nil
            })
        #expect(try w.evidenceList().items.count == 9)
        // Even the right answer is refused now.
        #expect(try w.file(["type": "security_answers", "answers": [["question_id": "q1", "answer": EvidenceWorld.onFileAnswer]]]).status == 429)
    }

    @Test func rightAnswersGiveTheirClaimBack() throws {
        let w = try EvidenceWorld()
        // Twenty right answers, each claimed as wrong while it is checked, never lock the account.
        for _ in 0..<20 {
            let right = try w.file(["type": "security_answers", "answers": [["question_id": "q1", "answer": EvidenceWorld.onFileAnswer]]])
            #expect(right.status == 201)
        }
        for index in 0..<8 {
            #expect(try w.file(["type": "security_answers", "answers": [["question_id": "q2", "answer": "no \(index)"]]]).status == 201)
        }
        #expect(try w.file(["type": "security_answers", "answers": [["question_id": "q2", "answer": "Rex"]]]).status == 201)
    }

    @Test func twoConcurrentAccessCodeReissuesHaveExactlyOneWinnerAndOneMail() throws {
        let world = try CaseWorld()
        // Tier 2, each having verified the caller, with read_out, so the winner is answered the code it issued.
        let tier1 = try world.agent(.tier1)
        let tier2 = try world.agent(.tier2)
        let other = try world.agent(.tier2)
        for _ in 0..<3 {
            let opened = try world.openCase(as: tier1)
            let number = opened.caseNumber
            for agent in [tier2, other] { try world.verifyCaller(number, accessCode: try #require(opened.accessCode), as: agent) }
            let headers = [tier2.headers, other.headers]
            let answers = Self.concurrently(2, port: world.service.service.port) { client, index in
                try client.request(
                    "POST", "/api/v1/cases/\(number)/access-code", headers: headers[index], json: ["read_out": true])
            }
            #expect(answers.map { $0?.status ?? -1 }.sorted() == [201, 409])
            let loser = try #require(answers.first { $0?.status == 409 } ?? nil)
            #expect(try loser.problem().code == "access_code_just_issued")
            #expect(Int(loser.header("retry-after") ?? "") ?? 0 > 0)
            // The winner's code is the one that works, and the only one mailed.
            let winner = try #require(answers.first { $0?.status == 201 } ?? nil)
            let code = try #require(try winner.json()["access_code"] as? String)
            #expect(try world.client.request("POST", "/api/v1/status", json: ["case_number": number, "access_code": code]).status == 200)
            let messages = try world.get("/api/v1/cases/\(number)/messages", as: tier1).json()["items"] as? [[String: Any]] ?? []
            #expect(messages.filter { $0["kind"] as? String == "access_code_reissued" }.count == 1)
            #expect(try world.events(number, as: tier1).filter { $0.type == "access_code_reissued" }.count == 1)
        }
        // A minute later a lost code can be replaced again.
        let number = try world.openCase(as: tier1).caseNumber
        #expect(try world.post("/api/v1/cases/\(number)/access-code", as: tier1, json: [String: Any]()).status == 201)
        world.service.clock.advance(by: AccessCode.reissueInterval)
        #expect(try world.post("/api/v1/cases/\(number)/access-code", as: tier1, json: [String: Any]()).status == 201)
    }

    @Test func aTaggedContactAddressIsTheRescueAddressAndGetsNothing() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        for (contact, rescue) in [
            ("evil+x@example.com", "evil@example.com"), ("E.V.I.L+case@googlemail.com", "evil@gmail.com"),
            ("Evil@Me.com", "evil+y@icloud.com"),
        ] {
            let body: [String: Any] = [
                "kind": "account_takeover", "account_email": "victim@example.com",
                "customer": ["name": "Ada Victim", "contact_email": contact],
                "facts": ["rescue_email": rescue], "summary": "The thief's address, tagged.",
            ]
            // Refused at the edge (api.md v1.2): the access code would go to the thief's mailbox.
            let opened = try world.client.request("POST", "/api/v1/cases", headers: tier1.headers, json: body)
            #expect(opened.status == 422, "\(contact): \(opened.text)")
            #expect(try opened.problem().errors?.map(\.field) == ["customer.contact_email"], "\(contact)")
        }
        #expect((try world.get("/api/v1/cases", as: tier1).json()["items"] as? [Any])?.isEmpty == true)
    }

    @Test func addressesThatRouteElsewhereAre422NamingTheField() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let body: [String: Any] = [
            "kind": "account_takeover", "account_email": "victim%evil.example@relay.example",
            "customer": ["name": "Ada Victim", "contact_email": "=?utf-8?q?victim=40example.com?=@evil.example"],
            "facts": ["rescue_email": "relay!thief@example.com"], "summary": "Source routes and encoded words.",
        ]
        let refused = try world.client.request("POST", "/api/v1/cases", headers: tier1.headers, json: body)
        #expect(refused.status == 422)
        let problem = try refused.problem()
        #expect(problem.code == "validation_failed")
        #expect(Set(problem.errors?.map(\.field) ?? []) == ["account_email", "customer.contact_email", "facts.rescue_email"])
        #expect((try world.get("/api/v1/cases", as: tier1).json()["items"] as? [Any])?.isEmpty == true)
    }

    @Test func passkeyChallengesAreThrottledPerAddressAndExpire() throws {
        let world = try CaseWorld { $0.trustedProxies = try! AddressRanges(parsing: "127.0.0.1") }
        let budget = IdentityPolicy.standard.passkeyOptionsLimit
        func ask(from address: String) throws -> TestHTTPResponse {
            try world.client.request("POST", "/api/v1/session/passkey-options", headers: [("X-Forwarded-For", address)], json: [String: Any]())
        }
        func rows() throws -> Int {
            let connection = try world.service.database.connect()
            defer { connection.close() }
            return try connection.query("SELECT count(*)::int AS n FROM webauthn_challenges").first?.decode("n", as: Int.self) ?? -1
        }
        for _ in 0..<budget { #expect(try ask(from: "198.51.100.7").status == 200) }
        var refusedAll = true
        for _ in 0..<20 {
            let refused = try ask(from: "198.51.100.7")
            refusedAll =
                refusedAll && refused.status == 429 && (try? refused.problem().code) == "rate_limited"
                && (Int(refused.header("retry-after") ?? "") ?? 0) > 0
        }
        #expect(refusedAll)
        #expect(try rows() == budget)
        // Another address is not affected.
        #expect(try ask(from: "198.51.100.8").status == 200)
        #expect(try rows() == budget + 1)
        // Past the lock, the address may ask again, and challenges past their five minutes are gone.
        world.service.clock.advance(by: IdentityPolicy.standard.addressLockout + 1)
        #expect(try ask(from: "198.51.100.7").status == 200)
        #expect(try rows() == 1)
    }
}
