import CMicroHTTPD
import Foundation
import Synchronization

/// Slow and greedy clients: the connection cap and the head and body deadlines, which MHD's idle timeout alone
/// does not give (a client sending one byte every few seconds is never idle).
///
/// Every open connection has a `ConnectionWatch`, made and dropped by MHD's connection callbacks on the worker
/// thread that owns the connection (the drop comes before MHD closes the socket). MHD keeps it in the connection's
/// socket context; each request's context holds it too, so the request path moves the deadline with one atomic
/// store: no lock, no lookup, nothing shared between connections. The registry of watches (one lock) is touched
/// only at open, at close and by the sweeper, a thread that every 100 ms shuts down the socket of any connection
/// past its deadline; MHD then sees the close and cleans up on its own thread. The sweeper shuts a socket down only
/// while holding the registry's lock and only for a watch still in it, and the close callback removes the watch
/// under that lock before MHD closes the socket: a socket number is never touched after MHD closed (and maybe
/// reused) it.
/// - From the moment a connection can take a request (accepted, or its last answer sent), its whole head must
///   arrive within `headTimeout`; its body then within `bodyTimeout`. A handler's own time is never limited here.
/// - Above `softCap` open connections, new ones are still accepted, but their first request is answered 503 at
///   once (and must arrive within a second); above `hardCap` the accept policy closes them immediately. Either way
///   a new client gets an answer at once instead of waiting in the listen queue.
final class ConnectionGuard: Sendable {
    let headTimeout: UInt64
    let bodyTimeout: UInt64
    let softCap: Int
    let hardCap: Int
    /// Every open connection's watch, for the sweeper; keyed by the watch itself.
    private let watches = Mutex<[ObjectIdentifier: ConnectionWatch]>([:])
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

    /// MHD opened the connection: its watch goes into the registry and, retained, into MHD's socket context.
    func opened(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let open = count.add(1, ordering: .relaxed).newValue
        let overflow = open > softCap
        let wait = overflow ? min(headTimeout, 1_000_000_000) : headTimeout
        let watch = ConnectionWatch(
            connection: connection, socket: reclaim_mhd_connection_fd(connection), overflow: overflow,
            deadline: monotonicNanos() + wait)
        watches.withLock { $0[ObjectIdentifier(watch)] = watch }
        socketContext.pointee = Unmanaged.passRetained(watch).toOpaque()
    }

    /// MHD is about to close the connection's socket: once this returns, the sweeper can no longer reach it.
    func closed(socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        let watch = Unmanaged<ConnectionWatch>.fromOpaque(pointer).takeRetainedValue()
        if watches.withLock({ $0.removeValue(forKey: ObjectIdentifier(watch)) }) != nil { count.subtract(1, ordering: .relaxed) }
    }

    /// The connection's watch, from its socket context; only on the worker thread that owns the connection.
    func watch(_ connection: OpaquePointer) -> ConnectionWatch? {
        reclaim_mhd_socket_context(connection).map { Unmanaged<ConnectionWatch>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The open connections of the calling worker thread (for finding which one libmicrohttpd is refusing by itself).
    func watchesOfThisThread() -> [ConnectionWatch] {
        let me = pthread_self()
        return watches.withLock { watches in watches.values.filter { pthread_equal($0.thread, me) != 0 } }
    }

    /// Headers in: the body (if any) must follow within `bodyTimeout`.
    func headArrived(_ watch: ConnectionWatch?) { watch?.deadline.store(monotonicNanos() + bodyTimeout, ordering: .relaxed) }

    /// The request is whole: the handler's time is its own.
    func handling(_ watch: ConnectionWatch?) { watch?.deadline.store(0, ordering: .relaxed) }

    /// The answer is out: the next request's head must arrive within `headTimeout` (keep-alive included).
    func readyForNext(_ watch: ConnectionWatch?) { watch?.deadline.store(monotonicNanos() + headTimeout, ordering: .relaxed) }

    /// Shuts down every socket past its deadline (MHD closes the connection when it sees that).
    func sweep() {
        let now = monotonicNanos()
        watches.withLock { watches in
            for watch in watches.values {
                let deadline = watch.deadline.load(ordering: .relaxed)
                guard deadline != 0, deadline < now else { continue }
                // A deadline the request path moved since the load (the head came in, say) is the one that counts.
                guard watch.deadline.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged else { continue }
                if watch.socket >= 0 { _ = Foundation.shutdown(watch.socket, Int32(SHUT_RDWR)) }
                timedOut.add(1, ordering: .relaxed)
            }
        }
    }

    /// Shuts down every open connection's socket (at shutdown); MHD sees each close and cleans up on its own thread.
    func shutDownAll() {
        watches.withLock { watches in
            for watch in watches.values where watch.socket >= 0 { _ = Foundation.shutdown(watch.socket, Int32(SHUT_RDWR)) }
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

/// One open connection as the guard sees it: its socket, whether it came in above the soft cap, and its deadline.
/// Written by the connection's worker thread without a lock; read by the sweeper.
///
/// `@unchecked Sendable`: `request` (and `connection`, an MHD handle) are used only on the worker thread that owns
/// the connection; the sweeper reads only `socket` and the atomic `deadline`.
final class ConnectionWatch: @unchecked Sendable {
    /// The MHD connection; valid while the watch is in the guard's registry, and only on `thread`.
    let connection: OpaquePointer
    /// The worker thread that owns the connection (MHD calls every callback for it there).
    let thread = pthread_self()
    /// The request between its request line and MHD's completion callback, nil between requests.
    var request: RequestContext?
    /// The socket as it was at open; only ever shut down while the watch is in the guard's registry.
    let socket: Int32
    /// Accepted above the soft cap: its first request is answered 503.
    let overflow: Bool
    /// Monotonic nanoseconds after which the socket is shut down; 0 while a handler works (or once shut down).
    let deadline: Atomic<UInt64>

    init(connection: OpaquePointer, socket: Int32, overflow: Bool, deadline: UInt64) {
        self.connection = connection
        self.socket = socket
        self.overflow = overflow
        self.deadline = Atomic(deadline)
    }
}
