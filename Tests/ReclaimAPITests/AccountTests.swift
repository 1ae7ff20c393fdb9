import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

/// Accounts on file: who may add them, what is validated and what is stored (never a secret in clear).
@Suite(.serialized) struct AccountTests {
    static func account(email: String, card: String = "4111111111111111") -> [String: Any] {
        [
            "email": email,
            "security_questions": [["id": "q1", "question": "First pet?", "answer": "Rex"]],
            "cards": [["number": card, "exp_month": 1, "exp_year": 2020]],
            "devices": [["serial": "C02XK1ZJH3QD", "model": "Phone"], ["imei": "490154203237518"]],
        ]
    }

    @Test func adminsAndAPIClientsAddAccountsStoredWithoutSecrets() throws {
        let world = try CaseWorld()
        let admin = try world.agent(.tier1, admin: true)
        let response = try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "ada@example.com"))
        #expect(response.status == 201, "\(response.text)")
        #expect(try response.value()["cards"]?.arrayValue?.first?["masked"] == "411111******1111")
        #expect(!response.text.contains("Rex") && !response.text.contains("4111111111111111"))
        let connection = try world.database()
        defer { connection.close() }
        let dump = try connection.query(
            """
            SELECT (SELECT string_agg(row_to_json(q)::text, '') FROM account_security_questions q) ||
                   (SELECT string_agg(row_to_json(c)::text, '') FROM account_cards c)
            """
        ).first!.decode(0, as: String.self)
        #expect(!dump.contains("Rex") && !dump.contains("rex") && !dump.contains("4111111111111111"))
        #expect(dump.contains("$argon2id$"))
        #expect(try connection.query("SELECT count(*) FROM account_devices").first!.decode(0, as: Int.self) == 2)

        let again = try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "ADA@example.com"))
        #expect(again.status == 409)

        let client = try world.service.addClient()
        let raw = Array(try JSONSerialization.data(withJSONObject: Self.account(email: "bob@example.com")))
        let viaClient = try world.client.request(
            "POST", "/api/v1/accounts",
            headers: world.service.clientHeaders(client, method: "POST", target: "/api/v1/accounts", body: raw) + [
                ("Content-Type", "application/json")
            ],
            body: raw)
        #expect(viaClient.status == 201, "\(viaClient.text)")
    }

    /// `PUT /api/v1/accounts/{email}`: an admin replaces what is on file (the new answer matches, the old one no longer
    /// does), recorded in the admin log; tier agents and API clients may not; an address not on file is 404.
    @Test func anAdminReplacesAnAccountOnFileAndItIsOnTheAdminLog() throws {
        let world = try CaseWorld()
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "grace@example.com")).status == 201)
        var replacement = Self.account(email: "grace.new@example.com", card: "5555555555554444")
        replacement["security_questions"] = [["id": "q1", "question": "First school?", "answer": "Hillside"]]
        func put(_ target: String, as session: AgentSession, json: Any) throws -> TestHTTPResponse {
            try world.service.client().request("PUT", target, headers: session.headers, json: json)
        }
        #expect(try put("/api/v1/accounts/grace@example.com", as: try world.agent(.engineering), json: replacement).status == 403)
        let client = try world.service.addClient()
        let raw = Array(try JSONSerialization.data(withJSONObject: replacement))
        let viaClient = try world.service.client().request(
            "PUT", "/api/v1/accounts/grace@example.com",
            headers: world.service.clientHeaders(client, method: "PUT", target: "/api/v1/accounts/grace@example.com", body: raw)
                + [("Content-Type", "application/json")], body: raw)
        #expect(viaClient.status == 403, "an API client may add accounts, not replace them: \(viaClient.text)")
        #expect(try put("/api/v1/accounts/nobody@example.com", as: admin, json: replacement).status == 404)

        let replaced = try put("/api/v1/accounts/GRACE@example.com", as: admin, json: replacement)
        #expect(replaced.status == 200, "\(replaced.text)")
        #expect(!replaced.text.contains("Hillside") && !replaced.text.contains("5555555555554444"))
        let connection = try world.database()
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT a.email, q.question, c.last_four FROM accounts a JOIN account_security_questions q ON q.account_id = a.id
            JOIN account_cards c ON c.account_id = a.id
            """)
        #expect(rows.count == 1)
        #expect(try rows.first?.decode("email", as: String.self) == "grace.new@example.com")
        #expect(try rows.first?.decode("question", as: String.self) == "First school?")
        #expect(try rows.first?.decode("last_four", as: String.self) == "4444")
        #expect(try connection.query("SELECT count(*) FROM account_devices").first!.decode(0, as: Int.self) == 2)
        let logged = try connection.query("SELECT data FROM admin_events WHERE type = 'account_replaced'")
        #expect(logged.count == 1)
        #expect(try logged.first?.decode(0, as: String.self).contains("Hillside") == false)
        // The old address is no longer on file; another account's address cannot be taken.
        #expect(try put("/api/v1/accounts/grace@example.com", as: admin, json: replacement).status == 404)
        #expect(try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "other@example.com")).status == 201)
        #expect(try put("/api/v1/accounts/other@example.com", as: admin, json: replacement).status == 409)
    }

    /// api.md v1.3 "Smaller doors": no request log line holds a customer's address, whichever way it is spelled in the path
    /// and whatever the answer (replaced, refused, unknown, unrouted).
    @Test func noRequestLogLineHoldsTheAddressInThePath() throws {
        let world = try CaseWorld()
        let admin = try world.agent(.tier1, admin: true)
        #expect(try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "grace@example.com")).status == 201)
        let replacement = Self.account(email: "grace.hopper@example.org")
        let client = world.service.client()
        for target in ["/api/v1/accounts/grace@example.com", "/api/v1/accounts/Grace%40Example.com"] {
            #expect(try client.request("PUT", target, headers: try world.agent(.engineering).headers, json: replacement).status == 403)
        }
        #expect(try client.request("PUT", "/api/v1/accounts/nobody@example.com", headers: admin.headers, json: replacement).status == 404)
        #expect(try client.request("PUT", "/api/v1/accounts/grace@example.com", headers: admin.headers, json: replacement).status == 200)
        // Not routed: another method (405), a longer path (404).
        #expect(try client.request("DELETE", "/api/v1/accounts/grace.hopper@example.org", headers: admin.headers).status == 405)
        #expect(try client.request("GET", "/api/v1/accounts/grace.hopper@example.org/cards", headers: admin.headers).status == 404)

        let requests = world.service.log.lines.filter { $0.contains("\"event\":\"request\"") }
        #expect(requests.contains { $0.contains("\"/api/v1/accounts/{email}\"") }, "the routed path is logged with its pattern's name")
        #expect(requests.contains { $0.contains("\"/api/v1/accounts/{address}/cards\"") }, "an unrouted one with {address}")
        for line in world.service.log.lines {
            let lower = line.lowercased()
            #expect(!lower.contains("grace") && !lower.contains("nobody@") && !lower.contains("%40"), "\(line)")
        }
    }

    @Test func tierAgentsMayNotAddAccounts() throws {
        let world = try CaseWorld()
        let engineer = try world.agent(.engineering)
        #expect(try world.post("/api/v1/accounts", as: engineer, json: Self.account(email: "x@example.com")).status == 403)
    }

    /// api.md v1.3 "A phone number on file": an account's `phone` (E.164) is stored, answered and replaced; anything
    /// else is 422 naming `phone`, and nothing is stored.
    @Test func anAccountsPhoneIsE164StoredAnsweredAndReplaced() throws {
        let world = try CaseWorld()
        let admin = try world.agent(.tier1, admin: true)
        for typed in ["8613977440231", "+86-139-7744-0231", "+1234567", "+8613977440231 ext 2", "tel:+8613977440231"] {
            var bad = Self.account(email: "p@example.com")
            bad["phone"] = typed
            let refused = try world.post("/api/v1/accounts", as: admin, json: bad)
            #expect(refused.status == 422, "\(typed)")
            #expect(try refused.problem().fields == ["phone"], "\(typed)")
        }
        var account = Self.account(email: "p@example.com")
        account["phone"] = "+8613977440231"
        let created = try world.post("/api/v1/accounts", as: admin, json: account)
        #expect(created.status == 201, "\(created.text)")
        #expect(try created.json()["phone"] as? String == "+8613977440231")
        account["phone"] = "+14155550123"
        let replaced = try world.service.client().request("PUT", "/api/v1/accounts/p@example.com", headers: admin.headers, json: account)
        #expect(replaced.status == 200, "\(replaced.text)")
        #expect(try replaced.json()["phone"] as? String == "+14155550123")
        account["phone"] = nil
        let without = try world.service.client().request("PUT", "/api/v1/accounts/p@example.com", headers: admin.headers, json: account)
        #expect(try without.json()["phone"] is NSNull)
        let connection = try world.database()
        defer { connection.close() }
        #expect(try connection.query("SELECT phone FROM accounts").map { try $0.decode(0, as: String?.self) } == [nil])
    }

    @Test func cardsAreLuhnCheckedExceptUnionPayAndDevicesValidated() throws {
        let world = try CaseWorld()
        let admin = try world.agent(.tier1, admin: true)
        var bad = Self.account(email: "c@example.com", card: "4111111111111112")
        bad["devices"] = [["imei": "490154203237519"], ["serial": "short"], ["model": "no identifiers"]]
        bad["phone"] = "+86 139 7744 0231"
        let refused = try world.post("/api/v1/accounts", as: admin, json: bad)
        #expect(refused.status == 422)
        let fields = Set(try refused.problem().fields)
        #expect(fields == ["cards[0].number", "devices[0].imei", "devices[1].serial", "devices[2]", "phone"])
        // A UnionPay number that fails Luhn is accepted (one victim's did).
        let unionPay = try world.post("/api/v1/accounts", as: admin, json: Self.account(email: "u@example.com", card: "6234567890123456"))
        #expect(unionPay.status == 201, "\(unionPay.text)")
    }

    @Test func importReportsBadLinesByNumberAndStoresTheRest() throws {
        let world = try CaseWorld()
        let directory = NSTemporaryDirectory() + "reclaim-import-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func line(_ object: [String: Any]) throws -> String { String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) }
        var withPhone = Self.account(email: "one@example.com")
        withPhone["phone"] = "+447700900123"
        let lines = [
            try line(withPhone),
            try line(Self.account(email: "two@example.com", card: "4111111111111112")),  // bad card
            "{not json",
            "",
            try line(Self.account(email: "four@example.com")),
        ]
        let file = directory + "/accounts.jsonl"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString,
            "RECLAIM_KEY_FILE": world.service.directory + "/keys",
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        let result = try Shell.capture([RepositoryPaths.executable, "accounts", "import", file], environment: environment)
        #expect(result.status == 65, "\(result.error)")
        #expect(result.error.contains("line 2: cards[0].number"))
        #expect(result.error.contains("line 3: "))
        #expect(!result.error.contains("line 1:") && !result.error.contains("line 5:"))
        #expect(!result.error.contains("4111111111111112"))
        #expect(result.output.contains("imported 2 account(s); 2 line(s) refused"))
        let connection = try world.database()
        defer { connection.close() }
        let emails = try connection.query("SELECT email FROM accounts ORDER BY email").map { try $0.decode(0, as: String.self) }
        #expect(emails == ["four@example.com", "one@example.com"])
        let phones = try connection.query("SELECT phone FROM accounts ORDER BY email").map { try $0.decode(0, as: String?.self) }
        #expect(phones == [nil, "+447700900123"])
        #expect(try connection.query("SELECT count(*) FROM account_cards").first!.decode(0, as: Int.self) == 2)
    }
}
