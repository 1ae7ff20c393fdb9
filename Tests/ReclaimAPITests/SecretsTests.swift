import Crypto
import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// No password, TOTP secret, session token, CSRF token, API key or signing secret in clear in the
/// database or the log: file canaries, exercise every path that handles them, then search a full
/// `pg_dump` and the captured log for each canary in every encoding it could leak in.
@Suite struct SecretsTests {
    static let password = "Canary-Password-q7Zk2Wm9Lp4x"
    static let totpSecret = Array("CANARY-TOTP-SEED-0042".utf8.prefix(20))
    static let apiKey = "rk_CanaryApiKey-J8sT3vQ1nR6yH2dF5gW0aBcX9"
    static let signingSecret = "canarysigningsecret-7e1d93b05fa24c68b7d0e3f2a91c4b57"

    /// Every form a secret could take on its way into storage or logs.
    static func forms(of bytes: [UInt8], label: String) -> [(String, String)] {
        let base64 = Data(bytes).base64EncodedString()
        var forms = [
            ("\(label) hex", Hex.encode(bytes)),
            ("\(label) base32", Base32.encode(bytes)),
            ("\(label) base64", base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))),
            ("\(label) base64url", Base64URL.encode(bytes)),
        ]
        if let text = String(bytes: bytes, encoding: .utf8), text.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            forms.append(("\(label) clear", text))
        }
        return forms
    }

    static func base64URLDecode(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }

    @Test func canariesAppearNeitherInAFullDumpNorInTheLog() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let service = harness.service

        // An agent with canary credentials, signed in over HTTP (and a failed attempt with a canary-like password).
        let agent = try service.identityAdministration.addAgent(
            email: "canary@reclaim.test", name: "Canary", tier: .tier2, isAdmin: true,
            password: Self.password, totpSecret: Self.totpSecret, now: service.clock.now())
        _ = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": agent.email, "password": Self.password + "-wrong", "totp": "000000"])
        let code = try TOTP(secret: Self.totpSecret).code(at: service.clock.now())
        let signIn = try service.client().request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": agent.email, "password": Self.password, "totp": code])
        #expect(signIn.status == 201)
        let cookie = try #require(signIn.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let sessionToken = String(cookie.dropFirst("__Host-reclaim_session=".count))
        let csrf = try signIn.decode(SessionView.self).csrfToken
        #expect(try service.client().request("GET", "/api/v1/session", headers: [("Cookie", cookie)]).status == 200)

        // An API client with canary credentials, making a signed, idempotent request and a refused one.
        let client = try service.identityAdministration.addClient(
            name: "Canary Client", apiKey: Self.apiKey, signingSecret: Self.signingSecret,
            now: service.clock.now())
        #expect(try harness.post(client, "/test/create", body: #"{"x":1}"#, extra: [("Idempotency-Key", "canary-1")]).status == 201)
        #expect(try harness.post(client, "/test/create", body: #"{"x":2}"#, signatureFor: "{}").status == 401)
        #expect(try service.client().request("GET", "/api/v1/session", headers: [("Authorization", "Bearer \(Self.apiKey)")]).status == 403)

        // What to look for.
        var canaries: [(String, String)] = []
        canaries += Self.forms(of: Array(Self.password.utf8), label: "password")
        canaries += Self.forms(of: Self.totpSecret, label: "totp secret")
        canaries += Self.forms(of: Array(sessionToken.utf8), label: "session token")
        if let raw = Self.base64URLDecode(sessionToken) { canaries += Self.forms(of: raw, label: "session token bytes") }
        canaries += Self.forms(of: Array(csrf.utf8), label: "csrf token")
        canaries += Self.forms(of: Array(Self.apiKey.utf8), label: "api key")
        canaries += Self.forms(of: Array(Self.signingSecret.utf8), label: "signing secret")
        if let raw = Hex.decode(Self.signingSecret) { canaries += Self.forms(of: raw, label: "signing secret bytes") }

        // A full dump of the test database, data and schema.
        let dump = try Shell.capture(["pg_dump", "--no-owner", "--inserts", "-d", service.database.connectionString])
        #expect(dump.status == 0, "\(dump.error)")
        #expect(dump.output.contains("INSERT INTO public.agents"), "the dump holds the agents table")
        #expect(dump.output.contains("INSERT INTO public.sessions"))
        #expect(dump.output.contains("INSERT INTO public.api_clients"))
        #expect(dump.output.contains("INSERT INTO public.idempotency_keys"))
        let log = service.log.lines.joined(separator: "\n")
        #expect(log.contains("sign_in"), "the log was captured")

        let dumpLower = dump.output.lowercased()
        let logLower = log.lowercased()
        // Positive controls: the search would find what is stored, in the form it is stored in.
        #expect(dump.output.contains("canary@reclaim.test"))
        #expect(dumpLower.contains(Hex.encode(SessionCookie.hash(sessionToken))), "the token's SHA-256 is stored as bytea hex")
        #expect(dumpLower.contains(Hex.encode(APIKey.hash(Self.apiKey))))
        for (label, value) in canaries where value.count >= 8 {
            // Hex is compared case-insensitively (PostgreSQL prints bytea as lower-case \x…).
            let needle = label.hasSuffix("hex") ? value.lowercased() : value
            let inDump = label.hasSuffix("hex") ? dumpLower.contains(needle) : dump.output.contains(needle)
            let inLog = label.hasSuffix("hex") ? logLower.contains(needle) : log.contains(needle)
            #expect(!inDump, "\(label) found in the database dump")
            #expect(!inLog, "\(label) found in the log")
        }
    }
}
