/// Wraps routed requests (not static files, not 404/405): may reject, annotate the request, or change the response.
///
/// For deferred routes `next` returns at once with a placeholder: headers the middleware adds to it are
/// copied onto the deferred answer, but its status and body are not. Returning any other response (or
/// throwing) answers instead of the deferred handler.
public protocol HTTPMiddleware: Sendable {
    func respond(to request: HTTPRequest, next: @Sendable (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse
}

/// Shared state for running a deferred route behind middleware; only touched by the worker thread running the chain.
final class DeferredPassage: @unchecked Sendable {
    var request: HTTPRequest?
    static let placeholderStatus = -1
}
