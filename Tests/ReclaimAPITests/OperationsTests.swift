import Foundation
import HTTPServer
import Postgres
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

@Suite struct OperationsTests {
    @Test func healthAndReadiness() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        let health = try client.request("GET", "/healthz")
        #expect(health.status == 200)
        #expect(try health.value()["status"] == "ok")
        let ready = try client.request("GET", "/readyz")
        #expect(ready.status == 200)
        let latest = try Migrator.load(directory: RepositoryPaths.root + "/Migrations").count
        #expect(try ready.value()["schema_version"]?.intValue == latest)
    }

    @Test func readinessFailsWhenTheSchemaIsBehind() throws {
        let service = try TestService()
        defer { service.stop() }
        let connection = try service.database.connect(as: .owner)  // the owner's record: the service may only read it
        defer { connection.close() }
        try connection.execute("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
        let ready = try service.client().request("GET", "/readyz")
        #expect(ready.status == 503)
        #expect(ready.header("Retry-After") != nil)
        #expect(ready.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        #expect(try ready.problem().code == "not_migrated")
    }

    @Test func readinessFailsWhenTheAppliedFileDiffers() throws {
        let service = try TestService()
        defer { service.stop() }
        let connection = try service.database.connect(as: .owner)
        defer { connection.close() }
        try connection.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE version = (SELECT max(version) FROM schema_migrations)")
        let ready = try service.client().request("GET", "/readyz")
        #expect(ready.status == 503)
        #expect(try ready.problem().code == "schema_mismatch")
    }

    @Test func metricsCountRequestsByRouteAndStatus() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        _ = try client.request("GET", "/healthz")
        _ = try client.request("GET", "/healthz")
        _ = try client.request("GET", "/no/such/route")
        let metrics = try client.request("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"route="/healthz""#))
        #expect(text.contains(#"status="200""#))
        #expect(text.contains(#"status="404""#))
        #expect(text.contains("http_request_duration_seconds_bucket"))
        #expect(text.contains("reclaim_db_connections_open"))
        #expect(text.contains("reclaim_build_info{version=\"\(BuildInfo.version)\""))
    }

    @Test func metricsAreServedOnlyToTheAllowedAddresses() throws {
        // Behind a trusted proxy, a request forwarded from the internet is that client, not this machine.
        let service = try TestService { $0.trustedProxies = try! AddressRanges(parsing: "127.0.0.1") }
        defer { service.stop() }
        let outsider = try service.client().request("GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.9")])
        #expect(outsider.status == 403)
        #expect(!outsider.text.contains("http_requests_total"))
        #expect(try service.client().request("GET", "/metrics").status == 200)  // this machine, not forwarded
        let monitoring = try TestService {
            $0.trustedProxies = try! AddressRanges(parsing: "127.0.0.1")
            $0.metricsAllowed = try! AddressRanges(parsing: "203.0.113.0/24")
        }
        defer { monitoring.stop() }
        #expect(try monitoring.client().request("GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.9")]).status == 200)
        #expect(try monitoring.client().request("GET", "/metrics", headers: [("X-Forwarded-For", "198.51.100.1")]).status == 403)
    }

    @Test func openAPIDocumentsExactlyTheRoutedPaths() throws {
        let service = try TestService()
        defer { service.stop() }
        let response = try service.client().request("GET", "/openapi.json")
        #expect(response.status == 200)
        let document = try response.value()
        #expect(document["openapi"] == "3.1.0")
        let paths = try #require(document["paths"]?.objectValue)
        var documented = Set<String>()
        for (path, operations) in paths {
            for method in try #require(operations.objectValue).keys { documented.insert(method.uppercased() + " " + path) }
        }
        var routed = Set(service.service.server.router.routes.map { $0.method.rawValue + " " + $0.pattern })
        for page in OpenAPIDocument.pages { routed.insert("GET " + page.path) }
        #expect(
            documented == routed,
            "documented but not routed: \(documented.subtracting(routed)); routed but not documented: \(routed.subtracting(documented))")

        // Every $ref resolves to a schema that exists.
        let schemas = try #require(document["components"]?["schemas"]?.objectValue)
        let text = String(decoding: response.body, as: UTF8.self)
        let regex = try NSRegularExpression(pattern: "#/components/schemas/([A-Za-z0-9_]+)")
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            #expect(schemas[name] != nil, "missing schema \(name)")
        }
        // Every operation has an id and at least one response.
        for (_, operations) in paths {
            for (_, operation) in try #require(operations.objectValue) {
                let operation = try #require(operation.objectValue)
                #expect(operation["operationId"]?.stringValue != nil)
                #expect(operation["responses"]?.objectValue?.isEmpty == false)
            }
        }
    }

    @Test func pagesAreServedWithSecurityHeaders() throws {
        let service = try TestService()
        defer { service.stop() }
        let client = service.client()
        for path in ["/", "/status"] {
            let page = try client.request("GET", path)
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
            #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(page.header("Referrer-Policy") == "no-referrer")
        }
        let api = try client.request("GET", "/api/v1/nothing-here")
        #expect(api.status == 404)
        #expect(api.header("Cache-Control") == "no-store")
        #expect(try api.problem().code == "not_found")
        #expect(try api.problem().requestID == api.header("X-Request-Id"))
    }

    @Test func accessLogHasNoSecrets() throws {
        let service = try TestService()
        defer { service.stop() }
        _ = try service.client().request(
            "GET", "/healthz?token=canary-query-secret",
            headers: [("Authorization", "Bearer canary-bearer"), ("Cookie", "__Host-reclaim_session=canary-cookie")])
        let lines = service.log.lines
        let request = try #require(lines.first { $0.contains(#""event":"request""#) && $0.contains("/healthz") })
        for field in ["method", "route", "status", "duration_ms", "request_id"] {
            #expect(request.contains("\"\(field)\""))
        }
        for canary in ["canary-query-secret", "canary-bearer", "canary-cookie"] {
            #expect(!lines.joined().contains(canary))
        }
    }
}
