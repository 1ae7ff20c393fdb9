import Crypto
import Foundation
import Logging
import ReclaimAPI

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
        directory = NSTemporaryDirectory() + "reclaim-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        keys = KeyFile.generate()
        try keys.write(to: directory + "/keys")
        var configuration = try ServiceConfiguration.fromEnvironment([
            "DATABASE_URL": database.connectionString,
            "RECLAIM_ADDRESS": "127.0.0.1:0",
            "RECLAIM_KEY_FILE": directory + "/keys",
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            "RECLAIM_THREADS": "2",
            "RECLAIM_LOG_LEVEL": "debug",
        ])
        configure(&configuration)
        log = MemorySink()
        service = try ReclaimService(configuration: configuration, keys: keys, logger: Logger(sink: log, minimumLevel: .debug), clock: clock)
        try service.start()
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
