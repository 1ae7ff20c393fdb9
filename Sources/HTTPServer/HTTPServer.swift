import CMicroHTTPD
import Foundation
import Logging
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: epoll worker threads, one routing table, problems rendered in
/// one place, security headers on every response, one access-log line per request.
///
/// `@unchecked Sendable`: configuration fields are immutable; the daemon handle and the suspended
/// requests live in `state` (a Mutex); counters are atomics.
public final class HTTPServer: @unchecked Sendable {
    /// The transport settings it was created with.
    public let configuration: HTTPServerConfiguration
    /// The routing table.
    public let router: Router
    let middleware: [any HTTPMiddleware]
    let staticFiles: StaticFiles?
    let errorMapper: @Sendable (any Error) -> (any HTTPProblem)?
    let logger: Logger
    /// Request counts and latencies, for `/metrics`.
    public let metrics: RequestMetrics

    private enum Phase {
        case idle, running, draining, stopping, stopped
    }

    private struct State {
        var phase = Phase.idle
        var daemon: OpaquePointer?
        var boundPort = 0
        /// Deferred requests whose connection is suspended, so shutdown can resume them.
        var suspended: [ObjectIdentifier: RequestContext] = [:]
        /// Keeps the server alive while MHD holds an unretained pointer to it.
        var retainedSelf: Unmanaged<HTTPServer>?
    }

    private let state = Mutex(State())
    /// Set once shutdown starts: responses then carry `Connection: close`.
    private let draining = Atomic<Bool>(false)
    /// The last diagnostic from libmicrohttpd, quoted when the daemon fails to start.
    private let lastTransportMessage = Mutex<String?>(nil)
    /// C memory that must outlive the daemon: the log target pair and the TLS PEM strings.
    private let logTarget: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let tlsStrings: [UnsafeMutablePointer<CChar>]
    private let logsRequests: Bool
    private let requestIDs = RequestIDGenerator()

    /// A server that does nothing until `start()`; the logger and metrics are passed in, never made here.
    public init(
        configuration: HTTPServerConfiguration,
        router: Router,
        middleware: [any HTTPMiddleware] = [],
        staticFiles: StaticFiles? = nil,
        errorMapper: @escaping @Sendable (any Error) -> (any HTTPProblem)? = { _ in nil },
        logger: Logger,
        metrics: RequestMetrics
    ) {
        self.configuration = configuration
        self.router = router
        self.middleware = middleware
        self.staticFiles = staticFiles
        self.errorMapper = errorMapper
        self.logger = logger
        self.metrics = metrics
        self.logsRequests = logger.minimumLevel <= .info
        self.logTarget = .allocate(capacity: 2)
        self.logTarget.initialize(repeating: nil, count: 2)
        if let certificate = configuration.tlsCertificatePEM, let key = configuration.tlsKeyPEM {
            self.tlsStrings = [strdup(certificate)!, strdup(key)!]
        } else {
            self.tlsStrings = []
        }
    }

    deinit {
        logTarget.deallocate()
        for string in tlsStrings {
            // Wipe the key material before giving the memory back.
            memset(string, 0, strlen(string))
            free(string)
        }
    }

    /// The port actually listened on (useful with port 0); 0 before `start()`.
    public var boundPort: Int { state.withLock { $0.boundPort } }

    /// Requests between the request line and MHD's completion callback (counted once, by `metrics`).
    public var requestsInFlight: Int { metrics.requestsInFlight }

    /// Requests holding a body larger than `largeBodyThreshold` right now.
    public var largeBodiesInFlight: Int { metrics.largeBodiesInFlight }

    /// Binds the address and starts the worker threads; throws `HTTPServerError` (e.g. address in use).
    public func start() throws {
        try state.withLock { state in
            guard state.phase == .idle else { throw HTTPServerError.alreadyStarted }
            guard configuration.threads >= 1, configuration.maxConnections >= 1, configuration.connectionMemoryLimit >= 4096 else {
                throw HTTPServerError.invalidConfiguration("threads and maxConnections must be positive, connectionMemoryLimit at least 4096")
            }
            guard (configuration.tlsCertificatePEM == nil) == (configuration.tlsKeyPEM == nil) else {
                throw HTTPServerError.invalidConfiguration("set both tlsCertificatePEM and tlsKeyPEM, or neither")
            }
            let listener = try ListeningSocket.open(host: configuration.host, port: configuration.port)
            let retained = Unmanaged.passRetained(self)
            let me = retained.toOpaque()
            reclaim_mhd_set_log_target(logTarget, transportMessageSink, me)

            var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
            if configuration.usesTLS { flags |= MHD_USE_TLS.rawValue }
            var options: [MHD_OptionItem] = [
                MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(listener), ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.maxConnections, ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, configuration.connectionTimeoutSeconds), ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryLimit, ptr_value: nil),
                reclaim_mhd_option_uri_log(requestLineCallback, me),
                reclaim_mhd_option_notify_completed(requestCompletedCallback, me),
                reclaim_mhd_option_logger(logTarget),
            ]
            // A pool of one is MHD's plain single internal thread.
            if configuration.threads > 1 {
                options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
            }
            if configuration.perIPConnectionLimit > 0 {
                options.append(MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT, value: configuration.perIPConnectionLimit, ptr_value: nil))
            }
            if tlsStrings.count == 2 {
                options.append(MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(tlsStrings[0])))
                options.append(MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(tlsStrings[1])))
            }
            options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))

            let daemon = options.withUnsafeMutableBufferPointer { buffer in
                reclaim_mhd_start_daemon(flags, accessHandlerCallback, me, buffer.baseAddress)
            }
            guard let daemon else {
                close(listener)
                retained.release()
                let reason = lastTransportMessage.withLock { $0 } ?? "unknown reason"
                throw HTTPServerError.daemonFailed(reason.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            state.daemon = daemon
            state.retainedSelf = retained
            state.phase = .running
            let port = Int(reclaim_mhd_bound_port(daemon))
            state.boundPort = port != 0 ? port : ListeningSocket.port(of: listener)
        }
        logger.info("http_listening", [
            "host": .string(configuration.host), "port": .int(boundPort), "threads": .int(configuration.threads),
            "tls": .bool(configuration.usesTLS),
        ])
    }

    /// Stops accepting connections, lets in-flight requests finish for up to `shutdownGraceSeconds`,
    /// answers still-suspended deferred requests with 503, then stops the daemon. Safe to call twice.
    public func shutdown() {
        let daemon: OpaquePointer? = state.withLock { state in
            guard state.phase == .running, let daemon = state.daemon else { return nil }
            state.phase = .draining
            return daemon
        }
        guard let daemon else { return }
        draining.store(true, ordering: .sequentiallyConsistent)
        let listener = MHD_quiesce_daemon(daemon)
        if listener >= 0 { close(listener) }
        logger.info("http_draining", ["in_flight": .int(requestsInFlight)])

        let deadline = monotonicNanos() + UInt64(max(0, configuration.shutdownGraceSeconds) * 1e9)
        while requestsInFlight > 0 && monotonicNanos() < deadline {
            usleep(5_000)
        }

        // MHD must not be stopped with suspended connections: answer them and resume.
        let forced = state.withLock { state -> Int in
            let suspended = Array(state.suspended.values)
            state.suspended.removeAll()
            for context in suspended {
                _ = context.provideAnswer(.failure(Problem.unavailable(retryAfter: 1, detail: "The server is shutting down.")))
                if let connection = context.connection { MHD_resume_connection(connection) }
            }
            state.phase = .stopping
            return suspended.count
        }
        if forced > 0 {
            let resumeDeadline = monotonicNanos() + 500_000_000
            while requestsInFlight > 0 && monotonicNanos() < resumeDeadline {
                usleep(2_000)
            }
        }
        let abandoned = requestsInFlight
        MHD_stop_daemon(daemon)
        let retained = state.withLock { state -> Unmanaged<HTTPServer>? in
            state.phase = .stopped
            state.daemon = nil
            defer { state.retainedSelf = nil }
            return state.retainedSelf
        }
        logger.info("http_stopped", ["abandoned_requests": .int(abandoned), "forced_deferred": .int(forced)])
        retained?.release()
    }

    // MARK: - MHD callbacks (entered through the @convention(c) functions at the bottom of the file)

    /// The request line arrived: allocate the context MHD will hand back as `*con_cls`.
    fileprivate func requestLine(target: UnsafePointer<CChar>) -> UnsafeMutableRawPointer {
        metrics.requestStarted()
        let context = RequestContext(target: String(cString: target), startNanos: monotonicNanos(), requestID: requestIDs.next())
        return Unmanaged.passRetained(context).toOpaque()
    }

    /// MHD is done with the request (answered, failed, or the connection closed).
    fileprivate func requestCompleted(_ pointer: UnsafeMutableRawPointer, reason: MHD_RequestTerminationCode) {
        let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeRetainedValue()
        context.connection = nil
        if context.holdsLargeBodySlot {
            context.holdsLargeBodySlot = false
            metrics.largeBodies.subtract(1, ordering: .relaxed)
        }
        if context.phase != .answered {
            // MHD answered itself (431 for oversized headers, 400 for malformed ones), the client went
            // away, or the connection timed out: no access-log line was written, so note it here.
            logger.info("request_unanswered", [
                "request_id": .string(context.requestID), "method": .string(context.methodLabel),
                "route": .string(context.routeLabel), "reason": .string(Self.terminationReason(reason)),
            ])
        }
        metrics.requestFinished()
    }

    fileprivate func handle(
        connection: OpaquePointer, method: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, context: RequestContext
    ) -> MHD_Result {
        switch context.phase {
        case .fresh:
            return begin(context, connection: connection, method: method)
        case .reading:
            let size = uploadSize.pointee
            guard size > 0 else { return dispatch(context, connection: connection) }
            uploadSize.pointee = 0
            guard case .route = context.disposition else { return .YES }
            let received = context.bodyReceived + size
            if received > context.bodyLimit {
                // Chunked bodies have no Content-Length to check up front: refuse as soon as the limit is passed.
                return answerMidBody(.payloadTooLarge(limit: context.bodyLimit), context: context, connection: connection)
            }
            context.bodyReceived = received
            if received > configuration.largeBodyThreshold && !context.holdsLargeBodySlot {
                // A chunked body just became large: count it, and give it room up to the limit at once.
                guard acquireLargeBodySlot(context) else {
                    return answerMidBody(Self.tooManyLargeBodies, context: context, connection: connection)
                }
                if context.multipart == nil { context.body.reserveCapacity(min(context.bodyLimit, 64 << 20)) }
            }
            guard let uploadData else { return .YES }
            if let multipart = context.multipart {
                if multipart.feed(uploadData, count: size), let problem = multipart.failure {
                    return answerMidBody(problem, context: context, connection: connection)
                }
                if context.retainsRawForm {
                    context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
                }
            } else {
                context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
            }
            return .YES
        case .suspended:
            // Called again after MHD_resume_connection: the answer is waiting.
            guard let result = context.answer.withLock({ $0 }) else { return .YES }
            var response: HTTPResponse
            switch result {
            case .success(let value): response = value
            case .failure(let error): response = errorResponse(error, context: context)
            }
            response.headers.append(contentsOf: context.deferredHeaders)
            return queue(response, context: context, connection: connection)
        case .answered:
            uploadSize.pointee = 0
            return .YES
        }
    }

    /// First call, headers complete: decide what the request is, and refuse early what must not be read.
    /// Anything else is answered on a later call (answering now would force `Connection: close`).
    private func begin(_ context: RequestContext, connection: OpaquePointer, method token: UnsafePointer<CChar>?) -> MHD_Result {
        context.connection = connection
        context.phase = .reading
        let method = token.flatMap(HTTPMethod.init(token:))
        context.method = method
        if let method { context.methodLabel = method.rawValue }
        withUnsafeMutablePointer(to: &context.headers) { headers in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, headerCollector, headers)
        }

        let target = context.target
        let rawPath: Substring
        if let question = target.firstIndex(of: "?") {
            rawPath = target[..<question]
            context.queryItems = PercentEncoding.queryItems(target[target.index(after: question)...])
        } else {
            rawPath = target[...]
        }
        context.rawPath = rawPath
        context.decodedPath = PercentEncoding.decode(rawPath) ?? String(rawPath)

        let contentLength = header("content-length", in: context.headers).flatMap { Int($0) }
        let hasBody = (contentLength ?? 0) > 0 || header("transfer-encoding", in: context.headers) != nil

        guard rawPath.hasPrefix("/") else {
            context.disposition = .problem(.badRequest(code: "bad_request_target", detail: "The request target must be an absolute path."))
            return hasBody ? answerEarly(context, connection: connection) : .YES
        }
        guard let method else {
            context.disposition = .problem(Problem(status: 501, code: "method_not_implemented", detail: "This server does not implement that method."))
            return hasBody ? answerEarly(context, connection: connection) : .YES
        }
        var segments: [String] = []
        for raw in PercentEncoding.rawSegments(of: rawPath) {
            guard let segment = PercentEncoding.decode(raw) else {
                context.disposition = .problem(.badRequest(code: "bad_request_target", detail: "The path has a malformed percent escape."))
                return hasBody ? answerEarly(context, connection: connection) : .YES
            }
            segments.append(segment)
        }

        switch router.match(method: method, segments: segments) {
        case .found(let route, let parameters):
            context.disposition = .route(route, parameters: parameters)
            context.routeLabel = route.pattern
            context.bodyLimit = route.bodyLimit ?? configuration.defaultBodyLimit
            var formType: String?
            if let limits = route.multipart, let type = header("content-type", in: context.headers), HTTPRequest.isMultipartFormData(type) {
                formType = type
                context.bodyLimit = limits.maxBodyBytes
            }
            if let contentLength {
                if contentLength > context.bodyLimit {
                    return answerEarly(context, connection: connection, problem: .payloadTooLarge(limit: context.bodyLimit))
                }
                if contentLength > configuration.largeBodyThreshold {
                    guard acquireLargeBodySlot(context) else {
                        return answerEarly(context, connection: connection, problem: Self.tooManyLargeBodies)
                    }
                }
                // A large body holds a counted slot, so its announced size is reserved whole: one allocation, no
                // doubling copies of megabytes. Smaller ones reserve at most 64 KiB: a client may announce a body
                // and never send it, on every connection.
                if formType == nil {
                    context.body.reserveCapacity(context.holdsLargeBodySlot ? contentLength : min(contentLength, 64 * 1024))
                }
            }
            if let limits = route.multipart, let formType {
                context.multipart = MultipartCollector(connection: connection, contentType: formType, limits: limits, announcedLength: contentLength)
                // Signed clients (Authorization) need the raw bytes too: the signature is over the body as sent.
                if header("authorization", in: context.headers) != nil {
                    context.retainsRawForm = true
                    if let contentLength { context.body.reserveCapacity(min(contentLength, limits.maxBodyBytes)) }
                }
            }
            return .YES
        case .methodNotAllowed(let allowed):
            context.disposition = .problem(.methodNotAllowed(allowed: allowed))
        case .notFound:
            if staticFiles != nil && (method == .GET || method == .HEAD) {
                context.disposition = .staticFile
                context.routeLabel = "static"
            } else {
                context.disposition = .problem(.notFound(detail: "Nothing is served at this path."))
            }
        }
        // Unrouted requests never have their body read: answering now makes MHD close instead.
        return hasBody ? answerEarly(context, connection: connection) : .YES
    }

    private static let tooManyLargeBodies = Problem.unavailable(
        retryAfter: 1, code: "too_many_uploads", detail: "Too many large uploads are in progress; retry shortly."
    )

    /// Takes one of the `maxConcurrentLargeBodies` slots for this request; false when none is free.
    private func acquireLargeBodySlot(_ context: RequestContext) -> Bool {
        let cap = configuration.maxConcurrentLargeBodies
        if cap > 0 && metrics.largeBodies.add(1, ordering: .relaxed).newValue > cap {
            metrics.largeBodies.subtract(1, ordering: .relaxed)
            return false
        }
        if cap <= 0 { metrics.largeBodies.add(1, ordering: .relaxed) }
        context.holdsLargeBodySlot = true
        return true
    }

    /// Answers before (or instead of) reading the rest of the body; MHD then closes the connection.
    private func answerEarly(_ context: RequestContext, connection: OpaquePointer, problem: Problem? = nil) -> MHD_Result {
        if let problem { context.disposition = .problem(problem) }
        guard case .problem(let problem) = context.disposition else {
            // A static file asked for with a body: refuse rather than read a body nobody wants.
            return answerEarly(context, connection: connection, problem: .badRequest(code: "unexpected_body", detail: "This request must not carry a body."))
        }
        let response = HTTPResponse.problem(problem, requestID: context.requestID)
        var mustClose = response
        mustClose.setHeader("Connection", "close")
        return queue(mustClose, context: context, connection: connection)
    }

    /// Final call: the whole body is in. Run the handler (or serve the file, or the problem).
    private func dispatch(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        switch context.disposition {
        case .problem(let problem):
            return queue(.problem(problem, requestID: context.requestID), context: context, connection: connection)
        case .staticFile:
            guard let staticFiles, case .file(let response) = staticFiles.respond(rawPath: context.rawPath, decodedPath: context.decodedPath, request: context.headers) else {
                context.routeLabel = "unmatched"
                return queue(.problem(Problem.notFound(detail: "Nothing is served at this path."), requestID: context.requestID), context: context, connection: connection)
            }
            return queue(response, context: context, connection: connection)
        case .route(let route, let parameters):
            let request = makeRequest(context, multipart: context.multipart?.finish())
            context.multipart = nil
            request.pathParameters = parameters
            request.route = route.pattern
            switch route.handler {
            case .immediate(let handler):
                let response: HTTPResponse
                do {
                    response = try runMiddleware(request, index: 0, terminal: handler)
                } catch {
                    response = errorResponse(error, context: context)
                }
                return queue(response, context: context, connection: connection)
            case .deferred(let handler):
                return runDeferred(handler, request: request, context: context, connection: connection)
            }
        }
    }

    private func makeRequest(_ context: RequestContext, multipart: Result<MultipartForm, Problem>?) -> HTTPRequest {
        let body = context.body
        context.body = []
        // The peer address is copied, not formatted: most handlers never ask for it.
        var peer = PeerAddress.text("")
        if let connection = context.connection, let address = reclaim_mhd_client_address(connection) {
            peer = PeerAddress(address)
        }
        // Behind a trusted proxy the client is the one its X-Forwarded-For names (per-address limits key on it).
        if !configuration.trustedProxies.isEmpty {
            let forwarded = context.headers.filter { $0.name.equalsIgnoringASCIICase("x-forwarded-for") }.map(\.value)
            if !forwarded.isEmpty { peer = .text(configuration.trustedProxies.client(peer: peer.text, forwardedFor: forwarded)) }
        }
        return HTTPRequest(
            method: context.method ?? .GET, path: context.decodedPath, target: context.target, queryItems: context.queryItems,
            headers: context.headers, body: body, requestID: context.requestID, peer: peer,
            isSecure: configuration.usesTLS, multipartOutcome: multipart
        )
    }

    private func runMiddleware(_ request: HTTPRequest, index: Int, terminal: HTTPHandler) throws -> HTTPResponse {
        guard index < middleware.count else { return try terminal(request) }
        return try middleware[index].respond(to: request) { next in
            try self.runMiddleware(next, index: index + 1, terminal: terminal)
        }
    }

    /// Middleware runs first with a placeholder terminal; if it lets the request through, the
    /// connection is suspended and the handler gets a completion that resumes it from any thread.
    private func runDeferred(_ handler: DeferredHTTPHandler, request: HTTPRequest, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        let passage = DeferredPassage()
        let outcome: HTTPResponse
        do {
            outcome = try runMiddleware(request, index: 0) { forwarded in
                passage.request = forwarded
                return HTTPResponse(status: DeferredPassage.placeholderStatus)
            }
        } catch {
            return queue(errorResponse(error, context: context), context: context, connection: connection)
        }
        guard outcome.status == DeferredPassage.placeholderStatus, let forwarded = passage.request else {
            return queue(outcome, context: context, connection: connection)
        }
        context.deferredHeaders = outcome.headers
        // Registering and suspending under the lock means shutdown only ever resumes suspended connections.
        let accepted = state.withLock { state -> Bool in
            guard state.phase == .running || state.phase == .draining else { return false }
            state.suspended[ObjectIdentifier(context)] = context
            MHD_suspend_connection(connection)
            context.phase = .suspended
            return true
        }
        guard accepted else {
            let problem = Problem.unavailable(retryAfter: 1, detail: "The server is shutting down.")
            return queue(.problem(problem, requestID: context.requestID), context: context, connection: connection)
        }
        handler(forwarded) { [self] result in
            guard context.provideAnswer(result) else { return }
            state.withLock { state in
                // Absent when shutdown already resumed it; the daemon may be gone then.
                guard state.suspended.removeValue(forKey: ObjectIdentifier(context)) != nil, let connection = context.connection else { return }
                MHD_resume_connection(connection)
            }
        }
        return .YES
    }

    /// A thrown problem renders as itself, other errors through the mapper, the rest as a logged 500.
    private func errorResponse(_ error: any Error, context: RequestContext) -> HTTPResponse {
        if let problem = error as? any HTTPProblem {
            return .problem(problem, requestID: context.requestID)
        }
        if let problem = errorMapper(error) {
            return .problem(problem, requestID: context.requestID)
        }
        logger.error("unhandled_error", [
            "request_id": .string(context.requestID), "route": .string(context.routeLabel),
            "error_type": .string(String(reflecting: type(of: error))), "error": .string(String(describing: error)),
        ])
        return .problem(Problem.internal, requestID: context.requestID)
    }

    private static let contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// The headers every response leaves with: the handler's own (minus framing, which MHD computes),
    /// then the security headers it did not set itself, `Cache-Control: no-store` under /api, HSTS over
    /// TLS, the request id, and `Connection: close` while draining.
    private func finalHeaders(_ response: HTTPResponse, context: RequestContext) -> [(String, String)] {
        var headers: [(String, String)] = []
        headers.reserveCapacity(response.headers.count + 7)
        var hasCSP = false, hasNoSniff = false, hasReferrer = false, hasCacheControl = false
        for (name, value) in response.headers {
            if name.equalsIgnoringASCIICase("content-length") || name.equalsIgnoringASCIICase("transfer-encoding") { continue }
            if !hasCSP && name.equalsIgnoringASCIICase("content-security-policy") { hasCSP = true }
            if !hasNoSniff && name.equalsIgnoringASCIICase("x-content-type-options") { hasNoSniff = true }
            if !hasReferrer && name.equalsIgnoringASCIICase("referrer-policy") { hasReferrer = true }
            if !hasCacheControl && name.equalsIgnoringASCIICase("cache-control") { hasCacheControl = true }
            headers.append((name, value))
        }
        if !hasNoSniff { headers.append(("X-Content-Type-Options", "nosniff")) }
        if !hasCSP { headers.append(("Content-Security-Policy", Self.contentSecurityPolicy)) }
        if !hasReferrer { headers.append(("Referrer-Policy", "no-referrer")) }
        if !hasCacheControl && (context.decodedPath == "/api" || context.decodedPath.hasPrefix("/api/")) {
            headers.append(("Cache-Control", "no-store"))
        }
        if configuration.usesTLS { headers.append(("Strict-Transport-Security", "max-age=63072000; includeSubDomains")) }
        headers.append(("X-Request-Id", context.requestID))
        if draining.load(ordering: .relaxed) { headers.append(("Connection", "close")) }
        return headers
    }

    /// Turns the response into an MHD response with the final headers, queues it, and logs the request.
    private func queue(_ response: HTTPResponse, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.phase = .answered
        let mhdResponse: OpaquePointer?
        var bytes = response.body.count
        if let file = response.file {
            bytes = file.size
            let descriptor = file.take()
            mhdResponse = MHD_create_response_from_fd(file.size, descriptor)
            // On success MHD owns the descriptor and closes it with the response.
            if mhdResponse == nil { close(descriptor) }
        } else if response.body.isEmpty {
            mhdResponse = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        } else {
            mhdResponse = response.body.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in finalHeaders(response, context: context) where MHD_add_response_header(mhdResponse, name, value) == .NO {
            // MHD refuses names or values with line breaks, among others: drop the header, keep the response.
            logger.warning("response_header_rejected", ["request_id": .string(context.requestID), "header": .string(name)])
        }
        let result = MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
        if result == .NO {
            logger.warning("response_not_queued", ["request_id": .string(context.requestID), "status": .int(response.status)])
        }
        finish(context, status: response.status, bytes: bytes)
        return result
    }

    /// Answers in the middle of a body, which MHD 0.9.75 cannot queue: on plain HTTP the response is
    /// written straight to the socket; either way the handler then returns MHD_NO so MHD closes the
    /// connection without reading further.
    private func answerMidBody(_ problem: Problem, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.phase = .answered
        context.body = []
        context.multipart = nil
        var response = HTTPResponse.problem(problem, requestID: context.requestID)
        response.setHeader("Connection", "close")
        let descriptor = reclaim_mhd_connection_fd(connection)
        if !configuration.usesTLS && descriptor >= 0 {
            var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reasonPhrase(response.status))\r\n"
            for (name, value) in finalHeaders(response, context: context) {
                head += name + ": " + value + "\r\n"
            }
            head += "Date: \(HTTPDate.format(Int(time(nil))))\r\nContent-Length: \(response.body.count)\r\n\r\n"
            let bytes = Array(head.utf8) + response.body
            // Small enough for the socket buffer; a short or failed write just means the client sees the close.
            _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            _ = Foundation.shutdown(descriptor, Int32(SHUT_WR))
        }
        finish(context, status: response.status, bytes: response.body.count)
        return .NO
    }

    /// Metrics and the access-log line: method, route pattern, path (never the query), status, time, id, bytes.
    private func finish(_ context: RequestContext, status: Int, bytes: Int) {
        let nanos = monotonicNanos() &- context.startNanos
        metrics.record(method: context.methodLabel, route: context.routeLabel, status: status, seconds: Double(nanos) / 1e9)
        guard logsRequests else { return }
        let sent = context.method == .HEAD || status == 304 ? 0 : bytes
        let path = context.decodedPath.utf8.count > 256 ? String(context.decodedPath.prefix(256)) : context.decodedPath
        logger.info("request", [
            "method": .string(context.methodLabel), "route": .string(context.routeLabel), "path": .string(path),
            "status": .int(status), "duration_ms": .double(Double(nanos / 1000) / 1000),
            "request_id": .string(context.requestID), "bytes": .int(sent),
        ])
    }

    private func header(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        for header in headers where header.name.equalsIgnoringASCIICase(name) {
            return header.value
        }
        return nil
    }

    private static func terminationReason(_ code: MHD_RequestTerminationCode) -> String {
        switch code {
        case .REQUEST_TERMINATED_COMPLETED_OK: "completed"
        case .REQUEST_TERMINATED_WITH_ERROR: "error"
        case .REQUEST_TERMINATED_TIMEOUT_REACHED: "timeout"
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: "shutdown"
        case .REQUEST_TERMINATED_READ_ERROR: "read_error"
        case .REQUEST_TERMINATED_CLIENT_ABORT: "client_abort"
        @unknown default: "other"
        }
    }

    fileprivate func transportMessage(_ message: String) {
        lastTransportMessage.withLock { $0 = message }
        logger.debug("http_transport", ["message": .string(message.trimmingCharacters(in: .whitespacesAndNewlines))])
    }
}

// MARK: - C entry points. Each recovers the server from its unretained `cls` pointer; the server keeps
// itself retained while the daemon runs, so the pointer stays valid for every callback.

private func requestLineCallback(_ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?) -> UnsafeMutableRawPointer? {
    guard let cls, let uri else { return nil }
    return Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().requestLine(target: uri)
}

private func requestCompletedCallback(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ contextSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let contextSlot, let pointer = contextSlot.pointee else { return }
    contextSlot.pointee = nil
    Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().requestCompleted(pointer, reason: reason)
}

private func accessHandlerCallback(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>?,
    _ contextSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadSize, let pointer = contextSlot?.pointee else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeUnretainedValue()
    return server.handle(connection: connection, method: method, uploadData: uploadData, uploadSize: uploadSize, context: context)
}

/// Appends each request header to the `[(name, value)]` array `cls` points to.
private func headerCollector(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let headers = cls.assumingMemoryBound(to: [(name: String, value: String)].self)
    headers.pointee.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return .YES
}

private func transportMessageSink(_ cls: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let cls, let message else { return }
    Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().transportMessage(String(cString: message))
}
