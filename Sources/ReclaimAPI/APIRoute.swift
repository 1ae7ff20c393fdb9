import HTTPServer

/// Who may call an operation, as documented in OpenAPI.
public enum RouteAuthentication: String, Sendable {
    case none, agent, apiClient, customer, agentOrAPIClient
}

/// One documented response of an operation.
public struct ResponseDoc: Sendable {
    /// What the response means.
    public let description: String
    /// Media type and schema name in `components.schemas` (nil: no body).
    public let content: (mediaType: String, schema: String?)?

    /// A JSON body described by `schema`.
    public static func json(_ description: String, _ schema: String) -> ResponseDoc {
        ResponseDoc(description: description, content: ("application/json", schema))
    }
    /// A problem document.
    public static func problem(_ description: String) -> ResponseDoc {
        ResponseDoc(description: description, content: ("application/problem+json", "Problem"))
    }
    /// A body of another type with no schema (HTML, Prometheus text).
    public static func other(_ description: String, mediaType: String) -> ResponseDoc {
        ResponseDoc(description: description, content: (mediaType, nil))
    }
    /// No body.
    public static func empty(_ description: String) -> ResponseDoc {
        ResponseDoc(description: description, content: nil)
    }
}

/// A route of the service with its documentation: the single source for the router and `/openapi.json`.
public struct APIRoute: Sendable {
    public let method: HTTPMethod
    public let path: String
    public let operationID: String
    public let summary: String
    public let tag: String
    public let authentication: RouteAuthentication
    public let requestSchema: String?
    public let responses: [Int: ResponseDoc]
    public let bodyLimit: Int?
    /// Answered at once on the worker thread, or later through a completion (sign-in, uploads, hashing).
    public let handler: Route.Handler
    /// Evidence (issue 5): set for routes that also accept `multipart/form-data` (parsed while it arrives).
    public private(set) var multipart: MultipartLimits?

    private init(_ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
                 authentication: RouteAuthentication, requestSchema: String?,
                 responses: [Int: ResponseDoc], bodyLimit: Int?, handler: Route.Handler) {
        self.method = method
        self.path = path
        self.operationID = operationID
        self.summary = summary
        self.tag = tag
        self.authentication = authentication
        self.requestSchema = requestSchema
        self.responses = responses
        self.bodyLimit = bodyLimit
        self.handler = handler
    }

    /// A route answered on the worker thread.
    public init(_ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
                authentication: RouteAuthentication = .none, requestSchema: String? = nil,
                responses: [Int: ResponseDoc], bodyLimit: Int? = nil, handler: @escaping HTTPHandler) {
        self.init(method, path, operationID: operationID, summary: summary, tag: tag, authentication: authentication,
                  requestSchema: requestSchema, responses: responses, bodyLimit: bodyLimit, handler: .immediate(handler))
    }

    /// A deferred route, answered through a completion from another thread.
    public init(_ method: HTTPMethod, _ path: String, operationID: String, summary: String, tag: String,
                authentication: RouteAuthentication = .none, requestSchema: String? = nil,
                responses: [Int: ResponseDoc], bodyLimit: Int? = nil, deferred: @escaping DeferredHTTPHandler) {
        self.init(method, path, operationID: operationID, summary: summary, tag: tag, authentication: authentication,
                  requestSchema: requestSchema, responses: responses, bodyLimit: bodyLimit, handler: .deferred(deferred))
    }

    /// Evidence (issue 5): this route also accepts `multipart/form-data` under `limits` (see `Route.acceptingMultipart`).
    public func acceptingMultipart(_ limits: MultipartLimits = MultipartLimits()) -> APIRoute {
        var copy = self
        copy.multipart = limits
        return copy
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
