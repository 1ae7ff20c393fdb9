import Foundation

/// What a handler answers. The server adds the security headers, `X-Request-Id` and `Content-Length`.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Headers in order; repeated names (Set-Cookie) are kept.
    public var headers: [(String, String)]
    /// The body; MHD adds Content-Length and omits the body for HEAD.
    public var body: [UInt8]
    /// A file streamed by the server instead of `body` (static files).
    var file: OpenFile?
    /// A body made while it is sent, instead of `body` (`ResponseStream.swift`).
    var stream: HTTPBodyStream?

    /// A response from its parts.
    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = nil
        self.stream = nil
    }

    /// A response whose body `stream` makes while it is sent, chunked, in constant memory (an export).
    public init(status: Int = 200, headers: [(String, String)] = [], stream: HTTPBodyStream) {
        self.init(status: status, headers: headers)
        self.stream = stream
    }

    /// Already-encoded JSON.
    public static func json(_ status: Int = 200, body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// Encodes `value` with the shared encoder (keys as the CodingKeys spell them, ISO 8601 dates).
    public static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> HTTPResponse {
        .json(status, body: Array(try JSONCoding.encoder.encode(value)))
    }

    /// Plain UTF-8 text.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }

    /// 204 with no body.
    public static func noContent() -> HTTPResponse {
        HTTPResponse(status: 204)
    }

    /// The first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.equalsIgnoringASCIICase(name) }?.1
    }

    /// Replaces every header of this name with one value.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.0.equalsIgnoringASCIICase(name) }
        headers.append((name, value))
    }

    /// Adds a header, keeping others of the same name (`Set-Cookie`).
    public mutating func addHeader(_ name: String, _ value: String) {
        headers.append((name, value))
    }
}

/// The JSON coders shared by requests and responses; both are thread-safe once configured.
public enum JSONCoding {
    /// Keys as written by CodingKeys, ISO 8601 dates, slashes unescaped.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    /// Keys as written by CodingKeys, ISO 8601 dates.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

extension StringProtocol {
    /// ASCII case-insensitive comparison without allocating (header names are ASCII).
    @inline(__always)
    func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 0x41 && x <= 0x5A) ? x | 0x20 : x
            let ly = (y >= 0x41 && y <= 0x5A) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }
}
