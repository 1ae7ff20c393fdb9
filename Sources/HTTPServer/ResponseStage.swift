import CMicroHTTPD
import Foundation
import Logging

// The response stage: every answer leaves through here. Errors become problem documents (in one place),
// the final headers are added, the MHD response is queued (or, mid-body, written straight out), and the
// request is counted and logged once.
extension HTTPServer {
    /// The response for a handler's or middleware's outcome.
    func response(for outcome: Result<HTTPResponse, any Error>, context: RequestContext) -> HTTPResponse {
        switch outcome {
        case .success(let response): response
        case .failure(let error): errorResponse(error, context: context)
        }
    }

    /// A thrown problem renders as itself, other errors through the mapper, the rest as a logged 500.
    func errorResponse(_ error: any Error, context: RequestContext) -> HTTPResponse {
        if let problem = error as? any HTTPProblem {
            return .problem(problem, requestID: context.requestID)
        }
        if let problem = errorMapper(error) {
            return .problem(problem, requestID: context.requestID)
        }
        logger.error(
            "unhandled_error",
            [
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
        var hasCSP = false
        var hasNoSniff = false
        var hasReferrer = false
        var hasCacheControl = false
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
    func queue(_ response: HTTPResponse, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.phase = .answered
        let mhdResponse: OpaquePointer?
        var bytes = response.body.count
        var streaming: HTTPBodyWriter?
        if let stream = response.stream {
            // Its size is unknown when the head is logged: the access line says 0 bytes.
            bytes = 0
            let made = streamedResponse(stream, context: context, connection: connection)
            mhdResponse = made?.0
            streaming = made?.1
        } else if let file = response.file {
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
        } else if let stream = response.stream, let streaming {
            startStream(stream, writer: streaming, context: context)
        }
        finish(context, status: response.status, bytes: bytes)
        return result
    }

    /// Answers before (or instead of) reading the body, with `Connection: close` so MHD closes afterwards:
    /// the problem given, else the one decided while assembling.
    func answerEarly(_ context: RequestContext, connection: OpaquePointer, problem: Problem? = nil) -> MHD_Result {
        if let problem { context.disposition = .problem(problem) }
        guard case .problem(let problem) = context.disposition else {
            // A static file asked for with a body: refuse rather than read a body nobody wants.
            return answerEarly(
                context, connection: connection,
                problem: .badRequest(code: HTTPProblemCode.unexpectedBody, detail: "This request must not carry a body."))
        }
        var response = HTTPResponse.problem(problem, requestID: context.requestID)
        response.setHeader("Connection", "close")
        return queue(response, context: context, connection: connection)
    }

    /// Answers in the middle of a body, which MHD 0.9.75 cannot queue: on plain HTTP the response is
    /// written straight to the socket; either way the handler then returns MHD_NO so MHD closes the
    /// connection without reading further.
    func answerMidBody(_ problem: Problem, context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        context.body = []
        context.spool = nil
        context.multipart = nil
        // Over TLS nothing can be written past MHD: the client sees the close.
        answerOnSocket(problem, context: context, descriptor: configuration.usesTLS ? -1 : reclaim_mhd_connection_fd(connection))
        return .NO
    }

    /// Writes a problem straight to the socket and shuts the socket down, for the moments MHD cannot queue an
    /// answer (mid-body) or is about to send its own (`TransportRefusal`): any later write by MHD then fails and
    /// MHD closes the connection. Both directions: the hang-up is an event MHD acts on at once, whereas a socket
    /// shut for writing alone was seen to stay open until the daemon stopped. Nothing is written for a descriptor
    /// of -1; the request is counted and logged either way.
    func answerOnSocket(_ problem: Problem, context: RequestContext, descriptor: Int32) {
        context.phase = .answered
        var response = HTTPResponse.problem(problem, requestID: context.requestID)
        response.setHeader("Connection", "close")
        if descriptor >= 0 {
            var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reasonPhrase(response.status))\r\n"
            for (name, value) in finalHeaders(response, context: context) {
                head += name + ": " + value + "\r\n"
            }
            head += "Date: \(HTTPDate.format(Int(time(nil))))\r\nContent-Length: \(response.body.count)\r\n\r\n"
            let bytes = Array(head.utf8) + response.body
            // Small enough for the socket buffer; a short or failed write just means the client sees the close.
            _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            _ = Foundation.shutdown(descriptor, Int32(SHUT_RDWR))
        }
        finish(context, status: response.status, bytes: response.body.count)
    }

    /// The path as the access log holds it: a segment holding an address (an `@`, percent-encoded or not) is replaced by the
    /// route's `{name}` for it, or `{address}` on an unrouted path, so no log line holds a customer's address
    /// (`PUT /api/v1/accounts/{email}`).
    static func loggablePath(rawPath: Substring, pattern: String?) -> String {
        // Most paths hold neither an escape nor an `@`: as sent, they are as decoded, and hold no address.
        if !rawPath.utf8.contains(where: { $0 == 0x40 || $0 == 0x25 }) { return String(rawPath) }
        let raw = PercentEncoding.rawSegments(of: rawPath)
        let named = pattern.map { PercentEncoding.rawSegments(of: $0[...]) }
        var path = ""
        for (index, segment) in raw.enumerated() {
            let decoded = PercentEncoding.decode(segment) ?? String(segment)
            path += "/"
            if decoded.contains("@") {
                if let named, named.count == raw.count, named[index].hasPrefix("{") {
                    path += named[index]
                } else {
                    path += "{address}"
                }
            } else {
                path += decoded
            }
        }
        return path.isEmpty ? "/" : path
    }

    /// Metrics and the access-log line: method, route pattern, path (never the query), status, time, id, bytes.
    private func finish(_ context: RequestContext, status: Int, bytes: Int) {
        let nanos = monotonicNanos() &- context.startNanos
        metrics.record(method: context.methodLabel, route: context.routeLabel, status: status, seconds: Double(nanos) / 1e9)
        guard logsRequests else { return }
        let sent = context.method == .HEAD || status == 304 ? 0 : bytes
        var pattern: String?
        if case .route(let route, _) = context.disposition { pattern = route.pattern }
        let logged = Self.loggablePath(rawPath: context.rawPath, pattern: pattern)
        let path = logged.utf8.count > 256 ? String(logged.prefix(256)) : logged
        logger.info(
            "request",
            [
                "method": .string(context.methodLabel), "route": .string(context.routeLabel), "path": .string(path),
                "status": .int(status), "duration_ms": .double(Double(nanos / 1000) / 1000),
                "request_id": .string(context.requestID), "bytes": .int(sent),
            ])
    }
}
