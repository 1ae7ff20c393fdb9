import CMicroHTTPD
import Foundation

/// A request libmicrohttpd 0.9.75 is about to refuse by itself, as its log message announces it.
///
/// MHD answers some malformed requests before the access handler is ever called (a bad request line, a header
/// line without a colon, a head over the memory limit, a Content-Length it cannot read) or between two of its
/// calls (malformed chunked framing). Its answers are small HTML pages, not problem documents, and the one for
/// a bad Content-Length even writes its status line twice (its state machine queues the response, then builds
/// its head a second time). No callback names the connection, but MHD logs the refusal ("Error processing
/// request (HTTP response code is …") on the worker thread that owns it, just before queueing its answer. The
/// server then looks at that thread's connections: when exactly one of them can be refusing this, it writes the
/// problem document to that socket itself and shuts its sending side, so MHD's own answer fails to go out and
/// MHD closes the connection. When two or more could be (a rare coincidence of slow clients on one thread), or
/// over TLS, MHD's answer goes out as it is: no other client's request is ever answered by mistake.
struct TransportRefusal: Equatable {
    /// Where a connection is in its request, as far as which refusals it can cause.
    enum Stage: Equatable {
        /// No request under way, or only its request line arriving: a bad version (400), one too new (505), a target too long (414).
        case requestLine
        /// After the request line, before the empty line: a header line without a colon (400), too much head (431).
        case header
        /// The whole head in, not yet handed to the access handler: a Content-Length MHD cannot read (400, 413).
        case framing
        /// The body arriving: malformed chunked framing (400) or a chunk size too large (413).
        case body
    }

    /// The status MHD is about to send.
    let status: Int
    /// The stages a connection can be in to cause it.
    let stages: Set<Stage>

    static let prefix = "Error processing request (HTTP response code is "

    /// The refusal a log message of MHD announces, nil for any other message.
    init?(message: String) {
        guard message.hasPrefix(Self.prefix) else { return nil }
        let digits = message.utf8.dropFirst(Self.prefix.utf8.count).prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard let status = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        self.status = status
        // MHD's fixed texts narrow it down; an unknown one leaves every stage possible, so only a lone connection is answered.
        if message.contains("Content-Length") {
            stages = [.framing]
        } else if message.contains("chunk") {
            stages = [.body]
        } else {
            switch status {
            case 431: stages = [.header]
            case 414, 505: stages = [.requestLine]
            case 400 where message.contains("syntactically incorrect"): stages = [.requestLine, .header]
            default: stages = [.requestLine, .header, .framing, .body]
            }
        }
    }

    /// The problem answered instead of MHD's page, for a connection found in `stage`.
    func problem(at stage: Stage, framing: RequestFraming) -> Problem {
        switch (stage, status) {
        case (_, 431):
            Problem(HTTPProblemCode.headerTooLarge, detail: "The request head is larger than this server reads.")
        case (_, 414):
            Problem(HTTPProblemCode.targetTooLong, detail: "The request target is longer than this server reads.")
        case (_, 505):
            Problem(HTTPProblemCode.versionNotSupported, detail: "Only HTTP/1.0 and HTTP/1.1 are served.")
        case (.framing, 413):
            Problem(HTTPProblemCode.payloadTooLarge, detail: "The Content-Length is larger than any body this server reads.")
        case (.framing, _):
            framing.problem ?? .badRequest(code: HTTPProblemCode.ambiguousLength, detail: "Content-Length must be one decimal number.")
        case (.body, 413):
            Problem(HTTPProblemCode.payloadTooLarge, detail: "A chunk of the body is larger than this server reads.")
        case (.body, _):
            .badRequest(code: HTTPProblemCode.malformedChunkedBody, detail: "The chunked body is malformed.")
        case (.requestLine, _):
            .badRequest(code: HTTPProblemCode.malformedRequestLine, detail: "The request line is not `method target HTTP/1.1`.")
        case (.header, _):
            HeadLayout.problem
        }
    }
}

extension HTTPServer {
    /// MHD announced a refusal on this thread: answer it as a problem document when exactly one connection can be the one.
    func answerInsteadOfMHD(_ refusal: TransportRefusal) {
        guard !configuration.usesTLS else { return }
        var found: (watch: ConnectionWatch, stage: TransportRefusal.Stage)?
        for watch in connectionGuard.watchesOfThisThread() {
            guard let stage = Self.stage(of: watch), refusal.stages.contains(stage) else { continue }
            // Two candidates: leave the answer to MHD rather than risk answering the wrong client.
            guard found == nil else { return }
            found = (watch, stage)
        }
        guard let (watch, stage) = found else { return }
        // Between requests (a bad request line) there is no request yet: one is made for the answer and its log line.
        let context =
            watch.request
            ?? RequestContext(
                target: "", targetStart: 0, targetEnd: 0, startNanos: monotonicNanos(),
                requestID: requestIDs.next(), watch: watch)
        if stage == .framing {
            var noLayout: HeadLayout?
            collectHeaders(context, connection: watch.connection, layout: &noLayout)
        }
        answerOnSocket(refusal.problem(at: stage, framing: context.framing), context: context, descriptor: watch.socket)
    }

    /// Where a connection of this thread is, or nil when it cannot be causing a refusal now (an answer is queued or
    /// on its way, or a deferred handler has it).
    private static func stage(of watch: ConnectionWatch) -> TransportRefusal.Stage? {
        guard reclaim_mhd_queued_status(watch.connection) == 0 else { return nil }
        guard let request = watch.request else { return .requestLine }
        switch request.phase {
        case .fresh: return reclaim_mhd_request_header_size(watch.connection) >= 0 ? .framing : .header
        // Only chunked framing can be malformed mid-body; MHD refuses nothing in a body of known length.
        case .reading: return request.framing.transferEncoding == nil ? nil : .body
        case .suspended, .answered: return nil
        }
    }
}
