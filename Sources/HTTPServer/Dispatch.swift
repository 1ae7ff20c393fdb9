import CMicroHTTPD
import Foundation

// Dispatch: the final call of a whole request. A problem decided while assembling is answered as it is,
// a static file is served, and a route runs its middleware's `before` stages, its handler and their
// `after` stages. A deferred handler suspends the connection and completes later from its own thread;
// the `after` stages then run there, on its real answer, exactly as they do for a handler that answers
// at once.
extension HTTPServer {
    /// Final call: the whole body is in. Run the handler (or serve the file, or the problem).
    func dispatch(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        connectionGuard.handling(context.watch)
        switch context.disposition {
        case .problem(let problem):
            return queue(.problem(problem, requestID: context.requestID), context: context, connection: connection)
        case .staticFile:
            guard let staticFiles,
                case .file(let response) = staticFiles.respond(rawPath: context.rawPath, decodedPath: context.decodedPath, request: context.headers)
            else {
                context.routeLabel = "unmatched"
                return queue(
                    .problem(Problem.notFound(detail: "Nothing is served at this path."), requestID: context.requestID), context: context,
                    connection: connection)
            }
            return queue(response, context: context, connection: connection)
        case .route(let route, let parameters):
            do {
                try context.spool?.finish()
            } catch {
                return queue(.problem(spoolFailed(error, context: context), requestID: context.requestID), context: context, connection: connection)
            }
            let request = makeRequest(context, multipart: context.multipart?.finish())
            context.multipart = nil
            request.pathParameters = parameters
            request.route = route.pattern
            if let handlers { return runQueued(route.handler, on: handlers, request: request, context: context, connection: connection) }
            let (passed, early) = middleware.before(request)
            if let early {
                let answer = middleware.after(request, passed: passed, response(for: early, context: context))
                return queue(answer, context: context, connection: connection)
            }
            switch route.handler {
            case .immediate(let handler):
                var answer: HTTPResponse
                do {
                    answer = try handler(request)
                } catch {
                    answer = errorResponse(error, context: context)
                }
                return queue(middleware.after(request, passed: passed, answer), context: context, connection: connection)
            case .deferred(let handler):
                return runDeferred(handler, request: request, passed: passed, context: context, connection: connection)
            }
        }
    }

    /// Suspends the connection and calls the handler; its completion (from any thread, the first call only)
    /// renders the answer, runs the `after` stages on it and resumes the connection, whose next call queues it.
    private func runDeferred(
        _ handler: DeferredHTTPHandler, request: HTTPRequest, passed: Int, context: RequestContext,
        connection: OpaquePointer
    ) -> MHD_Result {
        guard suspend(context, connection: connection) else {
            let refusal = HTTPResponse.problem(Self.shuttingDown, requestID: context.requestID)
            return queue(middleware.after(request, passed: passed, refusal), context: context, connection: connection)
        }
        handler(request) { [self] outcome in
            guard context.claimCompletion() else { return }
            resume(context, with: middleware.after(request, passed: passed, response(for: outcome, context: context)))
        }
        return .YES
    }

    /// Suspends the connection and queues the request's middleware and handler on `handlers` (one FIFO for every
    /// connection, whichever MHD thread holds it); the answer resumes the connection as a deferred handler's does.
    private func runQueued(
        _ handler: Route.Handler, on handlers: WorkQueue, request: HTTPRequest, context: RequestContext, connection: OpaquePointer
    ) -> MHD_Result {
        guard suspend(context, connection: connection) else {
            return queue(.problem(Self.shuttingDown, requestID: context.requestID), context: context, connection: connection)
        }
        metrics.queued.add(1, ordering: .relaxed)
        let queued = handlers.submit { [self] in
            metrics.queued.subtract(1, ordering: .relaxed)
            let (passed, early) = middleware.before(request)
            if let early {
                resume(context, with: middleware.after(request, passed: passed, response(for: early, context: context)))
                return
            }
            switch handler {
            case .immediate(let handler):
                let outcome = Result { try handler(request) }
                resume(context, with: middleware.after(request, passed: passed, response(for: outcome, context: context)))
            case .deferred(let handler):
                handler(request) { [self] outcome in
                    guard context.claimCompletion() else { return }
                    resume(context, with: middleware.after(request, passed: passed, response(for: outcome, context: context)))
                }
            }
        }
        if !queued {
            metrics.queued.subtract(1, ordering: .relaxed)
            resume(context, with: .problem(Self.overloaded, requestID: context.requestID))
        }
        return .YES
    }

    /// A full handler queue (room for twice the connection cap, so the cap refuses first): 503 `overloaded`, as the cap's is.
    static let overloaded = Problem.unavailable(
        retryAfter: 1, code: HTTPProblemCode.overloaded, detail: "Too many requests waiting; try again in a moment.")
    static let shuttingDown = Problem.unavailable(retryAfter: 1, detail: "The server is shutting down.")
}
