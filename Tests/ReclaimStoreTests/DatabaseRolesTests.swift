import Foundation
import Postgres
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// Issue 25.2, from the attacker's side: whoever holds the service's database role (a stolen `DATABASE_URL`, an SQL
/// injection) cannot rewrite the timelines or the admin log, nor switch their protection off. Real PostgreSQL, the roles
/// `reclaim db roles` makes, migrations applied by the owner as in production.
@Suite struct DatabaseRolesTests {
    /// A database with one case of two events and two admin events, and a connection as the service's login.
    func withHistory(_ body: (TestDatabase, PostgresConnection) throws -> Void) throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let caseID = try EvidenceStoreTests.insertCase(on: connection)
        for type in ["case_opened", "note_added"] {
            try CaseEventStore.append(caseID: caseID, at: Date(), actor: "agent:a", type: type, data: ["n": 1], on: connection)
            try AdminEventStore.append(at: Date(), actor: "cli", type: "agent_added", data: ["email": "a@example.test"], on: connection)
        }
        try body(database, connection)
    }

    func refused(
        _ statement: String, on connection: PostgresConnection, saying words: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try connection.executeScript(PostgresQuery(unsafeSQL: statement))
            Issue.record("the service's role was allowed: \(statement)", sourceLocation: sourceLocation)
        } catch let error as PostgresError {
            #expect(error.sqlState == "42501", "\(statement): \(error)", sourceLocation: sourceLocation)
            if let words { #expect(error.message.contains(words), "\(statement): \(error.message)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("\(statement): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theServiceCannotSwitchTheTriggersOffNorRewriteHistory() throws {
        try withHistory { _, connection in
            // The bypass the attack used: replica mode skips ordinary triggers. Refused however it is asked for.
            refused("SET session_replication_role = replica", on: connection, saying: "session_replication_role")
            refused("SELECT set_config('session_replication_role', 'replica', false)", on: connection)
            refused("BEGIN; SET LOCAL session_replication_role = replica; COMMIT", on: connection)
            _ = try? connection.executeScript("ROLLBACK")
            // The privilege refuses, before any trigger runs (the trigger's own message is "append-only").
            for table in DatabaseRoles.appendOnlyTables {
                refused("UPDATE \(table) SET actor = 'agent:someone-else'", on: connection, saying: "permission denied for table \(table)")
                refused("DELETE FROM \(table) WHERE seq > 0", on: connection, saying: "permission denied for table \(table)")
                refused("TRUNCATE \(table)", on: connection, saying: "permission denied for table \(table)")
                refused("ALTER TABLE \(table) DISABLE TRIGGER ALL", on: connection, saying: "must be owner")
                refused("DROP TRIGGER \(table)_append_only ON \(table)", on: connection, saying: "must be owner")
                refused("ALTER TABLE \(table) OWNER TO reclaim", on: connection)
                refused("DROP TABLE \(table)", on: connection)
                // Granting itself more is a no-op with a warning (it holds no grant option): the privileges stay away.
                try connection.executeScript("GRANT UPDATE, DELETE ON \(identifier: table) TO \(identifier: TestDatabase.roles.login)")
                #expect(
                    try connection.query("SELECT has_table_privilege(\(table), 'UPDATE') OR has_table_privilege(\(table), 'DELETE') AS p")
                        .first!.decode("p", as: Bool.self) == false)
            }
            // The trigger's function cannot be replaced by one that lets everything through.
            refused(
                """
                CREATE OR REPLACE FUNCTION case_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$
                """, on: connection)
            // Nor can it become someone stronger, or make itself a table to stage a copy.
            refused("SET ROLE \(TestDatabase.roles.owner)", on: connection)
            refused("SET SESSION AUTHORIZATION \(TestDatabase.roles.owner)", on: connection)
            refused("ALTER ROLE CURRENT_USER SUPERUSER", on: connection)
            refused("CREATE TABLE case_events_copy (LIKE case_events)", on: connection)
            refused("INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'x', 'y')", on: connection)
            // Nor add a word to a vocabulary the columns check against (a new state, a tier above engineering).
            refused("INSERT INTO case_states (state) VALUES ('withdrawn')", on: connection, saying: "permission denied for table case_states")
            refused("DELETE FROM tiers WHERE tier = 'tier1'", on: connection, saying: "permission denied for table tiers")
            refused("INSERT INTO customer_reasons (reason) VALUES ('ugly')", on: connection, saying: "permission denied for table customer_reasons")

            // Nothing changed: both chains hold, every event is there.
            let cases = try CaseEventStore.verify(on: connection)
            #expect(cases.breaks.isEmpty && cases.events == 2)
            let admin = try AdminEventStore.verify(on: connection)
            #expect(admin.firstBreak == nil && admin.events == 2)
        }
    }

    @Test func theServiceStillDoesItsOwnWork() throws {
        try withHistory { _, connection in
            // Appending and reading the timelines, and the working tables' whole cycle, sequences included.
            #expect(try connection.query("SELECT count(*) FROM case_events").first!.decode(0, as: Int.self) == 2)
            try connection.execute("UPDATE cases SET summary = 'edited' WHERE case_number = '100000000001'")
            try ThrottleStore.recordFailure(key: "k", rule: .init(limit: 3, window: 60, lockout: 60), now: Date(), on: connection)
            try ThrottleStore.reset(key: "k", on: connection)
            #expect(try connection.query("SELECT nextval('outbox_attempts_id_seq') > 0").first!.decode(0, as: Bool.self))
            let (role, problems) = try DatabaseRoles.check(on: connection)
            #expect(role == TestDatabase.roles.login)
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test func theRolesAreWhatTheyMustBe() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT rolname, rolsuper, rolcreatedb, rolcreaterole, rolcanlogin, rolbypassrls,
                   EXISTS (SELECT FROM pg_shdepend WHERE refclassid = 'pg_authid'::regclass AND refobjid = r.oid AND deptype = 'o') AS owns
            FROM pg_roles r WHERE rolname = ANY(\([TestDatabase.roles.login, TestDatabase.roles.owner, DatabaseRoles.serviceGroup])) ORDER BY rolname
            """)
        var roles: [String: (superuser: Bool, createdb: Bool, createrole: Bool, login: Bool, bypassrls: Bool, owns: Bool)] = [:]
        for row in rows {
            roles[try row.decode("rolname", as: String.self)] = (
                try row.decode("rolsuper", as: Bool.self), try row.decode("rolcreatedb", as: Bool.self),
                try row.decode("rolcreaterole", as: Bool.self), try row.decode("rolcanlogin", as: Bool.self),
                try row.decode("rolbypassrls", as: Bool.self), try row.decode("owns", as: Bool.self)
            )
        }
        let login = try #require(roles[TestDatabase.roles.login])
        #expect(!login.superuser && !login.createdb && !login.createrole && !login.bypassrls && login.login && !login.owns)
        let group = try #require(roles[DatabaseRoles.serviceGroup])
        #expect(!group.superuser && !group.login && !group.owns)
        let owner = try #require(roles[TestDatabase.roles.owner])
        #expect(!owner.superuser && owner.owns)
        // The owner owns every table; the service's login is in the group, not in the owner's role.
        #expect(
            try connection.query(
                """
                SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner <> \(TestDatabase.roles.owner)
                """
            ).first!.decode(0, as: Int.self) == 0)
        #expect(
            try connection.query("SELECT pg_has_role(\(TestDatabase.roles.owner)::name, 'MEMBER') AS m").first!.decode("m", as: Bool.self) == false)
        #expect(try connection.query("SELECT pg_has_role(\(DatabaseRoles.serviceGroup)::name, 'MEMBER') AS m").first!.decode("m", as: Bool.self))
    }

    @Test func theCheckNamesWhatAnOwnerOrSuperuserCouldDo() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let owner = try database.connect(as: .owner)
        defer { owner.close() }
        let (role, problems) = try DatabaseRoles.check(on: owner)
        #expect(role == TestDatabase.roles.owner)
        #expect(problems.contains("owns admin_events, case_events (or is a member of the owner)"))
        #expect(problems.contains("may UPDATE, DELETE or TRUNCATE admin_events, case_events"))
        let superuser = try PostgresConnection(
            connectionString: PostgresConnection.connectionString(
                TestDatabase.adminConnectionString,
                replacingDatabase: database.name))
        defer { superuser.close() }
        let su = try DatabaseRoles.check(on: superuser).problems
        #expect(su.contains("is a superuser") && su.contains("may set session_replication_role (which switches triggers off)"))
    }

    @Test func aLaterMigrationsTablesAreGrantedWithoutAsking() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let owner = try database.connect(as: .owner)
        defer { owner.close() }
        // What another helper's migration does: a table and a sequence, and an append-only table revoking as 0015 does.
        try owner.executeScript(
            """
            CREATE TABLE later_things (id bigserial PRIMARY KEY, note text NOT NULL);
            CREATE TABLE later_log (seq integer PRIMARY KEY, note text NOT NULL);
            REVOKE UPDATE, DELETE, TRUNCATE ON later_log FROM reclaim_service;
            """)
        let service = try database.connect()
        defer { service.close() }
        try service.execute("INSERT INTO later_things (note) VALUES ('a')")
        try service.execute("UPDATE later_things SET note = 'b'")
        #expect(try service.query("SELECT note FROM later_things").first!.decode(0, as: String.self) == "b")
        try service.execute("DELETE FROM later_things")
        try service.execute("INSERT INTO later_log VALUES (1, 'kept')")
        refused("UPDATE later_log SET note = 'x'", on: service, saying: "permission denied")
        refused("TRUNCATE later_things", on: service)
        refused("ALTER TABLE later_things ADD COLUMN extra text", on: service, saying: "must be owner")
        #expect(try DatabaseRoles.check(on: service).problems.isEmpty)
    }

    @Test func theSetupRunsAgainAndRefusesALoginThatCouldRewriteHistory() throws {
        let admin = try PostgresConnection(connectionString: TestDatabase.adminConnectionString)
        defer { admin.close() }
        try admin.executeScript(PostgresQuery(unsafeSQL: TestDatabase.roles.rolesSQL))  // again: nothing to do, nothing refused
        let name = "reclaim_probe_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        try admin.executeScript("CREATE ROLE \(identifier: name) LOGIN CREATEDB")
        defer { _ = try? admin.executeScript("DROP ROLE \(identifier: name)") }
        let roles = try DatabaseRoles(database: "reclaim_probe", owner: TestDatabase.roles.owner, login: name)
        do {
            try admin.executeScript(PostgresQuery(unsafeSQL: roles.rolesSQL))
            Issue.record("a login that may create databases was accepted")
        } catch let error as PostgresError {
            #expect(error.message.contains("NOCREATEDB"), "\(error.message)")
        }
        // The login may not be the owner, nor the group; names are identifiers and nothing else.
        #expect(throws: DatabaseRolesError.self) { try DatabaseRoles(owner: "reclaim", login: "reclaim") }
        #expect(throws: DatabaseRolesError.self) { try DatabaseRoles(login: DatabaseRoles.serviceGroup) }
        for bad in ["Reclaim", "re-claim", "x; DROP ROLE postgres", "pg_owner", "1abc", "", String(repeating: "a", count: 64)] {
            #expect(throws: DatabaseRolesError.self) { try DatabaseRoles(database: bad) }
        }
    }
}
