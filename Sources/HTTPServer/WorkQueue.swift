import Foundation

/// A bounded FIFO of jobs run by `threads` workers, at most `capacity` jobs waiting; `submit` refuses beyond that (the
/// caller answers 503). The service's argon2id work runs on such queues (sign-ins, answers: never on the request
/// handlers' threads), and with `HTTPServerConfiguration.handlerThreads` every routed request does (`Dispatch.swift`).
///
/// Workers start on demand and exit after `idleTimeout` without work, so a service that is dropped (tests)
/// leaves no threads behind; they are long-lived under load, keeping their PostgreSQL connection.
public final class WorkQueue: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is read and written only while holding `condition`.
    private let condition = NSCondition()
    /// Jobs from `head` on wait; a taken one is cleared at once, so what it captured (a request's body, its spool
    /// file) goes when it is done, not when the array is next compacted.
    private var waiting: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var workers = 0
    private var idleWorkers = 0
    private let threads: Int
    private let capacity: Int
    private let idleTimeout: TimeInterval
    private let niceness: Int32
    private let name: String

    /// A queue with `threads` workers (threads called `name`, at `niceness`) and room for `capacity` waiting jobs. The
    /// defaults are the password hashing's: nice 5, as hashing tolerates waiting and other requests' latency does not.
    public init(
        threads: Int, capacity: Int, idleTimeout: TimeInterval = 30, niceness: Int32 = 5, name: String = "reclaim-password-hash"
    ) {
        self.threads = max(1, threads)
        self.capacity = max(0, capacity)
        self.idleTimeout = idleTimeout
        self.niceness = niceness
        self.name = name
    }

    /// Jobs waiting for a worker now (for metrics and tests).
    public var depth: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting.count - head
    }

    /// Queues `job`; false (and `job` is dropped) when `capacity` jobs already wait.
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard waiting.count - head < capacity + idleWorkers else { return false }
        waiting.append(job)
        if idleWorkers > 0 {
            condition.signal()
        } else if workers < threads {
            workers += 1
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
        return true
    }

    #if os(Linux)
        /// The kernel thread id (Glibc's `gettid` is not visible to Swift; /proc/thread-self names it).
        private static func currentThreadID() -> id_t? {
            var buffer = [CChar](repeating: 0, count: 64)
            let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.split(separator: "/").last.flatMap { id_t($0) }
        }
    #endif

    private func work() {
        // The queue's priority (this thread only, on Linux): the password hashing's nice 5 keeps other requests'
        // latency (measured: /healthz p99 while sign-ins saturate the queue, BENCHMARKS.md).
        #if os(Linux)
            if niceness != 0, let tid = Self.currentThreadID() {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, niceness)
            }
        #endif
        condition.lock()
        while true {
            if head < waiting.count {
                let job = waiting[head]!
                waiting[head] = nil
                head += 1
                if head > 64 && head * 2 > waiting.count {
                    waiting.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idleWorkers += 1
            let signalled = condition.wait(until: Date().addingTimeInterval(idleTimeout))
            idleWorkers -= 1
            if !signalled && head >= waiting.count {
                workers -= 1
                condition.unlock()
                return
            }
        }
    }
}
