import Foundation

/// Why a test HTTP exchange failed.
public enum TestHTTPError: Error, CustomStringConvertible {
    case connectFailed(host: String, port: Int, errno: Int32)
    case timedOut(String)
    case closedEarly(String)
    case malformedResponse(String)
    case notJSON(String)

    public var description: String {
        switch self {
        case .connectFailed(let host, let port, let code): "connect to \(host):\(port) failed: \(String(cString: strerror(code)))"
        case .timedOut(let what): "timed out \(what)"
        case .closedEarly(let what): "connection closed \(what)"
        case .malformedResponse(let what): "malformed response: \(what)"
        case .notJSON(let what): "response body is not a JSON object: \(what)"
        }
    }
}

/// A parsed HTTP response.
public struct TestHTTPResponse: Sendable {
    public let status: Int
    public let reason: String
    /// Headers in arrival order, names as the server spelled them.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every header with this name (case-insensitive), e.g. all `Set-Cookie` lines.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    public func json() throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw TestHTTPError.notJSON(String(text.prefix(200)))
        }
        return object
    }

    /// The body parsed as any JSON value (array, object, scalar).
    public func jsonValue() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
    }
}

/// A tiny blocking HTTP/1.1 client over POSIX sockets for tests. Every socket operation has a timeout,
/// so a misbehaving server fails the test instead of hanging it. Not thread-safe: one per thread.
public final class TestHTTPClient {
    public let host: String
    public let port: Int
    /// Seconds allowed for connecting and for each read or write.
    public var timeout: Double
    /// Reuse one connection across requests (until the server closes it).
    public let keepAlive: Bool
    private var connection: TestHTTPConnection?
    /// How many TCP connections this client has opened (shows whether keep-alive held).
    public private(set) var connectionsOpened = 0

    public init(host: String = "127.0.0.1", port: Int, keepAlive: Bool = false, timeout: Double = 5) {
        self.host = host
        self.port = port
        self.keepAlive = keepAlive
        self.timeout = timeout
    }

    deinit { connection?.close() }

    /// Sends one request and reads the whole response. Adds `Host`, `Content-Length` (when there is a
    /// body or the method usually has one) and `Connection` unless given.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        let names = Set(headers.map { $0.0.lowercased() })
        if !names.contains("host") { head += "Host: \(host):\(port)\r\n" }
        if !names.contains("content-length") && !names.contains("transfer-encoding")
            && (!body.isEmpty || ["POST", "PUT", "PATCH"].contains(method))
        {
            head += "Content-Length: \(body.count)\r\n"
        }
        if !names.contains("connection") { head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body

        // A kept-alive connection may have been closed by the server in the meantime: retry once on a fresh one.
        for attempt in 0..<2 {
            let reused = connection != nil
            let connection: TestHTTPConnection
            if let existing = self.connection {
                connection = existing
            } else {
                connection = try TestHTTPConnection(host: host, port: port, timeout: timeout)
                connectionsOpened += 1
            }
            self.connection = nil
            do {
                try connection.send(bytes)
                let response = try connection.readResponse(isHead: method == "HEAD", timeout: timeout)
                let closes = response.header("connection")?.lowercased().contains("close") ?? false
                if keepAlive && !closes { self.connection = connection } else { connection.close() }
                return response
            } catch let error as TestHTTPError {
                connection.close()
                if reused && attempt == 0, case .closedEarly = error { continue }
                throw error
            }
        }
        throw TestHTTPError.closedEarly("twice")
    }

    /// JSON convenience: encodes `json` as the body with `Content-Type: application/json`.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], json: Any) throws -> TestHTTPResponse {
        let body = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])
        return try request(method, target, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
    }

    /// JSON convenience: encodes `value` with JSONEncoder as the body with `Content-Type: application/json`.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], encoded value: some Encodable) throws
        -> TestHTTPResponse
    {
        let body = try JSONEncoder().encode(value)
        return try request(method, target, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
    }

    /// Writes `bytes` as-is on a fresh connection and reads one response; nil when the server closed
    /// the connection (or stayed silent for `readTimeout`) without answering.
    public func sendRaw(_ bytes: [UInt8], readTimeout: Double = 5) throws -> TestHTTPResponse? {
        let connection = try TestHTTPConnection(host: host, port: port, timeout: timeout)
        defer { connection.close() }
        do {
            try connection.send(bytes)
        } catch TestHTTPError.closedEarly {
            // The server may answer and close before taking everything (e.g. 413): still read what it sent.
        }
        do {
            return try connection.readResponse(isHead: false, timeout: readTimeout)
        } catch TestHTTPError.closedEarly, TestHTTPError.timedOut {
            return nil
        }
    }

    /// A raw connection for tests that need to control timing (slow clients, partial requests).
    public func openConnection() throws -> TestHTTPConnection {
        try TestHTTPConnection(host: host, port: port, timeout: timeout)
    }

    /// Drops a kept-alive connection.
    public func close() {
        connection?.close()
        connection = nil
    }
}

/// One TCP connection with timed sends and reads, and an HTTP/1.1 response parser.
public final class TestHTTPConnection {
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private let timeout: Double

    public init(host: String, port: Int, timeout: Double = 5) throws {
        self.timeout = timeout
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            throw TestHTTPError.connectFailed(host: host, port: port, errno: EINVAL)
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError.connectFailed(host: host, port: port, errno: errno) }
        // Non-blocking connect bounded by poll, then back to blocking with per-operation timeouts.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
            let code = errno
            guard code == EINPROGRESS else {
                Glibc.close(fd)
                throw TestHTTPError.connectFailed(host: host, port: port, errno: code)
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else {
                Glibc.close(fd)
                throw TestHTTPError.timedOut("connecting to \(host):\(port)")
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
            guard socketError == 0 else {
                Glibc.close(fd)
                throw TestHTTPError.connectFailed(host: host, port: port, errno: socketError)
            }
        }
        _ = fcntl(fd, F_SETFL, flags)
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        // SIGPIPE is avoided per send with MSG_NOSIGNAL.
        descriptor = fd
    }

    deinit { close() }

    public func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// Writes every byte, or throws after `timeout` without progress.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            guard try wait(for: Int16(POLLOUT), timeout: timeout) else { throw TestHTTPError.timedOut("sending") }
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw TestHTTPError.closedEarly("while sending (\(String(cString: strerror(errno))))")
            }
            offset += written
        }
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// True when the server has closed the connection (EOF or reset) within `timeout` seconds.
    public func waitForClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let ready = try? wait(for: Int16(POLLIN), timeout: deadline.timeIntervalSinceNow), ready else { continue }
            var scratch = [UInt8](repeating: 0, count: 4096)
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
            buffer.append(contentsOf: scratch[..<count])
        }
        return false
    }

    /// Every byte the server sends until it closes the connection (or `timeout` passes), and whether it closed:
    /// for checking that exactly one well-formed answer came before the close.
    public func readAll(timeout: Double) -> (bytes: [UInt8], closed: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let ready = try? wait(for: Int16(POLLIN), timeout: deadline.timeIntervalSinceNow), ready else { continue }
            var scratch = [UInt8](repeating: 0, count: 65536)
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 {
                defer { buffer = [] }
                return (buffer, true)
            }
            buffer.append(contentsOf: scratch[..<count])
        }
        defer { buffer = [] }
        return (buffer, false)
    }

    /// Waits until the bytes received so far hold `needle` (true), or `timeout` passes or the server closes (false);
    /// nothing is consumed, so `readResponse` still reads the whole answer afterwards (a streamed body's first part).
    public func received(_ needle: [UInt8], timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Self.find(needle, in: buffer) == nil {
            guard (try? fill(until: deadline)) == true else { return false }
        }
        return true
    }

    /// Reads one response; `isHead` means there is no body whatever the headers say.
    public func readResponse(isHead: Bool = false, timeout: Double? = nil) throws -> TestHTTPResponse {
        let deadline = Date().addingTimeInterval(timeout ?? self.timeout)
        var headerEnd: Int
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer) {
                headerEnd = end
                break
            }
            guard try fill(until: deadline) else {
                throw TestHTTPError.closedEarly(buffer.isEmpty ? "before any response" : "inside the response head")
            }
        }
        let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
        buffer.removeFirst(headerEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let statusParts = statusLine.split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw TestHTTPError.malformedResponse("status line \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw TestHTTPError.malformedResponse("header line \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        let reason = statusParts.count > 2 ? String(statusParts[2]) : ""

        if (100..<200).contains(status) {
            // An interim response (100 Continue): the real one follows.
            return try readResponse(isHead: isHead, timeout: timeout)
        }
        var body: [UInt8] = []
        if isHead || status == 204 || status == 304 {
            body = []
        } else if header("transfer-encoding")?.lowercased().contains("chunked") == true {
            body = try readChunked(until: deadline)
        } else if let lengthText = header("content-length") {
            guard let length = Int(lengthText), length >= 0 else { throw TestHTTPError.malformedResponse("Content-Length \(lengthText)") }
            while buffer.count < length {
                guard try fill(until: deadline) else { throw TestHTTPError.closedEarly("inside the body") }
            }
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while try fill(until: deadline) {}
            body = buffer
            buffer = []
        }
        return TestHTTPResponse(status: status, reason: reason, headers: headers, body: body)
    }

    private func readChunked(until deadline: Date) throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd = Self.find([13, 10], in: buffer)
            while lineEnd == nil {
                guard try fill(until: deadline) else { throw TestHTTPError.closedEarly("inside a chunk header") }
                lineEnd = Self.find([13, 10], in: buffer)
            }
            let sizeText = String(decoding: buffer[..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw TestHTTPError.malformedResponse("chunk size \(sizeText)")
            }
            buffer.removeFirst(lineEnd! + 2)
            if size == 0 {
                // Trailers end with an empty line.
                while Self.find([13, 10], in: buffer) == nil {
                    guard try fill(until: deadline) else { break }
                }
                if let end = Self.find([13, 10, 13, 10], in: buffer) {
                    buffer.removeFirst(end + 4)
                } else if let end = Self.find([13, 10], in: buffer) {
                    buffer.removeFirst(end + 2)
                }
                return body
            }
            while buffer.count < size + 2 {
                guard try fill(until: deadline) else { throw TestHTTPError.closedEarly("inside a chunk") }
            }
            body.append(contentsOf: buffer[..<size])
            buffer.removeFirst(size + 2)
        }
    }

    /// Reads more bytes into the buffer; false on EOF or reset, throws on timeout.
    private func fill(until deadline: Date) throws -> Bool {
        let remaining = deadline.timeIntervalSinceNow
        guard remaining > 0, try wait(for: Int16(POLLIN), timeout: remaining) else {
            throw TestHTTPError.timedOut("waiting for the response")
        }
        var scratch = [UInt8](repeating: 0, count: 65536)
        let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return true }
        guard count > 0 else { return false }
        buffer.append(contentsOf: scratch[..<count])
        return true
    }

    private func wait(for events: Int16, timeout: Double) throws -> Bool {
        guard descriptor >= 0 else { throw TestHTTPError.closedEarly("(already closed)") }
        var poller = pollfd(fd: descriptor, events: events, revents: 0)
        let result = poll(&poller, 1, Int32(max(0, timeout) * 1000))
        return result > 0
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        outer: for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            for offset in 1..<needle.count where haystack[start + offset] != needle[offset] { continue outer }
            return start
        }
        return nil
    }
}
