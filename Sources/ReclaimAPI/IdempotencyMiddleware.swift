import Crypto
import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimStore
import Synchronization

/// `Idempotency-Key` on API clients' POSTs (and agents' on the routes that declare it: notes), for every route at once.
///
/// `before` checks the key, answers a retry whose first request already committed from the stored copy (or 422
/// `idempotency_mismatch` when the request differs), and otherwise leaves an `IdempotencyClaim` on the request. The
/// handler's transaction (`ServiceContext.transaction(for:)`, in `ServiceContext.swift`) then locks the key, does the work and stores the 2xx answer
/// sealed with the `idempotency` key, all in ONE transaction: a crash at any instant rolls back the key with the change,
/// so a retry replays the first answer or does the work once. A concurrent retry waits for the first to commit (then
/// replays) or roll back (then runs); after `IdentityPolicy.idempotencyWait` it answers 409 `idempotency_in_progress`.
/// Errors are not stored: a retry runs again. A handler that opens no transaction of its own gets its 2xx answer stored
/// by `after` (first stored wins), which is not exact: every product route goes through `transaction(for:)`.
public struct IdempotencyMiddleware: HTTPMiddleware {
    let context: ServiceContext
    let policy: IdentityPolicy
    /// Route keys ("POST /pattern") that take keys from agents as well as API clients.
    let agentRoutes: Set<String>

    /// The response headers kept with a stored response.
    static let storedHeaders = ["Location", "ETag", "Content-Type"]

    public init(context: ServiceContext, policy: IdentityPolicy = .standard, agentRoutes: Set<String> = []) {
        self.context = context
        self.policy = policy
        self.agentRoutes = agentRoutes
    }

    struct StoredResponse: Codable {
        let status: Int
        let headers: [[String]]
        let body: Data
    }

    /// The claim a request carries from `before` to its transaction and `after`.
    enum Claim: RequestStorageKey {
        typealias Value = IdempotencyClaim
    }

    /// Leaves a claim on the request, replays a committed answer, or refuses (400/422).
    public func before(_ request: HTTPRequest) throws -> HTTPResponse? {
        guard request.method == .POST, let key = request.header("idempotency-key"), let keys = context.keys, let owner = owner(of: request) else {
            return nil
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw Problem.badRequest(code: ErrorCode.invalidIdempotencyKey, detail: "Idempotency-Key must be 1 to 255 visible ASCII characters.")
        }
        let claim = IdempotencyClaim(
            owner: owner, key: key, requestHash: Self.requestHash(request), lifetime: policy.idempotencyLifetime,
            wait: policy.idempotencyWait)
        let now = context.clock.now()
        // A look without a lock: a sequential retry is answered before any parsing, hashing or upload handling.
        if let record = try context.pool.withConnection({ try IdempotencyKeyStore.lookup(owner, key: key, now: now, on: $0) }) {
            guard ConstantTime.equals(record.requestHash, claim.requestHash) else { throw Self.mismatch }
            if let sealed = record.sealedResponse, let keyID = record.keyID {
                return try Self.replay(sealed, keyID: keyID, claim: claim, keys: keys)
            }
        }
        request[Claim.self] = claim
        return nil
    }

    /// For a handler that used no `transaction(for:)`: stores its 2xx answer now (deferred routes included).
    public func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
        guard request.method == .POST, request.header("idempotency-key") != nil, let claim = request[Claim.self],
            !claim.settled.load(ordering: .acquiring), (200..<300).contains(response.status), let keys = context.keys
        else { return response }
        do {
            let (keyID, sealed) = try Self.seal(response, claim: claim, keys: keys)
            let now = context.clock.now()
            try context.pool.withConnection { connection in
                try IdempotencyKeyStore.storeCompleted(
                    claim.owner, key: claim.key, requestHash: claim.requestHash, sealedResponse: sealed, keyID: keyID,
                    now: now, lifetime: claim.lifetime, on: connection)
            }
        } catch {
            // The change happened; only the replay copy is lost.
            context.logger.error(
                "idempotency_store_failed", ["request_id": .string(request.requestID), "error_type": .string(String(reflecting: type(of: error)))])
        }
        return response
    }

    /// Whose key space the request's key is in; nil when this principal's keys are not taken here.
    func owner(of request: HTTPRequest) -> IdempotencyOwner? {
        switch request.principal {
        case .apiClient(let client)?: return .apiClient(client.id)
        case .agent(let agent)? where agentRoutes.contains(request.routeKey): return .agent(agent.id)
        default: return nil
        }
    }

    static let mismatch = Problem(
        ErrorCode.idempotencyMismatch,
        detail: "This Idempotency-Key was used with a different request; use a new key for a new request.")

    static let inProgress = Problem(
        ErrorCode.idempotencyInProgress, detail: "A request with this Idempotency-Key is still being handled; retry shortly.",
        extraHeaders: [("Retry-After", "1")])

    /// The stored answer, opened, marked `Idempotent-Replayed`.
    static func replay(_ sealed: [UInt8], keyID: String, claim: IdempotencyClaim, keys: KeyFile) throws -> HTTPResponse {
        guard let boxKey = keys.key(id: keyID, purpose: .idempotency) else { throw Problem.internal }
        let plain = try SecretBox.open(sealed, key: boxKey, associatedData: associatedData(claim))
        let stored = try JSONDecoder().decode(StoredResponse.self, from: Data(plain))
        var response = HTTPResponse(
            status: stored.status, headers: stored.headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
            body: Array(stored.body))
        response.setHeader("Idempotent-Replayed", "true")
        return response
    }

    /// The answer's status, kept headers and body, sealed under the active `idempotency` key.
    static func seal(_ response: HTTPResponse, claim: IdempotencyClaim, keys: KeyFile) throws -> (keyID: String, sealed: [UInt8]) {
        let stored = StoredResponse(
            status: response.status,
            headers: storedHeaders.compactMap { name in response.header(name).map { [name, $0] } },
            body: Data(response.body))
        let (keyID, boxKey) = keys.activeKey(for: .idempotency)
        return (keyID, SecretBox.seal(Array(try JSONEncoder().encode(stored)), key: boxKey, associatedData: associatedData(claim)))
    }

    /// SHA-256 over method, target and body, length-prefixed so no two requests share an encoding. The body is read in
    /// pieces (a spooled upload is never copied whole); an unreadable spool hashes as an empty body, which the handler
    /// then fails on anyway.
    static func requestHash(_ request: HTTPRequest) -> [UInt8] {
        var hasher = SHA256.Hasher()
        for part in [Array(request.method.rawValue.utf8), Array(request.target.utf8)] {
            hasher.update(Array("\(part.count):".utf8))
            hasher.update(part)
        }
        try? request.content.forEachPiece { hasher.update($0) }
        return hasher.finalize()
    }

    /// Binds a sealed answer to its owner and key (API clients keep the associated data of earlier builds).
    static func associatedData(_ claim: IdempotencyClaim) -> [UInt8] {
        switch claim.owner {
        case .apiClient(let id): Array("idempotency:\(id.uuidString.lowercased()):\(claim.key)".utf8)
        case .agent(let id): Array("idempotency:agent:\(id.uuidString.lowercased()):\(claim.key)".utf8)
        }
    }
}

/// An Idempotency-Key a request carries, for the transaction that does its work.
final class IdempotencyClaim: Sendable {
    let owner: IdempotencyOwner
    let key: String
    let requestHash: [UInt8]
    let lifetime: TimeInterval
    let wait: TimeInterval
    /// Set once a `transaction(for:)` took care of the key, so `after` stores nothing.
    let settled = Atomic<Bool>(false)

    init(owner: IdempotencyOwner, key: String, requestHash: [UInt8], lifetime: TimeInterval, wait: TimeInterval) {
        self.owner = owner
        self.key = key
        self.requestHash = requestHash
        self.lifetime = lifetime
        self.wait = wait
    }
}
