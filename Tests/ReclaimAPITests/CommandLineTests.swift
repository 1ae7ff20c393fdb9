import Foundation
import Postgres
import ReclaimTestSupport
import Testing

/// The `reclaim` executable, run as an operator would.
@Suite struct CommandLineTests {
    var reclaim: String { RepositoryPaths.executable }

    func environment(_ extra: [String: String]) -> [String: String] {
        var environment = [
            "PATH": "/usr/bin:/bin", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
        ]
        environment.merge(extra) { $1 }
        return environment
    }

    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "reclaim-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func versionAndHelp() throws {
        let version = try Shell.capture([reclaim, "--version"], environment: environment([:]))
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("reclaim "))
        let help = try Shell.capture([reclaim, "--help"], environment: environment([:]))
        #expect(help.status == 0)
        for word in ["serve", "migrate", "keys generate", "DATABASE_URL", "RECLAIM_KEY_FILE"] {
            #expect(help.output.contains(word))
        }
        let unknown = try Shell.capture([reclaim, "frobnicate"], environment: environment([:]))
        #expect(unknown.status == 64)
    }

    @Test func badConfigurationStopsWithOneLineNamingTheVariable() throws {
        let result = try Shell.capture([reclaim, "serve"], environment: environment(["DATABASE_URL": "host=/nowhere", "RECLAIM_THREADS": "lots"]))
        #expect(result.status == 78)
        let lines = result.error.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.error.contains("RECLAIM_THREADS"))
        // `serve` writes its log stream only: even this refusal is one JSON line.
        let line = try #require(try JSONSerialization.jsonObject(with: Data(result.error.utf8)) as? [String: Any])
        #expect(line["event"] as? String == "configuration_invalid")
        #expect(line["level"] as? String == "error")
    }

    @Test func serveLogsItsStartAndStopAsJSONLinesOnly() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Shell.capture([reclaim, "keys", "generate", "--output", directory + "/keys"], environment: environment([:])).status == 0)
        let database = try TestDatabase.create()
        defer { database.drop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reclaim)
        process.arguments = ["serve"]
        process.environment = environment([
            "DATABASE_URL": database.connectionString, "RECLAIM_KEY_FILE": directory + "/keys",
            "RECLAIM_ADDRESS": "127.0.0.1:0",
        ])
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Wait (bounded) for the banner, then stop the service as an operator would.
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\"event\":\"serving\""), Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        text += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not a JSON line: \(line)")
        }
        let serving = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first {
            $0["event"] as? String == "serving"
        }
        #expect((serving?["url"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
        #expect(process.terminationStatus == 0)
    }

    @Test func keyFileIsPrivateAndServeRefusesAReadableOne() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/keys"
        let generated = try Shell.capture([reclaim, "keys", "generate", "--output", path], environment: environment([:]))
        #expect(generated.status == 0)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        // A second generate must not overwrite the keys that decrypt existing data.
        let again = try Shell.capture([reclaim, "keys", "generate", "--output", path], environment: environment([:]))
        #expect(again.status != 0)

        chmod(path, 0o644)
        let database = try TestDatabase.create()
        defer { database.drop() }
        let serve = try Shell.capture(
            [reclaim, "serve"],
            environment: environment([
                "DATABASE_URL": database.connectionString, "RECLAIM_KEY_FILE": path, "RECLAIM_ADDRESS": "127.0.0.1:0",
            ]))
        #expect(serve.status == 78)
        #expect(serve.error.contains("RECLAIM_KEY_FILE"))
        #expect(!serve.error.contains("\"key\""))
    }

    @Test func migrateIsIdempotentAndRefusesAnEditedFile() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let roles = ["DATABASE_URL": database.connectionString, "RECLAIM_MIGRATION_DATABASE_URL": database.ownerConnectionString]
        let first = try Shell.capture([reclaim, "migrate"], environment: environment(roles))
        #expect(first.status == 0, "\(first.error)")
        let second = try Shell.capture([reclaim, "migrate"], environment: environment(roles))
        #expect(second.status == 0)
        #expect(second.output.contains("up to date"))

        // A copy of the migrations with the first file edited: refused.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = RepositoryPaths.root + "/Migrations"
        for file in try FileManager.default.contentsOfDirectory(atPath: source) where file.hasSuffix(".sql") {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: directory + "/" + file)
        }
        let first0001 = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).sorted().first)
        let handle = try #require(FileHandle(forUpdatingAtPath: directory + "/" + first0001))
        handle.seekToEndOfFile()
        handle.write(Data("\n-- edited after it was applied\n".utf8))
        try handle.close()
        let edited = try Shell.capture([reclaim, "migrate"], environment: environment(roles.merging(["RECLAIM_MIGRATIONS_DIR": directory]) { $1 }))
        #expect(edited.status != 0)
        #expect(edited.error.contains(first0001.prefix(4)) || edited.error.lowercased().contains("changed"))

        // The database ahead of the code (a migration this build lacks): refused.
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'from_the_future', 'x')")
        let ahead = try Shell.capture([reclaim, "migrate"], environment: environment(roles))
        #expect(ahead.status != 0)
        #expect(ahead.error.contains("9999"))
    }

    @Test func serveDrainsAndExitsCleanlyOnSIGTERM() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Shell.run([reclaim, "keys", "generate", "--output", directory + "/keys"], environment: environment([:]))
        let port = Int.random(in: 20000...29999)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reclaim)
        process.arguments = ["serve"]
        process.environment = environment([
            "DATABASE_URL": database.connectionString, "RECLAIM_KEY_FILE": directory + "/keys",
            "RECLAIM_ADDRESS": "127.0.0.1:\(port)",
        ])
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let client = TestHTTPClient(host: "127.0.0.1", port: port)
        var ready = false
        for _ in 0..<100 {
            if let response = try? client.request("GET", "/readyz"), response.status == 200 {
                ready = true
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(ready)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("\"event\":\"stopped\""))
    }
}
