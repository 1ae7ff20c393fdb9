import Foundation
import HTTPServer
import ReclaimTestSupport
import Synchronization
import Testing

/// `HTTPServerConfiguration.handlerThreads`: routed requests run from one queue, in arrival order, whichever MHD thread
/// holds their connection. No timing is asserted beyond "answered before a held request was let go".
@Suite(.serialized) struct HandlerQueueTests {
    /// Adds `X-Stamp: 1` after every answer; answers 418 itself for `X-Short: 1`.
    struct Stamp: HTTPMiddleware {
        func before(_ request: HTTPRequest) throws -> HTTPResponse? {
            request.header("X-Short") == nil ? nil : HTTPResponse.text("short", status: 418)
        }
        func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
            var stamped = response
            stamped.addHeader("X-Stamp", "1")
            return stamped
        }
    }

    /// A route that holds its handler thread until the test lets it go, and a quick one.
    final class Held: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        var routes: [Route] {
            [
                Route(.GET, "/held") { [self] request in
                    order.withLock { $0.append(request.query("name") ?? "") }
                    entered.signal()
                    _ = release.wait(timeout: .now() + 10)
                    return .text("held")
                },
                Route(.GET, "/hello") { [self] request in
                    order.withLock { $0.append(request.query("name") ?? "hello") }
                    return .text("hello")
                },
                Route(.GET, "/fails") { _ in throw Problem.conflict() },
                Route(.GET, "/later", deferred: { _, complete in DispatchQueue.global().async { complete(.success(.text("later"))) } }),
            ]
        }

        /// A server on these routes with `threads` MHD threads and `handlerThreads`, and a first request (`/held?name=`
        /// `name`) already holding a handler thread.
        func serve(
            threads: Int = 2, handlerThreads: Int, shutdownGrace: Double = 10, name: String = "", middleware: [any HTTPMiddleware] = []
        ) throws -> (TestServer, Background<TestHTTPResponse>) {
            let server = try TestServer(
                routes: routes,
                configure: {
                    $0.threads = threads
                    $0.handlerThreads = handlerThreads
                    $0.shutdownGraceSeconds = shutdownGrace
                }, middleware: middleware)
            let port = server.port
            let first = Background { try TestHTTPClient(port: port).request("GET", "/held?name=\(name)") }
            #expect(entered.wait(timeout: .now() + 5) == .success)
            return (server, first)
        }
    }

    @Test func aHeldRequestDoesNotHoldTheOthersOnItsConnectionsThread() throws {
        // One MHD thread holds every connection: run on it, the held request would keep /hello waiting until released.
        let held = Held()
        let (server, waiting) = try held.serve(threads: 1, handlerThreads: 2, middleware: [Stamp()])
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        for _ in 0..<5 {
            let response = try client.request("GET", "/hello")
            #expect(response.status == 200)
            #expect(response.header("X-Stamp") == "1")
        }
        #expect(waiting.wait(timeout: 0) == nil, "the held request is still held")
        // The middleware's early answer, a thrown problem and a deferred route, all from the queue.
        let short = try client.request("GET", "/hello", headers: [("X-Short", "1")])
        #expect(short.status == 418)
        #expect(short.header("X-Stamp") == nil, "a middleware's after runs only when its before went on")
        let failed = try client.request("GET", "/fails")
        #expect(failed.status == 409)
        #expect(failed.header("X-Request-Id") != nil)
        #expect(try client.request("GET", "/later").text == "later")
        held.release.signal()
        let response = try #require(waiting.wait(timeout: 5)).get()
        #expect(response.text == "held")
        #expect(response.header("X-Stamp") == "1")
        #expect(server.waitUntilIdle())
    }

    @Test func requestsRunInTheOrderTheyArrived() throws {
        // One handler thread, held by the first request: the others queue behind it and run in their order.
        let held = Held()
        let (server, first) = try held.serve(threads: 2, handlerThreads: 1, name: "first")
        defer { server.stop() }
        let port = server.port
        var queued: [Background<TestHTTPResponse>] = []
        for index in 1...4 {
            queued.append(Background { try TestHTTPClient(port: port).request("GET", "/hello?name=\(index)") })
            // Each in before the next is sent: in flight means read and queued (the held one counts too).
            #expect(eventually(5) { server.server.requestsInFlight == index + 1 })
        }
        #expect(held.order.withLock { $0 } == ["first"], "nothing runs while the only handler thread is held")
        #expect(server.metrics.requestsQueued == 4)
        #expect(server.metrics.renderPrometheus().contains("http_requests_queued 4\n"))
        held.release.signal()
        #expect(try #require(first.wait(timeout: 5)).get().status == 200)
        for request in queued { #expect(try #require(request.wait(timeout: 5)).get().status == 200) }
        #expect(held.order.withLock { $0 } == ["first", "1", "2", "3", "4"])
        #expect(server.metrics.requestsQueued == 0)
    }

    @Test func shutdownLetsQueuedRequestsFinish() throws {
        let held = Held()
        let (server, first) = try held.serve(handlerThreads: 1, shutdownGrace: 5)
        let port = server.port
        let behind = Background { try TestHTTPClient(port: port).request("GET", "/hello") }
        #expect(eventually(5) { server.server.requestsInFlight == 2 })
        let stopping = Background { server.stop() }
        Thread.sleep(forTimeInterval: 0.2)
        held.release.signal()
        #expect(try #require(first.wait(timeout: 5)).get().status == 200)
        // Queued behind the held one when shutdown began: still answered, not refused.
        #expect(try #require(behind.wait(timeout: 5)).get().text == "hello")
        #expect(stopping.wait(timeout: 10) != nil)
    }
}
