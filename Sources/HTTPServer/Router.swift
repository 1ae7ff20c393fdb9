/// Answers a request on the worker thread.
public typealias HTTPHandler = @Sendable (HTTPRequest) throws -> HTTPResponse

/// Answers later, from any thread: the connection is suspended until the completion is called.
/// A completion that is never called holds the connection until shutdown; call it exactly once.
public typealias DeferredHTTPHandler = @Sendable (HTTPRequest, @escaping HTTPResponder.Completion) -> Void

/// Namespace for the deferred-answer callback.
public enum HTTPResponder {
    /// Hands the answer (or an error, rendered as a problem) back to the server; callable from any thread.
    public typealias Completion = @Sendable (Result<HTTPResponse, any Error>) -> Void
}

/// One entry of the routing table.
public struct Route: Sendable {
    /// How the route answers.
    public enum Handler: Sendable {
        case immediate(HTTPHandler)
        case deferred(DeferredHTTPHandler)
    }

    /// The body limit used when a route does not name one (overridden by `HTTPServerConfiguration.defaultBodyLimit`).
    public static let defaultBodyLimit = 1 << 20

    /// The method answered (a GET route also answers HEAD).
    public let method: HTTPMethod
    /// Segments separated by `/`; `{name}` matches one non-empty segment.
    public let pattern: String
    /// Largest accepted body in bytes (larger requests get 413 before the body is read); nil: the server's
    /// configured `defaultBodyLimit`.
    public var bodyLimit: Int?
    /// The code that answers.
    public let handler: Handler
    /// Set by `acceptingMultipart(_:)`: `multipart/form-data` bodies are parsed as they arrive, under these caps.
    public internal(set) var multipart: MultipartLimits?
    /// Set by `spoolingLargeBodies()`: a large raw body is spooled to disk, not held in memory (`HTTPRequest.content`).
    public private(set) var spoolsLargeBodies = false

    /// A route answered synchronously on the worker thread.
    public init(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int? = nil, handler: @escaping HTTPHandler) {
        self.init(method, pattern, bodyLimit: bodyLimit, answeredBy: .immediate(handler))
    }

    /// A route answered later through a completion (work done on another queue).
    public init(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int? = nil, deferred: @escaping DeferredHTTPHandler) {
        self.init(method, pattern, bodyLimit: bodyLimit, answeredBy: .deferred(deferred))
    }

    /// This route takes documents: a raw body over the server's `largeBodyThreshold` is spooled to an encrypted
    /// temporary file as it arrives and handed over as `HTTPRequest.content` (with `body` empty), so its memory stays at
    /// 64 KiB. JSON bodies stay in memory whatever their size: they are parsed whole anyway.
    public func spoolingLargeBodies() -> Route {
        var copy = self
        copy.spoolsLargeBodies = true
        return copy
    }

    /// A route answered by `handler`, either way.
    public init(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int?, answeredBy handler: Handler) {
        self.method = method
        self.pattern = pattern
        self.bodyLimit = bodyLimit
        self.handler = handler
    }
}

/// The outcome of matching a method and path against the table.
public enum RouteMatch: Sendable {
    /// `route` answers; `parameters` holds the decoded `{name}` segments.
    case found(route: Route, parameters: [String: String])
    /// The path exists for other methods (sent as `Allow`).
    case methodNotAllowed(allowed: [HTTPMethod])
    case notFound
}

/// All routes in one table, matched segment by segment (literal segments win over `{parameters}`).
/// HEAD is answered by the GET route when no HEAD route exists.
public struct Router: Sendable {
    /// Every route, in the order given (for documentation such as OpenAPI).
    public let routes: [Route]

    /// A trie node; children are indices into `nodes` so the whole table is a plain value.
    private struct Node: Sendable {
        var literals: [String: Int] = [:]
        var parameter: Int?
        /// Route index per method for patterns ending here.
        var methods: [HTTPMethod: Int] = [:]
    }

    private var nodes: [Node] = [Node()]
    /// For each route, the parameter names by segment position (nil for literal segments).
    private var parameterNames: [[String?]] = []

    /// Builds the table; a duplicate method and pattern, or a malformed pattern, is a programming error.
    public init(routes: [Route]) {
        self.routes = routes
        for (index, route) in routes.enumerated() {
            precondition(route.pattern.hasPrefix("/"), "route pattern must start with /: \(route.pattern)")
            var node = 0
            var names: [String?] = []
            for segment in PercentEncoding.rawSegments(of: route.pattern[...]) {
                if segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2 {
                    names.append(String(segment.dropFirst().dropLast()))
                    if let next = nodes[node].parameter {
                        node = next
                    } else {
                        nodes.append(Node())
                        nodes[node].parameter = nodes.count - 1
                        node = nodes.count - 1
                    }
                } else {
                    precondition(!segment.contains("{") && !segment.contains("}"), "malformed route segment \(segment) in \(route.pattern)")
                    names.append(nil)
                    let key = String(segment)
                    if let next = nodes[node].literals[key] {
                        node = next
                    } else {
                        nodes.append(Node())
                        nodes[node].literals[key] = nodes.count - 1
                        node = nodes.count - 1
                    }
                }
            }
            precondition(nodes[node].methods[route.method] == nil, "duplicate route \(route.method) \(route.pattern)")
            nodes[node].methods[route.method] = index
            parameterNames.append(names)
        }
    }

    /// Matches an already-decoded path ("/api/v1/cases/RC-1").
    public func match(method: HTTPMethod, path: String) -> RouteMatch {
        let segments = PercentEncoding.rawSegments(of: path[...]).map(String.init)
        return match(method: method, segments: segments)
    }

    /// Matches decoded path segments; the server decodes each raw segment so `%2F` stays inside one segment.
    /// A nil method (one the server does not route, such as TRACE) finds no route, only 405 or 404.
    func match(method: HTTPMethod?, segments: [String]) -> RouteMatch {
        // First look for a pattern that accepts the method (a literal one that does not should not hide a
        // parameter one that does); failing that, any pattern for the path makes the answer 405.
        if let method,
            let node = find(
                segments, from: 0, at: 0,
                where: { node in
                    node.methods[method] != nil || (method == .HEAD && node.methods[.GET] != nil)
                })
        {
            let methods = nodes[node].methods
            let index = methods[method] ?? methods[.GET]!
            var parameters: [String: String] = [:]
            for (position, name) in parameterNames[index].enumerated() {
                if let name { parameters[name] = segments[position] }
            }
            return .found(route: routes[index], parameters: parameters)
        }
        guard let node = find(segments, from: 0, at: 0, where: { !$0.methods.isEmpty }) else { return .notFound }
        var allowed = Set(nodes[node].methods.keys)
        if allowed.contains(.GET) { allowed.insert(.HEAD) }
        return .methodNotAllowed(allowed: HTTPMethod.allCases.filter(allowed.contains))
    }

    /// Depth-first: a literal child first, then the parameter child.
    private func find(_ segments: [String], from position: Int, at node: Int, where accepts: (Node) -> Bool) -> Int? {
        if position == segments.count {
            return accepts(nodes[node]) ? node : nil
        }
        let segment = segments[position]
        if let next = nodes[node].literals[segment], let found = find(segments, from: position + 1, at: next, where: accepts) {
            return found
        }
        if !segment.isEmpty, let next = nodes[node].parameter, let found = find(segments, from: position + 1, at: next, where: accepts) {
            return found
        }
        return nil
    }
}
