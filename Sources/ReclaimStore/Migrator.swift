import Crypto
import Foundation
import Logging
import Postgres

/// One forward-only schema change: the file `NNNN_name.sql`.
public struct Migration: Sendable, Equatable {
    /// The file's number, 1...n with no gaps.
    public let version: Int
    /// The file's name after the number, e.g. "initial".
    public let name: String
    /// The SQL, run as one script in one transaction.
    public let sql: String
    /// Lower-case hex SHA-256 of `sql`; an applied file must never change.
    public let checksum: String

    /// A migration from its parts; the checksum is computed.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hexDigest(sql)
    }
}

/// Why migrations cannot be loaded or applied.
public enum MigrationError: Error, CustomStringConvertible, Sendable {
    case badFileName(String)
    case duplicateVersion(Int)
    case gap(Int)
    case changed(version: Int, name: String)
    case databaseAhead(databaseVersion: Int, codeVersion: Int)
    case failed(version: Int, name: String, underlying: PostgresError)
    case notOwner(PostgresError)

    static let ownerHint = " (migrations run as the schema's owner, RECLAIM_MIGRATION_DATABASE_URL: the service's role may not change the schema)"

    public var description: String {
        switch self {
        case .badFileName(let file): "migration file \(file) is not named NNNN_name.sql (lower-case letters, digits, underscores)"
        case .duplicateVersion(let version): "two migration files have version \(version)"
        case .gap(let version): "migration \(version) is missing: versions must run 1, 2, 3... without gaps"
        case .changed(let version, let name): "migration \(version) (\(name)) was changed after it was applied; add a new migration instead"
        case .databaseAhead(let databaseVersion, let codeVersion):
            "the database is at migration \(databaseVersion) but this build knows only up to \(codeVersion); run a newer build"
        case .failed(let version, let name, let underlying):
            "migration \(version) (\(name)) failed and was rolled back: \(underlying)"
                + (underlying.sqlState == "42501" ? MigrationError.ownerHint : "")
        case .notOwner(let underlying): "cannot create schema_migrations: \(underlying)\(MigrationError.ownerHint)"
        }
    }
}

/// How the database's schema compares with the code's migrations.
public enum MigrationState: Sendable, Equatable {
    /// Every migration is applied; the version is the latest.
    case upToDate(Int)
    /// These migrations are not applied yet, in order.
    case pending([Migration])
}

/// Applies migrations in order, each in its own transaction, recorded in `schema_migrations`.
/// Runs under an advisory lock so instances starting together apply each file once, and
/// refuses a database whose applied files changed or that is ahead of the code.
public struct Migrator: Sendable {
    /// The ordered migrations.
    public let migrations: [Migration]

    /// Key of the session advisory lock held while migrating ("Reclaim" in ASCII).
    static let advisoryLockKey = 0x0052_6563_6C61_696D

    static let createTable: PostgresQuery = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version int PRIMARY KEY,
            name text NOT NULL,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// Reads `NNNN_name.sql` files from `directory` (other files are ignored), checking the numbering is 1...n.
    public static func load(directory: String) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }
        var migrations: [Migration] = []
        for file in files {
            guard let (version, name) = parseFileName(file) else { throw MigrationError.badFileName(file) }
            let path = (directory as NSString).appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            migrations.append(Migration(version: version, name: name, sql: String(decoding: data, as: UTF8.self)))
        }
        migrations.sort { $0.version < $1.version }
        try validate(migrations)
        return migrations
    }

    /// "0003_add_cases.sql" → (3, "add_cases").
    static func parseFileName(_ file: String) -> (Int, String)? {
        let stem = file.dropLast(4)  // ".sql"
        let parts = stem.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 4, parts[0].allSatisfy(\.isASCII), let version = Int(parts[0]), version > 0,
            !parts[1].isEmpty, parts[1].allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
        else { return nil }
        return (version, String(parts[1]))
    }

    static func validate(_ migrations: [Migration]) throws {
        for (index, migration) in migrations.enumerated() {
            if index > 0 && migrations[index - 1].version == migration.version { throw MigrationError.duplicateVersion(migration.version) }
            if migration.version != index + 1 { throw MigrationError.gap(index + 1) }
        }
    }

    /// A migrator for these migrations, which must be numbered 1...n in order.
    public init(migrations: [Migration]) {
        self.migrations = migrations
    }

    /// The highest version the code knows (0 when there are none).
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies the pending migrations and returns them; throws if the database disagrees with the code.
    @discardableResult
    public func migrate(_ connection: PostgresConnection, logger: Logger) throws -> [Migration] {
        try Migrator.validate(migrations)
        // Session lock, released when we are done or when the connection dies.
        try connection.execute("SELECT pg_advisory_lock(\(Migrator.advisoryLockKey))")
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(\(Migrator.advisoryLockKey))") }
        // Only when missing: a role that may not create tables (the service's) then finds a current schema current.
        if try !Migrator.recordExists(connection) {
            do {
                try connection.executeScript(Migrator.createTable)
            } catch let error as PostgresError where error.sqlState == "42501" {
                throw MigrationError.notOwner(error)
            }
        }
        let pending = try pendingMigrations(applied: appliedMigrations(connection))
        for migration in pending {
            let started = ContinuousClock.now
            do {
                try connection.withTransaction { transaction in
                    // A migration file runs as written: the one place SQL text comes from outside the code.
                    try transaction.executeScript(PostgresQuery(unsafeSQL: migration.sql))
                    try transaction.execute(
                        """
                        INSERT INTO schema_migrations (version, name, checksum) \
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """)
                }
            } catch let error as PostgresError {
                logger.error(
                    "migration_failed", ["version": .int(migration.version), "name": .string(migration.name), "error": .string(error.description)])
                throw MigrationError.failed(version: migration.version, name: migration.name, underlying: error)
            }
            let elapsed = ContinuousClock.now - started
            logger.info(
                "migration_applied",
                [
                    "version": .int(migration.version), "name": .string(migration.name),
                    "duration_ms": .int(Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)),
                ])
        }
        try Migrator.runDataSteps(connection, logger: logger)
        return pending
    }

    /// What a migration's SQL cannot do: the data steps in Swift, each draining the work list its migration made (and
    /// doing nothing once it is empty or when the list's table does not exist, as in a schema of other migrations).
    static func runDataSteps(_ connection: PostgresConnection, logger: Logger) throws {
        let exists = try connection.query("SELECT to_regclass('case_search_backfill') IS NOT NULL AS present").first
        guard try exists?.decode("present", as: Bool.self) == true else { return }
        let done = try CaseStore.backfillSearchTerms(on: connection)
        if done > 0 { logger.info("search_terms_backfilled", ["cases": .int(done)]) }
    }

    /// The checksum recorded for migration `version`, nil when it is not applied or there is no schema yet.
    public static func appliedChecksum(version: Int, on connection: PostgresConnection) throws -> String? {
        do {
            return try connection.query("SELECT checksum FROM schema_migrations WHERE version = \(version)").first.map {
                try $0.decode(0, as: String.self)
            }
        } catch let error as PostgresError where error.sqlState == "42P01" {
            return nil  // no schema_migrations table yet
        }
    }

    /// Compares the database with the code without changing anything.
    public func check(_ connection: PostgresConnection) throws -> MigrationState {
        let pending = try pendingMigrations(applied: Migrator.recordExists(connection) ? appliedMigrations(connection) : [])
        return pending.isEmpty ? .upToDate(latestVersion) : .pending(pending)
    }

    private static func recordExists(_ connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").first?.decode("present", as: Bool.self) ?? false
    }

    private func appliedMigrations(_ connection: PostgresConnection) throws -> [(version: Int, name: String, checksum: String)] {
        let rows = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        var columns = rows.columns()
        let version = try columns("version")
        let name = try columns("name")
        let checksum = try columns("checksum")
        return try rows.map { row in
            (try row.decode(version, as: Int.self), try row.decode(name, as: String.self), try row.decode(checksum, as: String.self))
        }
    }

    private func pendingMigrations(applied: [(version: Int, name: String, checksum: String)]) throws -> [Migration] {
        if let newest = applied.last, newest.version > latestVersion {
            throw MigrationError.databaseAhead(databaseVersion: newest.version, codeVersion: latestVersion)
        }
        var appliedVersions = Set<Int>()
        for record in applied {
            guard record.version >= 1, migrations[record.version - 1].checksum == record.checksum else {
                throw MigrationError.changed(version: record.version, name: record.name)
            }
            appliedVersions.insert(record.version)
        }
        return migrations.filter { !appliedVersions.contains($0.version) }
    }
}
