import CMicroHTTPD
import Foundation
import Logging

// The libmicrohttpd glue: starting and stopping the daemon, the C callbacks and what each call of the
// access handler means, and suspending a connection while a deferred handler works. Everything that
// touches an MHD daemon or connection handle outside the response stage is here.
extension HTTPServer {
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
                // The guard's accept policy is the real cap; MHD's, split across its threads, must never be the one reached:
                // at its limit MHD stops accepting and new clients wait unanswered in the listen queue.
                MHD_OptionItem(option: .CONNECTION_LIMIT, value: 2 * connectionGuard.hardCap + 16 * configuration.threads, ptr_value: nil),
                reclaim_mhd_option_notify_connection(connectionNotifyCallback, me),
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
                reclaim_mhd_start_daemon(flags, acceptPolicyCallback, me, accessHandlerCallback, me, buffer.baseAddress)
            }
            guard let daemon else {
                close(listener)
                retained.release()
                let reason = lastTransportMessage.withLock { $0 } ?? "unknown reason"
                throw HTTPServerError.daemonFailed(reason.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            state.daemon = daemon
            state.retainedSelf = retained
            connectionGuard.start()
            state.phase = .running
            let port = Int(reclaim_mhd_bound_port(daemon))
            state.boundPort = port != 0 ? port : ListeningSocket.port(of: listener)
        }
        logger.info(
            "http_listening",
            [
                "host": .string(configuration.host), "port": .int(boundPort), "threads": .int(configuration.threads),
                "handler_threads": .int(configuration.handlerThreads),
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
                _ = context.provideAnswer(.problem(Self.shuttingDown, requestID: context.requestID))
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
        // A streamed body still going after the grace ends with an error; its connection may be suspended.
        cancelStreams()
        let abandoned = requestsInFlight
        // MHD 0.9.75 dereferences a NULL response when it refuses a request while the daemon stops (its queueing
        // answers "done" without queueing once shutdown has begun): every connection still open is shut down first
        // and closed by MHD on its own threads, so none is left for it to refuse.
        connectionGuard.shutDownAll()
        let closeDeadline = monotonicNanos() + 500_000_000
        while connectionGuard.openConnections > 0 && monotonicNanos() < closeDeadline {
            usleep(2_000)
        }
        MHD_stop_daemon(daemon)
        connectionGuard.stop()
        let retained = state.withLock { state -> Unmanaged<HTTPServer>? in
            state.phase = .stopped
            state.daemon = nil
            defer { state.retainedSelf = nil }
            return state.retainedSelf
        }
        logger.info("http_stopped", ["abandoned_requests": .int(abandoned), "forced_deferred": .int(forced)])
        retained?.release()
    }

    // MARK: - Suspend and resume, for deferred handlers

    /// Suspends the connection while a deferred handler works; false once shutdown is past draining.
    /// Registering and suspending under one lock means shutdown only ever resumes suspended connections.
    func suspend(_ context: RequestContext, connection: OpaquePointer) -> Bool {
        state.withLock { state -> Bool in
            guard state.phase == .running || state.phase == .draining else { return false }
            state.suspended[ObjectIdentifier(context)] = context
            MHD_suspend_connection(connection)
            context.phase = .suspended
            return true
        }
    }

    /// Hands a deferred request its final answer and resumes its connection; callable from any thread.
    /// The access handler then queues the answer. Ignored when shutdown answered first.
    func resume(_ context: RequestContext, with answer: HTTPResponse) {
        guard context.provideAnswer(answer) else { return }
        state.withLock { state in
            // Absent when shutdown already resumed it; the daemon may be gone then.
            guard state.suspended.removeValue(forKey: ObjectIdentifier(context)) != nil, let connection = context.connection else { return }
            MHD_resume_connection(connection)
        }
    }

    // MARK: - MHD callbacks (entered through the @convention(c) functions at the bottom of the file)

    /// The request line arrived: allocate the context MHD will hand back as `*con_cls`.
    /// The connection's watch is looked up here once, so the rest of the request reaches it without MHD or a lock.
    fileprivate func requestLine(target: UnsafePointer<CChar>, connection: OpaquePointer?) -> UnsafeMutableRawPointer {
        metrics.requestStarted()
        let length = strlen(target)
        let start = UInt(bitPattern: target)
        // Where the target sits in MHD's buffer is kept too: a NUL hidden in the request line shows there.
        let context = RequestContext(
            target: String(decoding: UnsafeRawBufferPointer(start: target, count: length), as: UTF8.self),
            targetStart: start, targetEnd: start + UInt(length), startNanos: monotonicNanos(),
            requestID: requestIDs.next(), watch: connection.flatMap(connectionGuard.watch))
        context.watch?.request = context
        return Unmanaged.passRetained(context).toOpaque()
    }

    /// MHD is done with the request (answered, failed, or the connection closed).
    fileprivate func requestCompleted(_ pointer: UnsafeMutableRawPointer, reason: MHD_RequestTerminationCode) {
        let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeRetainedValue()
        context.connection = nil
        if context.watch?.request === context { context.watch?.request = nil }
        connectionGuard.readyForNext(context.watch)
        if context.holdsLargeBodySlot {
            context.holdsLargeBodySlot = false
            metrics.largeBodies.subtract(1, ordering: .relaxed)
        }
        if context.phase != .answered {
            // MHD answered itself (a refusal the server could not take over, see `TransportRefusal`), the client
            // went away, or the connection timed out: no access-log line was written, so note it here.
            logger.info(
                "request_unanswered",
                [
                    "request_id": .string(context.requestID), "method": .string(context.methodLabel),
                    "route": .string(context.routeLabel), "reason": .string(Self.terminationReason(reason)),
                ])
        }
        metrics.requestFinished()
    }

    /// One call of the access handler. MHD calls it with the headers, then once per body chunk, then once
    /// with no data; a suspended request is called again after `resume`.
    fileprivate func handle(
        connection: OpaquePointer, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, context: RequestContext
    ) -> MHD_Result {
        switch context.phase {
        case .fresh:
            return begin(context, connection: connection, method: method, version: version)
        case .reading:
            let size = uploadSize.pointee
            guard size > 0 else { return dispatch(context, connection: connection) }
            uploadSize.pointee = 0
            return receive(uploadData, count: size, context: context, connection: connection)
        case .suspended:
            // Called again after MHD_resume_connection: the answer is waiting.
            guard let answer = context.answer.withLock({ $0 }) else { return .YES }
            return queue(answer, context: context, connection: connection)
        case .answered:
            uploadSize.pointee = 0
            return .YES
        }
    }

    fileprivate func transportMessage(_ message: String) {
        lastTransportMessage.withLock { $0 = message }
        logger.debug("http_transport", ["message": .string(message.trimmingCharacters(in: .whitespacesAndNewlines))])
        if let refusal = TransportRefusal(message: message) { answerInsteadOfMHD(refusal) }
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
}

// MARK: - C entry points. Each recovers the server from its unretained `cls` pointer; the server keeps
// itself retained while the daemon runs, so the pointer stays valid for every callback.

private func requestLineCallback(_ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?)
    -> UnsafeMutableRawPointer?
{
    guard let cls, let uri else { return nil }
    return Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().requestLine(target: uri, connection: connection)
}

private func requestCompletedCallback(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ contextSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let contextSlot, let pointer = contextSlot.pointee else { return }
    contextSlot.pointee = nil
    Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().requestCompleted(pointer, reason: reason)
}

private func acceptPolicyCallback(_ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> MHD_Result {
    guard let cls else { return .YES }
    return Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().connectionGuard.admits() ? .YES : .NO
}

private func connectionNotifyCallback(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ toe: UInt32
) {
    guard let cls, let connection, let socketContext else { return }
    let guardian = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().connectionGuard
    if toe == 0 { guardian.opened(connection, socketContext: socketContext) } else { guardian.closed(socketContext: socketContext) }
}

private func accessHandlerCallback(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>?,
    _ contextSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadSize, let pointer = contextSlot?.pointee else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(pointer).takeUnretainedValue()
    return server.handle(
        connection: connection, method: method, version: version, uploadData: uploadData, uploadSize: uploadSize,
        context: context)
}

private func transportMessageSink(_ cls: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    guard let cls, let message else { return }
    Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().transportMessage(String(cString: message))
}
