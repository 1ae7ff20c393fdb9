import Crypto
import Foundation
import HTTPServer
import Logging
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimAPI

/// A server with the service's real middleware (auth, idempotency) and test-only routes, on a
/// TestService's database, keys and clock: API-client signatures and idempotency before any product
/// route takes API clients.
final class MiddlewareHarness: @unchecked Sendable {
    let service: TestService
    let server: HTTPServer
    let state = HarnessState()

    init(policy: IdentityPolicy = .standard) throws {
        service = try TestService()
        let context = service.service.context
        let state = self.state
        let count: @Sendable (String) -> Int = { name in
            state.runs.withLock {
                $0[name, default: 0] += 1
                return $0[name]!
            }
        }
        let routes = [
            // Like a product route: the work and its answer in `transaction(for:)`, with the key.
            Route(.POST, "/test/create") { request in
                let principal = try context.authorize(.createCase, request)
                return try context.transaction(for: request) { _ in
                    let n = count("create")
                    // A fresh secret each run, like a case's access code: a replay must return the first one.
                    let secret = SecureRandom.token(byteCount: 12)
                    var response = HTTPResponse.json(
                        201, body: Array("{\"run\":\(n),\"secret\":\"\(secret)\",\"actor\":\"\(principal.actor)\"}".utf8))
                    response.setHeader("Location", "/test/things/\(n)")
                    response.setHeader("ETag", "\"\(n)\"")
                    response.setHeader("X-Not-Stored", "run-\(n)")
                    return response
                }
            },
            Route(.POST, "/test/flaky") { request in
                _ = try context.requirePrincipal(request)
                return try context.transaction(for: request) { _ in
                    _ = count("flaky")
                    let status = state.flakyStatus.withLock { $0 }
                    if status >= 400 { throw Problem(TestFailure(status: status)) }
                    return HTTPResponse.json(status, body: Array("{\"ok\":true}".utf8))
                }
            },
            Route(.POST, "/test/slow") { request in
                _ = try context.requirePrincipal(request)
                return try context.transaction(for: request) { _ in
                    _ = count("slow")
                    Thread.sleep(forTimeInterval: state.slowSeconds.withLock { $0 })
                    return HTTPResponse.json(201, body: Array("{\"slow\":true}".utf8))
                }
            },
            // Deferred: answered from another queue, behind the same middleware as every route.
            Route(
                .POST, "/test/deferred",
                deferred: { request, completion in
                    let n = count("deferred")
                    DispatchQueue.global().async {
                        completion(
                            .success(HTTPResponse.json(201, body: Array("{\"run\":\(n),\"secret\":\"\(SecureRandom.token(byteCount: 12))\"}".utf8))))
                    }
                }),
            Route(.GET, "/test/whoami") { request in
                HTTPResponse.text(request.principal?.actor ?? "nobody")
            },
        ]
        server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 4),
            router: Router(routes: routes),
            middleware: [AuthMiddleware(context: context), IdempotencyMiddleware(context: context, policy: policy)],
            logger: Logger(sink: service.log, minimumLevel: .info), metrics: RequestMetrics())
        try server.start()
    }

    func client() -> TestHTTPClient { TestHTTPClient(host: "127.0.0.1", port: server.boundPort) }

    func runCount(_ name: String) -> Int { state.runs.withLock { $0[name, default: 0] } }

    /// A signed POST; `timestamp` defaults to the latest second up to the service's now not yet used, so two
    /// identical requests never carry identical signatures (the replay store would refuse the second).
    func post(
        _ client: NewAPIClient, _ target: String, body: String, timestamp: Int64? = nil, extra: [(String, String)] = [],
        signatureFor signedBody: String? = nil
    ) throws -> TestHTTPResponse {
        let now = Int64(service.clock.now().timeIntervalSince1970)
        let t =
            timestamp
            ?? state.usedTimestamps.withLock { used in
                var t = now
                while used.contains(t) { t -= 1 }
                used.insert(t)
                return t
            }
        var headers = service.clientHeaders(client, method: "POST", target: target, body: Array((signedBody ?? body).utf8), timestamp: t)
        headers.append(("Content-Type", "application/json"))
        headers.append(contentsOf: extra)
        return try self.client().request("POST", target, headers: headers, body: Array(body.utf8))
    }

    func stop() {
        server.shutdown()
        service.stop()
    }
}

/// What the harness's test routes share.
final class HarnessState: Sendable {
    /// How many times the handler of each test route ran.
    let runs = Mutex<[String: Int]>([:])
    /// What /test/flaky answers next.
    let flakyStatus = Mutex(500)
    /// How long /test/slow works.
    let slowSeconds = Mutex<TimeInterval>(0.6)
    /// Timestamps already signed with by `post`: each call takes the latest unused second up to now.
    let usedTimestamps = Mutex<Set<Int64>>([])
}

@Suite struct SignatureTests {
    @Test func aSignedPostIsAcceptedAndResolvesTheClient() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let response = try harness.post(client, "/test/create?source=app&x=%20y", body: #"{"a":1}"#)
        #expect(response.status == 201)
        #expect(try response.value()["actor"] == .string("client:\(client.id.uuidString.lowercased())"))
        // GETs need only the key.
        let whoami = try harness.client().request("GET", "/test/whoami", headers: [("Authorization", "Bearer \(client.apiKey)")])
        #expect(whoami.text == "client:\(client.id.uuidString.lowercased())")
    }

    @Test func aTamperedBodyOrTargetIsAnInvalidSignature() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let body = try harness.post(client, "/test/create", body: #"{"amount":1000}"#, signatureFor: #"{"amount":10}"#)
        #expect(body.status == 401)
        #expect(try body.problem().code == "invalid_signature")
        // Signed for one target, sent to another (query changed).
        let t = Int64(harness.service.clock.now().timeIntervalSince1970)
        let signature = RequestSignature.header(
            secret: Array(client.signingSecret.utf8), timestamp: t, method: "POST", target: "/test/create?a=1", body: [])
        let target = try harness.client().request(
            "POST", "/test/create?a=2", headers: [("Authorization", "Bearer \(client.apiKey)"), ("Reclaim-Signature", signature)])
        #expect(try target.problem().code == "invalid_signature")
        // Missing and malformed headers.
        let missing = try harness.client().request("POST", "/test/create", headers: [("Authorization", "Bearer \(client.apiKey)")])
        #expect(missing.status == 401)
        #expect(try missing.problem().code == "invalid_signature")
        let malformed = try harness.client().request(
            "POST", "/test/create", headers: [("Authorization", "Bearer \(client.apiKey)"), ("Reclaim-Signature", "t=abc,v1=zz")])
        #expect(try malformed.problem().code == "invalid_signature")
        // Another client's secret.
        let other = try harness.service.addClient(name: "Other")
        let foreign = RequestSignature.header(secret: Array(other.signingSecret.utf8), timestamp: t, method: "POST", target: "/test/create", body: [])
        let wrongSecret = try harness.client().request(
            "POST", "/test/create", headers: [("Authorization", "Bearer \(client.apiKey)"), ("Reclaim-Signature", foreign)])
        #expect(try wrongSecret.problem().code == "invalid_signature")
        #expect(harness.runCount("create") == 0)
    }

    /// The window is 300 s either way; the margins are wide because `now` is floored to the second and a loaded
    /// machine may take seconds between reading the clock and the service checking the signature.
    @Test func signaturesBeyondFiveMinutesOldOrAheadAreStale() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let now = Int64(harness.service.clock.now().timeIntervalSince1970)
        let old = try harness.post(client, "/test/create", body: "{}", timestamp: now - 330)
        #expect(old.status == 401)
        #expect(try old.problem().code == "stale_signature")
        let ahead = try harness.post(client, "/test/create", body: "{}", timestamp: now + 330)
        #expect(ahead.status == 401)
        #expect(try ahead.problem().code == "stale_signature")
        // Just inside the window either way.
        #expect(try harness.post(client, "/test/create", body: "{}", timestamp: now - 270).status == 201)
        #expect(try harness.post(client, "/test/create", body: "{}", timestamp: now + 270).status == 201)
    }

    @Test func aReplayedRequestIsRefused() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let headers =
            harness.service.clientHeaders(client, method: "POST", target: "/test/create", body: Array("{}".utf8)) + [
                ("Content-Type", "application/json")
            ]
        #expect(try harness.client().request("POST", "/test/create", headers: headers, body: Array("{}".utf8)).status == 201)
        let replay = try harness.client().request("POST", "/test/create", headers: headers, body: Array("{}".utf8))
        #expect(replay.status == 401)
        #expect(try replay.problem().code == "replayed_signature")
        // Even after the window has passed, the same request is stale, never accepted again.
        harness.service.clock.advance(by: 302)
        let later = try harness.client().request("POST", "/test/create", headers: headers, body: Array("{}".utf8))
        #expect(try later.problem().code == "stale_signature")
        #expect(harness.runCount("create") == 1)
    }

    @Test func unknownAndRevokedKeysAre401() throws {
        let harness = try MiddlewareHarness()
        defer { harness.stop() }
        let client = try harness.service.addClient()
        let unknown = try harness.client().request("GET", "/test/whoami", headers: [("Authorization", "Bearer rk_not-a-real-key")])
        #expect(unknown.status == 401)
        #expect(try unknown.problem().code == "unauthenticated")
        try harness.service.identityAdministration.revokeClient(id: client.id, now: harness.service.clock.now())
        let revoked = try harness.post(client, "/test/create", body: "{}")
        #expect(revoked.status == 401)
        #expect(try revoked.problem().code == "unauthenticated")
        let notBearer = try harness.client().request("GET", "/test/whoami", headers: [("Authorization", "Basic abc")])
        #expect(notBearer.status == 401)
    }

    @Test func signatureFormatMatchesTheContract() {
        // HMAC-SHA256(secret, "<t>.<METHOD>.<target>.<body>") in lower-case hex, computed independently.
        let secret = Array("s3cr3t".utf8)
        let expected = Hex.encode(HMACSHA256.authenticate(message: Array("1700000000.POST./api/v1/cases?x=1.{\"a\":1}".utf8), key: secret))
        #expect(
            RequestSignature.header(
                secret: secret, timestamp: 1_700_000_000, method: "POST", target: "/api/v1/cases?x=1", body: Array("{\"a\":1}".utf8))
                == "t=1700000000,v1=\(expected)")
        #expect(RequestSignature.parse("t=1,v1=\(expected),v0=ignored")?.timestamp == 1)
        #expect(RequestSignature.parse("v1=\(expected)") == nil)
        #expect(RequestSignature.parse("t=1,v1=abcd") == nil)
    }
}

/// A problem of any status, for the test route that fails on request.
struct TestFailure: ProblemKind {
    let status: Int
    var code: String { "test_failure" }
    var title: String { "Test failure" }
}
