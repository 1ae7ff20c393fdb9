import Foundation
import Logging
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: epoll worker threads, one routing table, problems rendered in
/// one place, security headers on every response, one access-log line per request.
///
/// One request passes through four files, each with one job: `Daemon.swift` (libmicrohttpd: lifecycle,
/// callbacks, suspend/resume), `RequestAssembly.swift` (headers, framing, body), `Dispatch.swift` (router,
/// middleware, handler) and `ResponseStage.swift` (headers, problems, the access log).
///
/// `@unchecked Sendable`: configuration fields are immutable; the daemon handle and the suspended
/// requests live in `state` (a Mutex); counters are atomics.
public final class HTTPServer: @unchecked Sendable {
    /// The transport settings it was created with.
    public let configuration: HTTPServerConfiguration
    /// The routing table.
    public let router: Router
    let middleware: MiddlewareChain
    let staticFiles: StaticFiles?
    let errorMapper: @Sendable (any Error) -> (any HTTPProblem)?
    let logger: Logger
    /// Request counts and latencies, for `/metrics`.
    public let metrics: RequestMetrics

    enum Phase {
        case idle, running, draining, stopping, stopped
    }

    struct State {
        var phase = Phase.idle
        var daemon: OpaquePointer?
        var boundPort = 0
        /// Deferred requests whose connection is suspended, so shutdown can resume them.
        var suspended: [ObjectIdentifier: RequestContext] = [:]
        /// Streamed bodies still being sent, so shutdown can end them (`ResponseStream.swift`).
        var streams: [ObjectIdentifier: HTTPBodyWriter] = [:]
        /// Keeps the server alive while MHD holds an unretained pointer to it.
        var retainedSelf: Unmanaged<HTTPServer>?
    }

    let state = Mutex(State())
    /// Set once shutdown starts: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// The last diagnostic from libmicrohttpd, quoted when the daemon fails to start.
    let lastTransportMessage = Mutex<String?>(nil)
    /// C memory that must outlive the daemon: the log target pair and the TLS PEM strings.
    let logTarget: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let tlsStrings: [UnsafeMutablePointer<CChar>]
    let logsRequests: Bool
    let requestIDs = RequestIDGenerator()
    /// The connection cap and the head and body deadlines.
    let connectionGuard: ConnectionGuard
    /// Where routed requests run when `configuration.handlerThreads` > 0 (`Dispatch.swift`); nil: on MHD's threads.
    let handlers: WorkQueue?

    /// A server that does nothing until `start()`; the logger and metrics are passed in, never made here.
    public init(
        configuration: HTTPServerConfiguration,
        router: Router,
        middleware: [any HTTPMiddleware] = [],
        staticFiles: StaticFiles? = nil,
        errorMapper: @escaping @Sendable (any Error) -> (any HTTPProblem)? = { _ in nil },
        logger: Logger,
        metrics: RequestMetrics
    ) {
        self.configuration = configuration
        self.router = router
        self.middleware = MiddlewareChain(stages: middleware)
        self.staticFiles = staticFiles
        self.errorMapper = errorMapper
        self.logger = logger
        self.metrics = metrics
        self.logsRequests = logger.minimumLevel <= .info
        self.connectionGuard = ConnectionGuard(configuration: configuration)
        // Room for every connection's request: the connection cap, not this queue, is what refuses.
        self.handlers =
            configuration.handlerThreads > 0
            ? WorkQueue(
                threads: configuration.handlerThreads, capacity: configuration.maxConnections * 2, niceness: 0, name: "reclaim-http-handler")
            : nil
        self.logTarget = .allocate(capacity: 2)
        self.logTarget.initialize(repeating: nil, count: 2)
        if let certificate = configuration.tlsCertificatePEM, let key = configuration.tlsKeyPEM {
            self.tlsStrings = [strdup(certificate)!, strdup(key)!]
        } else {
            self.tlsStrings = []
        }
    }

    deinit {
        logTarget.deallocate()
        for string in tlsStrings {
            // Wipe the key material before giving the memory back.
            memset(string, 0, strlen(string))
            free(string)
        }
    }

    /// The port actually listened on (useful with port 0); 0 before `start()`.
    public var boundPort: Int { state.withLock { $0.boundPort } }

    /// Requests between the request line and MHD's completion callback (counted once, by `metrics`).
    public var requestsInFlight: Int { metrics.requestsInFlight }

    /// Requests holding a body larger than `largeBodyThreshold` right now.
    public var largeBodiesInFlight: Int { metrics.largeBodiesInFlight }

    /// Connections open right now.
    public var openConnections: Int { connectionGuard.openConnections }

    /// Connections closed because their head or body missed its deadline, since start.
    public var connectionsTimedOut: Int { connectionGuard.timedOut.load(ordering: .relaxed) }

    /// Connections closed at accept because the cap and its overflow were full, since start.
    public var connectionsRefused: Int { connectionGuard.refused.load(ordering: .relaxed) }
}
