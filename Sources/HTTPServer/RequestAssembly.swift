import CMicroHTTPD
import Foundation

// Request assembly: from MHD's first call (request line and headers) to a whole `HTTPRequest`. Decides
// what the request is (route, static file or problem), refuses early what must not be read (ambiguous
// framing, bodies over the limit, too many large uploads), and gathers the body or hands it to the
// multipart parser.
extension HTTPServer {
    /// First call, headers complete: decide what the request is, and refuse early what must not be read.
    /// Anything else is answered on a later call (answering now would force `Connection: close`).
    func begin(
        _ context: RequestContext, connection: OpaquePointer, method token: UnsafePointer<CChar>?,
        version: UnsafePointer<CChar>?
    ) -> MHD_Result {
        context.connection = connection
        context.phase = .reading
        let method = token.flatMap(HTTPMethod.init(token:))
        context.method = method
        if let method { context.methodLabel = method.rawValue }
        var layout = token.flatMap { method in
            version.map { HeadLayout(method: method, version: $0, headerSize: reclaim_mhd_request_header_size(connection)) }
        }
        collectHeaders(context, connection: connection, layout: &layout)
        connectionGuard.headArrived(context.watch)
        if context.watch?.overflow == true {
            // Accepted above the cap only to be told so now, rather than left waiting in the listen queue.
            return answerEarly(
                context, connection: connection,
                problem: .unavailable(
                    retryAfter: 1, code: HTTPProblemCode.overloaded,
                    detail: "Too many connections; try again in a moment."))
        }

        // Ambiguous framing or a head MHD read more leniently than RFC 9112 allows closes the connection whether
        // or not a body follows: the bytes after it are suspect.
        guard let token, let version,
            !HeadLayout.requestLineHidesNUL(
                method: token, targetStart: context.targetStart, targetEnd: context.targetEnd, version: version,
                bufferLimit: configuration.connectionMemoryLimit
            )
        else {
            return answerEarly(
                context, connection: connection,
                problem: .badRequest(code: HTTPProblemCode.malformedRequestLine, detail: "The request line holds a NUL byte."))
        }
        // HTTP/1.0 needs no Host (MHD refuses any version but 1.0 and 1.1 before this call).
        if let problem = context.framing.problem(requiresHost: strcmp(version, "HTTP/1.0") != 0) {
            return answerEarly(context, connection: connection, problem: problem)
        }
        guard layout?.isIntact == true else {
            return answerEarly(context, connection: connection, problem: HeadLayout.problem)
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

        let contentLength = context.framing.contentLength
        let hasBody = context.framing.announcesBody

        guard rawPath.hasPrefix("/") else {
            context.disposition = .problem(
                .badRequest(code: HTTPProblemCode.badRequestTarget, detail: "The request target must be an absolute path."))
            return hasBody ? answerEarly(context, connection: connection) : .YES
        }
        var segments: [String] = []
        for raw in PercentEncoding.rawSegments(of: rawPath) {
            guard let segment = PercentEncoding.decode(raw) else {
                context.disposition = .problem(
                    .badRequest(code: HTTPProblemCode.badRequestTarget, detail: "The path has a malformed percent escape."))
                return hasBody ? answerEarly(context, connection: connection) : .YES
            }
            segments.append(segment)
        }
        if let problem = Self.nulProblem(segments: segments, query: context.queryItems) {
            context.disposition = .problem(problem)
            return hasBody ? answerEarly(context, connection: connection) : .YES
        }

        // A method no route uses (TRACE, say) still matches the path, so a routed path answers 405 with Allow.
        switch router.match(method: method, segments: segments) {
        case .found(let route, let parameters):
            context.disposition = .route(route, parameters: parameters)
            context.routeLabel = route.pattern
            context.bodyLimit = route.bodyLimit ?? configuration.defaultBodyLimit
            var formType: String?
            let contentType = header("content-type", in: context.headers)
            if let limits = route.multipart, let type = contentType, HTTPRequest.isMultipartFormData(type) {
                formType = type
                context.bodyLimit = limits.maxBodyBytes
                // Signed clients (Authorization) need the raw bytes too: the signature is over the body as sent. A form
                // is a document: its raw copy is spooled like its file part.
                context.retainsRawForm = header("authorization", in: context.headers) != nil
                context.spoolsBody = context.retainsRawForm
            } else {
                // JSON is parsed whole whatever happens, so it stays in memory (route limits keep it small).
                context.spoolsBody = route.spoolsLargeBodies && !(contentType.map(HTTPRequest.isJSONMediaType) ?? false)
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
                if context.spoolsBody && context.holdsLargeBodySlot {
                    // A large document goes to disk as it arrives: 64 KiB of memory, not its announced size.
                    do {
                        context.spool = try SpooledBytes(directory: configuration.spoolDirectory)
                    } catch {
                        return answerEarly(context, connection: connection, problem: spoolFailed(error, context: context))
                    }
                } else if formType == nil || context.retainsRawForm {
                    // A large body kept in memory holds a counted slot, so its announced size is reserved whole: one
                    // allocation, no doubling copies of megabytes. Smaller ones reserve at most 64 KiB: a client may
                    // announce a body and never send it, on every connection.
                    context.body.reserveCapacity(context.holdsLargeBodySlot ? contentLength : min(contentLength, 64 * 1024))
                }
            }
            if let limits = route.multipart, let formType {
                context.multipart = MultipartCollector(
                    connection: connection, contentType: formType, limits: limits, announcedLength: contentLength,
                    spoolDirectory: configuration.spoolDirectory, spoolThreshold: configuration.largeBodyThreshold)
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

    /// 422 when a decoded path segment or query parameter (name or value) holds U+0000: every route, static file and
    /// unknown path is refused here, before any handler could hand the text to PostgreSQL (which cannot store it) or a log.
    static func nulProblem(segments: [String], query: [(name: String, value: String)]) -> Problem? {
        var errors: [FieldError] = []
        if segments.contains(where: { $0.utf8.contains(0) }) { errors.append(FieldError(field: "path", message: "must not contain U+0000")) }
        for item in query where item.name.utf8.contains(0) || item.value.utf8.contains(0) {
            // The field names the parameter, unless its name is what holds the NUL (never echoed back).
            errors.append(FieldError(field: item.name.utf8.contains(0) ? "query" : item.name, message: "must not contain U+0000"))
        }
        guard !errors.isEmpty else { return nil }
        return .unprocessable(detail: "The path or the query holds the character U+0000.", errors: errors)
    }

    /// One body chunk of a routed request: counted against the limit, then buffered or parsed as a form.
    func receive(_ data: UnsafePointer<CChar>?, count size: Int, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        guard case .route = context.disposition else { return .YES }
        let received = context.bodyReceived + size
        if received > context.bodyLimit {
            // Chunked bodies have no Content-Length to check up front: refuse as soon as the limit is passed.
            return answerMidBody(.payloadTooLarge(limit: context.bodyLimit), context: context, connection: connection)
        }
        context.bodyReceived = received
        if received > configuration.largeBodyThreshold && !context.holdsLargeBodySlot {
            // A chunked body just became large: count it, and (kept in memory) give it room up to the limit at once.
            guard acquireLargeBodySlot(context) else {
                return answerMidBody(Self.tooManyLargeBodies, context: context, connection: connection)
            }
            if context.multipart == nil && !context.spoolsBody { context.body.reserveCapacity(min(context.bodyLimit, 64 << 20)) }
        }
        guard let data else { return .YES }
        if let multipart = context.multipart {
            if multipart.feed(data, count: size), let problem = multipart.failure {
                if let error = multipart.spoolError { logSpoolFailure(error, context: context) }
                return answerMidBody(problem, context: context, connection: connection)
            }
            if context.retainsRawForm, let problem = keep(UnsafeRawBufferPointer(start: data, count: size), context: context) {
                return answerMidBody(problem, context: context, connection: connection)
            }
        } else if let problem = keep(UnsafeRawBufferPointer(start: data, count: size), context: context) {
            return answerMidBody(problem, context: context, connection: connection)
        }
        return .YES
    }

    /// Keeps raw body bytes: in memory, or in the spool once a document body passes the threshold. A problem when the
    /// spool cannot be written.
    private func keep(_ bytes: UnsafeRawBufferPointer, context: RequestContext) -> Problem? {
        do {
            if let spool = context.spool {
                try spool.append(bytes)
            } else {
                context.body.append(contentsOf: bytes)
                if context.spoolsBody && context.body.count > configuration.largeBodyThreshold {
                    // A chunked document just became large: what is held moves to disk, and memory is given back.
                    let spool = try SpooledBytes(directory: configuration.spoolDirectory)
                    try context.body.withUnsafeBytes { try spool.append($0) }
                    context.spool = spool
                    context.body = []
                }
            }
            return nil
        } catch {
            return spoolFailed(error, context: context)
        }
    }

    /// 503 for a body that could not be spooled (the directory is missing or full), logged with the reason.
    func spoolFailed(_ error: any Error, context: RequestContext) -> Problem {
        logSpoolFailure(error, context: context)
        return MultipartCollector.spoolFailed(error)
    }

    private func logSpoolFailure(_ error: any Error, context: RequestContext) {
        logger.error("body_spool_failed", ["request_id": .string(context.requestID), "error": .string(String(describing: error))])
    }

    static let tooManyLargeBodies = Problem.unavailable(
        retryAfter: 1, code: HTTPProblemCode.tooManyUploads, detail: "Too many large uploads are in progress; retry shortly."
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

    /// The whole request, once the body is in (a spooled one complete on disk); the context gives up its body to it.
    func makeRequest(_ context: RequestContext, multipart: Result<MultipartForm, Problem>?) -> HTTPRequest {
        let body = context.body
        context.body = []
        let content = context.spool.map(BodyContent.init(spooled:)) ?? BodyContent(body)
        context.spool = nil
        if content.isSpooled || (try? multipart?.get())?.parts.contains(where: \.content.isSpooled) == true {
            metrics.spooled.add(1, ordering: .relaxed)
        }
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
            headers: context.headers, body: body, content: content, requestID: context.requestID, peer: peer,
            isSecure: configuration.usesTLS, multipartOutcome: multipart
        )
    }

    private func header(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        for header in headers where header.name.equalsIgnoringASCIICase(name) {
            return header.value
        }
        return nil
    }
}

/// What the header iterator fills: the request's context and, on the first call, the layout being checked.
struct HeaderCollection {
    let context: RequestContext
    var layout: HeadLayout?
}

extension HTTPServer {
    /// Copies MHD's request headers into the context, noting their framing (and, with a layout, checking it) on the way.
    func collectHeaders(_ context: RequestContext, connection: OpaquePointer, layout: inout HeadLayout?) {
        var collection = HeaderCollection(context: context, layout: layout)
        _ = withUnsafeMutablePointer(to: &collection) { MHD_get_connection_values_n(connection, .HEADER_KIND, headerCollector, $0) }
        layout = collection.layout
    }
}

/// Appends each request header to the collection `cls` points to, noting its framing and layout on the way.
private func headerCollector(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
    _ value: UnsafePointer<CChar>?, _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let collection = cls.assumingMemoryBound(to: HeaderCollection.self)
    collection.pointee.layout?.note(name: key, nameSize: keySize, value: value, valueSize: valueSize)
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
    let context = collection.pointee.context
    context.framing.note(name: name, value: text)
    context.headers.append((name, text))
    return .YES
}
