import Crypto
import Foundation
import HTTPServer
import Logging
import ReclaimStore

/// `Idempotency-Key` on API clients' POSTs, for every route at once (handlers need not know).
///
/// The first request with a key claims it (INSERT … ON CONFLICT DO NOTHING) with the SHA-256 of its
/// method, target and body. A 2xx answer is stored whole (status, Location, ETag, Content-Type, body),
/// sealed with the `idempotency` key, for 24 hours; a retry with the same request gets those bytes
/// again, a different request 422 `idempotency_mismatch`, a retry while the first still runs 409
/// `idempotency_in_progress`. Errors are not stored: the claim is released so a retry runs again.
/// Deferred routes are no different: the server runs `after` on their real answer.
public struct IdempotencyMiddleware: HTTPMiddleware {
    let context: ServiceContext
    let policy: IdentityPolicy

    /// The response headers kept with a stored response.
    static let storedHeaders = ["Location", "ETag", "Content-Type"]

    public init(context: ServiceContext, policy: IdentityPolicy = .standard) {
        self.context = context
        self.policy = policy
    }

    struct StoredResponse: Codable {
        let status: Int
        let headers: [[String]]
        let body: Data
    }

    /// What `begin` decided for a request.
    enum Outcome {
        /// Not an API client's POST with a key: handle normally.
        case passThrough
        /// The stored answer to the same request.
        case replay(HTTPResponse)
        /// This request holds the key: `finish` it with its answer.
        case claimed(clientID: UUID, key: String)
    }

    /// The key a request holds between `before` and `after`.
    enum Claim: RequestStorageKey {
        typealias Value = ClaimedKey
    }

    /// The client and key claimed for this request.
    struct ClaimedKey: Sendable {
        let clientID: UUID
        let key: String
    }

    /// Claims the key (kept on the request for `after`), replays a stored answer, or refuses.
    public func before(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch try begin(request) {
        case .passThrough: return nil
        case .replay(let response): return response
        case .claimed(let clientID, let key):
            request[Claim.self] = ClaimedKey(clientID: clientID, key: key)
            return nil
        }
    }

    /// Stores the final answer of a request that claimed a key (or releases the key), deferred routes included.
    public func after(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
        // Only a keyed POST can hold a claim: others skip the storage lookup.
        guard request.method == .POST, request.header("idempotency-key") != nil, let claim = request[Claim.self] else { return response }
        finish(clientID: claim.clientID, key: claim.key, response: response, request: request)
        return response
    }

    /// Claims the key, or answers from what is stored, or refuses (409/422/400).
    func begin(_ request: HTTPRequest) throws -> Outcome {
        guard request.method == .POST, case .apiClient(let client)? = request.principal, let key = request.header("idempotency-key"),
              let keys = context.keys else {
            return .passThrough
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw Problem.badRequest(code: ErrorCode.invalidIdempotencyKey, detail: "Idempotency-Key must be 1 to 255 visible ASCII characters.")
        }
        let requestHash = Self.requestHash(request)
        let now = context.clock.now()
        let claim = try context.pool.withConnection { connection in
            try IdempotencyKeyStore.claim(clientID: client.id, key: key, requestHash: requestHash, now: now, lifetime: policy.idempotencyLifetime,
                                          abandonAfter: policy.idempotencyAbandonAfter, on: connection)
        }
        switch claim {
        case .claimed:
            return .claimed(clientID: client.id, key: key)
        case .inProgress(let storedHash):
            guard ConstantTime.equals(storedHash, requestHash) else { throw Self.mismatch }
            throw Problem(ErrorCode.idempotencyInProgress, detail: "A request with this Idempotency-Key is still being handled; retry shortly.",
                          extraHeaders: [("Retry-After", "1")])
        case .completed(let storedHash, let sealed, let keyID):
            guard ConstantTime.equals(storedHash, requestHash) else { throw Self.mismatch }
            guard let boxKey = keys.key(id: keyID, purpose: .idempotency) else { throw Problem.internal }
            let plain = try SecretBox.open(sealed, key: boxKey, associatedData: Self.associatedData(client.id, key))
            let stored = try JSONDecoder().decode(StoredResponse.self, from: Data(plain))
            var response = HTTPResponse(status: stored.status, headers: stored.headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
                                        body: Array(stored.body))
            response.setHeader("Idempotent-Replayed", "true")
            return .replay(response)
        }
    }

    /// Stores a 2xx answer sealed; releases the key for anything else (errors are not kept: a retry runs again).
    func finish(clientID: UUID, key: String, response: HTTPResponse, request: HTTPRequest) {
        guard (200..<300).contains(response.status), let keys = context.keys else {
            release(clientID, key)
            return
        }
        let stored = StoredResponse(
            status: response.status,
            headers: Self.storedHeaders.compactMap { name in response.header(name).map { [name, $0] } },
            body: Data(response.body))
        do {
            let (keyID, boxKey) = keys.activeKey(for: .idempotency)
            let sealed = SecretBox.seal(Array(try JSONEncoder().encode(stored)), key: boxKey, associatedData: Self.associatedData(clientID, key))
            try context.pool.withConnection { connection in
                try IdempotencyKeyStore.complete(clientID: clientID, key: key, sealedResponse: sealed, keyID: keyID, on: connection)
            }
        } catch {
            // The change happened; only the replay copy is lost. Release so a retry is not stuck on 409.
            context.logger.error("idempotency_store_failed", ["request_id": .string(request.requestID), "error_type": .string(String(reflecting: type(of: error)))])
            release(clientID, key)
        }
    }

    static let mismatch = Problem(ErrorCode.idempotencyMismatch,
                                  detail: "This Idempotency-Key was used with a different request; use a new key for a new request.")

    /// SHA-256 over method, target and body, length-prefixed so no two requests share an encoding.
    static func requestHash(_ request: HTTPRequest) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in [Array(request.method.rawValue.utf8), Array(request.target.utf8)] {
            bytes.append(contentsOf: Array("\(part.count):".utf8))
            bytes.append(contentsOf: part)
        }
        bytes.append(contentsOf: request.body)
        return SHA256.hash(bytes)
    }

    static func associatedData(_ clientID: UUID, _ key: String) -> [UInt8] {
        Array("idempotency:\(clientID.uuidString.lowercased()):\(key)".utf8)
    }

    private func release(_ clientID: UUID, _ key: String) {
        _ = try? context.pool.withConnection { try IdempotencyKeyStore.release(clientID: clientID, key: key, on: $0) }
    }
}
