import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `POST /api/v1/accounts` (admin agents, API clients): an account on file, what identity is checked against.
/// Deferred: one argon2id hash per security answer runs on a small queue of its own, never on HTTP workers.
final class AccountsController: Sendable {
    let context: ServiceContext
    let hashQueue: WorkQueue
    let hasher = PasswordHash()

    init(context: ServiceContext, hashQueue: WorkQueue = WorkQueue(threads: 1, capacity: 32)) {
        self.context = context
        self.hashQueue = hashQueue
    }

    /// Validates on the HTTP worker (422 lists every bad field), hashes and stores on the queue: 201 with the account, no secrets.
    @Sendable func create(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let account: ValidatedAccount
        do {
            try context.authorize(.createAccount, request)
            guard context.keys != nil else { throw Problem.internal }
            account = try AccountOperations.validate(try request.decodeJSON(AccountPayload.self))
        } catch {
            completion(.failure(error))
            return
        }
        hashThenStore(account, keys: context.keys, request, completion) { prepared, now, connection in
            try AccountOperations.store(prepared, at: now, on: connection)
            return CaseHTTP.json(prepared.json, status: 201)
        }
    }

    /// `PUT /api/v1/accounts/{email}` (admin agents only: replacing the answers on file is what a thief would ask for):
    /// the body as for `create` replaces what is on file for that address, hashed on the queue; 200 with the account, an
    /// admin-log entry in the same transaction; 404 when nothing is on file.
    @Sendable func replace(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let account: ValidatedAccount
        let email: String
        let actor: String
        let keys: KeyFile
        do {
            let principal = try context.authorize(.createAccount, request)
            guard case .agent = principal else { throw Problem.forbidden(detail: "Only admin agents may replace an account on file.") }
            guard let loaded = context.keys else { throw Problem.internal }
            guard let text = request.parameter("email"), !text.isEmpty else { throw OperationError.accountNotFound }
            (email, actor, keys) = (text, principal.actor, loaded)
            account = try AccountOperations.validate(try request.decodeJSON(AccountPayload.self))
        } catch {
            completion(.failure(error))
            return
        }
        hashThenStore(account, keys: keys, request, completion) { [context] prepared, now, connection in
            try AccountOperations.replace(email: email, with: prepared, at: now, on: connection)
            try IdentityAdministration(pool: context.pool, keys: keys).recordAccountReplaced(
                email: email, newEmail: prepared.email.value, now: now, by: actor, on: connection)
            return CaseHTTP.json(prepared.json)
        }
    }

    /// Hashes `account`'s answers on the queue (never on the HTTP worker), then runs `store` in the request's
    /// transaction and answers what it returns; 503 `busy` when the queue is full.
    private func hashThenStore(
        _ account: ValidatedAccount, keys: KeyFile?, _ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion,
        store: @escaping @Sendable (PreparedAccount, Date, PostgresConnection) throws -> HTTPResponse
    ) {
        let accepted = hashQueue.submit { [self] in
            completion(
                Result {
                    let prepared = try AccountOperations.prepare(account, hasher: hasher, keys: keys)
                    let now = context.clock.now()
                    return try context.transaction(for: request) { connection in try store(prepared, now, connection) }
                })
        }
        if !accepted {
            completion(
                .failure(
                    Problem.unavailable(retryAfter: 2, code: ErrorCode.busy, detail: "Too many accounts being stored at once; try again in a moment.")
                ))
        }
    }
}
