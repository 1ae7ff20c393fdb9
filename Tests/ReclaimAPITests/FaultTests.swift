import Crypto
import Foundation
import Logging
import Postgres
import ReclaimTestSupport
import Synchronization
import Testing

@testable import HTTPServer
@testable import ReclaimAPI

/// Issue 15, "nothing lost, nothing twice": machines failing under load, each fault bounded in count and time, on loopback.
@Suite(.serialized) struct FaultTests {
    // MARK: kill -9 of `reclaim serve` under keyed writes

    /// What each writer sent under one key, and what (if anything) came back.
    final class Ledger: Sendable {
        struct Entry: Sendable {
            let body: String
            var caseNumber: String?
        }
        let entries = Mutex<[String: Entry]>([:])
    }

    @Test func killNineUnderKeyedWritesThenImmediateRetriesDuplicateNothingAndLoseNothing() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "reclaim-fault-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = [
            "PATH": "/usr/bin:/bin", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations", "RECLAIM_KEY_FILE": directory + "/keys",
            "DATABASE_URL": database.connectionString, "RECLAIM_THREADS": "2", "RECLAIM_LOG_LEVEL": "warning",
        ]
        _ = try Shell.run([RepositoryPaths.executable, "keys", "generate", "--output", directory + "/keys"], environment: environment)
        let pool = database.makePool(maximumConnections: 1)
        let client = try IdentityAdministration(pool: pool, keys: try KeyFile.load(path: directory + "/keys")).addClient(name: "Fault", now: Date())
        pool.close()

        let port = Int.random(in: 30000...39999)
        func serve() throws -> Process {
            // Bounded by a deadline (30 s), its log shown when it does not come up (a loaded machine, a taken port).
            try ServeProcess(environment: environment, port: port, logDirectory: directory).process
        }
        @Sendable func post(_ key: String, _ body: String, timestamp: Int64) throws -> TestHTTPResponse {
            let signature = RequestSignature.header(
                secret: Array(client.signingSecret.utf8), timestamp: timestamp, method: "POST",
                target: "/api/v1/cases", body: Array(body.utf8))
            return try TestHTTPClient(host: "127.0.0.1", port: port, timeout: 5).request(
                "POST", "/api/v1/cases",
                headers: [
                    ("Authorization", "Bearer \(client.apiKey)"), ("Reclaim-Signature", signature), ("Content-Type", "application/json"),
                    ("Idempotency-Key", key),
                ], body: Array(body.utf8))
        }

        var process = try serve()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        let ledger = Ledger()
        let stop = Atomic<Bool>(false)
        let writers = DispatchGroup()
        for writer in 0..<4 {
            writers.enter()
            Thread {
                defer { writers.leave() }
                var n = 0
                while !stop.load(ordering: .acquiring) && n < 2000 {
                    let key = "w\(writer)-\(n)"
                    n += 1
                    let body =
                        #"{"kind":"account_takeover","account_email":"v\#(writer)-\#(n)@example.com","customer":{"name":"Ada","contact_email":"a@example.net"},"summary":"\#(key)"}"#
                    ledger.entries.withLock { $0[key] = Ledger.Entry(body: body, caseNumber: nil) }
                    guard let response = try? post(key, body, timestamp: Int64(Date().timeIntervalSince1970)), response.status == 201,
                        let number = try? response.json()["case_number"] as? String
                    else { continue }
                    ledger.entries.withLock { $0[key]?.caseNumber = number }
                }
            }.start()
        }
        // Killed once the writers are busy: a hundred cases acknowledged (however long a loaded machine takes).
        eventually(30) { ledger.entries.withLock { $0.values.filter { $0.caseNumber != nil }.count } >= 100 }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        stop.store(true, ordering: .releasing)
        writers.wait()
        process = try serve()

        // Every key sent, acknowledged or not, retried at once (signed 100 s back: a new signature, same key and body).
        let sent = ledger.entries.withLock { $0 }
        var replayed = 0
        var changed = 0
        var failed = 0
        var refusals: [String] = []
        for (key, entry) in sent {
            var retry = try post(key, entry.body, timestamp: Int64(Date().timeIntervalSince1970) - 100)
            // A request in flight at the kill may still hold its key's row lock until PostgreSQL notices the dead
            // client: 409 idempotency_in_progress says so, and a client retries it (bounded).
            for _ in 0..<5 where retry.status == 409 {
                retry = try post(key, entry.body, timestamp: Int64(Date().timeIntervalSince1970) - 100)
            }
            if retry.status != 201 { refusals.append("\(retry.status) \(retry.text.prefix(120))") }
            guard retry.status == 201, let number = try retry.json()["case_number"] as? String else {
                failed += 1
                continue
            }
            if retry.header("Idempotent-Replayed") == "true" { replayed += 1 }
            if let first = entry.caseNumber, first != number { changed += 1 }
        }
        let acknowledged = sent.values.filter { $0.caseNumber != nil }.count
        let connection = try database.connect()
        defer { connection.close() }
        let cases = try connection.query("SELECT count(*) AS n, count(DISTINCT summary) AS keys FROM cases")[0]
        let stored = try cases.decode("n", as: Int.self)
        print(
            "fault kill-9: sent \(sent.count) keys, \(acknowledged) acknowledged before the kill; after restart \(replayed) replayed; "
                + "\(stored) cases stored")
        #expect(acknowledged > 20, "the writers must have been busy when the process died")
        #expect(failed == 0, "\(refusals)")
        #expect(changed == 0, "a retry must answer with the case its first request created")
        #expect(stored == sent.count, "one case per key: none lost, none twice")
        #expect(try cases.decode("keys", as: Int.self) == stored)
    }

    // MARK: PostgreSQL restarted, idle and busy

    @Test func postgresRestartedIdleThenBusyFailsNoRequestOnceItIsBack() throws {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let configuration = try ServiceConfiguration.fromEnvironment(
            cluster.databaseEnvironment.merging([
                "RECLAIM_ADDRESS": "127.0.0.1:0",
                "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
                "RECLAIM_THREADS": "2",
            ]) { $1 })
        let service = try ReclaimService(configuration: configuration, keys: nil, logger: Logger(sink: MemorySink()))
        try service.start()
        defer { service.shutdown() }
        let client = TestHTTPClient(host: "127.0.0.1", port: service.port, timeout: 5)
        // Warm every worker's connection.
        for _ in 0..<20 { #expect(try client.request("GET", "/readyz").status == 200) }

        // Idle: nothing runs while it restarts; every request after is answered.
        try cluster.restart()
        var idleFailures = 0
        for _ in 0..<24 where try client.request("GET", "/readyz").status != 200 { idleFailures += 1 }
        #expect(idleFailures == 0, "after an idle restart no request may fail")

        // Busy: 4 clients keep asking while it restarts; requests started once it is back must all succeed.
        let back = Atomic<UInt64>(UInt64.max)
        let stop = Atomic<Bool>(false)
        let during = Atomic<Int>(0)
        let after = Atomic<Int>(0)
        let failedAfter = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                let http = TestHTTPClient(host: "127.0.0.1", port: service.port, timeout: 5)
                while !stop.load(ordering: .acquiring) {
                    let started = monotonicNanos()
                    let status = (try? http.request("GET", "/readyz").status) ?? -1
                    if started > back.load(ordering: .acquiring) {
                        after.add(1, ordering: .relaxed)
                        if status != 200 { failedAfter.add(1, ordering: .relaxed) }
                    } else if status != 200 {
                        during.add(1, ordering: .relaxed)
                    }
                }
            }.start()
        }
        Thread.sleep(forTimeInterval: 0.3)
        try cluster.restart()
        back.store(monotonicNanos(), ordering: .releasing)
        Thread.sleep(forTimeInterval: 1.5)
        stop.store(true, ordering: .releasing)
        group.wait()
        print(
            "fault pg-restart: idle 0/24 failed; busy: \(during.load(ordering: .relaxed)) non-200 while down, "
                + "\(failedAfter.load(ordering: .relaxed))/\(after.load(ordering: .relaxed)) failed once back")
        #expect(after.load(ordering: .relaxed) > 20)
        #expect(failedAfter.load(ordering: .relaxed) == 0, "once PostgreSQL accepts connections again no request may fail")
    }

    // MARK: Slow and greedy clients

    /// A non-blocking TCP connection to 127.0.0.1:port from `source`, with `head` sent and never finished.
    static func slowConnection(from source: String, port: Int, head: String) -> Int32 {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return -1 }
        var local = sockaddr_in(family: source, port: 0)
        var remote = sockaddr_in(family: "127.0.0.1", port: port)
        _ = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard
            withUnsafePointer(
                to: &remote,
                { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0
        else {
            close(socket)
            return -1
        }
        _ = head.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return socket
    }

    /// A whole GET from `source`: its status (nil on close or timeout) and the time it took.
    static func timedGet(from source: String, port: Int, path: String = "/healthz") -> (status: Int?, seconds: Double) {
        let started = Date()
        let socket = slowConnection(from: source, port: port, head: "GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        guard socket >= 0 else { return (nil, Date().timeIntervalSince(started)) }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(socket, &buffer, buffer.count, 0)
        let seconds = Date().timeIntervalSince(started)
        guard count > 12 else { return (nil, seconds) }
        return (Int(String(decoding: buffer[9..<12], as: UTF8.self)), seconds)
    }

    /// The process may hold a few thousand sockets (the test's and the server's ends).
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 16384))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    @Test func twoThousandSlowConnectionsFromOneAddressLeaveAnotherAddressServedWithinOneSecond() throws {
        Self.raiseOpenFileLimit()
        // The service's own defaults: no trusted proxy, so the per-address limit is on.
        let service = try TestService()
        defer { service.stop() }
        #expect(service.service.configuration.maxConnectionsPerIP == 64)
        let port = service.service.port
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for n in 0..<2000 {
            // Half slowloris (a head never finished), half slow bodies (a promised body never sent).
            let head =
                n % 2 == 0
                ? "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: " : "POST /api/v1/status HTTP/1.1\r\nHost: t\r\nContent-Length: 4000\r\n\r\n{"
            let socket = Self.slowConnection(from: "127.0.0.1", port: port, head: head)
            if socket >= 0 { sockets.append(socket) }
        }
        var slowest = 0.0
        for _ in 0..<10 {
            let (status, seconds) = Self.timedGet(from: "127.0.0.2", port: port)
            #expect(status == 200)
            slowest = max(slowest, seconds)
        }
        print(
            "fault slow-clients: \(sockets.count) connections opened from 127.0.0.1, \(service.service.openConnections) held by the server; "
                + "127.0.0.2 answered in at most \(Int(slowest * 1000)) ms")
        #expect(slowest < 1, "another address must be served within 1 s")
        #expect(service.service.openConnections <= 64 + 12)
    }

    @Test func aTricklingHeadAndAStalledBodyAreCutAtTheirDeadlines() throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2)
        configuration.headTimeoutSeconds = 0.5
        configuration.bodyTimeoutSeconds = 0.5
        let server = HTTPServer(
            configuration: configuration,
            router: Router(routes: [
                Route(.GET, "/ok") { _ in HTTPResponse.text("ok") }, Route(.POST, "/ok") { _ in HTTPResponse.text("ok") },
            ]), logger: Logger(sink: MemorySink()), metrics: RequestMetrics())
        try server.start()
        defer { server.shutdown() }
        func closedWithin(_ seconds: Double, trickling head: String, _ drip: String) -> Double? {
            let socket = Self.slowConnection(from: "127.0.0.3", port: server.boundPort, head: head)
            defer { close(socket) }
            let started = Date()
            // One byte every 100 ms: never idle for MHD's 15 s timeout, so only the deadline can end it.
            while Date().timeIntervalSince(started) < seconds {
                var byte = [UInt8](repeating: 0, count: 64)
                if recv(socket, &byte, byte.count, Int32(MSG_DONTWAIT)) == 0 { return Date().timeIntervalSince(started) }
                _ = drip.withCString { send(socket, $0, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                usleep(100_000)
            }
            return nil
        }
        let head = closedWithin(3, trickling: "GET /ok HTTP/1.1\r\n", "X")
        let body = closedWithin(3, trickling: "POST /ok HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n", "b")
        #expect(head.map { $0 < 1.5 } == true, "a trickling head must be cut at the head deadline, was \(String(describing: head))")
        #expect(body.map { $0 < 1.5 } == true, "a trickling body must be cut at the body deadline, was \(String(describing: body))")
        // The guard counts a cut after closing the socket: give it a moment (bounded) to record the second one.
        let counted = Date().addingTimeInterval(2)
        while server.connectionsTimedOut < 2, Date() < counted { usleep(20_000) }
        #expect(server.connectionsTimedOut >= 2)
        // A keep-alive client that asks promptly is never cut.
        let prompt = TestHTTPClient(host: "127.0.0.1", port: server.boundPort, keepAlive: true)
        for _ in 0..<3 {
            #expect(try prompt.request("GET", "/ok").status == 200)
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    @Test func aFullServerAnswersNewClientsAtOnceInsteadOfLeavingThemWaiting() throws {
        Self.raiseOpenFileLimit()
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2, maxConnections: 40)
        configuration.headTimeoutSeconds = 30
        let server = HTTPServer(
            configuration: configuration, router: Router(routes: [Route(.GET, "/ok") { _ in HTTPResponse.text("ok") }]),
            logger: Logger(sink: MemorySink()), metrics: RequestMetrics())
        try server.start()
        defer { server.shutdown() }
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for _ in 0..<40 { sockets.append(Self.slowConnection(from: "127.0.0.1", port: server.boundPort, head: "GET /ok HTTP/1.1\r\n")) }
        #expect(eventually(5) { server.openConnections == 40 })
        // Within the overflow allowance: 503 with Retry-After at once.
        let (status, seconds) = Self.timedGet(from: "127.0.0.2", port: server.boundPort, path: "/ok")
        #expect(status == 503)
        #expect(seconds < 1)
        // Beyond it: closed at accept, at once.
        for _ in 0..<ConnectionGuard.overflowAllowance(40) + 4 {
            sockets.append(Self.slowConnection(from: "127.0.0.1", port: server.boundPort, head: "GET /ok HTTP/1.1\r\n"))
        }
        #expect(eventually(5) { server.connectionsRefused >= 1 })
        let (refused, refusedSeconds) = Self.timedGet(from: "127.0.0.2", port: server.boundPort, path: "/ok")
        #expect(refused == nil || refused == 503)
        #expect(refusedSeconds < 1)
        #expect(server.connectionsRefused >= 1)
        // Once the slow ones go, new clients are served again.
        for socket in sockets { close(socket) }
        sockets = []
        #expect(eventually(5) { server.openConnections == 0 })
        #expect(Self.timedGet(from: "127.0.0.2", port: server.boundPort, path: "/ok").status == 200)
    }

    // MARK: Notes

    @Test func aNoteRetriedWithTheSameKeyAfterItsAnswerWasLostIsStoredOnce() throws {
        let world = try TestService()
        defer { world.stop() }
        let agent = try world.signIn(tier: .tier1)
        let client = try world.addClient()
        let body = Array(
            #"{"kind":"account_takeover","account_email":"n@example.com","customer":{"name":"Ada","contact_email":"a@example.net"}}"#.utf8)
        let opened = try world.client().request(
            "POST", "/api/v1/cases",
            headers: world.clientHeaders(client, method: "POST", target: "/api/v1/cases", body: body)
                + [("Content-Type", "application/json")], body: body)
        let number = try #require(try opened.json()["case_number"] as? String)
        let target = "/api/v1/cases/\(number)/notes"
        let note = #"{"body":"Called the customer back.","visibility":"internal"}"#
        let headers = agent.headers + [("Content-Type", "application/json"), ("Idempotency-Key", "note-1")]
        // The first answer is lost: the client hangs up as soon as the request is sent.
        var head = "POST \(target) HTTP/1.1\r\nHost: t\r\nContent-Length: \(note.utf8.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        close(Self.slowConnection(from: "127.0.0.1", port: world.service.port, head: head + "\r\n" + note))
        let connection = try world.database.connect()
        defer { connection.close() }
        let deadline = Date().addingTimeInterval(3)
        while try connection.query("SELECT 1 FROM case_notes").count == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let retry = try world.client().request("POST", target, headers: headers, body: Array(note.utf8))
        #expect(retry.status == 201)
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(try connection.query("SELECT 1 FROM case_notes").count == 1)
        // Another key is another note; the same key with another body is refused.
        let other = agent.headers + [("Content-Type", "application/json"), ("Idempotency-Key", "note-2")]
        #expect(try world.client().request("POST", target, headers: other, body: Array(note.utf8)).status == 201)
        let mismatch = try world.client().request("POST", target, headers: headers, body: Array(#"{"body":"Else.","visibility":"internal"}"#.utf8))
        #expect(mismatch.status == 422)
        #expect(try connection.query("SELECT 1 FROM case_notes").count == 2)
        // /openapi.json declares the header on notes.
        let document = try world.client().request("GET", "/openapi.json").json()
        let paths = try #require(document["paths"] as? [String: Any])
        let notes = try #require((paths["/api/v1/cases/{case_number}/notes"] as? [String: Any])?["post"] as? [String: Any])
        let parameters = (notes["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(parameters.contains("Idempotency-Key"))
    }
}

extension PrivateCluster {
    /// A clean restart (fast shutdown: sessions are ended, then started again).
    func restart() throws {
        try Shell.run([RepositoryPaths.root + "/deploy/pg", "stop", directory])
        try start()
    }
}

extension sockaddr_in {
    /// An IPv4 loopback address (`127.x.y.z`) and port.
    init(family address: String, port: Int) {
        self.init()
        sin_family = sa_family_t(AF_INET)
        sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, address, &sin_addr)
    }
}
