import Foundation
import ReclaimTestSupport
import Synchronization
import Testing

@testable import Postgres

@Suite struct PoolTests {
    @Test func nestedCallsOnOneThreadShareTheConnection() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 1, as: .owner)
        defer { pool.close() }
        let (outer, inner) = try pool.withConnection { outer in
            try pool.withConnection { inner in
                (ObjectIdentifier(outer), ObjectIdentifier(inner))
            }
        }
        #expect(outer == inner)
        // Nested transactions too (a savepoint), without a second connection.
        try pool.withTransaction { tx in
            try tx.executeScript("CREATE TABLE t (v int)")
            try pool.withTransaction { try $0.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(try pool.withConnection { try $0.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self) } == 1)
        #expect(pool.statistics.openConnections == 1)
        #expect(pool.statistics.connectsTotal == 1)
    }

    @Test func aThreadKeepsItsConnection() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 4, as: .owner)
        defer { pool.close() }
        try onThreads(3) { _ in
            let pids = try (0..<5).map { _ in
                try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self) }
            }
            #expect(Set(pids).count == 1)
        }
        #expect(pool.statistics.connectsTotal == 3)
        #expect(pool.statistics.inUse == 0)
    }

    @Test func connectionsCloseWhenTheirThreadExits() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 4, as: .owner)
        defer { pool.close() }
        try onThreads(2) { _ in try pool.withConnection { _ = try $0.query("SELECT 1") } }
        for _ in 0..<100 where pool.statistics.openConnections > 0 { usleep(10_000) }
        #expect(pool.statistics.openConnections == 0)
        #expect(pool.statistics.connectsTotal == 2)
    }

    @Test func theLimitHoldsAndWaitersGiveUpInTime() throws {
        let database = try TestDatabase.create()
        let pool = PostgresPool(connectionString: database.connectionString, maximumConnections: 1, acquireTimeout: .milliseconds(200))
        defer { pool.close() }
        let holding = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let takenOver = DispatchSemaphore(value: 0)
        let results = Mutex<[String]>([])
        try onThreads(2) { index in
            if index == 0 {
                try pool.withConnection { connection in
                    holding.signal()
                    _ = try connection.query("SELECT pg_sleep(0.6)")
                }
                released.signal()
                // Stay alive (keeping the idle connection) until the other thread has taken it over.
                _ = takenOver.wait(timeout: .now() + 10)
            } else {
                holding.wait()
                let elapsed = seconds {
                    do {
                        try pool.withConnection { _ in }
                        results.withLock { $0.append("got one") }
                    } catch let error as PostgresError {
                        results.withLock { $0.append("\(error.kind)") }
                    } catch {}
                }
                // It gave up (results below) rather than waiting for the holder; the bound is 200 ms,
                // the rest is slack for a machine loaded by parallel tests.
                #expect(elapsed < 3)
                // Once the holder is done, its idle connection is handed over (the limit is 1).
                _ = released.wait(timeout: .now() + 10)
                defer { takenOver.signal() }
                let pid = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self) }
                #expect(pid > 0)
            }
        }
        #expect(results.withLock { $0 } == ["connectionFailed"])
        #expect(pool.statistics.acquireTimeoutsTotal == 1)
        #expect(pool.statistics.connectsTotal == 1)  // the second thread took over the first one's connection
    }

    @Test func manyThreadsShareFewConnections() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 2, as: .owner)
        defer { pool.close() }
        let total = Atomic<Int>(0)
        try onThreads(6) { _ in
            for _ in 0..<30 {
                let value = try pool.withConnection { try $0.query("SELECT 1").first!.decode(0, as: Int.self) }
                total.add(value, ordering: .relaxed)
                #expect(pool.statistics.openConnections <= 2)
            }
        }
        #expect(total.load(ordering: .relaxed) == 180)
        #expect(pool.statistics.acquireTimeoutsTotal == 0)
    }

    @Test func serializationFailuresAreRetried() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 2, as: .owner)
        defer { pool.close() }
        try pool.withConnection { try $0.executeScript("CREATE TABLE ledger (v int); INSERT INTO ledger VALUES (1)") }
        let other = try database.connect(as: .owner)
        defer { other.close() }
        var attempts = 0
        let total = try pool.withTransaction(isolation: .serializable) { tx in
            attempts += 1
            let sum = try tx.query("SELECT sum(v) FROM ledger").first!.decode(0, as: Int.self)
            if attempts == 1 {
                // A concurrent serializable transaction reads what we read and commits a write first.
                try other.executeScript("BEGIN ISOLATION LEVEL SERIALIZABLE")
                _ = try other.query("SELECT sum(v) FROM ledger")
                try other.execute("INSERT INTO ledger VALUES (10)")
                try other.executeScript("COMMIT")
            }
            try tx.execute("INSERT INTO ledger VALUES (\(sum))")
            return sum
        }
        #expect(attempts == 2)
        #expect(total == 11)

        // With a single attempt the 40001 reaches the caller.
        attempts = 0
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction(maxAttempts: 1, isolation: .serializable) { tx in
                attempts += 1
                let sum = try tx.query("SELECT sum(v) FROM ledger").first!.decode(0, as: Int.self)
                try other.executeScript("BEGIN ISOLATION LEVEL SERIALIZABLE")
                _ = try other.query("SELECT sum(v) FROM ledger")
                try other.execute("INSERT INTO ledger VALUES (10)")
                try other.executeScript("COMMIT")
                try tx.execute("INSERT INTO ledger VALUES (\(sum))")
            }
        }
        #expect(error?.sqlState == "40001")
        #expect(error?.isRetryableTransactionFailure == true)
        #expect(attempts == 1)
    }

    @Test func poolReconnectsAfterTheBackendDies() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 1, as: .owner)
        defer { pool.close() }
        let pid = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self) }
        try terminateBackend(pid, in: database)
        // A transaction notices at BEGIN that nothing ran yet, and retries on a new connection.
        let newPID = try pool.withTransaction { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int.self) }
        #expect(newPID != pid)
        try terminateBackend(newPID, in: database)
        // Outside a transaction too: the dead connection is found before the statement is sent, and replaced.
        #expect(try pool.withConnection { try $0.query("SELECT 1").first!.decode(0, as: Int.self) } == 1)
        let statistics = pool.statistics
        #expect(statistics.reconnectsTotal == 2)
        #expect(statistics.connectsTotal == 3)
        #expect(statistics.deadOnCheckoutTotal == 2)
        #expect(statistics.openConnections == 1)
    }

    @Test func aTransactionLeftOpenIsRolledBackOnRelease() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 1, as: .owner)
        defer { pool.close() }
        try pool.withConnection { try $0.executeScript("CREATE TABLE t (v int)") }
        try pool.withConnection { connection in
            try connection.executeScript("BEGIN")
            try connection.execute("INSERT INTO t VALUES (1)")
        }
        #expect(try pool.withConnection { try $0.query("SELECT count(*) FROM t").first!.decode(0, as: Int.self) } == 0)
    }

    @Test func closedPoolRefusesWork() throws {
        let database = try TestDatabase.create()
        let pool = database.makePool(maximumConnections: 2, as: .owner)
        try pool.withConnection { _ = try $0.query("SELECT 1") }
        #expect(pool.statistics.openConnections == 1)
        pool.close()
        #expect(pool.statistics.openConnections == 0)
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        #expect(error?.kind == .misuse)
    }
}
