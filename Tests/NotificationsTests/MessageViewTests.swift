import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

/// What was sent, as agents and admins read it over HTTP: `GET /api/v1/cases/{n}/messages` (agents who read the
/// timeline) and `GET /api/v1/admin/clients/{id}/webhooks` (admins). From the attacker's side too: no body, no access
/// code, no webhook secret in either; API clients, non-admins and strangers are refused.
@Suite(.serialized) final class MessageViewTests {
    let service: TestService

    init() throws {
        service = try TestService { $0.webhookAllow = "127.0.0.1" }
    }

    deinit { service.stop() }

    func send(_ method: String, _ target: String, as client: NewAPIClient, json: Any? = nil) throws -> TestHTTPResponse {
        let bytes = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        var headers = service.clientHeaders(client, method: method, target: target, body: bytes)
        if json != nil { headers.append(("Content-Type", "application/json")) }
        return try service.client().request(method, target, headers: headers, body: bytes)
    }

    func get(_ target: String, as agent: AgentSession?) throws -> TestHTTPResponse {
        try service.client().request("GET", target, headers: agent.map { [("Cookie", $0.cookie)] } ?? [])
    }

    func items(_ response: TestHTTPResponse) throws -> [[String: Any]] {
        try #require(try response.json()["items"] as? [[String: Any]])
    }

    /// A client with an endpoint nobody answers (port 9: every attempt is refused and logged), and a case it opened.
    func clientWithCase(events: [String] = ["case.opened", "case.state_changed"]) throws
        -> (client: NewAPIClient, endpoint: String, secret: String, number: String, code: String)
    {
        let client = try service.addClient(name: "Carrier desk")
        let created = try send("POST", "/api/v1/webhooks", as: client, json: ["url": "http://127.0.0.1:9/hook", "events": events])
        #expect(created.status == 201, "\(created.text)")
        let endpoint = try #require(try created.json()["id"] as? String)
        let secret = try #require(try created.json()["secret"] as? String)
        let opened = try send("POST", "/api/v1/cases", as: client, json: try JSONSerialization.jsonObject(with: Data(try CaseWorld.caseBody().bytes)))
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        let code = try #require(try opened.json()["access_code"] as? String)
        return (client, endpoint, secret, number, code)
    }

    @Test func anAgentSeesWhatWasSentToWhomAndWhenOldestFirstWithoutBodiesOrSecrets() throws {
        let (_, _, secret, number, code) = try clientWithCase()
        let agent = try service.signIn(tier: .tier1)
        // The opening mail is written as an .eml (no SMTP) and so becomes sent; the webhook meets a refused port.
        var listed: [[String: Any]] = []
        #expect(
            try eventually {
                listed = try self.items(try self.get("/api/v1/cases/\(number)/messages", as: agent))
                // The attempt is counted when it is claimed and its error written when it ends: wait for both.
                return listed.count == 2 && listed[0]["state"] as? String == "sent" && (listed[1]["attempts"] as? Int ?? 0) >= 1
                    && listed[1]["last_error"] is String
            }, "\(listed)")
        let mail = listed[0]
        let webhook = listed[1]
        #expect(mail["channel"] as? String == "mail" && mail["kind"] as? String == "case_opened")
        #expect((mail["to"] as? [String: Any])?["email"] as? String == "victim.home@example.net")
        #expect(mail["sent_at"] is String && mail["next_attempt_at"] is NSNull && mail["attempts"] as? Int == 1 && mail["last_error"] is NSNull)
        #expect(webhook["channel"] as? String == "webhook" && webhook["kind"] as? String == "case.opened")
        let to = try #require(webhook["to"] as? [String: Any])
        #expect(to["client"] as? String == "Carrier desk" && to["url"] as? String == "http://127.0.0.1:9/hook")
        #expect(webhook["state"] as? String == "queued" && webhook["next_attempt_at"] is String && webhook["sent_at"] is NSNull)
        #expect((webhook["last_error"] as? String)?.isEmpty == false)

        // A transition queues the next mail and webhook, listed after the first ones.
        let world = try service.client().request("GET", "/api/v1/cases/\(number)", headers: [("Cookie", agent.cookie)])
        let version = try #require(try world.json()["version"] as? Int)
        let moved = try service.client().request(
            "POST", "/api/v1/cases/\(number)/transitions", headers: agent.headers + [("If-Match", "\"\(version)\"")],
            json: ["action": "escalate"])
        #expect(moved.status == 200, "\(moved.text)")
        let response = try get("/api/v1/cases/\(number)/messages", as: agent)
        #expect(response.status == 200)
        listed = try items(response)
        #expect(listed.map { $0["kind"] as? String } == ["case_opened", "case.opened", "state_changed", "case.state_changed"])
        let times = listed.compactMap { $0["created_at"] as? String }
        #expect(times == times.sorted() && times.count == 4)

        // Never a body, the access code or the webhook secret (nor its sealed bytes' name).
        let text = response.text
        for secretText in [code, code.replacingOccurrences(of: "-", with: ""), secret, String(secret.dropFirst(6))] {
            #expect(!text.contains(secretText))
        }
        for word in ["payload", "body", "secret", "\"data\""] { #expect(!text.contains(word), "\(word) in \(text)") }
    }

    @Test func aMailRefusedForTheRescueAddressIsListedAsRefused() throws {
        let agent = try service.signIn(tier: .tier1)
        // The thief's address as the contact is refused when the case is opened; a case recorded before that rule
        // (its contact written straight into the row) has its next mail refused and listed so.
        var body: [String: Any] = [
            "kind": "account_takeover", "account_email": "victim@example.com",
            "customer": ["name": "Ada Victim", "contact_email": "Thief@Evil.test"],
            "facts": ["rescue_email": "thief@evil.test"], "summary": "The thief's address given as contact.",
        ]
        let refusedAtOpening = try service.client().request("POST", "/api/v1/cases", headers: agent.headers, json: body)
        #expect(refusedAtOpening.status == 422, "\(refusedAtOpening.text)")
        body["customer"] = ["name": "Ada Victim", "contact_email": "ada@example.net"]
        let opened = try service.client().request("POST", "/api/v1/cases", headers: agent.headers, json: body)
        #expect(opened.status == 201, "\(opened.text)")
        let number = try #require(try opened.json()["case_number"] as? String)
        let connection = try service.database.connect()
        defer { connection.close() }
        try connection.execute("UPDATE cases SET customer_contact_email = 'Thief@Evil.test' WHERE case_number = \(number)")
        let note = try service.client().request(
            "POST", "/api/v1/cases/\(number)/notes", headers: agent.headers,
            json: ["body": "Please call us.", "visibility": "customer"])
        #expect(note.status == 201, "\(note.text)")
        let listed = try items(try get("/api/v1/cases/\(number)/messages", as: agent))
        #expect(listed.count == 2)
        #expect(listed.first?["kind"] as? String == "case_opened")
        let refused = try #require(listed.last)
        #expect(refused["state"] as? String == "refused" && refused["reason"] as? String == "rescue_address")
        #expect(refused["channel"] as? String == "mail" && refused["kind"] as? String == "customer_note" && refused["id"] is NSNull)
        #expect(refused["attempts"] as? Int == 0 && refused["sent_at"] is NSNull)
        let events = try items(try get("/api/v1/cases/\(number)/events", as: agent))
        let event = try #require(events.first { $0["type"] as? String == "mail_refused" })
        #expect(refused["event_seq"] as? Int == event["seq"] as? Int)
    }

    @Test func caseMessagesAreForAgentsOnly() throws {
        let (client, _, _, number, _) = try clientWithCase()
        // The API client that opened the case reads its webhook deliveries, not the customer's mail.
        #expect(try send("GET", "/api/v1/cases/\(number)/messages", as: client).status == 403)
        #expect(try get("/api/v1/cases/\(number)/messages", as: nil).status == 401)
        let agent = try service.signIn(tier: .tier1)
        // A well-formed number of no case, and a mistyped one: 404 as on the other case routes.
        var generator = SystemRandomNumberGenerator()
        let unknown = CaseNumber.generate(using: &generator).digits
        #expect(try get("/api/v1/cases/\(unknown)/messages", as: agent).status == 404)
        #expect(try get("/api/v1/cases/123456789012/messages", as: agent).status == 404)
    }

    @Test func anAdminSeesAClientsEndpointsAndTheirRecentDeliveriesWithoutSecrets() throws {
        let (client, endpoint, secret, _, code) = try clientWithCase()
        let admin = try service.signIn(tier: .tier1, admin: true)
        let target = "/api/v1/admin/clients/\(client.id.uuidString.lowercased())/webhooks"
        var endpoints: [[String: Any]] = []
        #expect(
            try eventually {
                endpoints = try self.items(try self.get(target, as: admin))
                let deliveries = endpoints.first?["recent_deliveries"] as? [[String: Any]]
                return (deliveries?.first?["attempts"] as? [[String: Any]])?.isEmpty == false
            }, "\(endpoints)")
        let shown = try #require(endpoints.first)
        #expect(endpoints.count == 1 && shown["id"] as? String == endpoint && shown["url"] as? String == "http://127.0.0.1:9/hook")
        #expect(
            shown["events"] as? [String] == ["case.opened", "case.state_changed"] && shown["active"] as? Bool == true && shown["created_at"] is String
        )
        let delivery = try #require((shown["recent_deliveries"] as? [[String: Any]])?.first)
        #expect(delivery["event"] as? String == "case.opened")
        let attempt = try #require((delivery["attempts"] as? [[String: Any]])?.first)
        #expect(
            attempt["at"] is String && attempt["duration_ms"] is Int && attempt["status"] is NSNull && (attempt["error"] as? String)?.isEmpty == false
        )
        let text = try get(target, as: admin).text
        #expect(!text.contains(secret) && !text.contains(String(secret.dropFirst(6))) && !text.contains("secret") && !text.contains(code))
        #expect(!text.contains("\"data\"") && !text.contains("payload"))

        // Only the latest 20, newest first; a disabled endpoint is inactive; a deleted one is left out.
        let database = try service.database.connect()
        try database.execute(
            """
            INSERT INTO outbox (id, channel, endpoint_id, kind, payload, next_attempt_at, created_at, state)
            SELECT gen_random_uuid(), 'webhook', \(UUID(uuidString: endpoint)!), 'note.added', '{}', now(), now() + make_interval(secs => g), 'failed'
            FROM generate_series(1, 25) AS g
            """)
        try database.execute("UPDATE webhook_endpoints SET disabled_at = now() WHERE id = \(UUID(uuidString: endpoint)!)")
        let later = try #require(try items(try get(target, as: admin)).first)
        let recent = try #require(later["recent_deliveries"] as? [[String: Any]])
        #expect(recent.count == 20 && recent.allSatisfy { $0["event"] as? String == "note.added" })
        let times = recent.compactMap { $0["created_at"] as? String }
        #expect(times == times.sorted(by: >))
        #expect(later["active"] as? Bool == false && later["disabled_at"] is String)
        #expect(try send("DELETE", "/api/v1/webhooks/\(endpoint)", as: client).status == 204)
        #expect(try items(try get(target, as: admin)).isEmpty)
    }

    /// An admin queues a dead-lettered delivery again (`POST …/deliveries/{id}/retry`): due now, an admin-log entry; a
    /// non-admin, an API client (even the owner) and another client's path are refused, and nothing changes.
    @Test func anAdminRetriesADeadLetteredDeliveryAndItIsOnTheAdminLog() throws {
        let (client, endpoint, _, _, _) = try clientWithCase(events: ["case.opened"])
        let other = try service.addClient(name: "Someone else")
        let database = try service.database.connect()
        defer { database.close() }
        let endpointID = try #require(UUID(uuidString: endpoint))
        let delivery = try #require(
            try database.query("SELECT id FROM outbox WHERE endpoint_id = \(endpointID)").first?.decode(0, as: UUID.self))
        try database.execute("UPDATE outbox SET state = 'failed', next_attempt_at = now() + interval '1 day' WHERE id = \(delivery)")
        let clientText = client.id.uuidString.lowercased()
        let target = "/api/v1/admin/clients/\(clientText)/webhooks/\(endpoint)/deliveries/\(delivery.uuidString.lowercased())/retry"
        func post(_ target: String, as agent: AgentSession) throws -> TestHTTPResponse {
            try service.client().request("POST", target, headers: agent.headers, body: [])
        }
        #expect(try post(target, as: try service.signIn(tier: .tier3)).status == 403)
        #expect(try send("POST", target, as: client).status == 403)
        let admin = try service.signIn(tier: .tier1, admin: true)
        let wrongClient = target.replacingOccurrences(of: clientText, with: other.id.uuidString.lowercased())
        #expect(try post(wrongClient, as: admin).status == 404)
        #expect(try database.query("SELECT state FROM outbox WHERE id = \(delivery)").first?.decode(0, as: String.self) == "failed")
        #expect(try database.query("SELECT 1 FROM admin_events WHERE type = 'webhook_retried'").count == 0)

        let retried = try post(target, as: admin)
        #expect(retried.status == 202, "\(retried.text)")
        #expect(try retried.json()["state"] as? String == "queued")
        let row = try #require(
            try database.query("SELECT state, next_attempt_at <= now() + interval '1 minute' AS due FROM outbox WHERE id = \(delivery)").first)
        #expect(try row.decode("state", as: String.self) == "queued" && row.decode("due", as: Bool.self))
        let logged = try database.query("SELECT actor, data FROM admin_events WHERE type = 'webhook_retried'")
        #expect(logged.count == 1)
        #expect(try logged.first?.decode("actor", as: String.self) == "agent:\(admin.agentID.uuidString.lowercased())")
        #expect(try logged.first?.decode("data", as: String.self).contains(delivery.uuidString.lowercased()) == true)
        // A disabled endpoint (410 Gone) takes no retry.
        try database.execute("UPDATE webhook_endpoints SET disabled_at = now() WHERE id = \(endpointID)")
        #expect(try post(target, as: admin).status == 409)
    }

    @Test func theAdminViewIsRefusedToNonAdminsAndAPIClientsAnd404ForAnUnknownClient() throws {
        let (client, _, _, _, _) = try clientWithCase()
        let target = "/api/v1/admin/clients/\(client.id.uuidString.lowercased())/webhooks"
        #expect(try get(target, as: try service.signIn(tier: .tier1)).status == 403)
        #expect(try get(target, as: try service.signIn(tier: .tier3)).status == 403)
        #expect(try send("GET", target, as: client).status == 403)
        #expect(try get(target, as: nil).status == 401)
        let admin = try service.signIn(tier: .tier1, admin: true)
        #expect(try get("/api/v1/admin/clients/\(UUID().uuidString.lowercased())/webhooks", as: admin).status == 404)
        #expect(try get("/api/v1/admin/clients/not-a-uuid/webhooks", as: admin).status == 404)
        // A client with no endpoint: an empty list, not a 404.
        let quiet = try service.addClient(name: "Quiet")
        let empty = try get("/api/v1/admin/clients/\(quiet.id.uuidString.lowercased())/webhooks", as: admin)
        #expect(try empty.status == 200 && items(empty).isEmpty)
    }
}
