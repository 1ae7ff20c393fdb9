import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// Identity on the product's own routes: tiers on a real case action, CSRF on a real change,
/// a signed and idempotent case creation by an API client.
@Suite struct IdentityEndToEndTests {
    @Test func aTier1AgentIsRefusedTheFreezeATier2AgentMayTake() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        let tier1 = try service.signIn(tier: .tier1)
        let tier2 = try service.signIn(tier: .tier2)
        // A change with the cookie but no CSRF token is refused before the handler runs.
        let noToken = try client.request("POST", "/api/v1/cases", headers: [("Cookie", tier1.cookie)], encoded: CaseWorld.caseBody())
        #expect(noToken.status == 403)
        #expect(try noToken.problem().code == "csrf_failed")
        let created = try client.request("POST", "/api/v1/cases", headers: tier1.headers, encoded: CaseWorld.caseBody())
        try #require(created.status == 201, "\(created.text)")
        let number = try created.decode(CaseView.self).caseNumber
        let etag = try #require(created.header("ETag"))

        let refused = try client.request("POST", "/api/v1/cases/\(number)/actions/freeze", headers: tier1.headers + [("If-Match", etag)], body: [])
        #expect(refused.status == 403)
        #expect(try refused.problem().code == "forbidden")
        #expect(service.log.lines.contains { $0.contains("\"access_denied\"") && $0.contains("agent:\(tier1.agentID.uuidString.lowercased())") })
        let frozen = try client.request("POST", "/api/v1/cases/\(number)/actions/freeze", headers: tier2.headers + [("If-Match", etag)], body: [])
        #expect(frozen.status == 200, "\(frozen.text)")
    }

    @Test func anAPIClientsSignedIdempotentCaseCreationReplaysTheAccessCode() throws {
        let service = try TestService()
        defer { service.stop() }
        let apiClient = try service.addClient(name: "Carrier")
        let body = try CaseWorld.caseBody().bytes
        let now = Int64(service.clock.now().timeIntervalSince1970)
        func send(_ bytes: [UInt8], timestamp: Int64) throws -> TestHTTPResponse {
            let headers =
                service.clientHeaders(apiClient, method: "POST", target: "/api/v1/cases", body: bytes, timestamp: timestamp)
                + [("Content-Type", "application/json"), ("Idempotency-Key", "carrier-ticket-4711")]
            return try service.client().request("POST", "/api/v1/cases", headers: headers, body: bytes)
        }
        let first = try send(body, timestamp: now)
        try #require(first.status == 201, "\(first.text)")
        #expect(try first.decode(CaseView.self).accessCode != nil)
        // A retry, signed afresh: the very same bytes, one-time access code included.
        let retry = try send(body, timestamp: now - 1)
        #expect(retry.status == 201)
        #expect(retry.body == first.body)
        #expect(retry.header("Location") == first.header("Location"))
        #expect(retry.header("ETag") == first.header("ETag"))
        #expect(retry.header("Idempotent-Replayed") == "true")
        // The same key for another case: refused.
        var other = CaseWorld.caseBody()
        other.summary = "Another case."
        let mismatch = try send(try other.bytes, timestamp: now - 2)
        #expect(mismatch.status == 422)
        #expect(try mismatch.problem().code == "idempotency_mismatch")
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM cases").count == 1)
    }
}
