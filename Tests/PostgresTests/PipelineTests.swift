import Foundation
import ReclaimTestSupport
import Testing

@testable import Postgres

/// `executeLater`: writes whose answer nobody reads leave in one pipeline with the next statement that needs an
/// answer, or with COMMIT. Nothing changes but the round trips: the order, what each statement sees, what an error
/// rolls back.
@Suite struct PipelineTests {
    private func connection() throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase.create()
        let connection = try database.connect(as: .owner)
        try connection.executeScript("CREATE TABLE t (v int PRIMARY KEY)")
        return (database, connection)
    }

    private func values(_ connection: PostgresConnection) throws -> String {
        try connection.query("SELECT coalesce(array_agg(v ORDER BY v)::text, '{}') FROM t").first!.decode(0, as: String.self)
    }

    @Test func heldStatementsRunInOrderBeforeTheNextQueryAndWithTheCommit() throws {
        let (database, connection) = try connection()
        defer { withExtendedLifetime(database) { connection.close() } }  // the database lives as long as the test
        let seen = try connection.withTransaction { tx in
            try tx.executeLater("INSERT INTO t VALUES (1)")
            try tx.executeLater("UPDATE t SET v = v + 1")  // after the insert: 2
            let seen = try tx.query("SELECT array_agg(v)::text FROM t").first!.decode(0, as: String.self)
            try tx.executeLater("INSERT INTO t VALUES (5)")  // leaves with the COMMIT
            return seen
        }
        #expect(seen == "{2}")
        #expect(try values(connection) == "{2,5}")
    }

    @Test func aHeldStatementsErrorIsThrownByTheNextQueryAndRollsTheTransactionBack() throws {
        let (database, connection) = try connection()
        defer { withExtendedLifetime(database) { connection.close() } }  // the database lives as long as the test
        try connection.execute("INSERT INTO t VALUES (1)")
        var reached = false
        let error = #expect(throws: PostgresError.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (2)")
                try tx.executeLater("INSERT INTO t VALUES (1)")  // a unique violation, found out below
                try tx.executeLater("INSERT INTO t VALUES (3)")  // skipped by the server after it
                _ = try tx.query("SELECT 1")
                reached = true
            }
        }
        #expect(error?.sqlState == "23505")
        #expect(!reached)
        #expect(try values(connection) == "{1}")
        // The connection left pipeline mode and is idle: the next statements work.
        try connection.withTransaction { tx in
            try tx.executeLater("INSERT INTO t VALUES (4)")
        }
        #expect(try values(connection) == "{1,4}")
    }

    @Test func aHeldStatementsErrorAtCommitCommitsNothing() throws {
        let (database, connection) = try connection()
        defer { withExtendedLifetime(database) { connection.close() } }  // the database lives as long as the test
        try connection.execute("INSERT INTO t VALUES (1)")
        let error = #expect(throws: PostgresError.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (2)")
                try tx.executeLater("INSERT INTO t VALUES (3)")
                try tx.executeLater("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error?.sqlState == "23505")
        #expect(!connection.inTransaction)
        #expect(try values(connection) == "{1}")
    }

    @Test func aFailedSavepointDropsWhatItHeldAndTheOuterWorkCommits() throws {
        let (database, connection) = try connection()
        defer { withExtendedLifetime(database) { connection.close() } }  // the database lives as long as the test
        struct Boom: Error {}
        try connection.withTransaction { tx in
            try tx.executeLater("INSERT INTO t VALUES (1)")  // sent at the SAVEPOINT, before it
            _ = try? tx.withTransaction { inner in
                try inner.executeLater("INSERT INTO t VALUES (2)")
                throw Boom()
            }
            // A held statement failing inside a savepoint rolls back to it, as any statement there does.
            _ = try? tx.withTransaction { inner in
                try inner.executeLater("INSERT INTO t VALUES (1)")
            }
            try tx.executeLater("INSERT INTO t VALUES (3)")
        }
        #expect(try values(connection) == "{1,3}")
    }

    @Test func aThrowingBodyDropsWhatItHeld() throws {
        let (database, connection) = try connection()
        defer { withExtendedLifetime(database) { connection.close() } }  // the database lives as long as the test
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try connection.withTransaction { tx in
                try tx.executeLater("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try values(connection) == "{}")
    }

    @Test func outsideATransactionItRunsAtOnce() throws {
        let (database, connection) = try connection()
        defer { connection.close() }
        try connection.executeLater("INSERT INTO t VALUES (7)")
        let other = try database.connect(as: .owner)
        defer { other.close() }
        #expect(try values(other) == "{7}")
    }

    @Test func aConnectionLostWithStatementsHeldFailsTheCommitAndTheNextCallReconnects() throws {
        let (database, connection) = try connection()
        defer { connection.close() }
        let pid = try connection.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self)
        let error = #expect(throws: PostgresError.self) {
            try connection.withTransaction { tx in
                try tx.execute("INSERT INTO t VALUES (1)")
                try tx.executeLater("INSERT INTO t VALUES (2)")
                try terminateBackend(pid, in: database)
            }
        }
        #expect(error?.isConnectionError == true)
        #expect(try values(connection) == "{}")
    }

    @Test func theRecorderMarksEachPipelinesEnds() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 1, as: .owner)
        defer { pool.close() }
        try pool.withConnection { try $0.executeScript("CREATE TABLE t (v int PRIMARY KEY)") }
        let sent = try pool.recordingStatements {
            try pool.withTransaction { tx in
                _ = try tx.query("SELECT 1")
                try tx.executeLater("INSERT INTO t VALUES (1)")
                _ = try tx.query("SELECT 2")
                try tx.executeLater("INSERT INTO t VALUES (2)")
            }
        }
        #expect(
            sent == [
                "BEGIN", "SELECT 1", "\\startpipeline", "INSERT INTO t VALUES (1)", "SELECT 2", "\\endpipeline", "\\startpipeline",
                "INSERT INTO t VALUES (2)", "COMMIT", "\\endpipeline",
            ])
        // The statements alone, for those that EXPLAIN them.
        let queries = try pool.recordingQueries { try pool.withTransaction { try $0.executeLater("INSERT INTO t VALUES (3)") } }
        #expect(queries.map(\.sql) == ["BEGIN", "INSERT INTO t VALUES (3)", "COMMIT"])
    }
}
