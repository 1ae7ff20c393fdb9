import CMicroHTTPD
import Foundation
import Synchronization

/// Slow and greedy clients: the connection cap and the head and body deadlines, which MHD's idle timeout alone
/// does not give (a client sending one byte every few seconds is never idle).
///
/// Every open connection has an entry, made and removed by MHD's connection callbacks on the worker thread that
/// owns it (the removal comes before MHD closes the socket). A sweeper thread shuts down the socket of any
/// connection past its deadline; MHD then sees the close and cleans up on its own thread. Doing that under the
/// same lock as the removal means a socket number is never touched after MHD closed (and maybe reused) it.
/// - From the moment a connection can take a request (accepted, or its last answer sent), its whole head must
///   arrive within `headTimeout`; its body then within `bodyTimeout`. A handler's own time is never limited here.
/// - Above `softCap` open connections, new ones are still accepted, but their first request is answered 503 at
///   once (and must arrive within a second); above `hardCap` the accept policy closes them immediately. Either way
///   a new client gets an answer at once instead of waiting in the listen queue.
final class ConnectionGuard: Sendable {
    struct Entry {
        let socket: Int32
        /// Monotonic nanoseconds after which the socket is shut down; 0 while a handler works.
        var deadline: UInt64
        /// Accepted above the soft cap: its first request is answered 503.
        let overflow: Bool
    }

    let headTimeout: UInt64
    let bodyTimeout: UInt64
    let softCap: Int
    let hardCap: Int
    private let entries = Mutex<[UInt: Entry]>([:])
    private let count = Atomic<Int>(0)
    /// Connections shut down for missing a deadline.
    let timedOut = Atomic<Int>(0)
    /// Connections closed at accept because `hardCap` were open.
    let refused = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    /// Connections the cap lets in beyond `softCap` only to be answered 503.
    static func overflowAllowance(_ softCap: Int) -> Int { max(16, softCap / 16) }

    init(configuration: HTTPServerConfiguration) {
        headTimeout = UInt64(max(0.05, configuration.headTimeoutSeconds) * 1e9)
        bodyTimeout = UInt64(max(0.05, configuration.bodyTimeoutSeconds) * 1e9)
        softCap = configuration.maxConnections
        hardCap = configuration.maxConnections + Self.overflowAllowance(configuration.maxConnections)
    }

    /// The accept policy: false (close now) when `hardCap` connections are open.
    func admits() -> Bool {
        if count.load(ordering: .relaxed) < hardCap { return true }
        refused.add(1, ordering: .relaxed)
        return false
    }

    func opened(_ connection: OpaquePointer) {
        let open = count.add(1, ordering: .relaxed).newValue
        let overflow = open > softCap
        let wait = overflow ? min(headTimeout, 1_000_000_000) : headTimeout
        let entry = Entry(socket: reclaim_mhd_connection_fd(connection), deadline: monotonicNanos() + wait, overflow: overflow)
        entries.withLock { $0[key(connection)] = entry }
    }

    func closed(_ connection: OpaquePointer) {
        if entries.withLock({ $0.removeValue(forKey: key(connection)) }) != nil { count.subtract(1, ordering: .relaxed) }
    }

    /// True when the connection came in above the soft cap.
    func isOverflow(_ connection: OpaquePointer) -> Bool { entries.withLock { $0[key(connection)]?.overflow ?? false } }

    /// Headers in: the body (if any) must follow within `bodyTimeout`.
    func headArrived(_ connection: OpaquePointer) { setDeadline(connection, after: bodyTimeout) }

    /// The request is whole: the handler's time is its own.
    func handling(_ connection: OpaquePointer) { setDeadline(connection, after: nil) }

    /// The answer is out: the next request's head must arrive within `headTimeout` (keep-alive included).
    func readyForNext(_ connection: OpaquePointer) { setDeadline(connection, after: headTimeout) }

    private func setDeadline(_ connection: OpaquePointer, after nanos: UInt64?) {
        let deadline = nanos.map { monotonicNanos() + $0 } ?? 0
        entries.withLock { entries in
            let key = key(connection)
            guard let entry = entries[key] else { return }
            entries[key] = Entry(socket: entry.socket, deadline: deadline, overflow: entry.overflow)
        }
    }

    private func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }

    /// Shuts down every socket past its deadline (MHD closes the connection when it sees that).
    func sweep() {
        let now = monotonicNanos()
        entries.withLock { entries in
            for (key, entry) in entries where entry.deadline != 0 && entry.deadline < now {
                if entry.socket >= 0 { _ = Foundation.shutdown(entry.socket, Int32(SHUT_RDWR)) }
                entries[key] = Entry(socket: entry.socket, deadline: 0, overflow: entry.overflow)
                timedOut.add(1, ordering: .relaxed)
            }
        }
    }

    /// Starts the sweeper: every 100 ms, so a deadline is kept to about a tenth of a second.
    func start() {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                usleep(100_000)
                sweep()
            }
        }
        thread.name = "http-connection-guard"
        thread.start()
    }

    func stop() { running.store(false, ordering: .releasing) }

    /// Open connections right now.
    var openConnections: Int { count.load(ordering: .relaxed) }
}
