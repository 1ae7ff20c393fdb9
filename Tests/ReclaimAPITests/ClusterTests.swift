import Crypto
import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// Three instances on one database (issue 15, item 4): an agent or API client may land on any of them,
/// so sessions, throttles, signature replays and idempotency keys must live in PostgreSQL, not in memory.
@Suite struct ClusterTests {
    static let json = [("Content-Type", "application/json")]
    static var caseBody: [String: Any] {
        [
            "kind": "account_takeover", "account_email": "victim@example.com",
            "customer": ["name": "Ada Victim", "contact_email": "victim.home@example.net"],
            "devices": [["serial": "C02XK1ZJH3QD", "imei": "490154203237518", "model": "Phone 12"]],
            "facts": ["rescue_email_added": true], "summary": "Credential stuffing; rescue address added.",
        ]
    }

    @Test func aSessionMadeOnOneInstanceWorksAndEndsOnTheOthers() throws {
        let cluster = try TestCluster(instances: 3)
        defer { cluster.stop() }
        #expect(Set(cluster.instances.map(\.port)).count == 3)
        let session = try cluster.signIn(on: 0, tier: .tier1)

        let current = try cluster.client(1).request("GET", "/api/v1/session", headers: [("Cookie", session.cookie)])
        #expect(current.status == 200)
        #expect(try current.json()["csrf_token"] as? String == session.csrfToken)
        // A change on a third instance: cookie and CSRF token both checked there.
        let opened = try cluster.client(2).request("POST", "/api/v1/cases", headers: session.headers, json: Self.caseBody)
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        #expect(try cluster.client(0).request("GET", "/api/v1/cases/\(number)", headers: [("Cookie", session.cookie)]).status == 200)

        // Signed out on one instance: refused on every other at once.
        #expect(try cluster.client(1).request("DELETE", "/api/v1/session", headers: session.headers).status == 204)
        for index in [0, 2] {
            #expect(try cluster.client(index).request("GET", "/api/v1/session", headers: [("Cookie", session.cookie)]).status == 401)
        }
    }

    @Test func aSignedRequestReplayedOnAnotherInstanceIsRefused() throws {
        let cluster = try TestCluster(instances: 3)
        defer { cluster.stop() }
        let client = try cluster.addClient()
        let body = Array(try JSONSerialization.data(withJSONObject: Self.caseBody))
        let captured = cluster.signedHeaders(client, target: "/api/v1/cases", body: body) + Self.json
        let first = try cluster.client(0).request("POST", "/api/v1/cases", headers: captured, body: body)
        #expect(first.status == 201, "\(first.text)")
        // The attacker's copy of the very same bytes, sent to the other instances.
        for index in [2, 1] {
            let replay = try cluster.client(index).request("POST", "/api/v1/cases", headers: captured, body: body)
            #expect(replay.status == 401)
            #expect(try replay.json()["code"] as? String == "replayed_signature")
        }
    }

    @Test func anIdempotencyKeyUsedOnOneInstanceReplaysOnAnother() throws {
        let cluster = try TestCluster(instances: 3)
        defer { cluster.stop() }
        let client = try cluster.addClient()
        let body = Array(try JSONSerialization.data(withJSONObject: Self.caseBody))
        func send(to index: Int) throws -> TestHTTPResponse {
            // A fresh signature each time (an honest retry), the same key.
            cluster.clock.advance(by: 1)
            return try cluster.client(index).request(
                "POST", "/api/v1/cases",
                headers: cluster.signedHeaders(client, target: "/api/v1/cases", body: body)
                    + Self.json + [("Idempotency-Key", "cluster-retry-1")], body: body)
        }
        let first = try send(to: 0)
        let second = try send(to: 1)
        let third = try send(to: 2)
        #expect(first.status == 201)
        #expect(second.body == first.body && third.body == first.body)
        let connection = try cluster.database.connect()
        defer { connection.close() }
        #expect(try connection.query("SELECT count(*) FROM cases").first!.decode(0, as: Int.self) == 1)
    }

    @Test func signInFailuresSpreadOverInstancesLockTheAccount() throws {
        let cluster = try TestCluster(instances: 3)
        defer { cluster.stop() }
        let agent = try cluster.identityAdministration.addAgent(
            email: "spread-\(UUID().uuidString.prefix(8))@reclaim.test", name: "Spread",
            tier: .tier1, isAdmin: false, now: cluster.clock.now())
        // Ten failures, round-robin: no instance sees more than four, yet the account locks.
        for attempt in 0..<10 {
            let failed = try cluster.client(attempt % 3, timeout: 30).request(
                "POST", "/api/v1/session", headers: Self.json,
                json: ["email": agent.email, "password": "wrong password 123", "totp": "000000"])
            #expect(failed.status == 401)
        }
        let code = try TOTP(secret: agent.totpSecret).code(at: cluster.clock.now())
        for index in 0..<3 {
            let locked = try cluster.client(index, timeout: 30).request(
                "POST", "/api/v1/session", headers: Self.json,
                json: ["email": agent.email, "password": agent.password, "totp": code])
            #expect(locked.status == 429, "instance \(index)")
            #expect(try locked.json()["code"] as? String == "locked_out")
        }
    }
}
