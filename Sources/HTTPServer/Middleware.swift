/// Stages around the handler of every routed request (not static files, not 404/405), whichever way the
/// handler answers: at once, or later from another thread. Middleware never sees anything but the real answer.
///
/// `before` runs in order, on the worker thread; `after` runs in reverse order, once the answer exists, on
/// the thread that produced it, with errors already rendered as problem responses. A middleware's `after`
/// runs exactly when its `before` went on (returned nil), so state a middleware needs in both stages can
/// ride on the request (`request[Key.self]`).
public protocol HTTPMiddleware: Sendable {
    /// Before the handler: annotate the request, throw to refuse it, or return a response that answers instead
    /// (later middleware and the handler are skipped; earlier middleware's `after` still sees it). nil goes on.
    func before(_ request: HTTPRequest) throws -> HTTPResponse?

    /// After the answer (the handler's, a later middleware's, or a rendered error): look at it or change it.
    func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse
}

extension HTTPMiddleware {
    /// Goes on.
    public func before(_ request: HTTPRequest) throws -> HTTPResponse? { nil }

    /// Passes the answer through.
    public func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse { response }
}

/// A server's middleware in order; runs the stages with plain loops (no closures, nothing allocated).
struct MiddlewareChain: Sendable {
    let stages: [any HTTPMiddleware]

    /// Runs `before` stages until one answers or throws; `passed` counts those that went on.
    func before(_ request: HTTPRequest) -> (passed: Int, answer: Result<HTTPResponse, any Error>?) {
        for index in stages.indices {
            do {
                if let response = try stages[index].before(request) { return (index, .success(response)) }
            } catch {
                return (index, .failure(error))
            }
        }
        return (stages.count, nil)
    }

    /// Runs the `after` stages of the first `passed` middleware, the last one first.
    func after(_ request: HTTPRequest, passed: Int, _ response: HTTPResponse) -> HTTPResponse {
        var response = response
        var index = passed
        while index > 0 {
            index -= 1
            response = stages[index].after(request, response)
        }
        return response
    }
}
