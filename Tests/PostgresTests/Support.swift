import Foundation
import Postgres
import ReclaimTestSupport

/// Runs `body(i)` on `count` new threads at once and waits for all; rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let group = DispatchGroup()
    let errors = ErrorList()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            do { try body(index) } catch { errors.append(error) }
        }
        thread.start()
    }
    group.wait()
    if let first = errors.first { throw first }
}

final class ErrorList: @unchecked Sendable {
    // Guarded by `lock`.
    private var errors: [any Error] = []
    private let lock = NSLock()
    func append(_ error: any Error) { lock.withLock { errors.append(error) } }
    var first: (any Error)? { lock.withLock { errors.first } }
}

/// Seconds `body` took.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Waits (at most 10 s) until the backend serving `pid` is running a statement, as a separate connection sees it.
func waitUntilBusy(_ pid: Int, in database: TestDatabase) throws {
    let admin = try database.connect(as: .owner)  // the backend is the owner's: only that role sees its state
    defer { admin.close() }
    try eventually(10) { try admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = \(Int32(pid)) AND state = 'active'").count == 1 }
}

/// Terminates the backend serving `pid` from a separate connection and waits until it is gone.
func terminateBackend(_ pid: Int, in database: TestDatabase) throws {
    let admin = try database.connect(as: .owner)
    defer { admin.close() }
    try admin.execute("SELECT pg_terminate_backend(\(Int32(pid)))")
    for _ in 0..<200 {
        let alive = try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(Int32(pid))").first!.decode(0, as: Int.self)
        if alive == 0 { return }
        usleep(10_000)
    }
}
