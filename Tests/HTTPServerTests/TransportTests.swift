import Foundation
import HTTPServer
import ReclaimTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct TransportTests {
    static let hello = Route(.GET, "/hello") { _ in .text("hello") }

    /// Every request on MHD's threads (0), or from the handler queue (2, the service's way).
    static let modes = [0, 2]

    @Test(arguments: modes) func keepAliveReusesOneConnection(handlerThreads: Int) throws {
        let server = try TestServer(routes: [Self.hello], configure: { $0.handlerThreads = handlerThreads })
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        for _ in 0..<200 {
            let response = try client.request("GET", "/hello")
            #expect(response.status == 200)
            #expect(response.header("Connection")?.lowercased() != "close")
        }
        #expect(client.connectionsOpened == 1)

        // HTTP/1.1 pipelining: two requests written at once are answered in order.
        let connection = try server.client().openConnection()
        try connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        #expect(try connection.readResponse().status == 404)
    }

    @Test func addressInUseIsAClearError() throws {
        let first = try TestServer(routes: [Self.hello])
        defer { first.stop() }
        let second = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: first.port), router: Router(routes: [Self.hello]),
            logger: .discard, metrics: RequestMetrics()
        )
        #expect(throws: HTTPServerError.self) { try second.start() }
        do {
            try second.start()
        } catch {
            #expect("\(error)" == "cannot listen on 127.0.0.1:\(first.port): the address is already in use")
        }
        // The first server is unaffected.
        #expect(try first.client().request("GET", "/hello").status == 200)
    }

    @Test func oversizedHeaderIsRefusedWhileOthersAreServed() throws {
        let server = try TestServer(routes: [Self.hello])
        defer { server.stop() }
        let port = server.port
        let huge = String(repeating: "a", count: 100_000)
        let big = Background { () -> Int? in
            let raw = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(huge)\r\n\r\n"
            return try TestHTTPClient(port: port).sendRaw(Array(raw.utf8), readTimeout: 3)?.status
        }
        // Meanwhile, normal requests are answered promptly.
        let started = Date()
        for _ in 0..<20 {
            #expect(try server.client().request("GET", "/hello").status == 200)
        }
        #expect(Date().timeIntervalSince(started) < 2)
        let outcome = try #require(big.wait(timeout: 10))
        let status = try outcome.get()
        // Either refused with a status (431/413) or cut off; never served.
        #expect(status == nil || status == 431 || status == 413, "got \(String(describing: status))")
        // MHD refuses that one before the access handler: the server answers it instead (a 431 problem, logged as a request)
        // unless another connection on its thread could have been the one; either way the request state is released and logged once.
        #expect(server.waitUntilIdle())
        let answered = server.logLines(event: "request").filter { $0["status"] as? Int == 431 }.count
        #expect(server.logLines(event: "request_unanswered").count + answered == 1)
    }

    @Test func slowClientDoesNotBlockOthers() throws {
        // One worker thread makes the point sharper: the slow client must not occupy it.
        let server = try TestServer(
            routes: [Self.hello],
            configure: {
                $0.threads = 1
                $0.connectionTimeoutSeconds = 2
            })
        defer { server.stop() }
        let slow = try server.client().openConnection()
        let request = Array("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        // A byte every 250 ms for 2 seconds; other clients are served between the bytes.
        for index in 0..<8 {
            try slow.send([request[index]])
            let started = Date()
            #expect(try server.client().request("GET", "/hello").status == 200)
            // Blocked would mean waiting out the 2-second timeout; the slack is for a loaded machine.
            #expect(Date().timeIntervalSince(started) < 0.5)
            Thread.sleep(forTimeInterval: 0.25)
        }
        // An idle half-sent request is closed after the connection timeout.
        let idle = try server.client().openConnection()
        try idle.send("GET /hel")
        #expect(idle.waitForClose(timeout: 4))
    }

    @Test func perIPConnectionLimit() throws {
        let server = try TestServer(routes: [Self.hello], configure: { $0.perIPConnectionLimit = 2 })
        defer { server.stop() }
        let first = try server.client().openConnection()
        let second = try server.client().openConnection()
        try first.send("GET /hel")
        try second.send("GET /hel")
        #expect(eventually(2) { server.server.openConnections == 2 })
        // The third from the same address is accepted by the kernel but closed by MHD at once.
        let third = try server.client().openConnection()
        #expect(third.waitForClose(timeout: 2))
        first.close()
        second.close()
        #expect(eventually(2) { server.server.openConnections == 0 })
        #expect(try server.client().request("GET", "/hello").status == 200)
    }

    @Test(arguments: modes) func gracefulShutdownFinishesInFlightRequests(handlerThreads: Int) throws {
        let routes = [
            Self.hello,
            Route(.GET, "/slow") { _ in
                Thread.sleep(forTimeInterval: 1)
                return .text("done")
            },
        ]
        let server = try TestServer(routes: routes, configure: { $0.handlerThreads = handlerThreads })
        let port = server.port
        let slow = Background { try TestHTTPClient(port: port).request("GET", "/slow") }
        #expect(eventually(2) { server.server.requestsInFlight == 1 })

        let stopping = Background { server.stop() }
        Thread.sleep(forTimeInterval: 0.2)
        // New connections are refused once shutdown has begun.
        #expect(throws: TestHTTPError.self) { _ = try TestHTTPClient(port: port, timeout: 1).request("GET", "/hello") }

        let response = try #require(slow.wait(timeout: 5)).get()
        #expect(response.status == 200)
        #expect(response.text == "done")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(stopping.wait(timeout: 5) != nil)
        #expect(server.server.requestsInFlight == 0)
    }

    @Test func shutdownAnswersForgottenDeferredRequests() throws {
        let routes = [Route(.GET, "/never", deferred: { _, _ in })]
        let server = try TestServer(routes: routes, configure: { $0.shutdownGraceSeconds = 0.3 })
        let port = server.port
        let waiting = Background { try TestHTTPClient(port: port).request("GET", "/never") }
        #expect(eventually(2) { server.server.requestsInFlight == 1 })
        let started = Date()
        server.stop()
        #expect(Date().timeIntervalSince(started) < 2)
        let response = try #require(waiting.wait(timeout: 5)).get()
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "1")
    }

    @Test func deferredCompletionsRacingShutdownAreSafe() throws {
        let queue = DispatchQueue(label: "racing", attributes: .concurrent)
        let routes = [
            Route(
                .GET, "/race",
                deferred: { _, complete in
                    queue.asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0...300))) { complete(.success(.text("ok"))) }
                })
        ]
        let server = try TestServer(routes: routes, configure: { $0.shutdownGraceSeconds = 0.1 })
        let port = server.port
        let clients = (0..<40).map { _ in
            Background { () -> Int in
                do {
                    return try TestHTTPClient(port: port, timeout: 3).request("GET", "/race").status
                } catch TestHTTPError.connectFailed {
                    return 0
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.15)
        server.stop()
        for client in clients {
            let status = try #require(client.wait(timeout: 5)).get()
            // Answered, refused with 503 by shutdown, or never connected: never a hang or a crash.
            #expect([200, 503, 0].contains(status), "got \(status)")
        }
        // Completions arriving after the daemon stopped are ignored.
        Thread.sleep(forTimeInterval: 0.3)
    }

    @Test(arguments: modes) func deferredHandlersFreeTheWorkerThread(handlerThreads: Int) throws {
        struct Stamp: HTTPMiddleware {
            func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
                var stamped = response
                stamped.addHeader("X-Stamp", "1")
                return stamped
            }
        }
        let queue = DispatchQueue(label: "deferred-test", attributes: .concurrent)
        // The deferred answer waits for the test's word, not for a time: no timing is asserted.
        let release = DispatchSemaphore(value: 0)
        let routes = [
            Self.hello,
            Route(
                .POST, "/later",
                deferred: { request, complete in
                    let size = request.body.count
                    queue.async {
                        _ = release.wait(timeout: .now() + 10)
                        complete(.success(.text("later \(size)")))
                    }
                }),
            Route(
                .GET, "/later-fails",
                deferred: { _, complete in
                    queue.asyncAfter(deadline: .now() + 0.05) { complete(.failure(Problem.conflict(code: TestProblem.busy))) }
                }),
            Route(
                .GET, "/at-once",
                deferred: { _, complete in
                    complete(.success(.text("at once")))
                    complete(.success(.text("ignored second answer")))
                }),
        ]
        let server = try TestServer(
            routes: routes,
            configure: {
                $0.threads = 1
                $0.handlerThreads = handlerThreads
            }, middleware: [Stamp()])
        defer { server.stop() }
        let port = server.port

        let later = Background { try TestHTTPClient(port: port).request("POST", "/later", body: Array("abc".utf8)) }
        Thread.sleep(forTimeInterval: 0.03)
        // While the deferred request waits, the single worker thread serves others (were it held, these would hang).
        let client = server.client(keepAlive: true)
        for _ in 0..<10 {
            #expect(try client.request("GET", "/hello").status == 200)
        }
        #expect(later.wait(timeout: 0) == nil, "the deferred answer is still waiting")
        release.signal()
        let response = try #require(later.wait(timeout: 5)).get()
        #expect(response.status == 200)
        #expect(response.text == "later 3")
        #expect(response.header("X-Stamp") == "1")
        #expect(response.header("X-Request-Id") != nil)

        let failed = try client.request("GET", "/later-fails")
        #expect(failed.status == 409)
        #expect(try failed.json()["code"] as? String == "busy")
        #expect(failed.header("X-Stamp") == "1")
        #expect(try client.request("GET", "/at-once").text == "at once")
        // Several deferred requests at once, all on one worker thread (each let go at once).
        for _ in 0..<8 { release.signal() }
        let many = (0..<8).map { _ in Background { try TestHTTPClient(port: port).request("POST", "/later", body: [1]) } }
        for pending in many {
            #expect(try #require(pending.wait(timeout: 5)).get().text == "later 1")
        }
        #expect(server.waitUntilIdle())
    }

    @Test(arguments: modes) func middlewareSeesTheRealAnswerOfADeferredRoute(handlerThreads: Int) throws {
        /// Records what its `after` stage saw; answers 418 itself for `X-Short: 1`.
        final class Witness: HTTPMiddleware, @unchecked Sendable {
            let lock = NSLock()
            var seen: [(status: Int, body: String)] = []
            func before(_ request: HTTPRequest) throws -> HTTPResponse? {
                request.header("X-Short") == nil ? nil : HTTPResponse.text("short", status: 418)
            }
            func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
                lock.withLock { seen.append((response.status, response.body.text)) }
                var seenResponse = response
                seenResponse.addHeader("X-Seen-Status", String(response.status))
                return seenResponse
            }
        }
        let witness = Witness()
        let handled = Atomic<Int>(0)
        let queue = DispatchQueue(label: "deferred-witness")
        let routes = [
            Route(
                .POST, "/make",
                deferred: { request, complete in
                    handled.add(1, ordering: .relaxed)
                    let body = request.body.text
                    queue.asyncAfter(deadline: .now() + 0.1) {
                        complete(.success(HTTPResponse(status: 201, headers: [("Content-Type", "text/plain")], body: Array("made \(body)".utf8))))
                        complete(.success(.text("a second completion is ignored")))
                    }
                }),
            Route(
                .GET, "/refuse",
                deferred: { _, complete in
                    queue.async { complete(.failure(Problem.conflict(code: TestProblem.taken, detail: "Already taken."))) }
                }),
        ]
        let server = try TestServer(routes: routes, configure: { $0.handlerThreads = handlerThreads }, middleware: [witness])
        defer { server.stop() }
        let client = server.client()

        let made = try client.request("POST", "/make", body: Array("box".utf8))
        #expect(made.status == 201)
        #expect(made.text == "made box")
        #expect(made.header("X-Seen-Status") == "201")
        let refused = try client.request("GET", "/refuse")
        #expect(refused.status == 409)
        #expect(refused.header("X-Seen-Status") == "409")
        // A middleware answering in `before` keeps the deferred handler from running at all.
        let short = try client.request("POST", "/make", headers: [("X-Short", "1")], body: [1])
        #expect(short.status == 418)
        #expect(short.header("X-Seen-Status") == nil)
        #expect(handled.load(ordering: .relaxed) == 1)

        Thread.sleep(forTimeInterval: 0.2)
        let seen = witness.lock.withLock { witness.seen }
        // Exactly the real answers, once each: never a placeholder, never the ignored second completion.
        #expect(seen.map(\.status) == [201, 409])
        #expect(seen.first?.body == "made box")
        #expect(seen.last?.body.contains("\"code\":\"taken\"") == true)
    }

    @Test func tlsServesHTTPSWithHSTS() throws {
        let directory = NSTemporaryDirectory() + "reclaim-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let openssl = try run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
            ])
        #expect(openssl.status == 0)
        let certificate = try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)
        let key = try String(contentsOfFile: directory + "/key.pem", encoding: .utf8)

        let server = try TestServer(
            routes: [Self.hello],
            configure: {
                $0.tlsCertificatePEM = certificate
                $0.tlsKeyPEM = key
            })
        defer { server.stop() }
        let curl = try run("/usr/bin/curl", ["-sk", "-i", "--max-time", "5", "https://127.0.0.1:\(server.port)/hello"])
        #expect(curl.status == 0)
        #expect(curl.output.hasPrefix("HTTP/1.1 200"))
        #expect(curl.output.contains("Strict-Transport-Security: max-age=63072000; includeSubDomains"))
        #expect(curl.output.hasSuffix("hello"))
        // Plain HTTP to the TLS port gets no HTTP answer.
        let plain = try? server.client(timeout: 2).request("GET", "/hello")
        #expect(plain == nil || plain?.status != 200)
    }

    @Test func badTLSKeyFailsToStart() throws {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, tlsCertificatePEM: "not a certificate", tlsKeyPEM: "not a key"),
            router: Router(routes: [Self.hello]), logger: .discard, metrics: RequestMetrics()
        )
        #expect(throws: HTTPServerError.self) { try server.start() }
    }

    private func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
    }
}
