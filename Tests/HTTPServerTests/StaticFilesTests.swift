import Foundation
import HTTPServer
import ReclaimTestSupport
import Testing

@Suite(.serialized) struct StaticFilesTests {
    /// A public directory with a secret next to it, a dotfile inside it, and symlinks both ways.
    final class Fixture {
        let base: String
        let root: String

        init() throws {
            base = NSTemporaryDirectory() + "reclaim-static-\(UUID().uuidString)"
            root = base + "/public"
            let files = FileManager.default
            try files.createDirectory(atPath: root + "/css", withIntermediateDirectories: true)
            try files.createDirectory(atPath: root + "/js", withIntermediateDirectories: true)
            try "<!doctype html><title>Dashboard</title>".write(toFile: root + "/index.html", atomically: true, encoding: .utf8)
            try "<!doctype html><title>Status</title>".write(toFile: root + "/status.html", atomically: true, encoding: .utf8)
            try "body { color: black }".write(toFile: root + "/css/site.css", atomically: true, encoding: .utf8)
            try "console.log(1)".write(toFile: root + "/js/app.js", atomically: true, encoding: .utf8)
            try "{\"version\":3}".write(toFile: root + "/js/app.js.map", atomically: true, encoding: .utf8)
            try "<svg/>".write(toFile: root + "/logo.svg", atomically: true, encoding: .utf8)
            try "{}".write(toFile: root + "/site.webmanifest", atomically: true, encoding: .utf8)
            try Data([0x77, 0x4F, 0x46, 0x32]).write(to: URL(fileURLWithPath: root + "/font.woff2"))
            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: root + "/image.png"))
            try "SECRET=1".write(toFile: root + "/.env", atomically: true, encoding: .utf8)
            try "top secret".write(toFile: base + "/secret.txt", atomically: true, encoding: .utf8)
            try files.createSymbolicLink(atPath: root + "/escape.txt", withDestinationPath: base + "/secret.txt")
            try files.createSymbolicLink(atPath: root + "/outside", withDestinationPath: base)
            try files.createSymbolicLink(atPath: root + "/alias.css", withDestinationPath: root + "/css/site.css")
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        func server() throws -> TestServer {
            let routes = [
                Route(.GET, "/api/v1/ping") { _ in .text("pong") },
                Route(.GET, "/css/routed.css") { _ in .text("routed") },
            ]
            return try TestServer(routes: routes, staticFiles: StaticFiles(root: root, aliases: ["/": "index.html", "/status": "status.html"]))
        }
    }

    @Test func servesFilesWithTypesAndValidators() throws {
        let fixture = try Fixture()
        let server = try fixture.server()
        defer { server.stop() }
        let client = server.client(keepAlive: true)

        let index = try client.request("GET", "/")
        #expect(index.status == 200)
        #expect(index.text.contains("Dashboard"))
        #expect(index.header("Content-Type") == "text/html; charset=utf-8")
        #expect(index.header("X-Content-Type-Options") == "nosniff")
        #expect(index.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
        #expect(index.header("Referrer-Policy") == "no-referrer")
        #expect(index.header("X-Request-Id") != nil)
        #expect(try client.request("GET", "/status").text.contains("Status"))

        let types = [
            "/css/site.css": "text/css; charset=utf-8", "/js/app.js": "text/javascript; charset=utf-8",
            "/js/app.js.map": "application/json", "/logo.svg": "image/svg+xml", "/site.webmanifest": "application/manifest+json",
            "/font.woff2": "font/woff2", "/image.png": "image/png", "/index.html": "text/html; charset=utf-8",
        ]
        for (path, type) in types {
            let response = try client.request("GET", path)
            #expect(response.status == 200, "\(path)")
            #expect(response.header("Content-Type") == type, "\(path)")
        }

        let css = try client.request("GET", "/css/site.css")
        #expect(css.text == "body { color: black }")
        let etag = try #require(css.header("ETag"))
        let lastModified = try #require(css.header("Last-Modified"))
        #expect(lastModified.hasSuffix(" GMT"))

        let unchanged = try client.request("GET", "/css/site.css", headers: [("If-None-Match", etag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)
        #expect(unchanged.header("ETag") == etag)
        #expect(unchanged.header("X-Content-Type-Options") == "nosniff")
        #expect(try client.request("GET", "/css/site.css", headers: [("If-None-Match", "\"other\", W/\(etag)")]).status == 304)
        #expect(try client.request("GET", "/css/site.css", headers: [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try client.request("GET", "/css/site.css", headers: [("If-Modified-Since", lastModified)]).status == 304)
        #expect(try client.request("GET", "/css/site.css", headers: [("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")]).status == 200)
        // If-None-Match wins over If-Modified-Since.
        #expect(
            try client.request("GET", "/css/site.css", headers: [("If-None-Match", "\"other\""), ("If-Modified-Since", lastModified)]).status == 200)

        let head = try client.request("HEAD", "/js/app.js")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == "14")
        #expect(try client.request("GET", "/js/app.js").text == "console.log(1)")
        // A symlink that stays inside the root is fine.
        #expect(try client.request("GET", "/alias.css").status == 200)
        #expect(client.connectionsOpened == 1)

        let lines = server.logLines(event: "request")
        #expect(lines.allSatisfy { $0["route"] as? String == "static" })
    }

    @Test func refusesEverythingOutsideTheRoot() throws {
        let fixture = try Fixture()
        let server = try fixture.server()
        defer { server.stop() }
        let client = server.client()
        let attempts = [
            "/../secret.txt", "/..%2fsecret.txt", "/..%2f..%2fetc/passwd", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt",
            "/css/../../secret.txt", "/css/%2e%2e/%2e%2e/secret.txt", "/.env", "/%2eenv", "/css/.", "/index.html%00.css",
            "/css%5c..%5csecret.txt", "/escape.txt", "/outside/secret.txt", "/css", "/css/", "/js/", "//etc/passwd",
            "/%zz", "/missing.html",
        ]
        for target in attempts {
            let response = try client.request("GET", target)
            // A NUL (`%00`) is refused before any file is looked for (api.md v1.3: U+0000 anywhere is 422).
            let refused: Set<Int> = target.contains("%00") ? [422] : [400, 404]
            #expect(refused.contains(response.status), "\(target) answered \(response.status)")
            #expect(!response.text.contains("secret") && !response.text.contains("SECRET") && !response.text.contains("root:"), "\(target) leaked")
        }
        // Raw targets that clients would normalise before sending.
        for raw in ["GET /../secret.txt HTTP/1.1\r\nHost: x\r\n\r\n", "GET /css/../../secret.txt HTTP/1.1\r\nHost: x\r\n\r\n"] {
            let response = try server.client().sendRaw(Array(raw.utf8), readTimeout: 3)
            #expect(response.map { $0.status == 404 || $0.status == 400 } ?? true)
            #expect(response.map { !$0.text.contains("top secret") } ?? true)
        }
    }

    @Test func routesWinAndOnlyGetAndHeadReachFiles() throws {
        let fixture = try Fixture()
        try "should not be served".write(toFile: fixture.root + "/css/routed.css", atomically: true, encoding: .utf8)
        let server = try fixture.server()
        defer { server.stop() }
        let client = server.client()
        #expect(try client.request("GET", "/css/routed.css").text == "routed")
        #expect(try client.request("GET", "/api/v1/ping").text == "pong")
        let post = try client.request("POST", "/index.html", body: Array("x".utf8))
        #expect(post.status == 404)
        #expect(post.header("Content-Type") == "application/problem+json")
        // A GET with a body is refused, not read and not silently dropped.
        let withBody = try server.client().sendRaw(
            Array("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".utf8), readTimeout: 3)
        #expect(withBody?.status == 400)
        let missing = try client.request("GET", "/nothing-here.js")
        #expect(missing.status == 404)
        #expect(missing.header("Content-Type") == "application/problem+json")
    }
}
