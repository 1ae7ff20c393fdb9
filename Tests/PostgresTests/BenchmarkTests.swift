import Foundation
import ReclaimTestSupport
import Synchronization
import Testing

@testable import Postgres

/// Measurements behind the module's choices; run with RECLAIM_BENCH=1 (they take ~30 s).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["RECLAIM_BENCH"] == "1"))
struct BenchmarkTests {
    static let iterations = 20_000

    /// Client CPU (user+system) and wall time for `body`, per iteration, in microseconds.
    func measure(_ label: String, iterations: Int = iterations, _ body: () throws -> Void) rethrows {
        var before = rusage()
        var after = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &before)
        let wall = try seconds { for _ in 0..<iterations { try body() } }
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &after)
        func cpu(_ usage: rusage) -> Double {
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        let cpuMicros = (cpu(after) - cpu(before)) / Double(iterations) * 1e6
        print(
            String(
                format: "bench %-44@ %7.1f µs wall  %6.1f µs client cpu  %8.0f /s", label as NSString, wall / Double(iterations) * 1e6, cpuMicros,
                Double(iterations) / wall))
    }

    func setUp(_ database: TestDatabase) throws {
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        try connection.executeScript(
            """
            CREATE TABLE bench_cases (id bigint PRIMARY KEY, title text, state text, opened_at timestamptz, escalated boolean,
                                owner uuid, version int, body bytea);
            INSERT INTO bench_cases SELECT n, 'Card charged twice for order ' || n, 'open', now() - n * interval '1 minute',
                                     n % 2 = 0, gen_random_uuid(), 1, decode(repeat('ab', 2048), 'hex')
                              FROM generate_series(1, 1000) n;
            ANALYZE bench_cases;
            """)
    }

    func readCase(_ connection: PostgresConnection, _ id: Int) throws {
        let row = try connection.query("SELECT id, title, state, opened_at, escalated, owner, version FROM bench_cases WHERE id = \(id)").first!
        _ = try (
            row.decode(0, as: Int.self), row.decode(1, as: String.self), row.decode(2, as: String.self),
            row.decode(3, as: Date.self), row.decode(4, as: Bool.self), row.decode(5, as: UUID.self), row.decode(6, as: Int.self)
        )
    }

    @Test func resultFormats() throws {
        let database = try TestDatabase.create()
        try setUp(database)
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        for policy in [PostgresConnection.ResultFormatPolicy.text, .binary, .text, .binary] {
            connection.resultFormatPolicy = policy
            connection.drop()  // new statements pick up the policy
            var id = 0
            try measure("one row, 7 columns, \(policy)") {
                id = id % 1000 + 1
                try readCase(connection, id)
            }
            try measure("one row + 4 KiB bytea, \(policy)", iterations: 5000) {
                id = id % 1000 + 1
                _ = try connection.query("SELECT body FROM bench_cases WHERE id = \(id)").first!.decode(0, as: [UInt8].self)
            }
            try measure("50 rows, 4 columns, \(policy)", iterations: 5000) {
                id = id % 900 + 1
                for row in try connection.query("SELECT id, title, opened_at, owner FROM bench_cases WHERE id BETWEEN \(id) AND \(id + 49)") {
                    _ = try (row.decode(0, as: Int.self), row.decode(1, as: String.self), row.decode(2, as: Date.self), row.decode(3, as: UUID.self))
                }
            }
        }
    }

    @Test func poolOverhead() throws {
        let database = try TestDatabase.create()
        try setUp(database)
        let connection = try database.connect(as: .owner)
        defer { connection.close() }
        let pool = database.makePool(maximumConnections: 2, as: .owner)
        defer { pool.close() }
        var id = 0
        try measure("direct connection") {
            id = id % 1000 + 1
            try readCase(connection, id)
        }
        try measure("pool.withConnection") {
            id = id % 1000 + 1
            try pool.withConnection { try readCase($0, id) }
        }
        try measure("pool.withConnection, no query", iterations: 1_000_000) { try pool.withConnection { _ in } }
        try measure("pool.withTransaction (BEGIN/COMMIT added)", iterations: 5000) {
            id = id % 1000 + 1
            try pool.withTransaction { try readCase($0, id) }
        }
    }

    /// Thread-affine pool against a shared, mutex-guarded stack of connections, 2 and 4 threads.
    @Test func threadAffineAgainstSharedPool() throws {
        let database = try TestDatabase.create()
        try setUp(database)
        let perThread = 10_000
        for threads in [2, 4] {
            let pool = database.makePool(maximumConnections: threads, as: .owner)
            let shared = try SharedPool(database.ownerConnectionString, size: threads)
            for round in 0..<2 {
                let affine = try seconds {
                    try onThreads(threads) { t in
                        for i in 0..<perThread { try pool.withConnection { try readCase($0, (i * 7 + t) % 1000 + 1) } }
                    }
                }
                let mutex = try seconds {
                    try onThreads(threads) { t in
                        for i in 0..<perThread { try shared.with { try readCase($0, (i * 7 + t) % 1000 + 1) } }
                    }
                }
                print(
                    String(
                        format: "bench %d threads (round %d): thread-affine %.0f q/s, shared mutex pool %.0f q/s",
                        threads, round, Double(threads * perThread) / affine, Double(threads * perThread) / mutex))
            }
            pool.close()
        }
    }
}

/// The alternative design measured against: a mutex-guarded stack of connections handed out per call.
final class SharedPool: @unchecked Sendable {
    // Guarded by `condition`.
    private var idle: [PostgresConnection]
    private let condition = NSCondition()

    init(_ connectionString: String, size: Int) throws {
        idle = try (0..<size).map { _ in try PostgresConnection(connectionString: connectionString) }
    }

    func with<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        condition.lock()
        while idle.isEmpty { condition.wait() }
        let connection = idle.removeLast()
        condition.unlock()
        defer {
            condition.lock()
            idle.append(connection)
            condition.signal()
            condition.unlock()
        }
        return try body(connection)
    }
}
