import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// Administration over HTTP (`/api/v1/admin/…`), mostly from the attacker's side: who is refused, what a change ends,
/// that a rotated secret overlaps for 24 hours and no longer, and that every change is on a chain that shows tampering.
@Suite struct AdminTests {
    /// A request with a JSON body and the session's cookie and CSRF token.
    func send(_ service: TestService, _ method: String, _ target: String, _ session: AgentSession, json: Any? = nil) throws -> TestHTTPResponse {
        if let json { return try service.client().request(method, target, headers: session.headers, json: json) }
        return try service.client().request(method, target, headers: session.headers, body: [])
    }

    func signIn(_ service: TestService, email: String, password: String, secret: [UInt8]) throws -> TestHTTPResponse {
        try TestHTTPClient(host: "127.0.0.1", port: service.service.port, timeout: 30).request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": email, "password": password, "totp": try TOTP(secret: secret).code(at: service.clock.now())])
    }

    func totpSecret(_ uri: String) throws -> [UInt8] {
        let components = try #require(URLComponents(string: uri))
        return try Base32.decode(try #require(components.queryItems?.first { $0.name == "secret" }?.value))
    }

    func auditTypes(_ service: TestService, _ admin: AgentSession) throws -> [[String: Any]] {
        let audit = try send(service, "GET", "/api/v1/admin/audit?limit=200", admin)
        try #require(audit.status == 200, "\(audit.text)")
        return try #require(try audit.json()["items"] as? [[String: Any]])
    }

    @Test func everyAdminRouteRefusesAgentsWhoAreNotAdminsAndAPIClients() throws {
        let service = try TestService()
        defer { service.stop() }
        let engineer = try service.signIn(tier: .engineering)
        let client = try service.addClient()
        let someone = UUID().uuidString.lowercased()
        let routes: [(String, String, Any?)] = [
            ("GET", "/api/v1/admin/agents", nil), ("POST", "/api/v1/admin/agents", ["email": "x@reclaim.test", "name": "X", "tier": "tier1"]),
            ("PATCH", "/api/v1/admin/agents/\(someone)", ["tier": "tier3"]), ("POST", "/api/v1/admin/agents/\(someone)/reset-password", nil),
            ("POST", "/api/v1/admin/agents/\(someone)/reset-totp", nil), ("GET", "/api/v1/admin/clients", nil),
            ("POST", "/api/v1/admin/clients", ["name": "Mallory"]),
            ("POST", "/api/v1/admin/clients/\(client.id.uuidString.lowercased())/rotate", nil),
            ("POST", "/api/v1/admin/clients/\(client.id.uuidString.lowercased())/rotate-key", nil),
            ("POST", "/api/v1/admin/clients/\(client.id.uuidString.lowercased())/webhooks/\(someone)/deliveries/\(someone)/retry", nil),
            ("DELETE", "/api/v1/admin/clients/\(client.id.uuidString.lowercased())", nil), ("GET", "/api/v1/admin/audit", nil),
        ]
        for (method, target, json) in routes {
            let asAgent = try send(service, method, target, engineer, json: json)
            #expect(asAgent.status == 403, "\(method) \(target) as a non-admin: \(asAgent.status)")
            let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
            let asClient = try service.client().request(
                method, target,
                headers: service.clientHeaders(client, method: method, target: target, body: body)
                    + (json == nil ? [] : [("Content-Type", "application/json")]), body: body)
            #expect(asClient.status == 403, "\(method) \(target) as an API client: \(asClient.status)")
            let anonymous = try service.client().request(
                method, target, headers: json == nil ? [] : [("Content-Type", "application/json")], body: body)
            #expect(anonymous.status == 401, "\(method) \(target) without credentials: \(anonymous.status)")
        }
        // Nothing changed: the client still works, no agent was added, the audit log holds only the setup.
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        #expect(try connection.query("SELECT 1 FROM agents").count == 1)
        #expect(try connection.query("SELECT 1 FROM api_clients WHERE revoked_at IS NULL AND rotated_at IS NULL").count == 1)
        #expect(try connection.query("SELECT type FROM admin_events").map { try $0.decode(0, as: String.self) } == ["agent_added", "client_added"])
        // An admin without the CSRF token is refused too.
        let admin = try service.signIn(tier: .tier1, admin: true)
        let noToken = try service.client().request("POST", "/api/v1/admin/clients", headers: [("Cookie", admin.cookie)], json: ["name": "Forged"])
        #expect(noToken.status == 403)
        #expect(try noToken.json()["code"] as? String == "csrf_failed")
    }

    @Test func anAgentAddedOverHTTPSignsInWithTheSecretsShownOnce() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let added = try send(
            service, "POST", "/api/v1/admin/agents", admin, json: ["email": "New.Agent@Reclaim.test", "name": "New Agent", "tier": "tier2"])
        try #require(added.status == 201, "\(added.text)")
        #expect(added.header("Cache-Control") == "no-store")
        let json = try added.json()
        #expect(json["tier"] as? String == "tier2" && json["active"] as? Bool == true && json["admin"] as? Bool == false)
        let password = try #require(json["password"] as? String)
        let secret = try totpSecret(try #require(json["totp_uri"] as? String))
        #expect(try signIn(service, email: "new.agent@reclaim.test", password: password, secret: secret).status == 201)

        // The list shows it without any secret, with its last sign-in.
        let list = try send(service, "GET", "/api/v1/admin/agents", admin)
        #expect(!list.text.contains(password) && !list.text.contains("totp"))
        let items = try #require(try list.json()["items"] as? [[String: Any]])
        let listed = try #require(items.first { ($0["email"] as? String)?.lowercased() == "new.agent@reclaim.test" })
        #expect(listed["last_sign_in_at"] is String)

        // The same email again: 409; a bad tier or missing name: 422 naming the field.
        let again = try send(
            service, "POST", "/api/v1/admin/agents", admin, json: ["email": "NEW.agent@reclaim.test", "name": "Again", "tier": "tier1"])
        #expect(again.status == 409)
        #expect(try again.json()["code"] as? String == "agent_exists")
        // The command line says the same (IdentityCommandTests runs it).
        #expect(try again.json()["detail"] as? String == IdentityAdministrationError.agentExists.description)
        let badTier = try send(service, "POST", "/api/v1/admin/agents", admin, json: ["email": "b@reclaim.test", "name": "B", "tier": "boss"])
        #expect(badTier.status == 422)
        #expect(badTier.text.contains("\"tier\""))
        let badEmail = try send(service, "POST", "/api/v1/admin/agents", admin, json: ["email": "nope", "name": "B", "tier": "tier1"])
        #expect(badEmail.status == 422)
        #expect(badEmail.text.contains("\"email\""))

        let events = try auditTypes(service, admin)
        let addition = try #require(events.last { $0["type"] as? String == "agent_added" })
        #expect(addition["actor"] as? String == "agent:\(admin.agentID.uuidString.lowercased())")
        #expect(!String(describing: events).contains(password))
        #expect(!service.log.lines.joined().contains(password))
    }

    @Test func deactivatingEndsTheSessionsAndAdminsCannotLockThemselvesOut() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let agent = try service.signIn(tier: .tier1)
        let id = agent.agentID.uuidString.lowercased()
        #expect(try service.client().request("GET", "/api/v1/session", headers: agent.headers).status == 200)

        let promoted = try send(service, "PATCH", "/api/v1/admin/agents/\(id)", admin, json: ["tier": "tier3"])
        #expect(promoted.status == 200)
        #expect(try promoted.json()["tier"] as? String == "tier3")
        // A tier change takes effect on the open session at once (the session reads the agent's row).
        let session = try service.client().request("GET", "/api/v1/session", headers: agent.headers)
        #expect((try session.json()["agent"] as? [String: Any])?["tier"] as? String == "tier3")

        let deactivated = try send(service, "PATCH", "/api/v1/admin/agents/\(id)", admin, json: ["active": false])
        #expect(deactivated.status == 200)
        #expect(try deactivated.json()["active"] as? Bool == false)
        #expect(try service.client().request("GET", "/api/v1/session", headers: agent.headers).status == 401)
        #expect(try signIn(service, email: agent.email, password: agent.password, secret: agent.totpSecret).status == 401)
        #expect(try send(service, "PATCH", "/api/v1/admin/agents/\(id)", admin, json: ["active": true]).status == 200)
        // The old session stays ended; a fresh sign-in works (a later TOTP step: the last one was used).
        #expect(try service.client().request("GET", "/api/v1/session", headers: agent.headers).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: agent.email, password: agent.password, secret: agent.totpSecret).status == 201)

        // An admin may not deactivate or demote themselves.
        let me = admin.agentID.uuidString.lowercased()
        for change in [["active": false], ["admin": false]] as [[String: Bool]] {
            let refused = try send(service, "PATCH", "/api/v1/admin/agents/\(me)", admin, json: change)
            #expect(refused.status == 409)
            #expect(try refused.json()["code"] as? String == "admin_lockout")
        }
        let empty = try send(service, "PATCH", "/api/v1/admin/agents/\(me)", admin, json: [String: Any]())
        #expect(empty.status == 422)
        #expect(try send(service, "PATCH", "/api/v1/admin/agents/\(UUID().uuidString)", admin, json: ["tier": "tier2"]).status == 404)
        #expect(try send(service, "PATCH", "/api/v1/admin/agents/not-a-uuid", admin, json: ["tier": "tier2"]).status == 404)

        let changes = try auditTypes(service, admin).filter { $0["type"] as? String == "agent_updated" }
        #expect(changes.count == 3)
        let first = try #require(changes.first?["data"] as? [String: Any])
        #expect((first["changes"] as? [String: Any])?["tier"] as? [String: String] == ["from": "tier1", "to": "tier3"])
    }

    @Test func resetsShowNewSecretsOnceAndEndTheSessions() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let agent = try service.signIn(tier: .tier2)
        let id = agent.agentID.uuidString.lowercased()
        let reset = try send(service, "POST", "/api/v1/admin/agents/\(id)/reset-password", admin)
        try #require(reset.status == 200, "\(reset.text)")
        let password = try #require(try reset.json()["password"] as? String)
        #expect(try service.client().request("GET", "/api/v1/session", headers: agent.headers).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: agent.email, password: agent.password, secret: agent.totpSecret).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: agent.email, password: password, secret: agent.totpSecret).status == 201)

        let totp = try send(service, "POST", "/api/v1/admin/agents/\(id)/reset-totp", admin)
        try #require(totp.status == 200, "\(totp.text)")
        let secret = try totpSecret(try #require(try totp.json()["totp_uri"] as? String))
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: agent.email, password: password, secret: agent.totpSecret).status == 401)
        service.clock.advance(by: 30)
        #expect(try signIn(service, email: agent.email, password: password, secret: secret).status == 201)
        #expect(try auditTypes(service, admin).compactMap { $0["type"] as? String }.suffix(2) == ["password_reset", "totp_reset"])
    }

    @Test func aRotatedSecretOverlapsForADayThenStops() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let created = try send(service, "POST", "/api/v1/admin/clients", admin, json: ["name": "Carrier"])
        try #require(created.status == 201, "\(created.text)")
        let json = try created.json()
        let idText = try #require(json["id"] as? String)
        let clientID = try #require(UUID(uuidString: idText))
        let oldClient = NewAPIClient(
            id: clientID, name: "Carrier",
            apiKey: try #require(json["api_key"] as? String), signingSecret: try #require(json["signing_secret"] as? String))
        func open(_ client: NewAPIClient) throws -> Int {
            // A second apart: the same request signed in the same second is a replay.
            service.clock.advance(by: 1)
            let body = try CaseWorld.caseBody().bytes
            let headers = service.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body) + [("Content-Type", "application/json")]
            return try service.client().request("POST", "/api/v1/cases", headers: headers, body: body).status
        }
        #expect(try open(oldClient) == 201)
        let id = oldClient.id.uuidString.lowercased()
        let rotated = try send(service, "POST", "/api/v1/admin/clients/\(id)/rotate", admin)
        try #require(rotated.status == 200, "\(rotated.text)")
        let newSecret = try #require(try rotated.json()["signing_secret"] as? String)
        #expect(newSecret != oldClient.signingSecret)
        #expect(try rotated.json()["previous_secret_valid_until"] is String)
        let newClient = NewAPIClient(id: oldClient.id, name: "Carrier", apiKey: oldClient.apiKey, signingSecret: newSecret)
        // Both sign during the overlap.
        #expect(try open(oldClient) == 201)
        #expect(try open(newClient) == 201)
        service.clock.advance(by: 24 * 3600 - 60)
        #expect(try open(oldClient) == 201)
        service.clock.advance(by: 120)
        #expect(try open(oldClient) == 401)
        #expect(try open(newClient) == 201)
        // A wrong secret was never accepted.
        #expect(
            try open(NewAPIClient(id: oldClient.id, name: "Carrier", apiKey: oldClient.apiKey, signingSecret: String(repeating: "0", count: 64)))
                == 401)

        // Revoked: refused with either secret; listed as inactive (a fresh admin: a day has passed, the first session expired).
        let later = try service.signIn(tier: .tier1, admin: true)
        let revoked = try send(service, "DELETE", "/api/v1/admin/clients/\(id)", later)
        #expect(revoked.status == 200)
        #expect(try revoked.json()["active"] as? Bool == false)
        #expect(try open(newClient) == 401)
        #expect(try send(service, "DELETE", "/api/v1/admin/clients/\(id)", later).status == 404)
        #expect(try send(service, "POST", "/api/v1/admin/clients/\(id)/rotate", later).status == 404)
        let list = try send(service, "GET", "/api/v1/admin/clients", later)
        #expect(!list.text.contains(newSecret) && !list.text.contains(oldClient.apiKey))
        #expect(
            try auditTypes(service, later).compactMap { $0["type"] as? String }.filter { $0.hasPrefix("client_") }
                == ["client_added", "client_rotated", "client_revoked"])
    }

    /// A new API key (`POST /api/v1/admin/clients/{id}/rotate-key`): shown once, the old key refused at once, the signing
    /// secret unchanged, an admin-log entry; a revoked client gets none.
    @Test func aRotatedAPIKeyReplacesTheOldOneAtOnce() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        let old = try service.addClient(name: "Carrier")
        func open(_ client: NewAPIClient) throws -> Int {
            service.clock.advance(by: 1)
            let body = try CaseWorld.caseBody().bytes
            let headers = service.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body) + [("Content-Type", "application/json")]
            return try service.client().request("POST", "/api/v1/cases", headers: headers, body: body).status
        }
        #expect(try open(old) == 201)
        let id = old.id.uuidString.lowercased()
        let rotated = try send(service, "POST", "/api/v1/admin/clients/\(id)/rotate-key", admin)
        try #require(rotated.status == 200, "\(rotated.text)")
        #expect(rotated.header("Cache-Control") == "no-store")
        let key = try #require(try rotated.json()["api_key"] as? String)
        #expect(key != old.apiKey)
        #expect(try rotated.json()["signing_secret"] == nil, "the signing secret is not rotated nor shown")
        #expect(try open(old) == 401)
        #expect(try open(NewAPIClient(id: old.id, name: "Carrier", apiKey: key, signingSecret: old.signingSecret)) == 201)
        let list = try send(service, "GET", "/api/v1/admin/clients", admin)
        #expect(!list.text.contains(key))
        #expect(try auditTypes(service, admin).compactMap { $0["type"] as? String }.suffix(1) == ["client_key_rotated"])
        #expect(try send(service, "DELETE", "/api/v1/admin/clients/\(id)", admin).status == 200)
        #expect(try send(service, "POST", "/api/v1/admin/clients/\(id)/rotate-key", admin).status == 404)
    }

    @Test func theAuditChainHoldsAndShowsTampering() throws {
        let service = try TestService()
        defer { service.stop() }
        let admin = try service.signIn(tier: .tier1, admin: true)
        for index in 0..<3 {
            #expect(try send(service, "POST", "/api/v1/admin/clients", admin, json: ["name": "Client \(index)"]).status == 201)
        }
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        let verified = try AdminEventStore.verify(on: connection)
        #expect(verified.firstBreak == nil && verified.events == 4)
        // Paged reads link up: the second page's first prev_hash is the first page's last hash.
        let first = try send(service, "GET", "/api/v1/admin/audit?limit=2", admin).json()
        let cursor = try #require(first["next_cursor"] as? String)
        let second = try send(service, "GET", "/api/v1/admin/audit?limit=2&cursor=\(cursor)", admin).json()
        let firstItems = try #require(first["items"] as? [[String: Any]])
        let secondItems = try #require(second["items"] as? [[String: Any]])
        #expect(secondItems.first?["prev_hash"] as? String == firstItems.last?["hash"] as? String)
        #expect((first["actors"] as? [String: String])?["agent:\(admin.agentID.uuidString.lowercased())"] == "Test Agent")

        // The database refuses edits; an owner who switches the guard off leaves a chain that no longer verifies.
        #expect(throws: PostgresError.self) { try connection.execute("UPDATE admin_events SET actor = 'cli' WHERE seq = 2") }
        let owner = try service.database.connect(as: .owner)
        defer { owner.close() }
        try owner.execute("ALTER TABLE admin_events DISABLE TRIGGER admin_events_append_only")
        try owner.execute("UPDATE admin_events SET data = replace(data, 'Client 1', 'Client X') WHERE seq = 3")
        let broken = try AdminEventStore.verify(on: connection)
        #expect(broken.firstBreak?.seq == 3)
    }

    @Test func adminCommandsRunOutsideTheCheckoutAndAreAudited() throws {
        let service = try TestService()
        defer { service.stop() }
        let agent = try service.signIn(tier: .tier1)
        // No RECLAIM_PUBLIC_DIR or RECLAIM_MIGRATIONS_DIR, and a working directory with neither Public/ nor Migrations/.
        let elsewhere = NSTemporaryDirectory() + "reclaim-elsewhere-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        func run(_ arguments: [String]) throws -> (status: Int32, error: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: RepositoryPaths.executable)
            process.arguments = arguments
            process.environment = [
                "PATH": "/usr/bin:/bin", "DATABASE_URL": service.database.connectionString, "RECLAIM_KEY_FILE": service.directory + "/keys",
            ]
            process.currentDirectoryURL = URL(fileURLWithPath: elsewhere)
            let error = Pipe()
            process.standardError = error
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let data = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let disabled = try run(["agent", "disable", agent.email])
        #expect(disabled.status == 0, "\(disabled.error)")
        #expect(try service.client().request("GET", "/api/v1/session", headers: agent.headers).status == 401)
        let enabled = try run(["agent", "enable", agent.email])
        #expect(enabled.status == 0, "\(enabled.error)")
        let client = try service.addClient()
        let rotated = try run(["client", "rotate", client.id.uuidString])
        #expect(rotated.status == 0, "\(rotated.error)")
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        let rows = try connection.query("SELECT actor, type FROM admin_events ORDER BY seq")
        #expect(
            try rows.map { try $0.decode(1, as: String.self) } == ["agent_added", "agent_updated", "agent_updated", "client_added", "client_rotated"])
        #expect(try rows.map { try $0.decode(0, as: String.self) }.allSatisfy { $0 == "cli" })
    }
}
