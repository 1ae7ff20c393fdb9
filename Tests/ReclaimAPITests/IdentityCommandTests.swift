import Crypto
import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// `reclaim agent …` and `reclaim client …` as an operator runs them, against a running service's database and keys.
@Suite struct IdentityCommandTests {
    func run(_ service: TestService, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": service.database.connectionString,
            "RECLAIM_KEY_FILE": service.directory + "/keys", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        let result = try Shell.capture([RepositoryPaths.executable] + arguments, environment: environment)
        return (result.status, result.output, result.error)
    }

    func object(_ text: String) throws -> [String: String] {
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "--json prints exactly one line")
        return try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }

    @Test func anAgentAddedOnTheCommandLineSignsInWithThePrintedSecrets() throws {
        let service = try TestService()
        defer { service.stop() }
        let added = try run(service, ["agent", "add", "--email", "Cli.Agent@Reclaim.test", "--name", "Cli Agent", "--tier", "tier3", "--json"])
        #expect(added.status == 0, "\(added.error)")
        let json = try object(added.output)
        #expect(Set(json.keys) == ["id", "email", "tier", "password", "totp_uri"])
        #expect(json["tier"] == "tier3")
        let password = try #require(json["password"])
        #expect(password.count >= 12)
        let uri = try #require(json["totp_uri"].flatMap(URLComponents.init(string:)))
        #expect(uri.scheme == "otpauth" && uri.host == "totp")
        let query = Dictionary(uniqueKeysWithValues: (uri.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["algorithm"] == "SHA1" && query["digits"] == "6" && query["period"] == "30")
        let secret = try Base32.decode(try #require(query["secret"]))
        #expect(secret.count == 20)

        let email = "cli.agent@reclaim.test"  // any case signs in
        let code = try TOTP(secret: secret).code(at: service.clock.now())
        let signIn = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": email, "password": password, "totp": code])
        #expect(signIn.status == 201)

        // Same email in another case: refused, exit 1, one line.
        let duplicate = try run(service, ["agent", "add", "--email", "CLI.AGENT@reclaim.test", "--name", "Again", "--tier", "tier1"])
        #expect(duplicate.status == 1)
        // The refusal catalogue's message, as the API's problem says it.
        #expect(duplicate.error == "reclaim: agent add: \(IdentityAdministrationError.agentExists.description)\n")
        // The password is never in the log or the error output.
        #expect(!service.log.lines.joined().contains(password))
    }

    @Test func resetPasswordAndTOTPAndDisable() throws {
        let service = try TestService()
        defer { service.stop() }
        let session = try service.signIn(tier: .tier1)
        let reset = try run(service, ["agent", "reset-password", session.email, "--json"])
        #expect(reset.status == 0, "\(reset.error)")
        let newPassword = try #require(try object(reset.output)["password"])
        #expect(newPassword != session.password)
        // Resetting ends the sessions.
        #expect(try service.client().request("GET", "/api/v1/session", headers: [("Cookie", session.cookie)]).status == 401)

        let totp = try run(service, ["agent", "reset-totp", session.email, "--json"])
        #expect(totp.status == 0, "\(totp.error)")
        let uri = try #require(try object(totp.output)["totp_uri"].flatMap(URLComponents.init(string:)))
        let secret = try Base32.decode(try #require(uri.queryItems?.first { $0.name == "secret" }?.value))
        #expect(secret != session.totpSecret)
        let code = try TOTP(secret: secret).code(at: service.clock.now())
        let signIn = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": session.email, "password": newPassword, "totp": code])
        #expect(signIn.status == 201)

        #expect(try run(service, ["agent", "disable", session.email]).status == 0)
        let next = try TOTP(secret: secret).code(at: service.clock.now().addingTimeInterval(30))
        let refused = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": session.email, "password": newPassword, "totp": next])
        #expect(refused.status == 401)
        #expect(try run(service, ["agent", "disable", "nobody@reclaim.test"]).status == 1)
    }

    @Test func clientAddPrintsKeyAndSecretOnceAndRevokeRefusesTheKey() throws {
        let service = try TestService()
        defer { service.stop() }
        let added = try run(service, ["client", "add", "--name", "Carrier", "--json"])
        #expect(added.status == 0, "\(added.error)")
        let json = try object(added.output)
        #expect(Set(json.keys) == ["id", "api_key", "signing_secret"])
        let key = try #require(json["api_key"])
        let whoami = try service.client().request("GET", "/api/v1/session", headers: [("Authorization", "Bearer \(key)")])
        #expect(whoami.status == 403)  // a client, but not an agent: authenticated, not allowed
        #expect(try run(service, ["client", "revoke", try #require(json["id"])]).status == 0)
        #expect(try service.client().request("GET", "/api/v1/session", headers: [("Authorization", "Bearer \(key)")]).status == 401)
        #expect(try run(service, ["client", "revoke", "not-a-uuid"]).status == 64)
    }

    @Test func usageErrorsExit64() throws {
        let service = try TestService()
        defer { service.stop() }
        #expect(try run(service, ["agent", "add", "--email", "a@b.test", "--name", "N", "--tier", "tier9"]).status == 64)
        #expect(try run(service, ["agent", "add", "--name", "N", "--tier", "tier1"]).status == 64)
        #expect(try run(service, ["agent", "frobnicate"]).status == 64)
        #expect(try run(service, ["client", "add"]).status == 64)
    }
}
