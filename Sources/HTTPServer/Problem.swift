import Foundation
import Logging

/// One invalid field in a request, reported in a problem's `errors` list.
public struct FieldError: Sendable, Codable, Hashable {
    /// The field's name as the client sent it (`email`, `items[2].amount`).
    public let field: String
    /// What is wrong with it, in a few words.
    public let message: String

    /// One invalid field.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// An error that knows how it is answered over HTTP; rendered as `application/problem+json` by the server.
public protocol HTTPProblem: Error {
    /// The HTTP status code.
    var status: Int { get }
    /// A stable machine word (`not_found`, `validation_failed`); also forms the problem `type` URN.
    var code: String { get }
    /// A short human summary that does not change between occurrences.
    var title: String { get }
    /// Human detail about this occurrence; never secrets or stored data.
    var detail: String? { get }
    /// Per-field validation errors, rendered as `errors` when not empty.
    var fieldErrors: [FieldError] { get }
    /// Headers sent with the problem, such as `Retry-After` or `Allow`.
    var extraHeaders: [(String, String)] { get }
    /// Additional top-level members of the problem document.
    var extraMembers: [String: any Sendable & Encodable] { get }
}

extension HTTPProblem {
    public var detail: String? { nil }
    public var fieldErrors: [FieldError] { [] }
    public var extraHeaders: [(String, String)] { [] }
    public var extraMembers: [String: any Sendable & Encodable] { [:] }
}

/// A ready-made problem; use the static helpers for the common cases.
public struct Problem: HTTPProblem, Sendable, CustomStringConvertible {
    /// See `HTTPProblem` for the meaning of each member.
    public var status: Int
    public var code: String
    public var title: String
    public var detail: String?
    public var fieldErrors: [FieldError]
    public var extraHeaders: [(String, String)]
    public var extraMembers: [String: any Sendable & Encodable]

    /// A problem of a declared kind: its status, code and title come from the catalogue.
    public init(
        _ kind: some ProblemKind,
        detail: String? = nil,
        fieldErrors: [FieldError] = [],
        extraHeaders: [(String, String)] = [],
        extraMembers: [String: any Sendable & Encodable] = [:]
    ) {
        self.status = kind.status
        self.code = kind.code
        self.title = kind.title
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.extraHeaders = extraHeaders
        self.extraMembers = extraMembers
    }

    public var description: String { "Problem(\(status) \(code)\(detail.map { ": " + $0 } ?? ""))" }

    /// 400 with the given code.
    public static func badRequest(code: some ProblemKind = HTTPProblemCode.badRequest, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 400 `malformed_json`: the body is not JSON or does not have the expected shape.
    public static func malformedJSON(_ detail: String? = nil, errors: [FieldError] = []) -> Problem {
        Problem(HTTPProblemCode.malformedJSON, detail: detail, fieldErrors: errors)
    }

    /// 401: not authenticated.
    public static func unauthorized(code: some ProblemKind = HTTPProblemCode.unauthenticated, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 403: authenticated but not allowed.
    public static func forbidden(code: some ProblemKind = HTTPProblemCode.forbidden, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 404: also for things that exist but the caller may not know about.
    public static func notFound(code: some ProblemKind = HTTPProblemCode.notFound, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 405 with an `Allow` header listing what the path accepts.
    public static func methodNotAllowed(allowed: [HTTPMethod]) -> Problem {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return Problem(HTTPProblemCode.methodNotAllowed, detail: "This resource accepts \(list).", extraHeaders: [("Allow", list)])
    }

    /// 409: conflicts with the current state.
    public static func conflict(code: some ProblemKind = HTTPProblemCode.conflict, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 412: a stale `If-Match`.
    public static func preconditionFailed(code: some ProblemKind = HTTPProblemCode.staleVersion, detail: String? = nil) -> Problem {
        Problem(code, detail: detail)
    }

    /// 413: the body is larger than the route accepts.
    public static func payloadTooLarge(limit: Int) -> Problem {
        Problem(HTTPProblemCode.payloadTooLarge, detail: "The request body exceeds the limit of \(limit) bytes.")
    }

    /// 415: the body's media type is not the one expected.
    public static func unsupportedMediaType(expected: String) -> Problem {
        Problem(HTTPProblemCode.unsupportedMediaType, detail: "Send the body as \(expected).")
    }

    /// 422: well-formed but invalid, with one entry per invalid field.
    public static func unprocessable(code: some ProblemKind = HTTPProblemCode.validationFailed, detail: String? = nil, errors: [FieldError])
        -> Problem
    {
        Problem(code, detail: detail ?? "The request has invalid fields.", fieldErrors: errors)
    }

    /// 428: this request needs an `If-Match` header.
    public static func preconditionRequired(code: some ProblemKind = HTTPProblemCode.ifMatchRequired, detail: String? = nil) -> Problem {
        Problem(code, detail: detail ?? "Send If-Match with the current ETag.")
    }

    /// 429 with `Retry-After` (whole seconds, at least 1).
    public static func tooManyRequests(retryAfter: Int, code: some ProblemKind = HTTPProblemCode.rateLimited, detail: String? = nil) -> Problem {
        Problem(code, detail: detail, extraHeaders: [("Retry-After", String(max(1, retryAfter)))])
    }

    /// 503 with `Retry-After` (whole seconds, at least 1).
    public static func unavailable(retryAfter: Int, code: some ProblemKind = HTTPProblemCode.unavailable, detail: String? = nil) -> Problem {
        Problem(code, detail: detail, extraHeaders: [("Retry-After", String(max(1, retryAfter)))])
    }

    /// 500 `internal_error`; the cause goes to the log, never into the response.
    public static var `internal`: Problem {
        Problem(HTTPProblemCode.internalError, detail: "An unexpected error occurred. Quote the request id when reporting it.")
    }
}

/// Reason phrases for the statuses the service uses.
public enum HTTPStatus {
    /// The standard reason phrase, or "Error"/"OK" for unknown codes.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: status < 400 ? "OK" : "Error"
        }
    }
}

extension HTTPResponse {
    /// The one place problems become responses: an RFC 9457 document carrying the request id.
    public static func problem(_ problem: any HTTPProblem, requestID: String) -> HTTPResponse {
        var json = "{\"type\":"
        JSONText.appendString("urn:reclaim:problem:" + problem.code, to: &json)
        json += ",\"title\":"
        JSONText.appendString(problem.title, to: &json)
        json += ",\"status\":"
        json += String(problem.status)
        if let detail = problem.detail {
            json += ",\"detail\":"
            JSONText.appendString(detail, to: &json)
        }
        json += ",\"code\":"
        JSONText.appendString(problem.code, to: &json)
        json += ",\"request_id\":"
        JSONText.appendString(requestID, to: &json)
        let fieldErrors = problem.fieldErrors
        if !fieldErrors.isEmpty {
            json += ",\"errors\":["
            for (index, error) in fieldErrors.enumerated() {
                if index > 0 { json += "," }
                json += "{\"field\":"
                JSONText.appendString(error.field, to: &json)
                json += ",\"message\":"
                JSONText.appendString(error.message, to: &json)
                json += "}"
            }
            json += "]"
        }
        let members = problem.extraMembers
        if !members.isEmpty {
            for key in members.keys.sorted() where !reservedProblemMembers.contains(key) {
                // Encoded one by one so a member that fails to encode is dropped, not the whole document.
                guard let value = members[key], let encoded = try? JSONCoding.encoder.encode(EncodableBox(value)) else { continue }
                json += ","
                JSONText.appendString(key, to: &json)
                json += ":"
                json += String(decoding: encoded, as: UTF8.self)
            }
        }
        json += "}"
        var headers: [(String, String)] = [("Content-Type", "application/problem+json"), ("Cache-Control", "no-store")]
        headers.append(contentsOf: problem.extraHeaders)
        return HTTPResponse(status: problem.status, headers: headers, body: Array(json.utf8))
    }

    private static let reservedProblemMembers: Set<String> = ["type", "title", "status", "detail", "code", "request_id", "errors"]
}

/// Lets an existential Encodable be handed to JSONEncoder.
struct EncodableBox: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
