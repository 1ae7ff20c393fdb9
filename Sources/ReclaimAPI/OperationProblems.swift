import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// The one table from operation refusals to problem documents; with `DatabaseProblem` it is the server's error mapper.
enum OperationProblem {
    /// Maps what handlers let through: operation errors, then database errors; nil leaves the server's plain 500.
    @Sendable static func map(_ error: Error) -> (any HTTPProblem)? {
        if let error = error as? OperationError { return problem(for: error) }
        return DatabaseProblem.map(error)
    }

    /// The problem for one refusal.
    static func problem(for error: OperationError) -> Problem {
        switch error {
        case .caseNotFound: CaseHTTP.caseNotFound
        case .evidenceNotFound: Problem.notFound(detail: "No evidence has this id.")
        case .stale(let current):
            Problem(HTTPProblemCode.staleVersion, detail: "The case changed (now at version \(current)); reload it and try again.",
                    extraHeaders: [("ETag", "\"\(current)\"")])
        case .refused(let refusal, _): CaseHTTP.problem(for: refusal)
        case .invalid(let failure): CaseHTTP.problem(for: failure)
        case .answersLocked(let until, let now):
            Problem.tooManyRequests(retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: ErrorCode.lockedOut,
                                    detail: "Too many wrong answers for this account. Try again later.")
        case .alreadyFrozen: Problem.conflict(code: ErrorCode.alreadyFrozen, detail: "The account is already frozen.")
        case .notFrozen: Problem.conflict(code: ErrorCode.notFrozen, detail: "The account is not frozen.")
        case .noAccountOnFile: Problem(ErrorCode.noAccountOnFile, detail: "The case's account is not on file: there are no security questions to ask.")
        case .reviewNeedsTier(let tier, _):
            Problem(ErrorCode.insufficientTier, detail: "Reviewing this evidence needs \(tier.rawValue) or above.",
                    extraMembers: ["required_tier": tier.rawValue])
        case .unsupportedMedia(let mismatch):
            Problem(HTTPProblemCode.unsupportedMediaType,
                    detail: mismatch ? "The file's content is not the type it was declared as." : "Only PDF, JPEG, PNG and HEIC files are accepted.")
        case .tooLarge(let limit): Problem.payloadTooLarge(limit: limit)
        case .caseNotOpen:
            Problem(ErrorCode.caseNotOpen,
                    detail: "This case is finished, so nobody would see a new document. Contact us quoting your case number.")
        case .accountExists: Problem.conflict(code: ErrorCode.accountExists, detail: "An account with this e-mail is already on file.")
        case .keysUnavailable: Problem.internal
        case .accessCodeJustIssued(let until, let now):
            Problem(ErrorCode.accessCodeJustIssued, detail: "A new access code was sent to the customer moments ago; another would make that one useless.",
                    extraHeaders: [("Retry-After", String(max(1, Int(until.timeIntervalSince(now).rounded(.up)))))])
        }
    }
}

extension ServiceContext {
    /// Now, to the second, as every operation records it.
    var now: Date { Timestamp.truncated(clock.now()) }

    /// Runs an operation in one transaction. A refusal for want of permission is recorded on the case's timeline (in a
    /// transaction of its own, since the refused one rolls back) and logged, so the timeline shows who tried what.
    func perform<T>(_ attempted: String, by principal: Principal, _ request: HTTPRequest,
                    _ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withTransaction(body)
        } catch let error as OperationError {
            if case .refused(let refusal, let caseID?) = error, refusal.category == .forbidden {
                try recordDenial(caseID: caseID, attempted: attempted, code: refusal.code, by: principal, request)
            }
            if case .reviewNeedsTier = error { logDenied(principal, reason: "\(attempted): insufficient_tier", request) }
            throw error
        }
    }

    /// Appends a `denied` event (the attempt, not its body) and logs it.
    func recordDenial(caseID: UUID, attempted: String, code: String, evidenceID: UUID? = nil, by principal: Principal, _ request: HTTPRequest) throws {
        let now = self.now
        try pool.withTransaction { connection in
            try CaseOperations(keys: keys).recordDenial(caseID: caseID, attempted: attempted, code: code, evidenceID: evidenceID,
                                                        by: principal.actor, at: now, on: connection)
        }
        logDenied(principal, reason: "case.\(attempted): \(code)", request)
    }
}
