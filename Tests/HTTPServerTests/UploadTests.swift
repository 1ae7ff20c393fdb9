import Foundation
import HTTPServer
import Logging
import ReclaimTestSupport
import Synchronization
import Testing

/// Document uploads over real loopback HTTP: multipart forms parsed as they arrive, raw bodies, and the
/// limits enforced while reading.
@Suite(.serialized) struct UploadTests {
    static let tenMiB = 10 << 20
    static let boundary = "----reclaim-upload-7MA4YWxkTrZu0gW"

    /// What the last handler call received, so a test can compare bytes exactly.
    final class Received: Sendable {
        let parts = Mutex<[MultipartPart]>([])
        let body = Mutex<[UInt8]>([])
        let spooled = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
    }

    static func makeServer(_ received: Received, configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        let upload: HTTPHandler = { request in
            received.calls.add(1, ordering: .relaxed)
            if let type = request.header("content-type"), type.lowercased().hasPrefix("multipart/") {
                let form = try request.multipart()
                received.parts.withLock { $0 = form.parts }
                let file = form.file("file")
                return .text(
                    "type=\(form.field("type") ?? "-") file=\(file?.filename ?? "-") declared=\(file?.declaredContentType ?? "-") size=\(file?.content.count ?? -1) raw=\(request.content.count)"
                )
            }
            let bytes = try request.content.bytes()
            received.body.withLock { $0 = bytes }
            received.spooled.store(request.content.isSpooled, ordering: .relaxed)
            return .text("type=\(request.query("type") ?? "-") size=\(request.content.count)")
        }
        let routes = [
            Route(.POST, "/upload", bodyLimit: tenMiB, handler: upload).acceptingMultipart().spoolingLargeBodies(),
            Route(
                .POST, "/deferred", bodyLimit: tenMiB,
                deferred: { request, done in
                    DispatchQueue.global().async {
                        done(
                            Result {
                                let form = try request.multipart()
                                return .text("size=\(form.file("file")?.content.count ?? -1) type=\(form.field("type") ?? "-")")
                            })
                    }
                }
            ).acceptingMultipart(),
            Route(.POST, "/plain") { request in .text("parts=\(try request.multipart().parts.count)") },
            Route(.GET, "/hello") { _ in .text("hello") },
        ]
        return try TestServer(routes: routes, configure: configure)
    }

    /// PNG-ish bytes: the PNG signature, then noise salted with CRLFs, dashes and near-boundaries.
    static func pngish(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var state = seed
        bytes.withUnsafeMutableBytes { raw in
            let words = count / 8
            let pointer = raw.baseAddress!
            for index in 0..<words {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                pointer.storeBytes(of: state, toByteOffset: index * 8, as: UInt64.self)
            }
            for index in (words * 8)..<count { pointer.storeBytes(of: UInt8(truncatingIfNeeded: index), toByteOffset: index, as: UInt8.self) }
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        for (index, byte) in signature.enumerated() where index < count { bytes[index] = byte }
        // Almost-boundaries a parser must not mistake for the real one.
        let traps: [[UInt8]] = [
            Array("\r\n--".utf8), Array("\r\n--\(boundary.dropLast())".utf8), Array("\r\n-\(boundary)".utf8),
            Array("\n--\(boundary)".utf8), Array("--\(boundary)--".utf8), Array("\r\r\n--\r\n--".utf8),
        ]
        var position = 1000
        var which = 0
        while position + 100 < count {
            let trap = traps[which % traps.count]
            bytes.replaceSubrange(position..<(position + trap.count), with: trap)
            position += 65_521 + which * 7
            which += 1
        }
        if count > 4 { bytes.replaceSubrange((count - 4)..<count, with: Array("\r\n--".utf8)) }
        return bytes
    }

    struct Part {
        var name: String
        var filename: String? = nil
        var contentType: String? = nil
        var bytes: [UInt8]
    }

    static func multipart(_ parts: [Part], boundary: String = boundary, close: Bool = true) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(parts.reduce(0) { $0 + $1.bytes.count } + 512 * parts.count)
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            if let filename = part.filename { head += "; filename=\"\(filename)\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            head += "\r\n"
            body += Array(head.utf8)
            body += part.bytes
            body += Array("\r\n".utf8)
        }
        if close { body += Array("--\(boundary)--\r\n".utf8) }
        return body
    }

    static func formHeaders(boundary: String = boundary) -> [(String, String)] {
        [("Content-Type", "multipart/form-data; boundary=\(boundary)")]
    }

    @Test func tenMiBMultipartUploadArrivesByteIdenticalWithItsFields() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let file = Self.pngish(count: Self.tenMiB)
        let body = Self.multipart([
            Part(name: "type", bytes: Array("box_photo".utf8)),
            Part(name: "file", filename: "photo.png", contentType: "image/png", bytes: file),
            Part(name: "note", bytes: Array("after the file".utf8)),
        ])
        let client = server.client(keepAlive: true, timeout: 20)
        let response = try client.request("POST", "/upload", headers: Self.formHeaders(), body: body)
        #expect(response.status == 200)
        #expect(response.text == "type=box_photo file=photo.png declared=image/png size=\(Self.tenMiB) raw=0")
        let parts = received.parts.withLock { $0 }
        #expect(parts.map(\.name) == ["type", "file", "note"])
        #expect(parts.count == 3 && (try? parts[1].content.bytes()) == file)
        #expect(parts.count == 3 && parts[1].content.isSpooled && !parts[2].content.isSpooled)
        #expect(parts.count == 3 && (try? parts[2].content.bytes()) == Array("after the file".utf8))

        // The same connection then serves a small request normally.
        #expect(try client.request("GET", "/hello").text == "hello")
        #expect(client.connectionsOpened == 1)

        // A deferred handler gets the form too.
        let deferred = try client.request("POST", "/deferred", headers: Self.formHeaders(), body: body)
        #expect(deferred.text == "size=\(Self.tenMiB) type=box_photo")
    }

    @Test func smallFormsEmptyPartsAndQuotedBoundaries() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        // An empty field, an empty file, a file without filename but with a binary type, a quoted boundary.
        let body = Self.multipart(
            [
                Part(name: "type", bytes: Array("invoice".utf8)),
                Part(name: "empty", bytes: []),
                Part(name: "file", filename: "a.pdf", contentType: "application/pdf", bytes: Array("%PDF-1.7\r\n--x".utf8)),
                Part(name: "blob", contentType: "application/octet-stream", bytes: [0, 13, 10, 45, 45, 0]),
                Part(name: "nothing", filename: "n.bin", bytes: []),
                Part(name: "long", filename: String(repeating: "n", count: 3000) + ".png", contentType: "image/png", bytes: [7]),
            ], boundary: "simple")
        let response = try client.request("POST", "/upload", headers: [("Content-Type", "multipart/form-data; boundary=\"simple\"")], body: body)
        #expect(response.status == 200)
        #expect(response.text == "type=invoice file=a.pdf declared=application/pdf size=13 raw=0")
        let parts = received.parts.withLock { $0 }
        #expect(parts.map(\.name) == ["type", "empty", "file", "blob", "nothing", "long"])
        #expect(parts.map(\.content.count) == [7, 0, 13, 6, 0, 1])
        #expect(parts.map(\.isFile) == [false, false, true, true, true, true])
        #expect(parts.last?.filename?.count == 3004)
    }

    @Test func rawUploadsStillUseTheBody() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let file = Self.pngish(count: Self.tenMiB, seed: 42)
        let client = server.client(timeout: 20)
        let response = try client.request("POST", "/upload?type=box_photo", headers: [("Content-Type", "image/png")], body: file)
        #expect(response.text == "type=box_photo size=\(Self.tenMiB)")
        #expect(received.body.withLock { $0 } == file)
        let spooled = received.spooled.load(ordering: .relaxed)
        #expect(spooled)

        // Chunked, exactly at the limit.
        let connection = try server.client(timeout: 20).openConnection()
        try connection.send("POST /upload?type=x HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n")
        try Self.sendChunked(file, chunk: 1 << 20, over: connection, terminate: true)
        #expect(try connection.readResponse(timeout: 20).text == "type=x size=\(Self.tenMiB)")
        #expect(received.body.withLock { $0 } == file)
    }

    @Test func largeDocumentsAreSpooledAndNeverOnDiskInClear() throws {
        // While the handler holds the request, the body exists only as a nameless, encrypted file: read from the
        // process's own descriptors (what a backup of the disk, or a later reader of its blocks, could see) it shows
        // none of the document.
        let directory = NSTemporaryDirectory() + "reclaim-spool-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seen = Mutex<[(size: Int, clear: Bool)]>([])
        let marker = Array("ReclaimSpoolMarker-".utf8) + (0..<24).map { _ in UInt8.random(in: 0...255) }
        let hold: DeferredHTTPHandler = { request, done in
            seen.withLock { $0 = Self.spoolFiles(in: directory, containing: marker) }
            done(
                Result {
                    .text(
                        "size=\(request.content.count) spooled=\(request.content.isSpooled) same=\(try request.content.bytes().starts(with: marker))")
                })
        }
        let server = try TestServer(
            routes: [Route(.POST, "/hold", bodyLimit: Self.tenMiB, deferred: hold).spoolingLargeBodies().acceptingMultipart()],
            configure: { $0.spoolDirectory = directory })
        defer { server.stop() }
        var document = [UInt8]()
        while document.count < 1 << 20 { document += marker }
        let raw = try server.client(timeout: 20).request("POST", "/hold", headers: [("Content-Type", "application/pdf")], body: document)
        #expect(raw.text == "size=\(document.count) spooled=true same=true")
        #expect(seen.withLock { $0.map(\.size) } == [document.count])
        #expect(seen.withLock { $0.map(\.clear) } == [false])
        // A form's file part is spooled the same way; its small fields are not.
        let form = Self.multipart([
            Part(name: "type", bytes: Array("invoice".utf8)),
            Part(name: "file", filename: "d.pdf", contentType: "application/pdf", bytes: document),
        ])
        let posted = try server.client(timeout: 20).request("POST", "/hold", headers: Self.formHeaders(), body: form)
        #expect(posted.status == 200)
        // Its own spool file (the first request's may still be open for a moment on a handler thread: it closes when
        // that request is released, just after its answer is handed over); none in clear.
        #expect(seen.withLock { !$0.isEmpty && $0.count <= 2 && $0.allSatisfy { !$0.clear } })
        // Small bodies and JSON stay in memory; nothing is left behind, by name or open.
        let small = try server.client().request("POST", "/hold", headers: [("Content-Type", "application/pdf")], body: Array(document.prefix(1000)))
        #expect(small.text == "size=1000 spooled=false same=true")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(server.waitUntilIdle())
        #expect(eventually(2) { Self.spoolFiles(in: directory, containing: marker).isEmpty })
    }

    @Test func aSpoolThatCannotBeWrittenIs503() throws {
        let server = try TestServer(
            routes: [Route(.POST, "/upload", bodyLimit: Self.tenMiB) { _ in .text("stored") }.spoolingLargeBodies().acceptingMultipart()],
            configure: { $0.spoolDirectory = "/nonexistent/reclaim-spool" })
        defer { server.stop() }
        let file = Self.pngish(count: 1 << 20)
        let raw = try #require(
            try server.client(timeout: 10).sendRaw(
                Array("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: \(file.count)\r\n\r\n".utf8) + file,
                readTimeout: 5))
        #expect(raw.status == 503)
        #expect(try raw.json()["code"] as? String == "unavailable")
        let form = Self.multipart([Part(name: "file", filename: "f.png", contentType: "image/png", bytes: file)])
        let posted = try server.client(timeout: 10).request("POST", "/upload", headers: Self.formHeaders(), body: form)
        #expect(posted.status == 503)
        #expect(server.logLines(event: "body_spool_failed").count == 2)
    }

    /// Open files of this process that live (unlinked) in `directory`: their sizes, and whether any holds `marker`.
    static func spoolFiles(in directory: String, containing marker: [UInt8]) -> [(size: Int, clear: Bool)] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { name -> (size: Int, clear: Bool)? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target.hasPrefix(directory + "/"), let data = FileManager.default.contents(atPath: "/proc/self/fd/\(name)")
            else { return nil }
            return (data.count, Self.contains(data, marker))
        }
    }

    static func contains(_ data: Data, _ needle: [UInt8]) -> Bool {
        data.withUnsafeBytes { haystack in
            guard let base = haystack.baseAddress, haystack.count >= needle.count else { return false }
            var offset = 0
            while offset + needle.count <= haystack.count,
                let hit = memchr(base + offset, Int32(needle[0]), haystack.count - offset - needle.count + 1)
            {
                let at = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + at, needle, needle.count) == 0 { return true }
                offset = at + 1
            }
            return false
        }
    }

    @Test func rawContentLengthOverTheLimitIsRefusedBeforeTheBodyIsSent() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let connection = try server.client().openConnection()
        // Headers only: the client sends none of the 10 MiB + 1 and still gets its answer.
        try connection.send(
            "POST /upload?type=box_photo HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: \(Self.tenMiB + 1)\r\n\r\n")
        let started = Date()
        let response = try connection.readResponse(timeout: 3)
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(response.status == 413)
        #expect(try response.json()["code"] as? String == "payload_too_large")
        #expect(connection.waitForClose(timeout: 2))

        // A form announcing more than file cap + framing allowance is refused the same way.
        let form = try server.client().openConnection()
        try form.send(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(MultipartLimits().maxBodyBytes + 1)\r\n\r\n"
        )
        #expect(try form.readResponse(timeout: 3).status == 413)
        #expect(received.calls.load(ordering: .relaxed) == 0)
    }

    @Test func multipartFileOneByteOverTheLimitIs413() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let file = Self.pngish(count: Self.tenMiB + 1)
        let body = Self.multipart([
            Part(name: "type", bytes: Array("invoice".utf8)), Part(name: "file", filename: "f.png", contentType: "image/png", bytes: file),
        ])
        let response = try server.client(timeout: 20).request("POST", "/upload", headers: Self.formHeaders(), body: body)
        #expect(response.status == 413)
        #expect(try response.json()["code"] as? String == "payload_too_large")
        #expect(received.calls.load(ordering: .relaxed) == 0)
    }

    @Test func multipartFileOverTheLimitIsRefusedBeforeTheEnd() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        // A larger file of which only 10 MiB + 1 + 64 bytes are sent: the server must see the file pass its
        // cap (MHD holds back the last few bytes until it can rule out a boundary) and answer without the rest.
        let file = Self.pngish(count: Self.tenMiB + 64 * 1024)
        let body = Self.multipart([
            Part(name: "type", bytes: Array("invoice".utf8)), Part(name: "file", filename: "f.png", contentType: "image/png", bytes: file),
        ])
        let fileStart = body.count - file.count - Array("\r\n--\(Self.boundary)--\r\n".utf8).count
        let end = fileStart + Self.tenMiB + 1 + 64
        for chunked in [false, true] {
            let connection = try server.client(timeout: 20).openConnection()
            var head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\(Self.boundary)\r\n"
            head += chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: \(body.count)\r\n\r\n"
            try connection.send(head)
            if chunked {
                try Self.sendChunked(Array(body[..<end]), chunk: 256 * 1024, over: connection, terminate: false)
            } else {
                try connection.send(Array(body[..<end]))
            }
            let response = try connection.readResponse(timeout: 10)
            #expect(response.status == 413, "chunked: \(chunked)")
            #expect(try response.json()["code"] as? String == "payload_too_large")
            #expect(connection.waitForClose(timeout: 2))
        }
        #expect(received.calls.load(ordering: .relaxed) == 0)
    }

    @Test func chunkedRawBodyOverTheLimitIsCutOffBeforeTheEnd() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let connection = try server.client(timeout: 20).openConnection()
        try connection.send("POST /upload?type=x HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n")
        try Self.sendChunked(Self.pngish(count: Self.tenMiB), chunk: 1 << 20, over: connection, terminate: false)
        // One byte past the limit, and no terminating chunk: the answer cannot have waited for the end.
        try connection.send("1\r\nx\r\n")
        let response = try connection.readResponse(timeout: 10)
        #expect(response.status == 413)
        #expect(try response.json()["code"] as? String == "payload_too_large")
        #expect(connection.waitForClose(timeout: 2))
        #expect(received.calls.load(ordering: .relaxed) == 0)
    }

    @Test func malformedFormsAre400() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let good = Self.multipart([Part(name: "type", bytes: Array("invoice".utf8)), Part(name: "file", filename: "f.png", bytes: [1, 2, 3])])
        let cases: [(String, [(String, String)], [UInt8])] = [
            ("no boundary parameter", [("Content-Type", "multipart/form-data")], good),
            ("empty boundary", [("Content-Type", "multipart/form-data; boundary=")], good),
            ("another boundary in the body", Self.formHeaders(boundary: "other"), good),
            (
                "truncated before the closing boundary", Self.formHeaders(),
                Self.multipart([Part(name: "file", filename: "f", bytes: [1, 2, 3])], close: false)
            ),
            ("cut inside a part", Self.formHeaders(), Array(good[..<(good.count / 2)])),
            ("empty body", Self.formHeaders(), []),
            ("garbage", Self.formHeaders(), Array("this is not a form at all".utf8)),
            (
                "no CRLF after the boundary", Self.formHeaders(),
                Array("--\(Self.boundary)Content-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--\(Self.boundary)--\r\n".utf8)
            ),
            (
                "a part without a name", Self.formHeaders(),
                Array("--\(Self.boundary)\r\nContent-Type: text/plain\r\n\r\nx\r\n--\(Self.boundary)--\r\n".utf8)
            ),
            ("data after the closing boundary", Self.formHeaders(), good + Array("--\(Self.boundary)\r\n".utf8)),
            ("a preamble before the first boundary", Self.formHeaders(), Array("preamble\r\n".utf8) + good),
            (
                "a part header line longer than 4 KiB", Self.formHeaders(),
                Self.multipart([Part(name: "file", filename: String(repeating: "n", count: 4200), bytes: [1])])
            ),
            // MHD 0.9.75 quirks, pinned so a library upgrade that changes them is noticed:
            (
                "an unquoted name (MHD reads only quoted values)", Self.formHeaders(),
                Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=type\r\n\r\nx\r\n--\(Self.boundary)--\r\n".utf8)
            ),
            (
                "a parameter after the boundary (MHD takes the rest of the header)",
                [("Content-Type", "multipart/form-data; boundary=\(Self.boundary); charset=utf-8")], good
            ),
            ("a longer boundary in the body", Self.formHeaders(boundary: String(Self.boundary.dropLast())), good),
        ]
        let client = server.client(keepAlive: true)
        for (label, headers, body) in cases {
            let response = try client.request("POST", "/upload", headers: headers, body: body)
            #expect(response.status == 400, "\(label)")
            #expect(try response.json()["code"] as? String == "malformed_multipart", "\(label)")
        }
        // Malformed forms are read to the end and answered by the handler: the connection stays usable.
        #expect(client.connectionsOpened == 1)
        #expect(try client.request("GET", "/hello").text == "hello")
    }

    @Test func aPreambleOfDashesCostsNoParsingTime() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        // MHD skips a preamble before the first boundary one dash at a time, moving its whole buffer for
        // each: a body must start with its boundary, so this is refused without being parsed.
        let body = [UInt8](repeating: UInt8(ascii: "-"), count: 8 << 20)
        let started = Date()
        let response = try server.client(timeout: 30).request("POST", "/upload", headers: Self.formHeaders(), body: body)
        let seconds = Date().timeIntervalSince(started)
        #expect(response.status == 400)
        #expect(try response.json()["code"] as? String == "malformed_multipart")
        #expect(seconds < 2, "took \(seconds) s")
    }

    @Test func wrongContentTypeIs415() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let client = server.client(keepAlive: true)
        let json = try client.request("POST", "/plain", json: ["a": 1])
        #expect(json.status == 415)
        #expect(try json.json()["code"] as? String == "unsupported_media_type")
        // A route that did not opt in never parses forms.
        let form = try client.request("POST", "/plain", headers: Self.formHeaders(), body: Self.multipart([Part(name: "a", bytes: [65])]))
        #expect(form.status == 415)
    }

    @Test func tooManyPartsAndOversizedFieldsAre413() throws {
        let received = Received()
        let server = try Self.makeServer(received)
        defer { server.stop() }
        let client = server.client()
        let seventeen = (0..<17).map { Part(name: "f\($0)", bytes: Array("v".utf8)) }
        let many = try client.request("POST", "/upload", headers: Self.formHeaders(), body: Self.multipart(seventeen))
        #expect(many.status == 413)
        #expect(try many.json()["code"] as? String == "payload_too_large")
        let sixteen = try client.request("POST", "/upload", headers: Self.formHeaders(), body: Self.multipart(Array(seventeen.prefix(16))))
        #expect(sixteen.status == 200)

        let longField = try client.request(
            "POST", "/upload", headers: Self.formHeaders(), body: Self.multipart([Part(name: "type", bytes: Array(repeating: 65, count: 4097))]))
        #expect(longField.status == 413)
        let fullField = try client.request(
            "POST", "/upload", headers: Self.formHeaders(), body: Self.multipart([Part(name: "type", bytes: Array(repeating: 65, count: 4096))]))
        #expect(fullField.status == 200)
        #expect(received.calls.load(ordering: .relaxed) == 2)
    }

    @Test func largeBodiesBeyondTheCapAre503WithRetryAfter() throws {
        let received = Received()
        let server = try Self.makeServer(received, configure: { $0.maxConcurrentLargeBodies = 1 })
        defer { server.stop() }
        let size = 2 << 20
        let first = try server.client().openConnection()
        try first.send("POST /upload?type=x HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: \(size)\r\n\r\n")
        try first.send([UInt8](repeating: 1, count: 1000))
        #expect(eventually(2) { server.server.largeBodiesInFlight == 1 })
        #expect(server.metrics.renderPrometheus().contains("http_large_bodies_in_flight 1\n"))

        // Announced large: refused up front. Chunked: refused once it grows past the threshold.
        let second = try server.client().openConnection()
        try second.send("POST /upload?type=y HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: \(size)\r\n\r\n")
        let refused = try second.readResponse(timeout: 3)
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(try refused.json()["code"] as? String == "too_many_uploads")
        let third = try server.client().openConnection()
        try third.send("POST /upload?type=z HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n")
        // Exactly one byte past the threshold: the server reads all of it, so its close cannot reset the 503.
        let threshold = server.server.configuration.largeBodyThreshold
        try Self.sendChunked([UInt8](repeating: 2, count: threshold + 1), chunk: 64 * 1024, over: third, terminate: false)
        #expect(try third.readResponse(timeout: 3).status == 503)
        // Small requests are never counted.
        #expect(try server.client().request("POST", "/upload?type=s", headers: [("Content-Type", "image/png")], body: [1, 2, 3]).status == 200)

        try first.send([UInt8](repeating: 1, count: size - 1000))
        #expect(try first.readResponse(timeout: 5).text == "type=x size=\(size)")
        #expect(eventually(2) { server.server.largeBodiesInFlight == 0 })
        let again = try server.client().request(
            "POST", "/upload?type=y", headers: [("Content-Type", "image/png")], body: [UInt8](repeating: 3, count: size))
        #expect(again.text == "type=y size=\(size)")
    }

    // MARK: - Helpers

    static func sendChunked(_ bytes: [UInt8], chunk: Int, over connection: TestHTTPConnection, terminate: Bool) throws {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            try connection.send(Array(String(end - offset, radix: 16).utf8) + [13, 10] + bytes[offset..<end] + [13, 10])
            offset = end
        }
        if terminate { try connection.send("0\r\n\r\n") }
    }
}

/// Upload throughput and memory, run only with `RECLAIM_BENCH=1` (use a release build):
/// `RECLAIM_BENCH=1 swift test -c release --filter UploadBenchmarks`.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["RECLAIM_BENCH"] == "1"))
struct UploadBenchmarks {
    static let clients = 16

    /// Holds every request until `clients` of them have arrived, so all bodies are in memory at once.
    final class Gate: Sendable {
        let arrived = Atomic<Int>(0)
    }

    static func makeServer(gate: Gate) throws -> HTTPServer {
        // The handlers only count bytes (no hashing is available in this module).
        let count: HTTPHandler = { request in
            if request.header("content-type")?.hasPrefix("multipart/") == true {
                return .text("\(try request.multipart().file("file")?.content.count ?? -1)")
            }
            return .text("\(request.content.count)")
        }
        let hold: DeferredHTTPHandler = { request, done in
            gate.arrived.add(1, ordering: .relaxed)
            DispatchQueue.global().async {
                let deadline = Date().addingTimeInterval(10)
                while gate.arrived.load(ordering: .relaxed) % clients != 0 && Date() < deadline { usleep(1000) }
                done(Result { .text("\(request.content.count + ((try? request.multipart().file("file")?.content.count) ?? 0))") })
            }
        }
        let routes = [
            Route(.POST, "/count", bodyLimit: 10 << 20, handler: count).acceptingMultipart(),
            Route(.POST, "/hold", bodyLimit: 10 << 20, deferred: hold).acceptingMultipart(),
        ]
        // Warnings only: the access log is not what is being measured.
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2), router: Router(routes: routes),
            logger: Logger(sink: MemorySink(), minimumLevel: .warning), metrics: RequestMetrics()
        )
        try server.start()
        return server
    }

    /// One keep-alive connection per client; the body array is shared, never copied per request.
    static func run(port: Int, head: String, body: [UInt8], seconds: Double, perClient: Int = .max) -> (uploads: Int, elapsed: Double) {
        let done = Atomic<Int>(0)
        let stop = Date().addingTimeInterval(seconds)
        let started = Date()
        let group = DispatchGroup()
        for _ in 0..<clients {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let connection = try? TestHTTPConnection(host: "127.0.0.1", port: port, timeout: 30) else { return }
                let headBytes = Array(head.utf8)
                var sent = 0
                while Date() < stop && sent < perClient {
                    sent += 1
                    guard (try? connection.send(headBytes)) != nil, (try? connection.send(body)) != nil,
                        let response = try? connection.readResponse(timeout: 30), response.status == 200
                    else { return }
                    done.add(1, ordering: .relaxed)
                }
            }.start()
        }
        group.wait()
        return (done.load(ordering: .relaxed), Date().timeIntervalSince(started))
    }

    /// glibc's `malloc_trim(0)` (not in the Glibc module map): returns freed heap pages so RSS shows what is held.
    static func trimMalloc() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    static func rssKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        return -1
    }

    @Test func uploadsPerSecondAndPeakMemory() throws {
        let gate = Gate()
        let server = try Self.makeServer(gate: gate)
        defer { server.shutdown() }
        let boundary = "bench-boundary-0123456789"
        let seconds = Double(ProcessInfo.processInfo.environment["RECLAIM_BENCH_SECONDS"] ?? "") ?? 4
        var lines: [String] = []

        // Peak memory first, from a quiet baseline: 16 uploads of 10 MiB held by the handler at once.
        let file = UploadTests.pngish(count: 10 << 20)
        let form = UploadTests.multipart([.init(name: "file", filename: "f.png", contentType: "image/png", bytes: file)], boundary: boundary)
        for (label, body, type) in [("raw", file, "image/png"), ("multipart", form, "multipart/form-data; boundary=\(boundary)")] {
            Self.trimMalloc()
            try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
            let before = Self.rssKiB("VmRSS")
            let head = "POST /hold HTTP/1.1\r\nHost: x\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n\r\n"
            let (uploads, _) = Self.run(port: server.boundPort, head: head, body: body, seconds: 60, perClient: 1)
            let peak = Self.rssKiB("VmHWM")
            let after = Self.rssKiB("VmRSS")
            Self.trimMalloc()
            let trimmed = Self.rssKiB("VmRSS")
            lines.append(
                "\(label) \(uploads) x 10 MiB held at once: RSS before \(before / 1024) MiB, peak \(peak / 1024) MiB (+\((peak - before) / 1024) MiB), after \(after / 1024) MiB, after malloc_trim \(trimmed / 1024) MiB"
            )
        }

        for size in [1 << 20, 10 << 20] {
            let file = UploadTests.pngish(count: size)
            let form = UploadTests.multipart(
                [.init(name: "type", bytes: Array("invoice".utf8)), .init(name: "file", filename: "f.png", contentType: "image/png", bytes: file)],
                boundary: boundary)
            for (label, body, type) in [("raw", file, "image/png"), ("multipart", form, "multipart/form-data; boundary=\(boundary)")] {
                let head = "POST /count HTTP/1.1\r\nHost: x\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n\r\n"
                let (uploads, elapsed) = Self.run(port: server.boundPort, head: head, body: body, seconds: seconds)
                let rate = Double(uploads) / elapsed
                lines.append(
                    String(
                        format: "%@ %2d MiB x %d clients: %7.1f uploads/s, %6.0f MiB/s", label, size >> 20, Self.clients, rate,
                        rate * Double(size) / 1_048_576))
            }
        }

        let report = lines.joined(separator: "\n")
        print(report)
        try? (report + "\n").write(toFile: "/tmp/upload-bench.txt", atomically: true, encoding: .utf8)
    }
}
