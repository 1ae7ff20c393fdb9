import Foundation

/// Transport settings for `HTTPServer`; every field has a safe default.
public struct HTTPServerConfiguration: Sendable {
    /// Address to listen on: an IPv4 or IPv6 literal, or a host name resolved at start.
    public var host: String
    /// Port to listen on; 0 picks a free one (read it back from `boundPort`).
    public var port: Int
    /// Worker threads (MHD's thread pool), each running its own epoll loop.
    public var threads: Int
    /// Most connections served at once. A few more (1/16, at least 16) are accepted only to be answered 503 with
    /// `Retry-After` at once; beyond those, new connections are closed as they are accepted. Never left waiting.
    public var maxConnections: Int
    /// Most connections from one IP address; 0 means no limit (behind a proxy every client shares its address).
    public var perIPConnectionLimit: Int
    /// Idle seconds before a connection is closed (MHD's own timeout; a trickling client is never idle: see below).
    public var connectionTimeoutSeconds: Int
    /// Seconds a request's whole head (request line and headers) may take to arrive, counted from when the
    /// connection could take it (accepted, or its last answer sent); then the socket is closed.
    public var headTimeoutSeconds: Double = 10
    /// Seconds a request's whole body may take to arrive once its head is in; then the socket is closed.
    public var bodyTimeoutSeconds: Double = 60
    /// Bytes per connection for request headers and buffers; a request head larger than about half of
    /// this is refused with 431. MHD zeroes the whole pool after every request, so this is also a
    /// per-request cost: 32 KiB (heads up to ~15 KB) measured 16% more requests/s than 64 KiB.
    public var connectionMemoryLimit: Int
    /// Body limit for routes that do not name their own.
    public var defaultBodyLimit: Int
    /// PEM certificate chain; with `tlsKeyPEM`, the server speaks only HTTPS.
    public var tlsCertificatePEM: String?
    /// PEM private key for `tlsCertificatePEM`.
    public var tlsKeyPEM: String?
    /// How long `shutdown()` waits for in-flight requests.
    public var shutdownGraceSeconds: Double
    /// A body larger than this (announced, or received so far when chunked) is "large": it counts against
    /// `maxConcurrentLargeBodies` and, on a route that takes documents, goes to a spool file (see `spoolDirectory`)
    /// instead of memory, as does a form's file part that grows past it.
    public var largeBodyThreshold: Int
    /// Most large bodies held at once (reading or being handled); beyond it, 503 with `Retry-After`. Spooled bodies
    /// hold 64 KiB of memory each and at most this × the largest route limit of disk; bodies kept in memory (JSON,
    /// routes that take no documents) this × their route's limit; 0 means no cap.
    public var maxConcurrentLargeBodies: Int
    /// Where large document bodies are spooled while a request is read and handled: unlinked files, encrypted under a
    /// key that never leaves the process. The system's temporary directory unless set.
    public var spoolDirectory: String = NSTemporaryDirectory()
    /// Reverse proxies whose `X-Forwarded-For` names the client (`HTTPRequest.clientAddress`); none by default.
    public var trustedProxies: AddressRanges = .none
    /// Threads that run routed requests (middleware and handler) from one queue in arrival order, while `threads` only
    /// read and write connections; 0 runs each on the thread of its connection, as MHD hands it over. A connection
    /// stays on the MHD thread that accepted it, so without the queue a request waits for its neighbours' there while
    /// another thread idles (measured: BENCHMARKS.md, "One queue for every request"). Two a core by default: a handler
    /// waiting on its database leaves the core to another.
    public var handlerThreads: Int = 2 * ProcessInfo.processInfo.activeProcessorCount

    /// The defaults suit one process on a small machine; see each field.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        maxConnections: Int = 1024,
        perIPConnectionLimit: Int = 0,
        connectionTimeoutSeconds: Int = 15,
        connectionMemoryLimit: Int = 32 * 1024,
        defaultBodyLimit: Int = Route.defaultBodyLimit,
        tlsCertificatePEM: String? = nil,
        tlsKeyPEM: String? = nil,
        shutdownGraceSeconds: Double = 10,
        largeBodyThreshold: Int = 256 * 1024,
        maxConcurrentLargeBodies: Int = 32
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxConnections = maxConnections
        self.perIPConnectionLimit = perIPConnectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.connectionMemoryLimit = connectionMemoryLimit
        self.defaultBodyLimit = defaultBodyLimit
        self.tlsCertificatePEM = tlsCertificatePEM
        self.tlsKeyPEM = tlsKeyPEM
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.largeBodyThreshold = largeBodyThreshold
        self.maxConcurrentLargeBodies = maxConcurrentLargeBodies
    }

    /// True when both TLS halves are set.
    public var usesTLS: Bool { tlsCertificatePEM != nil && tlsKeyPEM != nil }
}

/// Why the server could not start.
public enum HTTPServerError: Error, CustomStringConvertible {
    case addressInUse(host: String, port: Int)
    case cannotResolve(host: String)
    case socketFailed(operation: String, host: String, port: Int, errno: Int32)
    case invalidConfiguration(String)
    case daemonFailed(String)
    case alreadyStarted

    public var description: String {
        switch self {
        case .addressInUse(let host, let port): "cannot listen on \(host):\(port): the address is already in use"
        case .cannotResolve(let host): "cannot listen on \(host): the host name does not resolve"
        case .socketFailed(let operation, let host, let port, let code):
            "cannot listen on \(host):\(port): \(operation) failed: \(String(cString: strerror(code)))"
        case .invalidConfiguration(let reason): "invalid HTTP server configuration: \(reason)"
        case .daemonFailed(let reason): "libmicrohttpd did not start: \(reason)"
        case .alreadyStarted: "the HTTP server was already started"
        }
    }
}
