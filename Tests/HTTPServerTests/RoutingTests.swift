import Foundation
import HTTPServer
import Logging
import ReclaimTestSupport
import Testing

/// An error the mapper below turns into a 409.
struct LockedError: Error {}

/// An error nothing maps: must become a plain 500 without its text.
struct SecretLeakingError: Error, CustomStringConvertible {
    var description: String { "database password is hunter2" }
}

/// A problem with extra members and headers, as the API's factor outcomes will be.
struct LockedOut: HTTPProblem {
    var status: Int { 423 }
    var code: String { "locked_out" }
    var title: String { "Locked Out" }
    var detail: String? { "Too many attempts." }
    var extraHeaders: [(String, String)] { [("Retry-After", "60")] }
    var extraMembers: [String: any Sendable & Encodable] { ["attempts_left": 0, "factors": ["email": "failed"]] }
}

struct NewNote: Codable, Sendable {
    let text: String
    let pinned: Bool
    let due: Date?
}

@Suite(.serialized) struct RoutingTests {
    static let routes: [Route] = [
        Route(.GET, "/hello") { _ in .text("hello") },
        Route(.GET, "/api/v1/cases/{case_number}") { request in
            try .json([
                "case_number": request.parameter("case_number") ?? "", "q": request.query("q") ?? "", "target": request.target, "path": request.path,
            ])
        },
        Route(.GET, "/api/v1/cases/new") { _ in .text("literal") },
        Route(.POST, "/api/v1/cases/{id}/notes") { request in
            let note = try request.decodeJSON(NewNote.self)
            return try .json(note, status: 201)
        },
        Route(.DELETE, "/api/v1/cases/{id}/notes") { _ in .noContent() },
        Route(.GET, "/problem/validation") { _ in
            throw Problem.unprocessable(errors: [FieldError(field: "email", message: "must contain @")])
        },
        Route(.GET, "/problem/custom") { _ in throw LockedOut() },
        Route(.GET, "/problem/mapped") { _ in throw LockedError() },
        Route(.GET, "/problem/unknown") { _ in throw SecretLeakingError() },
        Route(.GET, "/problem/throttled") { _ in throw Problem.tooManyRequests(retryAfter: 7) },
        Route(.GET, "/own-headers") { _ in
            HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "text/html"), ("Content-Security-Policy", "default-src 'none'"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
                ], body: Array("<p>".utf8))
        },
        Route(.POST, "/echo") { request in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: request.body)
        },
    ]

    static let mapper: @Sendable (any Error) -> (any HTTPProblem)? = { error in
        error is LockedError ? Problem.conflict(code: TestProblem.caseLocked, detail: "The case is locked.") : nil
    }

    func makeServer(middleware: [any HTTPMiddleware] = []) throws -> TestServer {
        try TestServer(routes: Self.routes, middleware: middleware, errorMapper: Self.mapper)
    }

    @Test func parametersQueryAndRawTarget() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()
        let hello = try client.request("GET", "/hello")
        #expect(hello.status == 200)
        #expect(hello.text == "hello")
        #expect(hello.header("Content-Type") == "text/plain; charset=utf-8")

        let found = try client.request("GET", "/api/v1/cases/RC-2024%2F7?q=a+b%26c&x=%E2%9C%93")
        #expect(found.status == 200)
        let json = try found.json()
        // %2F stays inside the one segment it encodes.
        #expect(json["case_number"] as? String == "RC-2024/7")
        #expect(json["q"] as? String == "a b&c")
        #expect(json["target"] as? String == "/api/v1/cases/RC-2024%2F7?q=a+b%26c&x=%E2%9C%93")
        #expect(json["path"] as? String == "/api/v1/cases/RC-2024/7")

        // A literal segment wins over a parameter; a parameter route still serves other methods.
        #expect(try client.request("GET", "/api/v1/cases/new").text == "literal")
        let note = try client.request("POST", "/api/v1/cases/new/notes", json: ["text": "hi", "pinned": true])
        #expect(note.status == 201)
    }

    @Test func notFoundAndMethodNotAllowedAreProblems() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()

        let missing = try client.request("GET", "/nope")
        #expect(missing.status == 404)
        #expect(missing.header("Content-Type") == "application/problem+json")
        #expect(missing.header("Cache-Control") == "no-store")
        let problem = try missing.json()
        #expect(problem["type"] as? String == "urn:reclaim:problem:not_found")
        #expect(problem["code"] as? String == "not_found")
        #expect(problem["status"] as? Int == 404)
        #expect(problem["title"] as? String == "Not Found")
        #expect(problem["request_id"] as? String == missing.header("X-Request-Id"))

        let wrongMethod = try client.request("PUT", "/hello")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")
        #expect(try wrongMethod.json()["code"] as? String == "method_not_allowed")

        let notes = try client.request("GET", "/api/v1/cases/X/notes")
        #expect(notes.status == 405)
        #expect(notes.header("Allow") == "POST, DELETE")

        // A method no route uses is refused like any other the path does not accept (api.md v1.1).
        let unknownMethod = try client.request("BREW", "/hello")
        #expect(unknownMethod.status == 405)
        #expect(unknownMethod.header("Allow") == "GET, HEAD")
        #expect(try unknownMethod.json()["code"] as? String == "method_not_allowed")

        // A trailing slash is a different path.
        #expect(try client.request("GET", "/hello/").status == 404)
    }

    @Test func headIsAnsweredByGetRoutesWithoutBody() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        let head = try client.request("HEAD", "/hello")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == "5")
        #expect(head.header("X-Request-Id") != nil)
        // The connection is still in step: the next response is read correctly.
        #expect(try client.request("GET", "/hello").text == "hello")
        #expect(client.connectionsOpened == 1)
    }

    @Test func problemsRenderInOnePlace() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()

        let validation = try client.request("GET", "/problem/validation")
        #expect(validation.status == 422)
        let errors = try validation.json()["errors"] as? [[String: String]]
        #expect(errors == [["field": "email", "message": "must contain @"]])

        let custom = try client.request("GET", "/problem/custom")
        #expect(custom.status == 423)
        #expect(custom.header("Retry-After") == "60")
        let customJSON = try custom.json()
        #expect(customJSON["attempts_left"] as? Int == 0)
        #expect((customJSON["factors"] as? [String: String])?["email"] == "failed")
        #expect(customJSON["detail"] as? String == "Too many attempts.")
        #expect(customJSON["title"] as? String == "Locked Out")

        let mapped = try client.request("GET", "/problem/mapped")
        #expect(mapped.status == 409)
        #expect(try mapped.json()["code"] as? String == "case_locked")

        let throttled = try client.request("GET", "/problem/throttled")
        #expect(throttled.status == 429)
        #expect(throttled.header("Retry-After") == "7")

        let unknown = try client.request("GET", "/problem/unknown")
        #expect(unknown.status == 500)
        let unknownJSON = try unknown.json()
        #expect(unknownJSON["code"] as? String == "internal_error")
        #expect(unknownJSON["request_id"] as? String == unknown.header("X-Request-Id"))
        #expect(!unknown.text.contains("hunter2"))
        // The real error is in the log, tied to the request id.
        let logged = server.logLines(event: "unhandled_error")
        #expect(logged.count == 1)
        #expect(logged.first?["request_id"] as? String == unknown.header("X-Request-Id"))
        #expect((logged.first?["error"] as? String)?.contains("hunter2") == true)
    }

    @Test func jsonBodiesAreCheckedAndDecoded() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()
        let path = "/api/v1/cases/RC-1/notes"

        let wrongType = try client.request("POST", path, headers: [("Content-Type", "text/plain")], body: Array("{}".utf8))
        #expect(wrongType.status == 415)
        #expect(try wrongType.json()["code"] as? String == "unsupported_media_type")

        let noType = try client.request("POST", path, body: Array("{}".utf8))
        #expect(noType.status == 415)

        let invalid = try client.request("POST", path, headers: [("Content-Type", "application/json")], body: Array("{\"text\": ".utf8))
        #expect(invalid.status == 400)
        #expect(try invalid.json()["code"] as? String == "malformed_json")

        // RFC 8259 strictly: a trailing comma is not JSON (Foundation would take it); a repeated key is 422 naming it.
        let trailing = try client.request(
            "POST", path, headers: [("Content-Type", "application/json")], body: Array("{\"text\":\"x\",\"pinned\":true,}".utf8))
        #expect(trailing.status == 400)
        #expect(try trailing.json()["code"] as? String == "malformed_json")
        let repeated = try client.request(
            "POST", path, headers: [("Content-Type", "application/json")],
            body: Array("{\"text\":\"x\",\"pinned\":true,\"text\":\"y\"}".utf8))
        #expect(repeated.status == 422)
        #expect(try repeated.json()["code"] as? String == "validation_failed")
        #expect((try repeated.json()["errors"] as? [[String: String]])?.map { $0["field"] } == ["text"])

        let missing = try client.request(
            "POST", path, headers: [("Content-Type", "application/json; charset=utf-8")], body: Array("{\"text\":\"x\"}".utf8))
        #expect(missing.status == 422)
        let missingErrors = try missing.json()["errors"] as? [[String: String]]
        #expect(missingErrors?.first?["field"] == "pinned")

        let wrongField = try client.request(
            "POST", path, headers: [("Content-Type", "application/json")], body: Array("{\"text\":5,\"pinned\":true}".utf8))
        #expect(wrongField.status == 422)
        #expect((try wrongField.json()["errors"] as? [[String: String]])?.first?["field"] == "text")

        let latin = try client.request("POST", path, headers: [("Content-Type", "application/json; charset=latin1")], body: Array("{}".utf8))
        #expect(latin.status == 415)

        let good = try client.request(
            "POST", path, headers: [("Content-Type", "Application/JSON; charset=\"UTF-8\"")],
            body: Array("{\"text\":\"a/b\",\"pinned\":false,\"due\":\"2026-01-02T03:04:05Z\"}".utf8))
        #expect(good.status == 201)
        #expect(good.header("Content-Type") == "application/json")
        // Keys as CodingKeys spell them, ISO 8601 dates, slashes unescaped.
        #expect(good.text.contains("\"due\":\"2026-01-02T03:04:05Z\""))
        #expect(good.text.contains("\"text\":\"a/b\""))
        #expect(good.text.contains("\"pinned\":false"))
    }

    @Test func securityHeadersOnEveryResponse() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()
        let csp = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        var ids = Set<String>()
        for target in ["/hello", "/api/v1/cases/RC-1", "/nope", "/problem/unknown", "/api/v1/nope"] {
            let response = try client.request("GET", target)
            #expect(response.header("X-Content-Type-Options") == "nosniff", "\(target)")
            #expect(response.header("Content-Security-Policy") == csp, "\(target)")
            #expect(response.header("Referrer-Policy") == "no-referrer", "\(target)")
            #expect(response.header("Strict-Transport-Security") == nil, "plain HTTP must not send HSTS")
            let id = try #require(response.header("X-Request-Id"))
            #expect(id.count == 16)
            ids.insert(id)
            if target.hasPrefix("/api") || response.status >= 400 {
                #expect(response.header("Cache-Control") == "no-store", "\(target)")
            }
        }
        #expect(ids.count == 5)
        #expect(try client.request("GET", "/hello").header("Cache-Control") == nil)

        // A handler's own policy wins; repeated headers survive.
        let own = try client.request("GET", "/own-headers")
        #expect(own.header("Content-Security-Policy") == "default-src 'none'")
        #expect(own.headers(named: "Content-Security-Policy").count == 1)
        #expect(own.headers(named: "Set-Cookie") == ["a=1", "b=2"])
        #expect(own.header("X-Content-Type-Options") == "nosniff")
    }

    @Test func accessLogHasOneLinePerRequestAndNoSecrets() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()
        _ = try client.request(
            "GET", "/api/v1/cases/RC-9?token=querysecret", headers: [("Authorization", "Bearer authsecret"), ("Cookie", "session=cookiesecret")])
        _ = try client.request("POST", "/echo", headers: [("Content-Type", "text/plain")], body: Array("bodysecret".utf8))
        _ = try client.request("GET", "/nowhere")

        let lines = server.logLines(event: "request")
        #expect(lines.count == 3)
        let first = try #require(lines.first)
        #expect(first["method"] as? String == "GET")
        #expect(first["route"] as? String == "/api/v1/cases/{case_number}")
        #expect(first["path"] as? String == "/api/v1/cases/RC-9")
        #expect(first["status"] as? Int == 200)
        #expect(first["duration_ms"] is Double)
        #expect((first["request_id"] as? String)?.count == 16)
        #expect((first["bytes"] as? Int ?? 0) > 0)
        #expect(lines[1]["route"] as? String == "/echo")
        #expect(lines[1]["bytes"] as? Int == 10)
        #expect(lines[2]["route"] as? String == "unmatched")
        #expect(lines[2]["status"] as? Int == 404)

        let everything = server.log.lines.joined()
        for secret in ["querysecret", "authsecret", "cookiesecret", "bodysecret", "token="] {
            #expect(!everything.contains(secret), "\(secret) leaked into the log")
        }
    }

    @Test func metricsCountRequestsByRoutePattern() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = server.client()
        for number in 1...3 { _ = try client.request("GET", "/api/v1/cases/RC-\(number)") }
        _ = try client.request("GET", "/nope")
        _ = try client.request("HEAD", "/hello")

        #expect(server.metrics.count(method: .GET, route: "/api/v1/cases/{case_number}", status: 200) == 3)
        #expect(server.waitUntilIdle())
        let text = server.metrics.renderPrometheus()
        #expect(text.contains("# TYPE http_requests_total counter"))
        #expect(text.contains("http_requests_total{method=\"GET\",route=\"/api/v1/cases/{case_number}\",status=\"200\"} 3"))
        #expect(text.contains("http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1"))
        #expect(text.contains("http_requests_total{method=\"HEAD\",route=\"/hello\",status=\"200\"} 1"))
        #expect(text.contains("# TYPE http_request_duration_seconds histogram"))
        #expect(text.contains("http_request_duration_seconds_bucket{route=\"/api/v1/cases/{case_number}\",le=\"+Inf\"} 3"))
        #expect(text.contains("http_request_duration_seconds_count{route=\"/api/v1/cases/{case_number}\"} 3"))
        #expect(text.contains("http_request_duration_seconds_sum{route=\"/api/v1/cases/{case_number}\"}"))
        #expect(text.contains("# TYPE http_requests_in_flight gauge"))
        #expect(text.contains("http_requests_in_flight 0"))
        // Buckets are cumulative.
        let buckets = text.split(separator: "\n").filter { $0.hasPrefix("http_request_duration_seconds_bucket{route=\"/hello\"") }
        let counts = buckets.compactMap { Int($0.split(separator: " ").last ?? "") }
        #expect(counts == counts.sorted())
        #expect(!text.contains("RC-1"), "raw paths must not become labels")
    }

    @Test func middlewareWrapsRoutedRequests() throws {
        struct Tagging: HTTPMiddleware {
            func before(_ request: HTTPRequest) throws -> HTTPResponse? {
                if request.header("X-Block") != nil { throw Problem.forbidden(detail: "blocked") }
                request[Caller.self] = "agent-7"
                return nil
            }
            func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
                var tagged = response
                tagged.addHeader("X-Tagged", "yes")
                return tagged
            }
        }
        enum Caller: RequestStorageKey { typealias Value = String }
        let routes = [Route(.GET, "/who") { request in .text(request[Caller.self] ?? "nobody") }]
        let server = try TestServer(routes: routes, middleware: [Tagging()])
        defer { server.stop() }
        let client = server.client()
        let who = try client.request("GET", "/who")
        #expect(who.text == "agent-7")
        #expect(who.header("X-Tagged") == "yes")
        let blocked = try client.request("GET", "/who", headers: [("X-Block", "1")])
        #expect(blocked.status == 403)
        // Unrouted requests do not pass through middleware.
        #expect(try client.request("GET", "/elsewhere").header("X-Tagged") == nil)
    }

    @Test func routerMatchesWithoutSockets() {
        let router = Router(routes: Self.routes)
        guard case .found(let route, let parameters) = router.match(method: .GET, path: "/api/v1/cases/RC-5") else {
            Issue.record("no match")
            return
        }
        #expect(route.pattern == "/api/v1/cases/{case_number}")
        #expect(parameters == ["case_number": "RC-5"])
        guard case .found(let literal, _) = router.match(method: .GET, path: "/api/v1/cases/new") else {
            Issue.record("no literal match")
            return
        }
        #expect(literal.pattern == "/api/v1/cases/new")
        guard case .found(let head, _) = router.match(method: .HEAD, path: "/hello") else {
            Issue.record("HEAD did not fall back to GET")
            return
        }
        #expect(head.method == .GET)
        guard case .methodNotAllowed(let allowed) = router.match(method: .PATCH, path: "/api/v1/cases/x/notes") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == [.POST, .DELETE])
        guard case .notFound = router.match(method: .GET, path: "/api/v1/cases//notes") else {
            Issue.record("an empty segment must not match a parameter")
            return
        }
    }
}
