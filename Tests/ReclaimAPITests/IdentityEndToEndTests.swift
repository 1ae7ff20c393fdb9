import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing
@testable import ReclaimAPI

/// Identity on the product's own routes: tiers on a real case action, CSRF on a real change,
/// a signed and idempotent case creation by an API client.
@Suite struct IdentityEndToEndTests {
    static var caseBody: [String: Any] {[
        "kind": "account_takeover", "account_email": "victim@example.com",
        "customer": ["name": "Ada Victim", "contact_email": "victim.home@example.net"],
        "devices": [["serial": "C02XK1ZJH3QD", "imei": "490154203237518", "model": "Phone 12"]],
        "facts": ["rescue_email_added": true], "summary": "Credential stuffing; rescue address added.",
    ]}

    @Test func aTier1AgentIsRefusedTheFreezeATier2AgentMayTake() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        let tier1 = try service.signIn(tier: .tier1)
        let tier2 = try service.signIn(tier: .tier2)
        // A change with the cookie but no CSRF token is refused before the handler runs.
        let noToken = try client.request("POST", "/api/v1/cases", headers: [("Cookie", tier1.cookie)], json: Self.caseBody)
        #expect(noToken.status == 403)
        #expect(try noToken.json()["code"] as? String == "csrf_failed")
        let created = try client.request("POST", "/api/v1/cases", headers: tier1.headers, json: Self.caseBody)
        try #require(created.status == 201, "\(created.text)")
        let number = try #require(try created.json()["case_number"] as? String)
        let etag = try #require(created.header("ETag"))

        let refused = try client.request("POST", "/api/v1/cases/\(number)/actions/freeze", headers: tier1.headers + [("If-Match", etag)], body: [])
        #expect(refused.status == 403)
        #expect(try refused.json()["code"] as? String == "forbidden")
        #expect(service.log.lines.contains { $0.contains("\"access_denied\"") && $0.contains("agent:\(tier1.agentID.uuidString.lowercased())") })
        let frozen = try client.request("POST", "/api/v1/cases/\(number)/actions/freeze", headers: tier2.headers + [("If-Match", etag)], body: [])
        #expect(frozen.status == 200, "\(frozen.text)")
    }

    @Test func anAPIClientsSignedIdempotentCaseCreationReplaysTheAccessCode() throws {
        let service = try TestService()
        defer { service.stop() }
        let apiClient = try service.addClient(name: "Carrier")
        let body = Array(try JSONSerialization.data(withJSONObject: Self.caseBody, options: [.sortedKeys]))
        let now = Int64(service.clock.now().timeIntervalSince1970)
        func send(_ bytes: [UInt8], timestamp: Int64) throws -> TestHTTPResponse {
            let headers = service.clientHeaders(apiClient, method: "POST", target: "/api/v1/cases", body: bytes, timestamp: timestamp)
                + [("Content-Type", "application/json"), ("Idempotency-Key", "carrier-ticket-4711")]
            return try service.client().request("POST", "/api/v1/cases", headers: headers, body: bytes)
        }
        let first = try send(body, timestamp: now)
        try #require(first.status == 201, "\(first.text)")
        #expect(try first.json()["access_code"] != nil)
        // A retry, signed afresh: the very same bytes, one-time access code included.
        let retry = try send(body, timestamp: now - 1)
        #expect(retry.status == 201)
        #expect(retry.body == first.body)
        #expect(retry.header("Location") == first.header("Location"))
        #expect(retry.header("ETag") == first.header("ETag"))
        #expect(retry.header("Idempotent-Replayed") == "true")
        // The same key for another case: refused.
        var other = Self.caseBody
        other["summary"] = "Another case."
        let mismatch = try send(Array(try JSONSerialization.data(withJSONObject: other, options: [.sortedKeys])), timestamp: now - 2)
        #expect(mismatch.status == 422)
        #expect(try mismatch.json()["code"] as? String == "idempotency_mismatch")
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM cases").count == 1)
    }
}
