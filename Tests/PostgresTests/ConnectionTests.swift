import Foundation
import ReclaimTestSupport
import Testing

@testable import Postgres

@Suite struct ConnectionTests {
    @Test func uniqueViolationCarriesSQLStateAndConstraintButNoValues() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE unique_probe (email text CONSTRAINT unique_probe_email_key UNIQUE)")
        let secret = "very-secret-address@example.com"
        try connection.execute("INSERT INTO unique_probe (email) VALUES (\(secret))")
        let error = #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO unique_probe (email) VALUES (\(secret))") }
        #expect(error?.kind == .server)
        #expect(error?.sqlState == "23505")
        #expect(error?.constraint == "unique_probe_email_key")
        #expect(error?.isConnectionError == false)
        #expect(error?.isRetryableTransactionFailure == false)
        #expect(error.map { !$0.description.contains(secret) && !$0.message.contains(secret) } == true)
        // The connection is still usable after a statement error.
        #expect(try connection.query("SELECT count(*) FROM unique_probe").first!.decode(0, as: Int.self) == 1)
    }

    @Test func dataErrorsDoNotEchoTheBoundValue() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let secret = "4111-1111-1111-1111"
        let syntax = #expect(throws: PostgresError.self) { try connection.query("SELECT \(secret)::int") }
        #expect(syntax?.sqlState == "22P02")
        #expect(syntax.map { !$0.description.contains(secret) } == true)
        let range = #expect(throws: PostgresError.self) { try connection.query("SELECT \(Int(9_999_999_999))::int") }
        #expect(range?.sqlState == "22003")
        #expect(range.map { !$0.description.contains("9999999999") } == true)
        let uuid = #expect(throws: PostgresError.self) { try connection.query("SELECT \(secret)::uuid") }
        #expect(uuid.map { !$0.description.contains(secret) } == true)
    }

    @Test func withTransactionCommitsOrRollsBack() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE t (v int)")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try connection.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self) == 0)
        let value = try connection.withTransaction { tx in
            try tx.execute("INSERT INTO t VALUES (2)")
            // A nested transaction is a savepoint: its failure leaves the outer work alone.
            _ = try? tx.withTransaction { inner in
                try inner.execute("INSERT INTO t VALUES (3)")
                throw Boom()
            }
            return 42
        }
        #expect(value == 42)
        #expect(try connection.query("SELECT array_agg(v)::text FROM t").first!.decode(0, as: String.self) == "{2}")
        // A statement error swallowed inside the body must not turn into a silent rollback.
        let error = #expect(throws: PostgresError.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (4)")
                _ = try? tx.execute("SELECT 1/0")
            }
        }
        #expect(error?.kind == .misuse)
        #expect(try connection.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self) == 1)
    }

    @Test func statementsArePreparedOncePerConnection() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        for n in 0..<5 {
            let row = try connection.query("SELECT \(n) + 1").first!
            #expect(try row.decode(0, as: Int.self) == n + 1)
        }
        #expect(connection.preparesTotal == 1)
        let serverSide = try connection.query("SELECT count(*) FROM pg_prepared_statements").first!.decode(0, as: Int.self)
        #expect(serverSide == 2)  // ours and this one
        #expect(connection.preparesTotal == 2)
    }

    @Test func statementsSurviveTableChanges() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE t (a int); INSERT INTO t VALUES (1)")
        #expect(try connection.query("SELECT * FROM t").first!.columnCount == 1)
        try connection.executeScript("ALTER TABLE t ADD COLUMN b int")
        #expect(try connection.query("SELECT * FROM t").first!.columnCount == 2)
    }

    @Test func misuseIsReported() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let binds = #expect(throws: PostgresError.self) { try connection.query(PostgresQuery(unsafeSQL: "SELECT $1::int")) }
        #expect(binds?.kind == .misuse)
        let nul = #expect(throws: PostgresError.self) { try connection.query("SELECT \("before\u{0}after")::text") }
        #expect(nul?.kind == .misuse)
        let row = try connection.query("SELECT 1 AS one").first!
        #expect(throws: PostgresError.self) { try row.decode(3, as: Int.self) }
        #expect(throws: PostgresError.self) { try row.decode("two", as: Int.self) }
        #expect(try row.decode("one", as: Int.self) == 1)
        let rows = try connection.query("SELECT generate_series(1, 3)")
        #expect(rows.count == 3 && rows.affectedRows == 3)
        try connection.executeScript("CREATE TABLE t (v int); INSERT INTO t SELECT generate_series(1, 5)")
        #expect(try connection.execute("UPDATE t SET v = v + 1 WHERE v > \(2)") == 3)
        connection.close()
        #expect(!connection.isOpen)
        let closed = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(closed?.kind == .misuse)
    }

    @Test func sessionIsUTCWithISODates() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let row = try connection.query(
            "SELECT current_setting('TimeZone'), current_setting('DateStyle'), '2026-11-30 07:03:01.5+02'::timestamptz::text"
        ).first!
        #expect(try row.decode(0, as: String.self) == "UTC")
        #expect(try row.decode(1, as: String.self).hasPrefix("ISO"))
        #expect(try row.decode(2, as: String.self) == "2026-11-30 05:03:01.5+00")
    }

    @Test func anIdleConnectionFoundDeadIsReplacedBeforeAStatementIsSent() throws {
        // Issue 15: after a restart the first statement on each idle connection used to fail (2 of 12 requests 503).
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let firstPID = try connection.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self)
        try terminateBackend(firstPID, in: database)
        var secondPID = 0
        let elapsed = seconds { secondPID = (try? connection.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self)) ?? -1 }
        #expect(secondPID > 0 && secondPID != firstPID, "the statement runs on a new connection, no error")
        #expect(elapsed < 1)
        #expect(connection.isOpen)
        // Dead while a statement runs: that one may have run, so it is reported; the next reconnects.
        let thirdPID = secondPID
        let killer = Thread {
            try? waitUntilBusy(thirdPID, in: database)
            try? terminateBackend(thirdPID, in: database)
        }
        killer.start()
        let failure = #expect(throws: PostgresError.self) { try connection.query("SELECT pg_sleep(3)") }
        #expect(failure?.isConnectionError == true)
        #expect(try connection.query("SELECT 1").first!.decode(0, as: Int.self) == 1)
    }

    @Test func lostConnectionInsideTransactionDoesNotReconnectHalfway() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript("CREATE TABLE t (v int)")
        let pid = try connection.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self)
        let error = #expect(throws: PostgresError.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (1)")
                try terminateBackend(pid, in: database)
                _ = try? tx.execute("INSERT INTO t VALUES (2)")  // fails: connection lost
                try tx.execute("INSERT INTO t VALUES (3)")  // must fail too, not reconnect
            }
        }
        #expect(error?.isConnectionError == true)
        #expect(try connection.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self) == 0)
    }

    @Test func unreachableServerFailsFast() throws {
        var error: PostgresError?
        let elapsed = seconds {
            error = #expect(throws: PostgresError.self) {
                try PostgresConnection(connectionString: "host=/nonexistent/socket/dir port=5999 user=reclaim dbname=postgres")
            }
        }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.isConnectionError == true)
        #expect(elapsed < 1)
        let bad = #expect(throws: PostgresError.self) { try PostgresConnection(connectionString: "host=x password=hunter2 nonsense") }
        #expect(bad.map { !$0.description.contains("hunter2") && !$0.description.contains("nonsense") } == true)
    }

    @Test func connectionStringsAcceptURIsAndKeepTheirOptions() throws {
        let database = try TestDatabase.create()
        let rewritten = try PostgresConnection.connectionString(database.connectionString, replacingDatabase: "it's")
        #expect(rewritten.contains("dbname='it\\'s'"))
        let parameters = try PostgresConnection.parameters("postgresql://u@%2Ftmp%2Fsock:5433/db?options=-c%20work_mem%3D8MB&connect_timeout=9")
        let options = Dictionary(uniqueKeysWithValues: zip(parameters.0, parameters.1))
        #expect(options["connect_timeout"] == "9")
        #expect(options["options"] == "-c work_mem=8MB -c TimeZone=UTC -c DateStyle=ISO,YMD")
        #expect(options["host"] == "/tmp/sock" && options["dbname"] == "db")
        let defaults = try PostgresConnection.parameters("dbname=x")
        #expect(Dictionary(uniqueKeysWithValues: zip(defaults.0, defaults.1))["connect_timeout"] == "3")
    }
}
