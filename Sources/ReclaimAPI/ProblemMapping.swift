import HTTPServer
import Postgres

/// The server's one error mapper: a refusal (workflow, operation, administration) is answered as the refusal catalogue
/// (`ErrorCatalogue.swift`) declares it, a database failure by the SQLSTATE table below (PostgREST's idea: what the
/// client may do next); anything else is left to the server's plain 500, its detail in the log only.
enum ProblemMapping {
    /// Seconds a client should wait before retrying when the database is unreachable.
    static let unavailableRetryAfter = 5

    /// Maps what handlers let through; nil leaves the server's plain 500.
    @Sendable static func map(_ error: Error) -> (any HTTPProblem)? {
        if let refusal = error as? any Refusal { return refusal.problem }
        return database(error)
    }

    /// A refusal answered from inside a transaction that must still commit (see `OperationError.refusedAfterRecording`).
    static func response(_ refusal: any Refusal, to request: HTTPRequest) -> HTTPResponse {
        .problem(refusal.problem, requestID: request.requestID)
    }

    /// The SQLSTATE table; nil for what it does not know.
    static func database(_ error: Error) -> (any HTTPProblem)? {
        guard let error = error as? PostgresError else { return nil }
        if error.isConnectionError {
            return Problem(
                ErrorCode.databaseUnavailable,
                detail: "The database cannot be reached. Try again shortly.",
                extraHeaders: [("Retry-After", String(unavailableRetryAfter))])
        }
        switch error.sqlState {
        case "23505":
            return Problem(HTTPProblemCode.conflict, detail: "A resource with the same identity already exists.")
        case "23503":
            return Problem(HTTPProblemCode.conflict, detail: "The request refers to a resource that does not exist or is still referenced.")
        case "23502", "23514", "22001", "22003", "22007", "22008", "22P02":
            return Problem(HTTPProblemCode.validationFailed, detail: "A value was refused by the database's rules.")
        case "42501":
            return Problem(HTTPProblemCode.forbidden, detail: "The service may not perform this operation.")
        case "40001", "40P01", "55P03":
            // Already retried by PostgresPool.withTransaction; the client may try again.
            return Problem(
                ErrorCode.databaseBusy,
                detail: "The request collided with another change. Try again.",
                extraHeaders: [("Retry-After", "1")])
        case "57014":
            return Problem(
                ErrorCode.databaseTimeout,
                detail: "The database took too long to answer. Try again shortly.",
                extraHeaders: [("Retry-After", "2")])
        case "53300", "53200", "53100":
            return Problem(
                ErrorCode.databaseOverloaded,
                detail: "The database is out of resources. Try again shortly.",
                extraHeaders: [("Retry-After", String(unavailableRetryAfter))])
        default:
            return nil
        }
    }
}
