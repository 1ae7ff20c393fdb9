import Crypto
import Foundation
import Logging
import ReclaimAPI
import ReclaimCore

/// A running Reclaim service on a fresh clone of the migrated template database, on an ephemeral loopback port.
public final class TestService: @unchecked Sendable {
    public let database: TestDatabase
    public let service: ReclaimService
    public let keys: KeyFile
    public let log: MemorySink
    public let directory: String
    /// The service's clock; `advance(by:)` moves time for expiry tests.
    public let clock = ServiceClock()

    /// Starts a service; `configure` may adjust the configuration first.
    public init(configure: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        database = try TestDatabase.create()
        (directory, keys) = try TestService.keyDirectory("reclaim-test-")
        var configuration = try TestService.configuration(database: database, directory: directory, extra: ["RECLAIM_LOG_LEVEL": "debug"])
        configure(&configuration)
        log = MemorySink()
        service = try ReclaimService(configuration: configuration, keys: keys, logger: Logger(sink: log, minimumLevel: .debug), clock: clock)
        try service.start()
    }

    /// A scratch directory holding a new key file (mode 0600), as every test service and cluster needs.
    static func keyDirectory(_ prefix: String) throws -> (String, KeyFile) {
        let directory = NSTemporaryDirectory() + prefix + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keys = KeyFile.generate()
        try keys.write(to: directory + "/keys")
        return (directory, keys)
    }

    /// The configuration of a test instance on `database`, serving on a free loopback port.
    static func configuration(database: TestDatabase, directory: String, extra: [String: String] = [:]) throws -> ServiceConfiguration {
        try ServiceConfiguration.fromEnvironment(
            [
                "DATABASE_URL": database.connectionString,
                "RECLAIM_ADDRESS": "127.0.0.1:0",
                "RECLAIM_KEY_FILE": directory + "/keys",
                "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
                "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
                "RECLAIM_THREADS": "2",
                "RECLAIM_DATA_DIR": directory,
            ].merging(extra) { $1 })
    }

    /// A client for this service.
    public func client() -> TestHTTPClient { TestHTTPClient(host: "127.0.0.1", port: service.port) }

    /// Stops the service and drops its database.
    public func stop() {
        service.shutdown()
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Where the repository's files are, found from this source file's path.
public enum RepositoryPaths {
    /// The repository root (the folder holding Package.swift).
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The `reclaim` executable built alongside the tests (same build folder).
    public static var executable: String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        // XCTest bundles sit at .build/debug/X.xctest/...; swift-testing may run from the same folder.
        while !folder.path.hasSuffix("/debug") && !folder.path.hasSuffix("/release") && folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        let candidate = folder.appendingPathComponent("reclaim").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        return root + "/.build/debug/reclaim"
    }
}

// MARK: Identity (issue 3): signed-in agents and API clients for tests

/// A signed-in agent: send `cookie` as the `Cookie` header and `csrfToken` as `X-CSRF-Token` on changing requests.
public struct AgentSession: Sendable {
    /// `__Host-reclaim_session=<token>`, ready for a `Cookie` header.
    public let cookie: String
    public let csrfToken: String
    public let agentID: UUID
    public let email: String
    public let password: String
    public let totpSecret: [UInt8]

    /// Cookie and CSRF headers for a changing request.
    public var headers: [(String, String)] { [("Cookie", cookie), ("X-CSRF-Token", csrfToken)] }
}

/// Why a test helper could not sign in.
public struct TestSignInError: Error, CustomStringConvertible {
    public let description: String
}

extension AgentSession {
    /// Creates an agent through `administration` and signs it in at the service on `port` with a computed TOTP code.
    static func signIn(
        _ administration: IdentityAdministration, port: Int, clock: ServiceClock, tier: Tier, admin: Bool, email: String?,
        name: String
    ) throws -> AgentSession {
        let address = email ?? "agent-\(UUID().uuidString.prefix(8).lowercased())@reclaim.test"
        let agent = try administration.addAgent(email: address, name: name, tier: tier, isAdmin: admin, now: clock.now())
        let code = try TOTP(secret: agent.totpSecret).code(at: clock.now())
        // A generous timeout: sign-in hashes on low-priority threads, which a busy test machine serves last.
        let response = try TestHTTPClient(host: "127.0.0.1", port: port, timeout: 30).request(
            "POST", "/api/v1/session", headers: [("Content-Type", "application/json")],
            json: ["email": agent.email, "password": agent.password, "totp": code])
        guard response.status == 201 else {
            throw TestSignInError(description: "sign-in on port \(port) answered \(response.status): \(response.text)")
        }
        guard let setCookie = response.header("Set-Cookie"), let pair = setCookie.split(separator: ";").first,
            let csrf = try response.json()["csrf_token"] as? String
        else {
            throw TestSignInError(description: "sign-in answered without a cookie or csrf_token")
        }
        return AgentSession(
            cookie: String(pair), csrfToken: csrf, agentID: agent.id, email: agent.email, password: agent.password,
            totpSecret: agent.totpSecret)
    }
}

extension TestService {
    /// The administration code path the command line uses, on this service's database and keys.
    public var identityAdministration: IdentityAdministration {
        IdentityAdministration(pool: service.pool, keys: keys)
    }

    /// Creates an agent (as `reclaim agent add` does) and signs it in over HTTP with a computed TOTP code.
    public func signIn(tier: Tier, admin: Bool = false, email: String? = nil, name: String = "Test Agent") throws -> AgentSession {
        try AgentSession.signIn(identityAdministration, port: service.port, clock: clock, tier: tier, admin: admin, email: email, name: name)
    }

    /// Creates an API client (as `reclaim client add` does).
    public func addClient(name: String = "Test Client") throws -> NewAPIClient {
        try identityAdministration.addClient(name: name, now: clock.now())
    }

    /// Headers for an API client's request: bearer key and, for POSTs, a fresh signature at the service's time.
    public func clientHeaders(_ client: NewAPIClient, method: String, target: String, body: [UInt8], timestamp: Int64? = nil) -> [(String, String)] {
        var headers = [("Authorization", "Bearer \(client.apiKey)")]
        if method != "GET" && method != "HEAD" {
            let t = timestamp ?? Int64(clock.now().timeIntervalSince1970)
            headers.append(
                (
                    "Reclaim-Signature",
                    RequestSignature.header(secret: Array(client.signingSecret.utf8), timestamp: t, method: method, target: target, body: body)
                ))
        }
        return headers
    }
}
