import Foundation
import Logging
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// The service on a PostgreSQL of its own that the test kills and brings back.
@Suite(.serialized) struct ResilienceTests {
    @Test func databaseLossAnswers503AndRecoversBySelf() throws {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let directory = NSTemporaryDirectory() + "reclaim-resilience-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = try ServiceConfiguration.fromEnvironment(
            cluster.databaseEnvironment.merging([
                "RECLAIM_ADDRESS": "127.0.0.1:0",
                "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
                "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
                "RECLAIM_THREADS": "2",
            ]) { $1 })
        let service = try ReclaimService(configuration: configuration, keys: nil, logger: Logger(sink: MemorySink()))
        try service.start()
        defer { service.shutdown() }
        let client = TestHTTPClient(host: "127.0.0.1", port: service.port)
        #expect(try client.request("GET", "/readyz").status == 200)

        try cluster.kill()
        for _ in 0..<3 {
            let started = Date()
            let response = try client.request("GET", "/readyz")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") != nil)
            #expect(try response.problem().code == "database_unavailable")
            #expect(Date().timeIntervalSince(started) < 3.5, "a dead database must not hang requests")
        }
        #expect(try client.request("GET", "/healthz").status == 200)

        try cluster.start()
        let back = Date()
        var recovered = false
        var last = ""
        while Date().timeIntervalSince(back) < 5 {
            let response = try client.request("GET", "/readyz")
            last = String(decoding: response.body, as: UTF8.self)
            if response.status == 200 {
                recovered = true
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(recovered, "the service must recover within 5 s of the database coming back; last answer: \(last)")
    }
}

/// A PostgreSQL cluster of the test's own, made with deploy/pg: its superuser for setup, and (unless `roles` is false)
/// the database `reclaim` with the roles `reclaim db roles` prints, as a deployment has them.
final class PrivateCluster {
    let directory: String
    let port = "55" + String(Int.random(in: 100...999))
    /// The setup conninfo (the bootstrap superuser, database postgres).
    private(set) var conninfo: String = ""

    /// Whether fsync stays on (an immediate shutdown must not lose what was committed before it).
    let durable: Bool

    init(roles: Bool = true, durable: Bool = true) throws {
        directory = "/tmp/reclaim-pc-" + String(UUID().uuidString.prefix(8))
        self.durable = durable
        try start()
        if roles {
            var environment = ProcessInfo.processInfo.environment
            environment["RECLAIM_BIN"] = RepositoryPaths.executable
            try Shell.run([RepositoryPaths.root + "/deploy/pg", "database", directory, "reclaim"], environment: environment)
        }
    }

    /// The conninfo of `database` as `user` (default: the service's login).
    func connectionString(database: String, user: String = TestDatabase.roles.login) -> String {
        conninfo.replacingOccurrences(of: "dbname=postgres", with: "dbname=\(database)").replacingOccurrences(
            of: "user=postgres", with: "user=\(user)")
    }

    /// `DATABASE_URL` (the service's login) and `RECLAIM_MIGRATION_DATABASE_URL` (the owner) for the database `reclaim`.
    var databaseEnvironment: [String: String] {
        [
            "DATABASE_URL": connectionString(database: "reclaim"),
            "RECLAIM_MIGRATION_DATABASE_URL": connectionString(database: "reclaim", user: TestDatabase.roles.owner),
        ]
    }

    func start() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PG_DURABLE"] = durable ? "1" : "0"
        conninfo = try Shell.run([RepositoryPaths.root + "/deploy/pg", "start", directory, port], environment: environment)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops PostgreSQL abruptly (immediate shutdown: no checkpoint, connections cut).
    func kill() throws {
        try Shell.run([RepositoryPaths.root + "/deploy/pg", "kill", directory])
    }

    func destroy() {
        _ = try? Shell.run([RepositoryPaths.root + "/deploy/pg", "destroy", directory])
    }
}

/// Runs a command and returns its standard output; throws with its standard error when it fails.
enum Shell {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let result = try capture(arguments, environment: environment)
        guard result.status == 0 else {
            throw Failure(description: "\(arguments.joined(separator: " ")) exited \(result.status): \(result.error)")
        }
        return result.output
    }

    static func capture(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}
