import Foundation
import Logging
import Postgres
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimStore

@Suite struct MigratorTests {
    static let first = Migration(version: 1, name: "create_notes", sql: "CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL);")
    static let second = Migration(
        version: 2, name: "add_author", sql: "ALTER TABLE notes ADD COLUMN author text; INSERT INTO notes VALUES (1, 'seed', 'system');")
    static let third = Migration(version: 3, name: "index_author", sql: "CREATE INDEX notes_author ON notes (author);")

    private func applied(_ connection: PostgresConnection) throws -> [Int] {
        try connection.query("SELECT version FROM schema_migrations ORDER BY version").map { try $0.decode(0, as: Int.self) }
    }

    @Test func appliesInOrderOnceAndRecordsChecksums() throws {
        let database = try TestDatabase.createEmpty()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let migrator = Migrator(migrations: [Self.first, Self.second])
        #expect(try migrator.check(connection) == .pending([Self.first, Self.second]))

        let sink = MemorySink()
        let ran = try migrator.migrate(connection, logger: Logger(sink: sink))
        #expect(ran.map(\.version) == [1, 2])
        #expect(try applied(connection) == [1, 2])
        let row = try connection.query("SELECT name, checksum, applied_at FROM schema_migrations WHERE version = 2").first!
        #expect(try row.decode(0, as: String.self) == "add_author")
        #expect(try row.decode(1, as: String.self) == Self.second.checksum)
        #expect(abs(try row.decode(2, as: Date.self).timeIntervalSinceNow) < 60)
        #expect(sink.lines.filter { $0.contains("\"migration_applied\"") }.count == 2)
        #expect(sink.lines.first?.contains("\"version\":1") == true)

        #expect(try migrator.migrate(connection, logger: .discard).isEmpty)
        #expect(try migrator.check(connection) == .upToDate(2))

        // A later build with a third file applies just that one.
        let next = Migrator(migrations: [Self.first, Self.second, Self.third])
        #expect(try next.check(connection) == .pending([Self.third]))
        #expect(try next.migrate(connection, logger: .discard).map(\.version) == [3])
        #expect(try next.check(connection) == .upToDate(3))
    }

    @Test func refusesAChangedFile() throws {
        let database = try TestDatabase.createEmpty()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try Migrator(migrations: [Self.first, Self.second]).migrate(connection, logger: .discard)
        let edited = Migration(version: 2, name: "add_author", sql: Self.second.sql + "\n-- tweaked")
        let changed = Migrator(migrations: [Self.first, edited, Self.third])
        #expect(throws: MigrationError.self) { try changed.migrate(connection, logger: .discard) }
        do {
            _ = try changed.check(connection)
            Issue.record("check accepted a changed file")
        } catch MigrationError.changed(let version, let name) {
            #expect(version == 2 && name == "add_author")
        }
        // Nothing after the changed file was applied.
        #expect(try applied(connection) == [1, 2])
    }

    @Test func refusesADatabaseAheadOfTheCode() throws {
        let database = try TestDatabase.createEmpty()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try Migrator(migrations: [Self.first, Self.second, Self.third]).migrate(connection, logger: .discard)
        let older = Migrator(migrations: [Self.first, Self.second])
        do {
            try older.migrate(connection, logger: .discard)
            Issue.record("migrate accepted a database ahead of the code")
        } catch MigrationError.databaseAhead(let databaseVersion, let codeVersion) {
            #expect(databaseVersion == 3 && codeVersion == 2)
        }
        #expect(throws: MigrationError.self) { try older.check(connection) }
    }

    @Test func aFailingMigrationRollsBackAndRecordsNothing() throws {
        let database = try TestDatabase.createEmpty()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let broken = Migration(version: 2, name: "broken", sql: "CREATE TABLE half_done (id int); SELECT 1/0;")
        do {
            try Migrator(migrations: [Self.first, broken, Self.third]).migrate(connection, logger: .discard)
            Issue.record("a failing migration did not throw")
        } catch MigrationError.failed(let version, let name, let underlying) {
            #expect(version == 2 && name == "broken")
            #expect(underlying.sqlState == "22012")
        }
        #expect(try applied(connection) == [1])
        #expect(try connection.query("SELECT to_regclass('half_done') IS NULL").first!.decode(0, as: Bool.self))
        // The lock was released: a fixed build migrates on the same connection.
        #expect(try Migrator(migrations: [Self.first, Self.second]).migrate(connection, logger: .discard).map(\.version) == [2])
    }

    @Test func twoInstancesMigratingAtOnceApplyEachFileOnce() throws {
        let database = try TestDatabase.createEmpty()
        let slow = Migration(version: 1, name: "slow", sql: "CREATE TABLE hits (n int); SELECT pg_sleep(0.3);")
        let count = Migration(version: 2, name: "count", sql: "INSERT INTO hits VALUES (1);")
        let migrator = Migrator(migrations: [slow, count])
        let appliedCounts = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let connection = try database.connect(as: .owner)
                    defer { connection.close() }
                    start.wait()
                    let ran = try migrator.migrate(connection, logger: .discard)
                    appliedCounts.withLock { $0.append(ran.count) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        start.signal()
        start.signal()
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(appliedCounts.withLock { $0.sorted() } == [0, 2])
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        #expect(try connection.query("SELECT count(*) FROM hits").first!.decode(0, as: Int.self) == 1)
        #expect(try applied(connection) == [1, 2])
    }

    @Test func loadsNumberedFilesInOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func write(_ file: String, _ sql: String) throws {
            try sql.write(toFile: (directory as NSString).appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        try write("0002_second.sql", "SELECT 2;")
        try write("0001_first.sql", "SELECT 1;")
        try write("README.md", "ignored")
        let loaded = try Migrator.load(directory: directory)
        #expect(loaded.map(\.version) == [1, 2])
        #expect(loaded.map(\.name) == ["first", "second"])
        #expect(loaded[0].checksum == "17db4fd369edb9244b9f91d9aeed145c3d04ad8ba6e95d06247f07a63527d11a")
        #expect(Migrator(migrations: loaded).latestVersion == 2)

        try write("0004_fourth.sql", "SELECT 4;")
        #expect(throws: MigrationError.self) { try Migrator.load(directory: directory) }  // gap at 3
        try FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent("0004_fourth.sql"))

        try write("0002_again.sql", "SELECT 2;")
        #expect(throws: MigrationError.self) { try Migrator.load(directory: directory) }  // duplicate 2
        try FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent("0002_again.sql"))

        for bad in ["3_short.sql", "0003-dash.sql", "0003_Upper.sql", "0003_.sql", "abcd_x.sql"] {
            try write(bad, "SELECT 3;")
            #expect(throws: MigrationError.self) { try Migrator.load(directory: directory) }
            try FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(bad))
        }
        #expect(try Migrator.load(directory: directory).count == 2)
    }

    @Test func theRepositoryMigrationsApplyAndTheTemplateIsCurrent() throws {
        let migrations = try Migrator.load(directory: TestDatabase.migrationsDirectory)
        #expect(migrations.first?.version == 1)
        let migrator = Migrator(migrations: migrations)
        let database = try TestDatabase.create()
        let connection = try database.connect()
        defer { connection.close() }
        #expect(try migrator.check(connection) == .upToDate(migrator.latestVersion))

        let empty = try TestDatabase.createEmpty()
        let fresh = try empty.connect(as: .owner)
        defer { fresh.close() }
        #expect(try migrator.migrate(fresh, logger: .discard).count == migrations.count)
    }
}
