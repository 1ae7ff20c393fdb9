import Crypto
import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimCore
import ReclaimStore

/// `POST/GET/DELETE /api/v1/session`: agents sign in with email, password and a TOTP code.
///
/// Every failed sign-in answers the same 401 `invalid_credentials` body after the same argon2id work
/// (an unknown email is checked against `PasswordHash.dummyHash`). Throttles live in PostgreSQL:
/// per account (known or not) and per client address. Hashing runs on `hashQueue`, never on HTTP workers.
public final class SessionController: Sendable {
    let context: ServiceContext
    let policy: IdentityPolicy
    let hasher: PasswordHash
    /// The bounded queue argon2id runs on.
    public let hashQueue: WorkQueue

    public init(context: ServiceContext, policy: IdentityPolicy = .standard, hasher: PasswordHash = PasswordHash()) {
        self.context = context
        self.policy = policy
        self.hasher = hasher
        self.hashQueue = WorkQueue(threads: policy.hashThreads, capacity: policy.hashQueueCapacity)
    }

    struct SignInRequest: Decodable {
        let email: String
        let password: String
        let totp: String
    }

    struct AgentView: Encodable {
        let id: String
        let name: String
        let email: String
        let tier: String
        let admin: Bool
    }

    struct SessionView: Encodable {
        let agent: AgentView
        let csrfToken: String
        let permissions: [String]

        enum CodingKeys: String, CodingKey {
            case agent
            case csrfToken = "csrf_token"
            case permissions
        }
    }

    /// The one answer to every failed sign-in (the request id differs, nothing else).
    static let invalidCredentials = Problem(
        ErrorCode.invalidCredentials,
        detail: "The email, password or one-time code is not correct.")

    // MARK: Sign in

    /// Deferred: parses on the HTTP worker, then hashes (and talks to the database) on the hash queue.
    public func signIn(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        let body: SignInRequest
        do {
            guard context.keys != nil else {
                throw Problem.unavailable(retryAfter: 60, code: ErrorCode.notConfigured, detail: "The service has no key file.")
            }
            body = try request.decodeJSON(SignInRequest.self)
        } catch {
            completion(.failure(error))
            return
        }
        let accepted = hashQueue.submit { [self] in
            completion(Result { try authenticate(body, request) })
        }
        if !accepted {
            context.logger.warning("sign_in_busy", ["request_id": .string(request.requestID), "queue_depth": .int(hashQueue.depth)])
            completion(
                .failure(Problem.unavailable(retryAfter: 2, code: ErrorCode.busy, detail: "Too many sign-ins at once; try again in a moment.")))
        }
    }

    /// Runs on the hash queue.
    func authenticate(_ body: SignInRequest, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let keys = context.keys else { throw Problem.internal }
        let now = context.clock.now()
        let accountKey = ThrottleStore.signInAccountKey(email: body.email)
        let addressKey = ThrottleStore.signInAddressKey(request.clientAddress)
        let (lockedUntil, found) = try context.pool.withConnection { connection in
            (
                try ThrottleStore.lockedUntil(keys: [accountKey, addressKey], now: now, on: connection),
                try AgentStore.find(email: body.email, on: connection)
            )
        }
        if let lockedUntil {
            context.logger.warning(
                "sign_in_locked_out",
                ["request_id": .string(request.requestID), "agent": .string(found.map { $0.id.uuidString.lowercased() } ?? "unknown")])
            let seconds = Int(lockedUntil.timeIntervalSince(now).rounded(.up))
            throw Problem.tooManyRequests(retryAfter: seconds, code: ErrorCode.lockedOut, detail: "Too many failed sign-ins. Try again later.")
        }

        // The same argon2id work whether or not the account exists.
        let passwordMatches = hasher.verify(body.password, against: found?.passwordHash ?? PasswordHash.dummyHash)
        var step: UInt64?
        var reason = "unknown_account"
        if let agent = found {
            reason = "wrong_password"
            if passwordMatches {
                reason = "wrong_totp"
                if let secret = try? TOTPSeal.open(agent.sealedTOTPSecret, keyID: agent.totpKeyID, agentID: agent.id, keys: keys),
                    let totp = try? TOTP(secret: secret)
                {
                    step = totp.matchingCounter(body.totp, at: now, window: policy.totpWindow, lastUsed: agent.totpLastStep)
                }
                if agent.disabled {
                    reason = "disabled"
                    step = nil
                }
            }
        }

        if let agent = found, let step {
            let token = SessionCookie.newToken()
            let sessionID = UUID()
            let signedIn = try context.pool.withTransaction { connection -> Bool in
                // Conditional on the last used step, so the same code cannot open two sessions.
                guard try AgentStore.consumeTOTPStep(agentID: agent.id, step: step, on: connection) else { return false }
                // Passkeys: an admin required one for this agent; said only to whoever knew the password and a fresh code.
                if try PasskeyStore.isRequired(agentID: agent.id, on: connection) {
                    throw Problem(ErrorCode.passkeyRequired, detail: "Your administrator requires you to sign in with a passkey.")
                }
                try ThrottleStore.reset(key: accountKey, on: connection)
                try AgentStore.recordSignIn(agentID: agent.id, now: now, on: connection)  // Administration: the admin list shows it
                try SessionStore.insert(
                    id: sessionID, tokenHash: SessionCookie.hash(token), agentID: agent.id, now: now,
                    expiresAt: now.addingTimeInterval(policy.sessionAbsoluteTimeout), on: connection)
                return true
            }
            if signedIn {
                if hasher.needsRehash(agent.passwordHash), let rehashed = try? hasher.hash(body.password) {
                    _ = try? context.pool.withConnection { try AgentStore.setPasswordHash(agentID: agent.id, hash: rehashed, now: now, on: $0) }
                }
                if UInt8.random(in: 0...63) == 0 { purgeExpired(now) }
                context.logger.info(
                    "sign_in", ["request_id": .string(request.requestID), "actor": .string("agent:" + agent.id.uuidString.lowercased())])
                let identity = AgentIdentity(
                    id: agent.id, name: agent.name, email: agent.email, tier: agent.tier, isAdmin: agent.isAdmin, sessionID: sessionID)
                var response = try HTTPResponse.json(view(identity, keys: keys), status: 201)
                response.addHeader("Set-Cookie", SessionCookie.setCookie(token))
                return response
            }
            reason = "reused_totp"
        }

        let locked = try context.pool.withTransaction { connection -> Bool in
            // The account's failures count until a success (no window); the address's within its window.
            let account = try ThrottleStore.recordFailure(
                key: accountKey,
                rule: ThrottleRule(
                    limit: policy.accountFailureLimit, window: nil,
                    lockout: policy.accountLockout), now: now, on: connection)
            let address = try ThrottleStore.recordFailure(
                key: addressKey,
                rule: ThrottleRule(
                    limit: policy.addressFailureLimit, window: policy.addressWindow,
                    lockout: policy.addressLockout), now: now, on: connection)
            return account.lockedUntil(at: now) != nil || address.lockedUntil(at: now) != nil
        }
        context.logger.warning(
            "sign_in_failed",
            [
                "request_id": .string(request.requestID), "reason": .string(reason), "locked": .bool(locked),
                "agent": .string(found.map { $0.id.uuidString.lowercased() } ?? "unknown"),
            ])
        throw Self.invalidCredentials
    }

    private func purgeExpired(_ now: Date) {
        _ = try? context.pool.withConnection { connection in
            try SessionStore.purgeExpired(now: now, idleTimeout: policy.sessionIdleTimeout, on: connection)
            try ThrottleStore.purge(
                before: now.addingTimeInterval(-max(policy.addressWindow, policy.accountLockout) - 86400), now: now, on: connection)
            try IdempotencyKeyStore.purgeExpired(now: now, on: connection)
        }
    }

    // MARK: Current session and sign-out

    /// `GET /api/v1/session`: the signed-in agent, its CSRF token and its permissions (for the dashboard).
    public func current(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        guard let keys = context.keys else { throw Problem.internal }
        return try .json(view(agent, keys: keys))
    }

    /// `DELETE /api/v1/session`: ends the session on the server and clears the cookie.
    public func signOut(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        try context.pool.withConnection { try SessionStore.delete(id: agent.sessionID, on: $0) }
        context.logger.info("sign_out", ["request_id": .string(request.requestID), "actor": .string(Principal.agent(agent).actor)])
        var response = HTTPResponse.noContent()
        response.addHeader("Set-Cookie", SessionCookie.clearCookie)
        return response
    }

    func view(_ agent: AgentIdentity, keys: KeyFile) -> SessionView {  // also the passkey sign-in's answer
        SessionView(
            agent: AgentView(
                id: agent.id.uuidString.lowercased(), name: agent.name, email: agent.email, tier: agent.tier.rawValue, admin: agent.isAdmin),
            csrfToken: CSRFToken.token(sessionID: agent.sessionID, keys: keys),
            permissions: PermissionTable.permissions(of: .agent(agent)).map(\.rawValue))
    }
}
