import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// The binary finds its migrations and static files without a working directory (issue 15, item 6).
@Suite struct InstalledFilesTests {
    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "reclaim-files-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func anInstalledBinaryLooksInItsPrefixAndABuiltOneInItsCheckout() throws {
        #expect(InstalledFiles.candidates(for: "Public", executablePath: "/opt/reclaim/bin/reclaim") == ["/opt/reclaim/share/reclaim/Public"])
        #expect(
            InstalledFiles.candidates(for: "Migrations", executablePath: "/src/reclaim/.build/x86_64-unknown-linux-gnu/release/reclaim")
                == ["/src/reclaim/.build/x86_64-unknown-linux-gnu/share/reclaim/Migrations", "/src/reclaim/Migrations"])
        #expect(InstalledFiles.candidates(for: "Public", executablePath: nil).isEmpty)
        #expect(InstalledFiles.candidates(for: "Public", executablePath: "reclaim").isEmpty)

        let prefix = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        for folder in ["bin", "share/reclaim/Public", "share/reclaim/Migrations"] {
            try FileManager.default.createDirectory(atPath: prefix + "/" + folder, withIntermediateDirectories: true)
        }
        let configuration = try ServiceConfiguration.fromEnvironment(["DATABASE_URL": "host=/tmp dbname=x"], executablePath: prefix + "/bin/reclaim")
        #expect(configuration.publicDirectory == prefix + "/share/reclaim/Public")
        #expect(configuration.migrationsDirectory == prefix + "/share/reclaim/Migrations")
        // The variables still win.
        let explicit = try ServiceConfiguration.fromEnvironment(
            ["DATABASE_URL": "host=/tmp dbname=x", "RECLAIM_PUBLIC_DIR": "/tmp"],
            executablePath: prefix + "/bin/reclaim")
        #expect(explicit.publicDirectory == "/tmp")
    }

    @Test func nothingFoundNamesTheVariableAndWhereItLooked() throws {
        do {
            _ = try ServiceConfiguration.fromEnvironment(["DATABASE_URL": "host=/tmp dbname=x"], executablePath: "/nowhere/bin/reclaim")
            Issue.record("a missing Public directory was accepted")
        } catch {
            #expect(error.variable == "RECLAIM_PUBLIC_DIR")
            #expect(error.description.contains("/nowhere/share/reclaim/Public"))
        }
        // Administration commands need neither directory, even when a variable names a missing one.
        let admin = try ServiceConfiguration.fromEnvironment(
            ["DATABASE_URL": "host=/tmp dbname=x", "RECLAIM_PUBLIC_DIR": "/does/not/exist"],
            needs: [], executablePath: "/nowhere/bin/reclaim")
        #expect(admin.databaseURL == "host=/tmp dbname=x")
        let migrate = try ServiceConfiguration.fromEnvironment(
            ["DATABASE_URL": "host=/tmp dbname=x", "RECLAIM_MIGRATIONS_DIR": "/tmp"],
            needs: .migrations, executablePath: "/nowhere/bin/reclaim")
        #expect(migrate.migrationsDirectory == "/tmp")
    }

    /// Only what an operator's shell has: no RECLAIM_*_DIR, and the working directory is /tmp, not the checkout.
    func operatorEnvironment(_ extra: [String: String]) -> [String: String] {
        ["PATH": "/usr/bin:/bin"].merging(extra) { $1 }
    }

    /// Runs `arguments` with /tmp as the working directory.
    func runInTmp(_ arguments: [String], _ environment: [String: String]) throws -> (status: Int32, output: String, error: String) {
        try Shell.capture(["-C", "/tmp"] + arguments, environment: operatorEnvironment(environment))
    }

    @Test func theBuiltBinaryRunsAdminCommandsFromAnyDirectory() throws {
        let reclaim = RepositoryPaths.executable
        let database = try TestDatabase.createEmpty()
        defer { database.drop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keys = directory + "/keys"
        #expect(try runInTmp([reclaim, "keys", "generate", "--output", keys], [:]).status == 0)
        let environment = [
            "DATABASE_URL": database.connectionString, "RECLAIM_MIGRATION_DATABASE_URL": database.ownerConnectionString, "RECLAIM_KEY_FILE": keys,
        ]

        let migrated = try runInTmp([reclaim, "migrate"], environment)
        #expect(migrated.status == 0, "\(migrated.error)")
        #expect(migrated.output.contains("applied"))
        let added = try runInTmp([reclaim, "agent", "add", "--email", "ops@reclaim.test", "--name", "Ops", "--tier", "tier1"], environment)
        #expect(added.status == 0, "\(added.error)")
        // The reported failure: a stale or wrong RECLAIM_PUBLIC_DIR must not stop an administration command.
        let disabled = try runInTmp(
            [reclaim, "agent", "disable", "ops@reclaim.test"],
            environment.merging(["RECLAIM_PUBLIC_DIR": "Public/"]) { $1 })
        #expect(disabled.status == 0, "\(disabled.error)")
        #expect(disabled.output.contains("disabled agent"))
    }

    @Test func anInstalledBinaryMigratesAndServesFromItsPrefix() throws {
        let prefix = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let install = try Shell.capture(
            [RepositoryPaths.root + "/deploy/install", prefix],
            environment: operatorEnvironment(["RECLAIM_BIN": RepositoryPaths.executable]))
        #expect(install.status == 0, "\(install.error)")
        let reclaim = prefix + "/bin/reclaim"
        // No /.build/ in this path: only the prefix can supply the files.
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/reclaim/Public/index.html"))

        let database = try TestDatabase.createEmpty()
        defer { database.drop() }
        let keys = prefix + "/keys"
        #expect(try runInTmp([reclaim, "keys", "generate", "--output", keys], [:]).status == 0)
        let environment = [
            "DATABASE_URL": database.connectionString, "RECLAIM_MIGRATION_DATABASE_URL": database.ownerConnectionString, "RECLAIM_KEY_FILE": keys,
        ]
        let migrated = try runInTmp([reclaim, "migrate"], environment)
        #expect(migrated.status == 0, "\(migrated.error)")

        let port = Int.random(in: 30000...39999)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reclaim)
        process.arguments = ["serve", "--no-migrate"]
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        process.environment = operatorEnvironment(environment.merging(["RECLAIM_ADDRESS": "127.0.0.1:\(port)"]) { $1 })
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        let client = TestHTTPClient(host: "127.0.0.1", port: port)
        var page: TestHTTPResponse?
        for _ in 0..<100 {
            if let response = try? client.request("GET", "/"), response.status == 200 {
                page = response
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let served = try #require(page)
        let installed = try String(contentsOfFile: prefix + "/share/reclaim/Public/index.html", encoding: .utf8)
        #expect(served.text == installed)
    }
}
