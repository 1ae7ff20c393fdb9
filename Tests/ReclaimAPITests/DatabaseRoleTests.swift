import Crypto
import Foundation
import Logging
import Postgres
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// Issue 25.2: the service runs as a role that cannot switch the timelines' protection off, `serve` refuses one that
/// could, and only the schema's owner migrates. Real PostgreSQL, real processes.
@Suite(.serialized) struct DatabaseRoleTests {
    func configuration(_ variables: [String: String]) throws -> ServiceConfiguration {
        try ServiceConfiguration.fromEnvironment(
            variables.merging([
                "RECLAIM_ADDRESS": "127.0.0.1:0", "RECLAIM_THREADS": "2",
                "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            ]) { $1 })
    }

    func startupRefusal(_ variables: [String: String], migrate: Bool = true) throws -> String? {
        do {
            let service = try ReclaimService(configuration: configuration(variables), keys: nil, logger: .discard, migrate: migrate)
            try service.start()
            service.shutdown()
            return nil
        } catch let error as StartupError {
            return error.description
        }
    }

    /// The attack of issue 25 with the service's own `DATABASE_URL`: edit an event and recompute its chain, or drop the
    /// last two events. Every way in is refused, and the audit still passes.
    @Test func withTheServicesRoleAnEventCannotBeEditedNorTheLastTwoDropped() throws {
        let world = try CaseWorld()
        let tier1 = try world.agent(.tier1)
        let number = try world.openCase(as: tier1).caseNumber
        try world.must(number, "escalate", as: tier1, version: 1)
        #expect(try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "Called back.", "visibility": "internal"]).status == 201)

        let attacker = try PostgresConnection(connectionString: world.service.database.connectionString)
        defer { attacker.close() }
        let events = try attacker.query(
            "SELECT e.seq, e.at, e.actor, e.type, e.prev_hash FROM case_events e JOIN cases c ON c.id = e.case_id WHERE c.case_number = \(number) ORDER BY e.seq"
        )
        #expect(events.count == 3)
        let second = events[1]
        let forged: JSONValue = ["action": "escalate", "reason": "covered up"]
        let hash = CaseEventChain.hash(
            previous: try second.decode("prev_hash", as: String?.self), seq: 2, at: try second.decode("at", as: Date.self),
            actor: try second.decode("actor", as: String.self), type: try second.decode("type", as: String.self), data: forged)
        let attempts: [String] = [
            "SET session_replication_role = replica",
            "UPDATE case_events SET data = '\(forged.canonical)', hash = '\(hash)' WHERE seq = 2 AND case_id = (SELECT id FROM cases WHERE case_number = '\(number)')",
            "DELETE FROM case_events WHERE seq >= 2 AND case_id = (SELECT id FROM cases WHERE case_number = '\(number)')",
            "ALTER TABLE case_events DISABLE TRIGGER case_events_append_only",
            "DELETE FROM admin_events WHERE seq >= 1",
        ]
        for attempt in attempts {
            do {
                try attacker.executeScript(PostgresQuery(unsafeSQL: attempt))
                Issue.record("the service's role was allowed: \(attempt)")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42501", "\(attempt): \(error)")
            }
        }

        let environment = ["PATH": "/usr/bin:/bin", "DATABASE_URL": world.service.database.connectionString]
        let audit = try Shell.capture([RepositoryPaths.executable, "audit", "verify"], environment: environment)
        #expect(audit.status == 0, "\(audit.output) \(audit.error)")
        #expect(audit.output.contains("ok: 1 case(s), 3 event(s)"), "\(audit.output)")
        #expect(try CaseEventStore.verify(on: attacker).breaks.isEmpty)
        #expect(try AdminEventStore.verify(on: attacker).firstBreak == nil)
    }

    @Test func serveRefusesARoleThatCouldRewriteTheTimelines() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let owner = try #require(try startupRefusal(["DATABASE_URL": database.ownerConnectionString]))
        #expect(owner.contains("\"\(TestDatabase.roles.owner)\" owns admin_events, case_events"), "\(owner)")
        #expect(owner.contains("reclaim db roles"))
        let superuser = try PostgresConnection.connectionString(TestDatabase.adminConnectionString, replacingDatabase: database.name)
        let refusal = try #require(try startupRefusal(["DATABASE_URL": superuser]))
        #expect(refusal.contains("is a superuser") && refusal.contains("session_replication_role"), "\(refusal)")
        #expect(try startupRefusal(["DATABASE_URL": database.connectionString]) == nil)

        // The process an operator starts says so in its log line and exits 1.
        let directory = NSTemporaryDirectory() + "reclaim-roles-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.generate().write(to: directory + "/keys")
        let serve = try Shell.capture(
            [RepositoryPaths.executable, "serve"],
            environment: [
                "PATH": "/usr/bin:/bin", "DATABASE_URL": database.ownerConnectionString, "RECLAIM_KEY_FILE": directory + "/keys",
                "RECLAIM_ADDRESS": "127.0.0.1:0", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
                "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            ])
        #expect(serve.status == 1)
        #expect(serve.error.contains("\"event\":\"start_failed\"") && serve.error.contains("owns admin_events, case_events"), "\(serve.error)")
    }

    @Test func onlyTheOwnersURLMigratesAndServeRefusesAStaleSchema() throws {
        let database = try TestDatabase.createEmpty()
        defer { database.drop() }
        let latest = try Migrator.load(directory: RepositoryPaths.root + "/Migrations").count
        // The service's role alone: nothing is applied, the refusal says how.
        let stale = try #require(try startupRefusal(["DATABASE_URL": database.connectionString]))
        #expect(stale.contains("lacks \(latest) migration(s)") && stale.contains("RECLAIM_MIGRATION_DATABASE_URL"), "\(stale)")
        let migrate = try Shell.capture(
            [RepositoryPaths.executable, "migrate"],
            environment: [
                "PATH": "/usr/bin:/bin", "DATABASE_URL": database.connectionString, "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            ])
        #expect(migrate.status == 1)
        #expect(migrate.error.contains("permission denied") && migrate.error.contains("RECLAIM_MIGRATION_DATABASE_URL"), "\(migrate.error)")
        let both = ["DATABASE_URL": database.connectionString, "RECLAIM_MIGRATION_DATABASE_URL": database.ownerConnectionString]
        let noMigrate = try #require(try startupRefusal(both, migrate: false))
        #expect(noMigrate.contains("drop --no-migrate"), "\(noMigrate)")

        // With the owner's URL, serve applies them as the owner, then serves as the service.
        let service = try ReclaimService(configuration: configuration(both), keys: nil, logger: .discard)
        try service.start()
        defer { service.shutdown() }
        #expect(try TestHTTPClient(host: "127.0.0.1", port: service.port).request("GET", "/readyz").status == 200)
        let connection = try database.connect()
        defer { connection.close() }
        #expect(
            try connection.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner <> \(TestDatabase.roles.owner)")
                .first!.decode(0, as: Int.self) == 0)
    }

    @Test func migratingWithoutTheServiceGroupStopsAtItsMigrationAndNamesTheSetup() throws {
        let cluster = try PrivateCluster(roles: false, durable: false)
        defer { cluster.destroy() }
        try Shell.run(["psql", cluster.conninfo, "-qXc", "CREATE DATABASE reclaim"])
        let superuser = cluster.connectionString(database: "reclaim", user: "postgres")
        let migrate = try Shell.capture(
            [RepositoryPaths.executable, "migrate"],
            environment: [
                "PATH": "/usr/bin:/bin", "DATABASE_URL": superuser, "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            ])
        #expect(migrate.status == 1)
        #expect(migrate.error.contains("the role reclaim_service does not exist") && migrate.error.contains("reclaim db roles"), "\(migrate.error)")
        // The setup then refuses to adopt a database another role owns, and says how to hand it over.
        var environment = ProcessInfo.processInfo.environment
        environment["RECLAIM_BIN"] = RepositoryPaths.executable
        let setup = try Shell.capture([RepositoryPaths.root + "/deploy/pg", "database", cluster.directory, "reclaim"], environment: environment)
        #expect(setup.status != 0)
        #expect(setup.error.contains("database reclaim belongs to postgres, not \(TestDatabase.roles.owner)"), "\(setup.error)")
    }

    @Test func dbRolesPrintsTheSetupForPsqlAndRefusesNamesThatAreNotIdentifiers() throws {
        let printed = try Shell.capture(
            [RepositoryPaths.executable, "db", "roles", "--database", "support", "--login", "support_app"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(printed.status == 0, "\(printed.error)")
        for line in [
            "CREATE ROLE reclaim_owner LOGIN;", "CREATE ROLE reclaim_service NOLOGIN;", "CREATE ROLE support_app LOGIN;",
            "GRANT reclaim_service TO support_app;", "CREATE DATABASE support OWNER reclaim_owner",
            "GRANT CONNECT ON DATABASE support TO reclaim_service;",
        ] {
            #expect(printed.output.contains(line), "missing: \(line)")
        }
        let bad = try Shell.capture(
            [RepositoryPaths.executable, "db", "roles", "--login", "x; DROP ROLE postgres"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(bad.status == 64)
        #expect(bad.output.isEmpty)
    }
}
