import Foundation
import HTTPServer
import ReclaimTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct BodyLimitTests {
    /// Counts handler calls, so a test can prove a refused body never reached its handler.
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
    }

    func makeServer(calls: Calls) throws -> TestServer {
        let routes = [
            Route(.POST, "/small", bodyLimit: 1024) { request in
                calls.count.add(1, ordering: .relaxed)
                return .text("got \(request.body.count)")
            },
            Route(.POST, "/default") { request in .text("got \(request.body.count)") },
        ]
        return try TestServer(routes: routes, configure: { $0.defaultBodyLimit = 64 * 1024 })
    }

    @Test func bodiesWithinTheLimitArrive() throws {
        let calls = Calls()
        let server = try makeServer(calls: calls)
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        #expect(try client.request("POST", "/small", body: Array(repeating: 65, count: 1024)).text == "got 1024")
        #expect(try client.request("POST", "/default", body: Array(repeating: 65, count: 60_000)).text == "got 60000")
        #expect(try client.request("POST", "/small").text == "got 0")
        #expect(client.connectionsOpened == 1)

        // Chunked, within the limit.
        let connection = try server.client().openConnection()
        try connection.send("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try connection.send("200\r\n" + String(repeating: "a", count: 512) + "\r\n")
        try connection.send("100\r\n" + String(repeating: "b", count: 256) + "\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.text == "got 768")
    }

    @Test func contentLengthOverTheLimitIsRefusedBeforeTheBody() throws {
        let calls = Calls()
        let server = try makeServer(calls: calls)
        defer { server.stop() }
        // Headers only: the 413 must come without the server waiting for the 10 MB.
        let connection = try server.client().openConnection()
        try connection.send("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\nContent-Type: application/json\r\n\r\n")
        let started = Date()
        let response = try connection.readResponse(timeout: 3)
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(response.status == 413)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(try response.json()["code"] as? String == "payload_too_large")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(connection.waitForClose(timeout: 2))
        #expect(calls.count.load(ordering: .relaxed) == 0)

        // The configured default applies to routes without their own limit.
        let big = try server.client().sendRaw(Array("POST /default HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n".utf8), readTimeout: 3)
        #expect(big?.status == 413)
    }

    @Test func chunkedBodyOverTheLimitIsCutOff() throws {
        let calls = Calls()
        let server = try makeServer(calls: calls)
        defer { server.stop() }
        let connection = try server.client().openConnection()
        try connection.send("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try connection.send("300\r\n" + String(repeating: "a", count: 0x300) + "\r\n")
        // Passes 1024 with this chunk; the server must answer without the terminating chunk.
        try connection.send("300\r\n" + String(repeating: "b", count: 0x300) + "\r\n")
        let response = try connection.readResponse(timeout: 3)
        #expect(response.status == 413)
        #expect(try response.json()["code"] as? String == "payload_too_large")
        #expect(connection.waitForClose(timeout: 2))
        #expect(calls.count.load(ordering: .relaxed) == 0)
    }

    @Test func unroutedRequestsDoNotHaveTheirBodyRead() throws {
        let calls = Calls()
        let server = try makeServer(calls: calls)
        defer { server.stop() }
        let connection = try server.client().openConnection()
        try connection.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
        let response = try connection.readResponse(timeout: 3)
        #expect(response.status == 404)
        #expect(connection.waitForClose(timeout: 2))

        let wrongMethod = try server.client().sendRaw(
            Array("PUT /small HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n".utf8), readTimeout: 3)
        #expect(wrongMethod?.status == 405)
        #expect(wrongMethod?.header("Allow") == "POST")
    }
}
