/// A kind of problem: its stable `code` with the status and title it is always answered with. Each module that
/// answers problems declares its kinds once, in one `CaseIterable` enum, and `/openapi.json` lists them all.
public protocol ProblemKind: Sendable {
    /// The stable machine word clients switch on.
    var code: String { get }
    /// The HTTP status it is answered with.
    var status: Int { get }
    /// A short summary that does not change between occurrences.
    var title: String { get }
}

/// The problems the transport answers by itself, and the generic ones any HTTP handler may use.
public enum HTTPProblemCode: String, CaseIterable, ProblemKind {
    case badRequest = "bad_request"
    case badRequestTarget = "bad_request_target"
    case malformedRequestLine = "malformed_request_line"
    case malformedHeader = "malformed_header"
    case ambiguousLength = "ambiguous_length"
    case badHost = "bad_host"
    case malformedChunkedBody = "malformed_chunked_body"
    case unexpectedBody = "unexpected_body"
    case malformedJSON = "malformed_json"
    case malformedMultipart = "malformed_multipart"
    case unauthenticated
    case forbidden
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case conflict
    case staleVersion = "stale_version"
    case payloadTooLarge = "payload_too_large"
    case targetTooLong = "target_too_long"
    case unsupportedMediaType = "unsupported_media_type"
    case validationFailed = "validation_failed"
    case ifMatchRequired = "if_match_required"
    case rateLimited = "rate_limited"
    case headerTooLarge = "header_too_large"
    case internalError = "internal_error"
    case unsupportedTransferCoding = "unsupported_transfer_coding"
    case versionNotSupported = "http_version_not_supported"
    case unavailable
    case tooManyUploads = "too_many_uploads"
    case overloaded

    public var code: String { rawValue }

    public var status: Int {
        switch self {
        case .badRequest, .badRequestTarget, .malformedRequestLine, .malformedHeader, .ambiguousLength, .badHost, .malformedChunkedBody,
            .unexpectedBody,
            .malformedJSON, .malformedMultipart:
            400
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .conflict: 409
        case .staleVersion: 412
        case .payloadTooLarge: 413
        case .targetTooLong: 414
        case .unsupportedMediaType: 415
        case .validationFailed: 422
        case .ifMatchRequired: 428
        case .rateLimited: 429
        case .headerTooLarge: 431
        case .internalError: 500
        case .unsupportedTransferCoding: 501
        case .versionNotSupported: 505
        case .unavailable, .tooManyUploads, .overloaded: 503
        }
    }

    public var title: String {
        switch self {
        case .malformedJSON: "Malformed JSON"
        case .malformedMultipart: "Malformed Form"
        default: HTTPStatus.reasonPhrase(status)
        }
    }
}
