import Foundation
import Synchronization

/// A key for values that middleware attaches to a request (the authenticated agent, say).
public protocol RequestStorageKey {
    associatedtype Value: Sendable
}

/// The peer's address: copied from the socket and formatted only when asked for.
enum PeerAddress: Sendable {
    case text(String)
    case socket(sockaddr_storage)

    init(_ address: UnsafePointer<sockaddr>) {
        var storage = sockaddr_storage()
        let length = address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        withUnsafeMutableBytes(of: &storage) { $0.baseAddress!.copyMemory(from: address, byteCount: length) }
        self = .socket(storage)
    }

    var text: String {
        switch self {
        case .text(let text): return text
        case .socket(var storage):
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ListeningSocket.text(of: $0) } }
        }
    }
}

/// One HTTP request, fully read. Stays valid after the handler returns, so deferred handlers may keep it.
///
/// `@unchecked Sendable`: every stored property is immutable once the server hands the request to
/// middleware; `pathParameters` and `route` are set by the server before that; `storage` has its own lock.
public final class HTTPRequest: @unchecked Sendable {
    /// The request method (HEAD stays HEAD even when a GET route answers it).
    public let method: HTTPMethod
    /// The percent-decoded path, without the query.
    public let path: String
    /// The request target exactly as the client sent it (path and `?query`); what request signatures cover.
    public let target: String
    /// Every request header in arrival order; names as the client spelled them.
    public let headers: [(name: String, value: String)]
    /// The whole body, at most the route's `bodyLimit` bytes, when it is in memory; empty when it was spooled to disk
    /// (a large document on a route made with `spoolingLargeBodies`): `content` has it either way.
    public let body: [UInt8]
    /// The body's bytes wherever they are: in memory (the same bytes as `body`) or spooled; read large ones in pieces.
    public let content: BodyContent
    /// Values of the `{name}` segments of the matched route.
    public internal(set) var pathParameters: [String: String]
    /// Random id of this request, sent back as `X-Request-Id` and written to the access log.
    public let requestID: String
    /// The peer's IP address as text.
    public var clientAddress: String { peer.text }
    private let peer: PeerAddress
    /// The matched route pattern (`/api/v1/cases/{case_number}`), nil when unrouted.
    public internal(set) var route: String?
    /// True when the request arrived over TLS.
    public let isSecure: Bool
    /// Decoded query parameters in order.
    public let queryItems: [(name: String, value: String)]
    /// The form parsed while the body arrived (routes made with `acceptingMultipart`), or why it failed.
    let multipartOutcome: Result<MultipartForm, Problem>?
    private let storage = Mutex<[ObjectIdentifier: any Sendable]>([:])

    /// Builds a request by hand, for unit-testing handlers and middleware without a socket.
    public init(
        method: HTTPMethod,
        target: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        pathParameters: [String: String] = [:],
        requestID: String = "test",
        clientAddress: String = "127.0.0.1",
        route: String? = nil,
        isSecure: Bool = false,
        multipart: MultipartForm? = nil
    ) {
        self.method = method
        self.target = target
        let pathPart: Substring
        if let question = target.firstIndex(of: "?") {
            pathPart = target[..<question]
            queryItems = PercentEncoding.queryItems(target[target.index(after: question)...])
        } else {
            pathPart = target[...]
            queryItems = []
        }
        self.path = PercentEncoding.decode(pathPart) ?? String(pathPart)
        self.headers = headers
        self.body = body
        self.content = BodyContent(body)
        self.pathParameters = pathParameters
        self.requestID = requestID
        self.peer = .text(clientAddress)
        self.route = route
        self.isSecure = isSecure
        self.multipartOutcome = multipart.map { .success($0) }
    }

    /// The server's initializer: the path is already decoded.
    init(
        method: HTTPMethod, path: String, target: String, queryItems: [(name: String, value: String)],
        headers: [(name: String, value: String)], body: [UInt8], content: BodyContent, requestID: String, peer: PeerAddress, isSecure: Bool,
        multipartOutcome: Result<MultipartForm, Problem>? = nil
    ) {
        self.method = method
        self.path = path
        self.target = target
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.content = content
        self.pathParameters = [:]
        self.requestID = requestID
        self.peer = peer
        self.route = nil
        self.isSecure = isSecure
        self.multipartOutcome = multipartOutcome
    }

    /// The first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        for header in headers where header.name.equalsIgnoringASCIICase(name) {
            return header.value
        }
        return nil
    }

    /// Every value of headers with this name (case-insensitive).
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// The first decoded query parameter with this name.
    public func query(_ name: String) -> String? {
        for item in queryItems where item.name == name {
            return item.value
        }
        return nil
    }

    /// A path parameter of the matched route.
    public func parameter(_ name: String) -> String? {
        pathParameters[name]
    }

    /// A cookie's value from the `Cookie` headers.
    public func cookie(_ name: String) -> String? {
        for header in headers where header.name.equalsIgnoringASCIICase("cookie") {
            for pair in header.value.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == name {
                    return String(trimmed[trimmed.index(after: equals)...])
                }
            }
        }
        return nil
    }

    /// A value attached by middleware.
    public subscript<Key: RequestStorageKey>(key: Key.Type) -> Key.Value? {
        get { storage.withLock { $0[ObjectIdentifier(key)] as? Key.Value } }
        set { storage.withLock { $0[ObjectIdentifier(key)] = newValue } }
    }

    /// Decodes a JSON body after `checkedJSONBody()`; a body that is JSON but does not fit `T` (a field missing,
    /// of the wrong type, an unknown enum value) is 422 `validation_failed` naming the field.
    public func decodeJSON<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let body = try checkedJSONBody()
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw Self.problem(for: error)
        }
    }

    /// The body of a JSON request, with the checks every JSON route shares whatever parser it then uses:
    /// 415 `unsupported_media_type` unless `Content-Type: application/json` (a UTF-8 charset parameter is allowed),
    /// 400 `malformed_json` unless the bytes are JSON as RFC 8259 writes it (a trailing comma, a raw NUL, invalid UTF-8 are not),
    /// 422 `validation_failed` naming each key an object repeats (which value would win is the parser's guess) and each field
    /// whose string holds U+0000 (PostgreSQL text cannot store it, and no field of the service means anything with it).
    public func checkedJSONBody() throws -> [UInt8] {
        guard let contentType = header("content-type"), Self.isJSONMediaType(contentType) else {
            throw Problem.unsupportedMediaType(expected: "application/json")
        }
        guard !body.isEmpty else { throw Problem.malformedJSON("The request body is empty.") }
        let findings = JSONInput.check(body)
        if let malformed = findings.malformed { throw Problem.malformedJSON("The request body is not valid JSON: \(malformed).") }
        if !findings.duplicateKeys.isEmpty {
            throw Problem.unprocessable(
                detail: "An object in the request body repeats a key.",
                errors: findings.duplicateKeys.map { FieldError(field: $0, message: "appears more than once") })
        }
        if !findings.fieldsHoldingNUL.isEmpty {
            throw Problem.unprocessable(
                detail: "A text field holds the character U+0000.",
                errors: findings.fieldsHoldingNUL.map { FieldError(field: $0, message: "must not contain U+0000") })
        }
        return body
    }

    static func isJSONMediaType(_ value: String) -> Bool {
        let parts = value.split(separator: ";")
        guard let media = parts.first, media.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("application/json") else {
            return false
        }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].equalsIgnoringASCIICase("charset") {
                let charset = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if !charset.equalsIgnoringASCIICase("utf-8") && !charset.equalsIgnoringASCIICase("utf8") { return false }
            }
        }
        return true
    }

    /// The one mapping of decoding failures: 400 `malformed_json` for bytes that are not JSON, otherwise 422
    /// `validation_failed` naming the field (`customer.contact_email`, `devices[0].imei`; "" for the body itself).
    /// Never echoes the submitted values.
    public static func problem(for error: DecodingError) -> Problem {
        func invalid(_ path: [any CodingKey], _ message: String) -> Problem {
            let name = JSONInput.fieldName(path)
            return .unprocessable(
                detail: name.isEmpty ? "The request body does not have the expected shape." : "The field '\(name)' is not valid.",
                errors: [FieldError(field: name, message: message)])
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            // JSONDecoder reports syntax errors (and invalid UTF-8) at the root, before any field is read.
            return .malformedJSON("The request body is not valid JSON.")
        case .dataCorrupted(let context):
            // An unknown enum value, or a value a custom decoder refused (a case number, a date).
            return invalid(context.codingPath, "invalid value")
        case .keyNotFound(let key, let context):
            return invalid(context.codingPath + [key], "required")
        case .typeMismatch(let type, let context):
            return invalid(context.codingPath, "expected \(Self.jsonTypeName(type))")
        case .valueNotFound(let type, let context):
            return invalid(context.codingPath, "expected \(Self.jsonTypeName(type)), got null")
        @unknown default:
            return invalid([], "does not have the expected shape")
        }
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type: "an integer"
        case is Double.Type, is Float.Type, is Decimal.Type: "a number"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "another type"
        }
    }
}
