import Crypto
import Foundation
import Logging
import ReclaimAPI
import ReclaimCore

/// Several Reclaim services on one test database, as `deploy/cluster` runs them behind HAProxy.
///
/// Each instance has its own pool, HTTP server and memory; they share only the database, the key
/// file and (so expiry tests stay possible) one clock. Whatever one instance remembers outside
/// PostgreSQL, the others cannot see: that is what the cluster tests look for.
public final class TestCluster: @unchecked Sendable {
    /// The one database every instance uses.
    public let database: TestDatabase
    /// The running services, each on its own loopback port.
    public let instances: [ReclaimService]
    /// The key file every instance shares (as a real cluster must).
    public let keys: KeyFile
    /// Scratch directory holding the key file.
    public let directory: String
    /// The clock every instance reads.
    public let clock = ServiceClock()

    /// Starts `count` instances on one fresh database.
    public init(instances count: Int = 3) throws {
        database = try TestDatabase.create()
        (directory, keys) = try TestService.keyDirectory("reclaim-cluster-")
        let configuration = try TestService.configuration(database: database, directory: directory, extra: ["RECLAIM_DB_CONNECTIONS": "4"])
        var started: [ReclaimService] = []
        do {
            for _ in 0..<count {
                let service = try ReclaimService(configuration: configuration, keys: keys, logger: .discard, clock: clock)
                try service.start()
                started.append(service)
            }
        } catch {
            for instance in started { instance.shutdown() }
            database.drop()
            throw error
        }
        instances = started
    }

    /// A client for instance `index`.
    public func client(_ index: Int, timeout: TimeInterval = 10) -> TestHTTPClient {
        TestHTTPClient(host: "127.0.0.1", port: instances[index].port, timeout: timeout)
    }

    /// The administration code path the command line uses, on the shared database.
    public var identityAdministration: IdentityAdministration {
        IdentityAdministration(pool: instances[0].pool, keys: keys)
    }

    /// Creates an agent and signs it in over HTTP on instance `index`.
    public func signIn(on index: Int, tier: Tier, admin: Bool = false) throws -> AgentSession {
        try AgentSession.signIn(
            identityAdministration, port: instances[index].port, clock: clock, tier: tier, admin: admin, email: nil,
            name: "Cluster Agent")
    }

    /// Creates an API client (as `reclaim client add` does).
    public func addClient(name: String = "Cluster Client") throws -> NewAPIClient {
        try identityAdministration.addClient(name: name, now: clock.now())
    }

    /// Headers for an API client's POST: bearer key and a fresh signature at the cluster's time.
    public func signedHeaders(_ client: NewAPIClient, method: String = "POST", target: String, body: [UInt8]) -> [(String, String)] {
        let timestamp = Int64(clock.now().timeIntervalSince1970)
        return [
            ("Authorization", "Bearer \(client.apiKey)"),
            (
                "Reclaim-Signature",
                RequestSignature.header(secret: Array(client.signingSecret.utf8), timestamp: timestamp, method: method, target: target, body: body)
            ),
        ]
    }

    /// Stops every instance and drops the database.
    public func stop() {
        for instance in instances { instance.shutdown() }
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
