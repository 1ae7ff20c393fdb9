import Foundation
import Logging
import Postgres
import ReclaimStore
import Synchronization

/// Why a test database could not be made.
public struct TestDatabaseError: Error, CustomStringConvertible {
    public let description: String
}

/// A fresh database for one test, cloned from a template migrated once per test process.
///
/// Needs `RECLAIM_TEST_PG`: a libpq conninfo for the maintenance database ("postgres") of a
/// throwaway cluster, as a superuser, e.g. from `deploy/pg start /tmp/pgtest`. The roles of a
/// deployment are made there (`DatabaseRoles`, as `reclaim db roles` prints them): the template
/// is migrated as the owner, and tests and their services connect as the service's login, so
/// every suite proves the grants suffice. Dropped by `drop()` or deinit
/// (which ends open connections): keep the value alive while the test uses the database,
/// e.g. `defer { database.drop() }`, since optimised builds may release it after its last use.
public final class TestDatabase: Sendable {
    /// Who a connection logs in as.
    public enum Role: Sendable {
        /// The service's login (a member of `reclaim_service`, owning nothing): what the service runs as.
        case service
        /// The schema's owner: migrations, and tests that play an owner who switches a guard off.
        case owner
        /// The throwaway cluster's superuser: tests that set what the planner believes (`pg_class` statistics).
        case superuser
    }

    /// The database's name (reclaim_test_<pid>_<n>).
    public let name: String
    /// A conninfo string for this database, as the service's login.
    public let connectionString: String
    /// A conninfo string for this database, as the schema's owner (`RECLAIM_MIGRATION_DATABASE_URL`).
    public let ownerConnectionString: String
    private let dropped = Mutex(false)

    /// The roles of the test cluster: the defaults `reclaim db roles` prints.
    public static let roles = try! DatabaseRoles()

    private init(name: String) throws {
        self.name = name
        connectionString = try PostgresConnection.connectionString(
            TestDatabase.adminConnectionString, replacingDatabase: name,
            user: TestDatabase.roles.login)
        ownerConnectionString = try PostgresConnection.connectionString(
            TestDatabase.adminConnectionString, replacingDatabase: name,
            user: TestDatabase.roles.owner)
    }

    deinit { drop() }

    static let notConfigured = """
        RECLAIM_TEST_PG is not set. Start a throwaway PostgreSQL and export its conninfo, e.g.
          export RECLAIM_TEST_PG="$(deploy/pg start /tmp/pgtest)"
        """

    /// Conninfo of the throwaway cluster's maintenance database, from RECLAIM_TEST_PG (stops the process with instructions when unset).
    public static var adminConnectionString: String {
        guard let value = configuredAdminConnectionString else { fatalError(notConfigured) }
        return value
    }

    private static var configuredAdminConnectionString: String? {
        guard let value = ProcessInfo.processInfo.environment["RECLAIM_TEST_PG"], !value.isEmpty else { return nil }
        return value
    }

    /// The repository's Migrations directory.
    public static var migrationsDirectory: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // ReclaimTestSupport
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Migrations").path
    }

    /// A new database with every migration applied.
    public static func create() throws -> TestDatabase {
        try clone(from: try template.get())
    }

    /// A new database with nothing in it (not even schema_migrations), for migrator tests.
    public static func createEmpty() throws -> TestDatabase {
        try clone(from: "template0")
    }

    /// A connection to this database, as the service's login unless told otherwise; the caller closes it.
    public func connect(as role: Role = .service) throws -> PostgresConnection {
        try PostgresConnection(connectionString: connectionString(as: role))
    }

    /// A pool for this database, as the service's login unless told otherwise; the caller closes it.
    public func makePool(maximumConnections: Int = 4, as role: Role = .service) -> PostgresPool {
        PostgresPool(connectionString: connectionString(as: role), maximumConnections: maximumConnections)
    }

    /// The conninfo string for `role`.
    public func connectionString(as role: Role) -> String {
        switch role {
        case .service: connectionString
        case .owner: ownerConnectionString
        case .superuser: (try? PostgresConnection.connectionString(TestDatabase.adminConnectionString, replacingDatabase: name)) ?? ""
        }
    }

    /// Drops the database, ending any connections still open to it. Safe to call twice.
    public func drop() {
        let first = dropped.withLock { wasDropped in
            defer { wasDropped = true }
            return !wasDropped
        }
        guard first, let admin = try? TestDatabase.adminConnection() else { return }
        defer { admin.close() }
        _ = try? admin.executeScript("DROP DATABASE IF EXISTS \(identifier: name) WITH (FORCE)")
    }

    // MARK: Template and clones

    private static let counter = Atomic<Int>(0)

    /// The template's name, made and migrated on first use (once per process, thread-safe as a static let).
    private static let template: Result<String, any Error> = Result { try makeTemplate() }

    private static func adminConnection() throws -> PostgresConnection {
        guard let admin = configuredAdminConnectionString else { throw TestDatabaseError(description: notConfigured) }
        return try PostgresConnection(connectionString: admin)
    }

    private static func makeTemplate() throws -> String {
        let admin = try adminConnection()
        defer { admin.close() }
        try dropLeftovers(admin)
        try admin.executeScript(PostgresQuery(unsafeSQL: roles.rolesSQL))
        let name = "reclaim_tpl_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        try admin.executeScript("CREATE DATABASE \(identifier: name) OWNER \(identifier: roles.owner) TEMPLATE template0")
        do {
            let connection = try PostgresConnection(
                connectionString: PostgresConnection.connectionString(
                    adminConnectionString, replacingDatabase: name,
                    user: roles.owner))
            defer { connection.close() }
            let migrations = try Migrator.load(directory: migrationsDirectory)
            try Migrator(migrations: migrations).migrate(connection, logger: .discard)
        } catch {
            _ = try? admin.executeScript("DROP DATABASE IF EXISTS \(identifier: name) WITH (FORCE)")
            throw error
        }
        // No connections to the template, ever: CREATE DATABASE fails while anyone is connected to it.
        try admin.executeScript("ALTER DATABASE \(identifier: name) WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
        atexit { TestDatabase.dropTemplateAtExit() }
        return name
    }

    private static func dropTemplateAtExit() {
        guard case .success(let name) = template, let admin = try? adminConnection() else { return }
        defer { admin.close() }
        dropTemplate(name, admin)
    }

    /// DROP DATABASE refuses templates, and cannot share a multi-statement string: two calls.
    private static func dropTemplate(_ name: String, _ admin: PostgresConnection) {
        _ = try? admin.executeScript("ALTER DATABASE \(identifier: name) WITH IS_TEMPLATE false")
        _ = try? admin.executeScript("DROP DATABASE IF EXISTS \(identifier: name) WITH (FORCE)")
    }

    /// Drops templates and clones left by test processes that died before cleaning up.
    private static func dropLeftovers(_ admin: PostgresConnection) throws {
        let names = try admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'reclaim\\_t%'").map { try $0.decode(0, as: String.self) }
        for name in names {
            let parts = name.split(separator: "_")
            guard parts.count == 4, let pid = Int32(parts[2]), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            dropTemplate(name, admin)
        }
    }

    private static func clone(from template: String) throws -> TestDatabase {
        let admin = try adminConnection()
        defer { admin.close() }
        if template == "template0" { try admin.executeScript(PostgresQuery(unsafeSQL: roles.rolesSQL)) }  // an empty database may come first
        let name = "reclaim_test_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
        var attempt = 1
        while true {
            do {
                try admin.executeScript("CREATE DATABASE \(identifier: name) OWNER \(identifier: roles.owner) TEMPLATE \(identifier: template)")
                break
            } catch let error as PostgresError where error.sqlState == "55006" && attempt < 10 {
                // "source database is being accessed by other users": a moment's overlap (e.g. autovacuum).
                usleep(UInt32(20_000 * attempt))
                attempt += 1
            }
        }
        // Database-level grants are not copied from a template: as `reclaim db roles` sets them.
        try admin.executeScript(PostgresQuery(unsafeSQL: try DatabaseRoles(database: name, owner: roles.owner, login: roles.login).databaseGrantsSQL))
        return try TestDatabase(name: name)
    }
}
