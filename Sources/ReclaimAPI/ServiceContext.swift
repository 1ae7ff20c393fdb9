import Crypto
import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimOperations
import ReclaimStore
import Synchronization

/// The time, as the service sees it: the system clock plus an offset that tests may move.
public final class ServiceClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    public init() {}

    /// Now, as the service sees it.
    public func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// Moves the service's time forward (tests only: lockout and session expiry).
    public func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// What every controller shares: configuration, database, keys, logger and clock.
public struct ServiceContext: Sendable {
    public let configuration: ServiceConfiguration
    public let pool: PostgresPool
    /// The secret keys; nil only in tests that exercise the transport without secrets.
    public let keys: KeyFile?
    public let logger: Logger
    public let clock: ServiceClock
}

extension ServiceContext {
    /// Now, to the second, as every operation records it.
    var now: Date { Timestamp.truncated(clock.now()) }

    /// The one way a route changes state: its work and its answer in ONE transaction, with both powers.
    /// - An `Idempotency-Key` the middleware claimed is locked first and the 2xx answer stored before COMMIT, so a retry
    ///   whose first committed gets the stored answer without `body` running (an answer of another status releases the
    ///   key, and commits like any answer).
    /// - A refusal for want of permission (403) is logged; one that names its case is also recorded there as a `denied`
    ///   event (`attempted`, else the route), in a transaction of its own since the refused one rolls back, so the
    ///   timeline shows who tried what.
    /// `body` may run more than once (serialization retries): it must only use `connection`.
    func transaction(
        for request: HTTPRequest, attempting attempted: String? = nil,
        _ body: (PostgresConnection) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        do {
            return try idempotentTransaction(for: request, body)
        } catch let refusal as OperationError where refusal.problem.status == 403 {
            if let principal = request.principal {
                let attempted = attempted ?? request.routeKey
                if case .refused(_, let caseID?) = refusal {
                    try recordDenial(caseID: caseID, attempted: attempted, code: refusal.problem.code, by: principal, request)
                } else {
                    logDenied(principal, reason: "\(attempted): \(refusal.problem.code)", request)
                }
            }
            throw refusal
        }
    }

    /// Appends a `denied` event (the attempt, not its body) in a transaction of its own, and logs it.
    func recordDenial(caseID: UUID, attempted: String, code: String, evidenceID: UUID? = nil, by principal: Principal, _ request: HTTPRequest) throws
    {
        let now = self.now
        try pool.withTransaction { connection in
            try CaseOperations(keys: keys).recordDenial(
                caseID: caseID, attempted: attempted, code: code, evidenceID: evidenceID,
                by: principal.actor, at: now, on: connection)
        }
        logDenied(principal, reason: "case.\(attempted): \(code)", request)
    }

    /// The transaction with the request's `Idempotency-Key`, when the middleware left a claim on it.
    private func idempotentTransaction(for request: HTTPRequest, _ body: (PostgresConnection) throws -> HTTPResponse) throws -> HTTPResponse {
        guard let claim = request[IdempotencyMiddleware.Claim.self], let keys else { return try pool.withTransaction(body) }
        defer { claim.settled.store(true, ordering: .releasing) }
        let now = clock.now()
        do {
            return try pool.withTransaction { connection -> HTTPResponse in
                switch try IdempotencyKeyStore.lock(
                    claim.owner, key: claim.key, requestHash: claim.requestHash, now: now, lifetime: claim.lifetime,
                    wait: claim.wait, on: connection)
                {
                case .completed(let storedHash, let sealed, let keyID):
                    guard ConstantTime.equals(storedHash, claim.requestHash) else { throw IdempotencyMiddleware.mismatch }
                    return try IdempotencyMiddleware.replay(sealed, keyID: keyID, claim: claim, keys: keys)
                case .acquired:
                    let response = try body(connection)
                    if (200..<300).contains(response.status) {
                        let (keyID, sealed) = try IdempotencyMiddleware.seal(response, claim: claim, keys: keys)
                        try IdempotencyKeyStore.complete(claim.owner, key: claim.key, sealedResponse: sealed, keyID: keyID, on: connection)
                    } else {
                        try IdempotencyKeyStore.release(claim.owner, key: claim.key, on: connection)
                    }
                    return response
                }
            }
        } catch let error as PostgresError where error.sqlState == "55P03" {
            // lock_not_available: the first request with this key still holds it after `idempotencyWait`.
            throw IdempotencyMiddleware.inProgress
        }
    }
}
