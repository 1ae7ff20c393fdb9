import HTTPServer

/// Who may call an operation, as documented in OpenAPI.
public enum RouteAuthentication: String, Sendable {
    case none, agent, apiClient, customer, agentOrAPIClient
}

/// One documented response of an operation.
public struct ResponseDoc: Sendable {
    /// What the response means.
    public let description: String
    /// Media types, each with a schema name in `components.schemas` or nil (none: no body documented).
    public let content: [(mediaType: String, schema: String?)]

    /// A JSON body described by `schema`.
    public static func json(_ description: String, _ schema: String) -> ResponseDoc {
        ResponseDoc(description: description, content: [("application/json", schema)])
    }
    /// A problem document.
    public static func problem(_ description: String) -> ResponseDoc {
        ResponseDoc(description: description, content: [("application/problem+json", "Problem")])
    }
    /// A body of another type with no schema (HTML, Prometheus text).
    public static func other(_ description: String, mediaType: String) -> ResponseDoc {
        ResponseDoc(description: description, content: [(mediaType, nil)])
    }
    /// A body in any of these media types, with no schema (stored documents).
    public static func other(_ description: String, mediaTypes: [String]) -> ResponseDoc {
        ResponseDoc(description: description, content: mediaTypes.map { ($0, nil) })
    }
    /// No body.
    public static func empty(_ description: String) -> ResponseDoc {
        ResponseDoc(description: description, content: [])
    }
}

/// A request body a route accepts, as `/openapi.json` declares it.
public enum RequestContent: Sendable, Equatable {
    /// `application/json` described by a schema in `components.schemas`.
    case json(schema: String)
    /// `multipart/form-data` described by a schema in `components.schemas` (the transport parses it as it arrives);
    /// `partTypes` names the media types a part may declare (OpenAPI's `encoding`), by part name.
    case multipart(schema: String, partTypes: [String: [String]])
    /// The raw body under any of these media types, stored as sent (documents).
    case bytes(mediaTypes: [String])
}

/// An optional query parameter of a route, as `/openapi.json` declares it.
public struct QueryParameter: Sendable, Equatable {
    public let name: String
    /// The values it takes.
    public let values: [String]
    public let description: String
}

/// A route of the service with its documentation: the single source for the router and `/openapi.json`.
public struct APIRoute: Sendable {
    public let method: HTTPMethod
    public let path: String
    public let operationID: String
    public let summary: String
    public let tag: String
    public let authentication: RouteAuthentication
    /// The bodies the route accepts: JSON by default when it names a `requestSchema`; nothing else is declared.
    public private(set) var requestContent: [RequestContent]
    /// Responses particular to this route; `documentedResponses` adds those every route of its kind can give.
    public let responses: [Int: ResponseDoc]
    public let bodyLimit: Int?
    /// Answered at once on the worker thread, or later through a completion (sign-in, uploads, hashing).
    public let handler: Route.Handler
    /// Evidence (issue 5): set for routes that also accept `multipart/form-data` (parsed while it arrives).
    public private(set) var multipart: MultipartLimits?
    /// The handler answers 428 without `If-Match` and 412 when it is stale: declared, so `/openapi.json` lists the header.
    public private(set) var requiresIfMatch = false
    /// Agents' `Idempotency-Key` is taken too (notes: a retry after a lost answer must not store the note twice).
    public private(set) var acceptsAgentIdempotencyKey = false
    /// Query parameters the handler reads, each with the values it takes, as `/openapi.json` declares them.
    public private(set) var queryParameters: [QueryParameter] = []

    private init(
        _ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
        authentication: RouteAuthentication, requestSchema: String?,
        responses: [Int: ResponseDoc], bodyLimit: Int?, handler: Route.Handler
    ) {
        self.method = method
        self.path = path
        self.operationID = operationID
        self.summary = summary
        self.tag = tag
        self.authentication = authentication
        self.requestContent = requestSchema.map { [.json(schema: $0)] } ?? []
        self.responses = responses
        self.bodyLimit = bodyLimit
        self.handler = handler
    }

    /// A route answered on the worker thread.
    public init(
        _ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
        authentication: RouteAuthentication = .none, requestSchema: String? = nil,
        responses: [Int: ResponseDoc], bodyLimit: Int? = nil, handler: @escaping HTTPHandler
    ) {
        self.init(
            method, path, operationID: operationID, summary: summary, tag: tag, authentication: authentication,
            requestSchema: requestSchema, responses: responses, bodyLimit: bodyLimit, handler: .immediate(handler))
    }

    /// A deferred route, answered through a completion from another thread.
    public init(
        _ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
        authentication: RouteAuthentication = .none, requestSchema: String? = nil,
        responses: [Int: ResponseDoc], bodyLimit: Int? = nil, deferred: @escaping DeferredHTTPHandler
    ) {
        self.init(
            method, path, operationID: operationID, summary: summary, tag: tag, authentication: authentication,
            requestSchema: requestSchema, responses: responses, bodyLimit: bodyLimit, handler: .deferred(deferred))
    }

    /// Evidence (issue 5): this route also accepts `multipart/form-data` described by `schema`, under `limits`
    /// (see `Route.acceptingMultipart`); `partTypes`: the media types each named part may declare.
    public func acceptingMultipart(schema: String, partTypes: [String: [String]] = [:], _ limits: MultipartLimits = MultipartLimits()) -> APIRoute {
        var copy = self
        copy.multipart = limits
        copy.requestContent.append(.multipart(schema: schema, partTypes: partTypes))
        return copy
    }

    /// The handler reads this optional query parameter, which takes one of `values`.
    public func readingQuery(_ name: String, oneOf values: [String], _ description: String) -> APIRoute {
        var copy = self
        copy.queryParameters.append(QueryParameter(name: name, values: values, description: description))
        return copy
    }

    /// This route also takes its raw body as a document under these media types.
    public func acceptingBytes(_ mediaTypes: [String]) -> APIRoute {
        var copy = self
        copy.requestContent.append(.bytes(mediaTypes: mediaTypes))
        return copy
    }

    /// The handler checks `If-Match` against the case's version (428 without it, 412 when stale).
    public func requiringIfMatch() -> APIRoute {
        var copy = self
        copy.requiresIfMatch = true
        return copy
    }

    /// `IdempotencyMiddleware` also takes agents' `Idempotency-Key` on this POST.
    public func acceptingAgentIdempotencyKey() -> APIRoute {
        var copy = self
        copy.acceptsAgentIdempotencyKey = true
        return copy
    }

    /// `IdempotencyMiddleware` takes `Idempotency-Key` on every POST an API client may make, and on those declared for agents.
    public var acceptsIdempotencyKey: Bool {
        method == .POST && (authentication == .apiClient || authentication == .agentOrAPIClient || acceptsAgentIdempotencyKey)
    }

    /// Every status the route can answer: its own `responses`, plus those that follow from its kind, derived here once
    /// (the transport's limits, credentials, path parameters, bodies, If-Match, idempotency); the route's wording wins.
    public var documentedResponses: [Int: ResponseDoc] {
        var derived: [Int: ResponseDoc] = [
            400: .problem("Malformed request."),
            413: .problem("payload_too_large: the body exceeds the route's limit."),
            // Refused before routing: libmicrohttpd finds it, the transport answers it (see TransportRefusal).
            431: .problem("header_too_large: the request head is larger than the server reads."),
            503: .problem("unavailable, database_unavailable or database_busy: see Retry-After."),
            // Refused before routing, on every route: PostgreSQL text cannot hold it.
            422: .problem("validation_failed: a path segment or query parameter holds U+0000."),
        ]
        if authentication != .customer {
            // AuthMiddleware refuses credentials that are present but wrong on every route but the customers'.
            derived[401] = .problem("unauthenticated, invalid_signature, stale_signature or replayed_signature.")
            if method.changesState { derived[403] = .problem("csrf_failed: X-CSRF-Token missing or wrong.") }
        }
        if authentication == .agent || authentication == .apiClient || authentication == .agentOrAPIClient {
            derived[403] = .problem("forbidden / insufficient_tier, or csrf_failed.")
        }
        if path.contains("{") { derived[404] = .problem("No such resource.") }
        if !requestContent.isEmpty {
            derived[400] = .problem("malformed_json or a malformed form: the bytes are not what the media type says.")
            derived[415] = .problem("unsupported_media_type: the body is not one of the media types declared.")
            derived[422] = .problem("validation_failed, with errors naming each field (missing, wrong type, unknown value, U+0000).")
        }
        if requiresIfMatch {
            derived[412] = .problem("stale_version: If-Match is not the current version.")
            derived[428] = .problem("if_match_required.")
        }
        if acceptsIdempotencyKey {
            derived[400] = .problem("malformed_json, a malformed form, or invalid_idempotency_key.")
            derived[409] = .problem("idempotency_in_progress: the first request with this Idempotency-Key still runs after the retry waited 5 s.")
            derived[422] = .problem("validation_failed, or idempotency_mismatch: the Idempotency-Key was used with another request.")
        }
        return derived.merging(responses) { _, own in own }
    }
}

/// "METHOD /pattern": how middleware names the routes it treats specially (customer routes).
extension APIRoute {
    /// This route's key.
    var key: String { "\(method.rawValue) \(path)" }
}

extension HTTPRequest {
    /// The key of the route that matched (the raw path when none did).
    var routeKey: String { "\(method.rawValue) \(route ?? path)" }
}
