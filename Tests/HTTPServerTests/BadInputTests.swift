import Foundation
import HTTPServer
import ReclaimTestSupport
import Synchronization
import Testing

/// api.md v1.1 "Bad input, everywhere", from the attacker's side: raw bytes on one connection. Each
/// ambiguous framing answers 400 and closes, so bytes hidden after it are never served as a second request.
@Suite(.serialized) struct BadInputTests {
    /// Counts requests that reached `/secret`, the smuggled target.
    final class Hits: Sendable {
        let secret = Atomic<Int>(0)
    }

    static let smuggled = "GET /secret HTTP/1.1\r\nHost: x\r\n\r\n"

    func makeServer(_ hits: Hits) throws -> TestServer {
        let routes = [
            Route(.GET, "/hello") { _ in .text("hello") },
            Route(.POST, "/echo") { request in HTTPResponse(status: 200, body: request.body) },
            Route(.GET, "/secret") { _ in
                hits.secret.add(1, ordering: .relaxed)
                return .text("secret")
            },
        ]
        return try TestServer(routes: routes)
    }

    /// Sends `raw` on one connection; returns the first response and whether the server then closed the
    /// connection without sending another one.
    func exchange(_ server: TestServer, _ raw: [UInt8]) throws -> (first: TestHTTPResponse?, closedAfter: Bool) {
        let connection = try server.client(timeout: 3).openConnection()
        defer { connection.close() }
        do { try connection.send(raw) } catch TestHTTPError.closedEarly {}
        let first: TestHTTPResponse
        do {
            first = try connection.readResponse(timeout: 3)
        } catch TestHTTPError.closedEarly {
            return (nil, true)
        }
        do {
            let second = try connection.readResponse(timeout: 1.5)
            Issue.record("a second response was served on the same connection: \(second.status) \(second.text)")
            return (first, false)
        } catch TestHTTPError.closedEarly {
            return (first, true)
        } catch {
            // Still open after the 400: a smuggled request could follow.
            return (first, false)
        }
    }

    func expectRefusedAndClosed(_ raw: String, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let hits = Hits()
        let server = try makeServer(hits)
        defer { server.stop() }
        let (first, closed) = try exchange(server, Array(raw.utf8))
        #expect(first?.status == 400, comment, sourceLocation: sourceLocation)
        #expect(closed, "the connection stays open: \(comment)", sourceLocation: sourceLocation)
        #expect(hits.secret.load(ordering: .relaxed) == 0, "the smuggled request was served: \(comment)", sourceLocation: sourceLocation)
        // The server is unharmed.
        #expect(try server.client().request("GET", "/hello").status == 200, sourceLocation: sourceLocation)
    }

    @Test func contentLengthWithTransferEncodingIsNotSmuggled() throws {
        // CL.TE: a front end honouring Content-Length forwards all of this as one request; a server honouring
        // Transfer-Encoding would end the body at "0" and answer the GET hidden after it.
        let body = "0\r\n\r\n" + Self.smuggled
        try expectRefusedAndClosed(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
            "Content-Length and Transfer-Encoding")
        // Transfer-Encoding first, then Content-Length: the same.
        try expectRefusedAndClosed(
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body,
            "Transfer-Encoding and Content-Length")
    }

    @Test func twoDifferentContentLengthsAreRefused() throws {
        let body = "abc" + Self.smuggled
        try expectRefusedAndClosed(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body,
            "two Content-Length headers")
        try expectRefusedAndClosed(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3, \(body.utf8.count)\r\n\r\n" + body,
            "a Content-Length list")
    }

    @Test func repeatedEqualContentLengthIsServed() throws {
        // RFC 9112 §6.3 allows identical values; only a disagreement is ambiguous.
        let hits = Hits()
        let server = try makeServer(hits)
        defer { server.stop() }
        let response = try #require(try server.client().sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc".utf8)))
        #expect(response.status == 200)
        #expect(response.text == "abc")
    }

    @Test func whitespaceBeforeAHeaderColonIsRefused() throws {
        let body = "0\r\n\r\n" + Self.smuggled
        try expectRefusedAndClosed(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nTransfer-Encoding : chunked\r\n\r\n" + body,
            "a space before the colon of Transfer-Encoding")
        try expectRefusedAndClosed("GET /hello HTTP/1.1\r\nHost\t: x\r\n\r\n" + Self.smuggled, "a tab before the colon of Host")
    }

    @Test func transferCodingsOtherThanChunkedAreRefused() throws {
        // MHD decodes chunked alone; with another coding the body's end is unknown, so refuse and close.
        let hits = Hits()
        let server = try makeServer(hits)
        defer { server.stop() }
        let raw = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + Self.smuggled
        let (first, closed) = try exchange(server, Array(raw.utf8))
        #expect(first?.status == 501)
        #expect(closed)
        #expect(hits.secret.load(ordering: .relaxed) == 0)
        // Plain chunked is served.
        let chunked = try #require(try server.client().sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8)))
        #expect(chunked.status == 200)
        #expect(chunked.text == "abc")
    }

    @Test func nulInTheRequestLineIsRefused() throws {
        try expectRefusedAndClosed("GET /hello\u{0}/x HTTP/1.1\r\nHost: x\r\n\r\n" + Self.smuggled, "NUL in the target")
        try expectRefusedAndClosed("GET /hello HTTP/1.1\u{0}\r\nHost: x\r\n\r\n" + Self.smuggled, "NUL after the version")
        try expectRefusedAndClosed("GE\u{0}T /hello HTTP/1.1\r\nHost: x\r\n\r\n" + Self.smuggled, "NUL in the method")
        try expectRefusedAndClosed("GET\u{0} /hello HTTP/1.1\r\nHost: x\r\n\r\n" + Self.smuggled, "NUL at the end of the method")
        try expectRefusedAndClosed("GET /hello?a=1\u{0}&b=2 HTTP/1.1\r\nHost: x\r\n\r\n" + Self.smuggled, "NUL in the query")

        // The check is not fooled the other way: a query, extra spaces MHD tolerates, a raw non-UTF-8 byte.
        let hits = Hits()
        let server = try makeServer(hits)
        defer { server.stop() }
        for line in ["GET /hello?a=%00&b=2 HTTP/1.1", "GET   /hello HTTP/1.1"] {
            let response = try server.client().sendRaw(Array("\(line)\r\nHost: x\r\n\r\n".utf8))
            #expect(response?.status == 200, "\(line)")
        }
        let rawByte = try server.client().sendRaw(Array("GET /hello".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(rawByte?.status == 404)
    }

    @Test func unroutedMethodsOnARoutedPathAre405WithAllow() throws {
        let hits = Hits()
        let server = try makeServer(hits)
        defer { server.stop() }
        for method in ["TRACE", "CONNECT", "PROPFIND", "DELETE"] {
            let response = try server.client().request(method, "/hello")
            #expect(response.status == 405, "\(method)")
            #expect(response.header("Allow") == "GET, HEAD", "\(method)")
        }
        // A method nobody routes, on a path nobody serves, is still 404.
        #expect(try server.client().request("TRACE", "/nowhere").status == 404)
    }
}
