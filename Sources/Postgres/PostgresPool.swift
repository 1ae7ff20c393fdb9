import Foundation
import Synchronization

/// A snapshot of a pool's counters (for /metrics).
public struct PoolStatistics: Sendable, Equatable {
    /// Connections the pool holds (in use or idle).
    public var openConnections: Int
    /// Connections inside a `withConnection` call right now.
    public var inUse: Int
    /// Successful connects, reconnects included.
    public var connectsTotal: Int
    /// Connect attempts that failed.
    public var connectFailuresTotal: Int
    /// Connections re-established after they broke.
    public var reconnectsTotal: Int
    /// Callers that gave up waiting for a connection because `maximumConnections` were busy.
    public var acquireTimeoutsTotal: Int
    /// Idle connections found dead (server restarted) and replaced before a statement was sent on them.
    public var deadOnCheckoutTotal: Int = 0
}

/// Connections for many threads, each thread keeping its own connection (and its prepared
/// statements) from call to call: no lock and no hand-off on the hot path (0.1 µs a call).
/// Connections open lazily, close when the pool closes or their thread exits. When
/// `maximumConnections` are open, a thread without one takes an idle connection from another
/// thread, or waits up to `acquireTimeout` and throws `.connectionFailed`.
///
/// Give it at least as many connections as threads use it: then it measured as fast as or
/// faster than a shared mutex-guarded pool, with less client CPU a query; with more threads
/// than connections, connections move between threads ~10–25% slower than a shared pool's.
public final class PostgresPool: @unchecked Sendable {
    // Sendable: the key is written once in init; everything shared lives in `core`, which locks.
    private let core: PoolCore
    private var key = pthread_key_t()

    /// A pool that opens at most `maximumConnections` connections to `connectionString`.
    public init(connectionString: String, maximumConnections: Int, acquireTimeout: Duration = .seconds(2)) {
        core = PoolCore(connectionString: connectionString, maximumConnections: max(1, maximumConnections), acquireTimeout: acquireTimeout)
        let created = pthread_key_create(&key, releaseSlotAtThreadExit)
        precondition(created == 0, "pthread_key_create failed (\(created)): are PostgresPools being leaked?")
    }

    deinit {
        close()
        // Slots still attached to live threads are no longer released at their exit: a few bytes each, closed already.
        pthread_key_delete(key)
    }

    /// Runs `body` with this thread's connection; nested calls on the same thread get the same one.
    /// `body` must not keep the connection or hand it to another thread.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let slot = try currentSlot()
        if slot.depth > 0, let connection = slot.connection {
            slot.depth += 1
            defer { slot.depth -= 1 }
            return try body(connection)
        }
        let connection = try core.claim(slot)
        slot.depth = 1
        defer {
            slot.depth = 0
            core.release(slot)
        }
        return try body(connection)
    }

    /// Runs `body` in a transaction, retrying it (up to `maxAttempts` runs in all, after a short
    /// jittered pause) when it fails with a serialization failure or deadlock. Inside another
    /// transaction on this thread it runs once, in a savepoint. `body` may run more than once.
    @discardableResult
    public func withTransaction<T>(maxAttempts: Int = 3, isolation: PostgresIsolation? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { connection in
            if connection.inTransaction { return try connection.withTransaction(body) }
            var attempt = 1
            var reconnected = false
            while true {
                do {
                    return try connection.withTransaction(isolation: isolation, body)
                } catch let error as PostgresError where error.isRetryableTransactionFailure && attempt < maxAttempts {
                    // 1–5 ms, then 2–10 ms, ...: enough for the conflicting transaction to finish.
                    let ceiling = UInt32(5_000) << min(attempt - 1, 6)
                    usleep(UInt32.random(in: ceiling / 5...ceiling))
                    attempt += 1
                } catch let error as PostgresError where error.isConnectionError && connection.lastBeginFailed && !reconnected {
                    // BEGIN found the connection dead (e.g. the server restarted): nothing ran, so one retry is safe.
                    reconnected = true
                }
            }
        }
    }

    /// Counters for monitoring.
    public var statistics: PoolStatistics { core.statistics }

    /// Runs `body` and returns the text of every statement the pool's connections ran meanwhile, in order, with the
    /// ends of each pipeline (`PostgresConnection.executeLater`) as pgbench writes them, `\\startpipeline` and
    /// `\\endpipeline` (for tests that compare what the service sends with the benchmark's pgbench scripts, round
    /// trips included). Calls do not nest.
    public func recordingStatements(_ body: () throws -> Void) rethrows -> [String] {
        try recording(body).map(\.sql)
    }

    /// The statements, with their binds, that this pool's connections ran while `body` ran (for tests that
    /// `EXPLAIN` what the service sends); no pipeline marks.
    public func recordingQueries(_ body: () throws -> Void) rethrows -> [PostgresQuery] {
        try recording(body).filter { $0.sql != ConnectionCounters.pipelineStart.sql && $0.sql != ConnectionCounters.pipelineEnd.sql }
    }

    private func recording(_ body: () throws -> Void) rethrows -> [PostgresQuery] {
        let counters = core.counters
        counters.statements.withLock { $0.removeAll() }
        counters.recording.store(true, ordering: .sequentiallyConsistent)
        defer { counters.recording.store(false, ordering: .sequentiallyConsistent) }
        try body()
        return counters.statements.withLock { $0 }
    }

    /// Closes idle connections now and busy ones as they are released; later calls throw.
    public func close() { core.close() }

    /// This thread's slot, made on first use.
    private func currentSlot() throws -> PoolSlot {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<PoolSlot>.fromOpaque(raw).takeUnretainedValue()
        }
        let slot = PoolSlot(core: core)
        try core.register(slot)
        // The thread-specific value holds a +1 reference, given back in releaseSlotAtThreadExit.
        pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
        return slot
    }
}

/// pthread key destructor: the thread is exiting, so its slot is idle; give its connection back.
private func releaseSlotAtThreadExit(_ raw: UnsafeMutableRawPointer?) {
    guard let raw else { return }
    let slot = Unmanaged<PoolSlot>.fromOpaque(raw).takeRetainedValue()
    slot.core.threadExited(slot)
}

/// One thread's claim on a connection.
///
/// `@unchecked Sendable` because other threads touch it, under this protocol: `state` is 0 when
/// idle, 1 while its thread uses `connection`, 2 while another thread (holding `core`'s lock)
/// takes the connection away. `connection` is only read or written by whoever moved `state`
/// away from 0; `depth` only by the owning thread.
final class PoolSlot: @unchecked Sendable {
    let state = Atomic<Int>(0)
    var connection: PostgresConnection?
    var depth = 0
    let core: PoolCore

    init(core: PoolCore) { self.core = core }
}

/// The shared state of a pool. `@unchecked Sendable`: mutable fields are guarded by `condition`
/// (its lock), the rest are atomics or constants.
final class PoolCore: @unchecked Sendable {
    let connectionString: String
    let maximumConnections: Int
    let acquireTimeout: Duration
    let counters = ConnectionCounters()
    let closed = Atomic<Bool>(false)
    let waiters = Atomic<Int>(0)
    let inUse = Atomic<Int>(0)
    let acquireTimeouts = Atomic<Int>(0)

    private let condition = NSCondition()
    private var slots: [ObjectIdentifier: PoolSlot] = [:]
    private var openCount = 0

    init(connectionString: String, maximumConnections: Int, acquireTimeout: Duration) {
        self.connectionString = connectionString
        self.maximumConnections = maximumConnections
        self.acquireTimeout = acquireTimeout
    }

    private var closedError: PostgresError { PostgresError(.misuse, message: "the connection pool is closed") }

    func register(_ slot: PoolSlot) throws {
        condition.lock()
        defer { condition.unlock() }
        if closed.load(ordering: .acquiring) { throw closedError }
        slots[ObjectIdentifier(slot)] = slot
    }

    /// Marks the slot in use and returns its connection, finding one first if it has none.
    func claim(_ slot: PoolSlot) throws -> PostgresConnection {
        while true {
            if closed.load(ordering: .acquiring) { throw closedError }
            if slot.state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged { break }
            sched_yield()  // another thread is taking this slot's connection away; it holds it for microseconds
        }
        if closed.load(ordering: .acquiring) {
            // close() ran between the check and the claim and skipped us as busy.
            if slot.connection != nil {
                inUse.add(1, ordering: .relaxed)
                release(slot)
            } else {
                slot.state.store(0, ordering: .releasing)
            }
            throw closedError
        }
        if slot.connection == nil {
            do {
                slot.connection = try obtainConnection(for: slot)
            } catch {
                slot.state.store(0, ordering: .releasing)
                throw error
            }
        }
        inUse.add(1, ordering: .relaxed)
        return slot.connection!
    }

    /// A new connection if under the limit, else an idle one taken from another thread, else waits.
    private func obtainConnection(for slot: PoolSlot) throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(Double(acquireTimeout.components.seconds) + Double(acquireTimeout.components.attoseconds) / 1e18)
        condition.lock()
        // Counted as a waiter before looking at the slots: a release that our look misses then sees
        // us and signals (both sides are sequentially consistent), and it cannot signal before we
        // wait because we hold the lock until then. Without this, a wake-up could be lost.
        waiters.add(1, ordering: .sequentiallyConsistent)
        func leave() {
            waiters.subtract(1, ordering: .relaxed)
            condition.unlock()
        }
        while true {
            if closed.load(ordering: .acquiring) {
                leave()
                throw closedError
            }
            if openCount < maximumConnections {
                openCount += 1
                leave()
                do {
                    return try PostgresConnection(connectionString: connectionString, counters: counters)
                } catch {
                    condition.lock()
                    openCount -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if let connection = takeIdleConnection(except: slot) {
                leave()
                return connection
            }
            if !condition.wait(until: deadline), Date() >= deadline {
                let connection = takeIdleConnection(except: slot)
                leave()
                if let connection { return connection }
                acquireTimeouts.add(1, ordering: .relaxed)
                throw PostgresError(
                    .connectionFailed, message: "no database connection became free in time (maximumConnections \(maximumConnections))")
            }
        }
    }

    /// Takes the connection of an idle slot. Caller holds the lock.
    private func takeIdleConnection(except slot: PoolSlot) -> PostgresConnection? {
        for other in slots.values where other !== slot {
            guard other.state.compareExchange(expected: 0, desired: 2, ordering: .sequentiallyConsistent).exchanged else { continue }
            let connection = other.connection
            other.connection = nil
            other.state.store(0, ordering: .releasing)
            if let connection { return connection }
        }
        return nil
    }

    /// Ends the slot's use: no transaction left open; closes the connection if the pool closed meanwhile.
    func release(_ slot: PoolSlot) {
        if let connection = slot.connection {
            connection.resetSessionState()
            if closed.load(ordering: .acquiring) {
                slot.connection = nil
                connection.close()
                condition.lock()
                openCount -= 1
                condition.unlock()
            }
        }
        inUse.subtract(1, ordering: .relaxed)
        // Sequentially consistent with the waiter's count and look (see obtainConnection).
        slot.state.store(0, ordering: .sequentiallyConsistent)
        if waiters.load(ordering: .sequentiallyConsistent) > 0 {
            condition.lock()
            condition.signal()  // one connection came free: wake one waiter, not a herd
            condition.unlock()
        }
    }

    func threadExited(_ slot: PoolSlot) {
        condition.lock()
        slots.removeValue(forKey: ObjectIdentifier(slot))
        // Thieves and close() change slots only under the lock, and the owner is exiting: the slot is idle.
        let connection = slot.connection
        slot.connection = nil
        if connection != nil {
            openCount -= 1
            condition.broadcast()
        }
        condition.unlock()
        connection?.close()
    }

    func close() {
        var closing: [PostgresConnection] = []
        condition.lock()
        closed.store(true, ordering: .releasing)
        for slot in slots.values where slot.state.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
            if let connection = slot.connection {
                closing.append(connection)
                slot.connection = nil
                openCount -= 1
            }
            slot.state.store(0, ordering: .releasing)
        }
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close() }
    }

    var statistics: PoolStatistics {
        condition.lock()
        let open = openCount
        condition.unlock()
        return PoolStatistics(
            openConnections: open,
            inUse: inUse.load(ordering: .relaxed),
            connectsTotal: counters.connects.load(ordering: .relaxed),
            connectFailuresTotal: counters.connectFailures.load(ordering: .relaxed),
            reconnectsTotal: counters.reconnects.load(ordering: .relaxed),
            acquireTimeoutsTotal: acquireTimeouts.load(ordering: .relaxed),
            deadOnCheckoutTotal: counters.deadOnCheckout.load(ordering: .relaxed))
    }
}
