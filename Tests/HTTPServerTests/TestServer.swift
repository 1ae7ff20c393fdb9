import Foundation
import HTTPServer
import Logging
import ReclaimTestSupport

/// A server on an ephemeral loopback port with an in-memory log, stopped by `stop()`.
final class TestServer: Sendable {
    let server: HTTPServer
    let log = MemorySink()
    let metrics = RequestMetrics()
    var port: Int { server.boundPort }

    init(
        routes: [Route],
        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        middleware: [any HTTPMiddleware] = [],
        staticFiles: StaticFiles? = nil,
        errorMapper: @escaping @Sendable (any Error) -> (any HTTPProblem)? = { _ in nil }
    ) throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        configure(&configuration)
        server = HTTPServer(
            configuration: configuration, router: Router(routes: routes), middleware: middleware, staticFiles: staticFiles,
            errorMapper: errorMapper, logger: Logger(sink: log, minimumLevel: .info), metrics: metrics
        )
        try server.start()
    }

    func client(keepAlive: Bool = false, timeout: Double = 5) -> TestHTTPClient {
        TestHTTPClient(host: "127.0.0.1", port: port, keepAlive: keepAlive, timeout: timeout)
    }

    func stop() { server.shutdown() }

    /// MHD reports a request complete just after the last byte is sent, so a client can be ahead of it.
    @discardableResult
    func waitUntilIdle(timeout: Double = 2) -> Bool {
        eventually(timeout) { server.requestsInFlight == 0 }
    }

    /// Parsed log lines with this event name.
    func logLines(event: String) -> [[String: Any]] {
        log.lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["event"] as? String == event ? object : nil
        }
    }

    deinit { server.shutdown() }
}

/// Runs `work` on a plain thread (not the test's cooperative pool) and waits up to `timeout` seconds.
func onThread<T: Sendable>(timeout: Double = 10, _ work: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.set(Result { try work() })
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + timeout) == .success else { return nil }
    return box.get()
}

/// Starts `work` on a thread now; `wait` collects its result later.
final class Background<T: Sendable>: @unchecked Sendable {
    private let box = ResultBox<T>()
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws -> T) {
        let thread = Thread { [box, done] in
            box.set(Result { try work() })
            done.signal()
        }
        thread.start()
    }

    func wait(timeout: Double = 10) -> Result<T, any Error>? {
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.get()
    }
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
    func get() -> Result<T, any Error>? { lock.withLock { value } }
}

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Problem codes the tests' own handlers answer (the service declares its own in ErrorCode).
enum TestProblem: String, ProblemKind {
    case busy, taken
    case caseLocked = "case_locked"
    var code: String { rawValue }
    var status: Int { 409 }
    var title: String { "Conflict" }
}
