import Foundation
import Synchronization

/// Per-request state kept in MHD's `*con_cls` from the request line until MHD reports completion.
///
/// `@unchecked Sendable`: MHD runs every callback for one connection on the worker thread that owns it,
/// so the plain fields are never touched concurrently; the cross-thread fields, `answer` and `completed`, are a
/// Mutex and an atomic.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// Request line seen; headers not yet processed.
        case fresh
        /// Headers processed; body arriving (or none expected) until the final call.
        case reading
        /// Handed to a deferred handler; the connection is suspended until `answer` is set.
        case suspended
        /// A response was queued; later calls only discard input.
        case answered
    }

    /// What the request turned out to be once its headers were read.
    enum Disposition {
        case route(Route, parameters: [String: String])
        case staticFile
        case problem(Problem)
    }

    /// The raw target from the request line, before MHD decodes it.
    let target: String
    /// Where the target and its NUL were in MHD's buffer when the request line was parsed (see `RequestFraming`).
    let targetStart: UInt
    let targetEnd: UInt
    let startNanos: UInt64
    let requestID: String
    /// The connection's deadline and overflow mark (see `ConnectionGuard`); nil only if MHD gave no socket context.
    let watch: ConnectionWatch?
    var phase = Phase.fresh
    var method: HTTPMethod?
    /// The method label for logs and metrics ("OTHER" for methods we do not route).
    var methodLabel = "OTHER"
    var rawPath: Substring = ""
    var decodedPath = ""
    var queryItems: [(name: String, value: String)] = []
    var headers: [(name: String, value: String)] = []
    /// What the headers say about the body's length, noted as they are collected.
    var framing = RequestFraming()
    var disposition = Disposition.problem(.notFound())
    /// The route pattern, "static" or "unmatched"; the only route text logs and metrics see.
    var routeLabel = "unmatched"
    var body: [UInt8] = []
    /// The raw body once it is spooled (a large document; see `Route.spoolingLargeBodies`); `body` is then empty.
    var spool: SpooledBytes?
    /// True when a large raw body goes to `spool` rather than `body`.
    var spoolsBody = false
    var bodyLimit = 0
    /// Body bytes received so far (the body itself stays empty when a multipart collector takes them).
    var bodyReceived = 0
    /// Set for `multipart/form-data` on a route that accepts it: parses chunks instead of buffering them.
    var multipart: MultipartCollector?
    /// A form that carries `Authorization` is buffered as well as parsed: a request signature covers the raw bytes.
    var retainsRawForm = false
    /// True while this request counts against `maxConcurrentLargeBodies`; released on completion.
    var holdsLargeBodySlot = false
    /// The MHD connection; valid until MHD reports the request complete. Used to resume from other threads.
    var connection: OpaquePointer?
    /// The deferred answer, final but for the server's own headers; `nil` until the completion (or shutdown) provides one.
    let answer = Mutex<HTTPResponse?>(nil)
    /// Set by a deferred handler's first completion; later calls are ignored.
    private let completed = Atomic<Bool>(false)

    init(target: String, targetStart: UInt, targetEnd: UInt, startNanos: UInt64, requestID: String, watch: ConnectionWatch?) {
        self.target = target
        self.targetStart = targetStart
        self.targetEnd = targetEnd
        self.startNanos = startNanos
        self.requestID = requestID
        self.watch = watch
    }

    /// True for the first call only: a deferred handler's completion runs the `after` stages once.
    func claimCompletion() -> Bool {
        !completed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Stores the deferred answer unless one is already there; true when this call stored it.
    func provideAnswer(_ response: HTTPResponse) -> Bool {
        answer.withLock { current in
            guard current == nil else { return false }
            current = response
            return true
        }
    }
}

/// Monotonic nanoseconds, for request durations.
@inline(__always)
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Request ids: 16 hex digits, a SplitMix64 scramble of a per-server counter under a random seed.
/// Unique and unpatterned without a getrandom call per request; they are labels, not secrets.
final class RequestIDGenerator: Sendable {
    private let counter = Atomic<UInt64>(0)
    private let seed = UInt64.random(in: .min ... .max)

    func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        var z = seed &+ n &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        var value = z ^ (z >> 31)
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { hex in
                for index in 0..<16 {
                    buffer[15 - index] = hex[Int(value & 0xF)]
                    value >>= 4
                }
            }
            return 16
        }
    }
}
