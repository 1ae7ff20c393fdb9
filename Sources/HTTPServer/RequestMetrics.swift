import Foundation
import Synchronization

/// Request counts, a latency histogram and an in-flight gauge, rendered in Prometheus text format.
/// Route labels are patterns (or "static"/"unmatched"), so the number of series stays bounded.
public final class RequestMetrics: Sendable {
    /// Upper bounds in seconds: finer than Prometheus' defaults at the low end, where this server lives.
    public static let defaultBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct CounterKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private struct Histogram {
        var counts: [Int]
        var sum: Double = 0
        var count: Int = 0

        mutating func record(_ bucket: Int, _ seconds: Double) {
            counts[bucket] += 1
            sum += seconds
            count += 1
        }
    }

    private struct State {
        var requests: [CounterKey: Int] = [:]
        var durations: [String: Histogram] = [:]
    }

    private let buckets: [Double]
    private let state = Mutex(State())
    private let inFlight = Atomic<Int>(0)
    /// Requests holding a large body; the server counts against `maxConcurrentLargeBodies` here.
    let largeBodies = Atomic<Int>(0)
    /// Requests whose body (or a form's file) was spooled to disk rather than held in memory, since start.
    let spooled = Atomic<Int>(0)
    /// Requests read whole and waiting for a handler thread (`HTTPServerConfiguration.handlerThreads`).
    let queued = Atomic<Int>(0)

    /// The `Content-Type` for `renderPrometheus()` output.
    public static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Empty metrics with the given histogram bounds (seconds).
    public init(buckets: [Double] = RequestMetrics.defaultBuckets) {
        self.buckets = buckets.sorted()
    }

    /// Counts one finished request; `method` is a method name or "OTHER".
    func record(method: String, route: String, status: Int, seconds: Double) {
        // Bucket found outside the lock; the lock only guards two dictionary updates.
        let bucket = buckets.firstIndex { seconds <= $0 } ?? buckets.count
        state.withLock { state in
            state.requests[CounterKey(method: method, route: route, status: status), default: 0] += 1
            state.durations[route, default: Histogram(counts: Array(repeating: 0, count: buckets.count + 1))].record(bucket, seconds)
        }
    }

    func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    // Sequentially consistent: shutdown waits on this count to reach zero.
    func requestFinished() { inFlight.subtract(1, ordering: .sequentiallyConsistent) }

    /// Requests currently being handled.
    public var requestsInFlight: Int { inFlight.load(ordering: .sequentiallyConsistent) }

    /// Requests waiting for a handler thread right now: the queue's length, the service's saturation.
    public var requestsQueued: Int { queued.load(ordering: .relaxed) }

    /// Requests holding a body over `largeBodyThreshold` right now.
    public var largeBodiesInFlight: Int { largeBodies.load(ordering: .relaxed) }

    /// Requests handed to their handler with a spooled body or form file, since start.
    public var spooledBodies: Int { spooled.load(ordering: .relaxed) }

    /// How many requests matched these labels so far (for tests and health checks).
    public func count(method: HTTPMethod, route: String, status: Int) -> Int {
        state.withLock { $0.requests[CounterKey(method: method.rawValue, route: route, status: status)] ?? 0 }
    }

    /// Text exposition format 0.0.4 (`Content-Type: text/plain; version=0.0.4`).
    public func renderPrometheus() -> String {
        let snapshot = state.withLock { $0 }
        var out = "# HELP http_requests_total HTTP requests answered, by method, route pattern and status.\n"
        out += "# TYPE http_requests_total counter\n"
        let keys = snapshot.requests.keys.sorted {
            ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status)
        }
        for key in keys {
            out +=
                "http_requests_total{method=\"\(key.method)\",route=\"\(Self.escape(key.route))\",status=\"\(key.status)\"} \(snapshot.requests[key]!)\n"
        }
        out += "# HELP http_request_duration_seconds Time from the request line to the queued response, by route pattern.\n"
        out += "# TYPE http_request_duration_seconds histogram\n"
        for route in snapshot.durations.keys.sorted() {
            let histogram = snapshot.durations[route]!
            let label = Self.escape(route)
            var cumulative = 0
            for (index, bound) in buckets.enumerated() {
                cumulative += histogram.counts[index]
                out += "http_request_duration_seconds_bucket{route=\"\(label)\",le=\"\(Self.format(bound))\"} \(cumulative)\n"
            }
            out += "http_request_duration_seconds_bucket{route=\"\(label)\",le=\"+Inf\"} \(histogram.count)\n"
            out += "http_request_duration_seconds_sum{route=\"\(label)\"} \(Self.format(histogram.sum))\n"
            out += "http_request_duration_seconds_count{route=\"\(label)\"} \(histogram.count)\n"
        }
        out += "# HELP http_requests_in_flight HTTP requests being handled now.\n"
        out += "# TYPE http_requests_in_flight gauge\n"
        out += "http_requests_in_flight \(requestsInFlight)\n"
        out += "# HELP http_requests_queued HTTP requests read whole and waiting for a handler thread.\n"
        out += "# TYPE http_requests_queued gauge\n"
        out += "http_requests_queued \(requestsQueued)\n"
        out += "# HELP http_large_bodies_in_flight Requests holding a large body (uploads), capped by maxConcurrentLargeBodies.\n"
        out += "# TYPE http_large_bodies_in_flight gauge\n"
        out += "http_large_bodies_in_flight \(largeBodiesInFlight)\n"
        out += "# HELP http_spooled_bodies_total Requests whose body or form file was spooled to disk (encrypted) instead of held in memory.\n"
        out += "# TYPE http_spooled_bodies_total counter\n"
        out += "http_spooled_bodies_total \(spooledBodies)\n"
        return out
    }

    /// Label values escape backslash, double quote and newline.
    static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(
            of: "\n", with: "\\n")
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
