import Crypto
import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimStore

/// Resolves the principal once per routed request: a session cookie → agent (and, on changing
/// requests, the CSRF token), `Authorization: Bearer` → API client (and, on changing requests, a
/// fresh `Reclaim-Signature`). Customers are resolved by the status handlers, not here: on their routes any
/// cookie or Authorization header is ignored.
///
/// Requests without credentials pass through with no principal (public routes; handlers that need one
/// call `requirePrincipal`). Credentials that are present but wrong are refused here with 401/403.
public struct AuthMiddleware: HTTPMiddleware {
    let context: ServiceContext
    let policy: IdentityPolicy

    /// Changing requests that may carry a cookie without a CSRF token: signing in (there is no token yet).
    static let csrfExempt: Set<String> = ["POST /api/v1/session", "POST /api/v1/session/passkey-options", "POST /api/v1/session/passkey"]

    /// Routes ("METHOD /pattern") that authenticate a customer by case number and access code: an agent's session
    /// cookie riding along (an agent checking the status page in the same browser) is ignored there, not refused
    /// for lacking a CSRF token, and never lends the request an agent's identity.
    let customerRoutes: Set<String>

    public init(context: ServiceContext, policy: IdentityPolicy = .standard, customerRoutes: Set<String> = []) {
        self.context = context
        self.policy = policy
        self.customerRoutes = customerRoutes
    }

    /// Sets the request's principal, or refuses wrong credentials; never answers itself.
    public func before(_ request: HTTPRequest) throws -> HTTPResponse? {
        guard let keys = context.keys else { return nil }
        let route = request.routeKey
        if customerRoutes.contains(route) { return nil }
        if let authorization = request.header("authorization") {
            request.principal = .apiClient(try authenticateClient(authorization, request, keys))
            return nil
        }
        if let token = request.cookie(SessionCookie.name), !token.isEmpty, let agent = try resolveSession(token) {
            request.principal = .agent(agent)
            if request.method.changesState && !Self.csrfExempt.contains(route) {
                guard let presented = request.header("x-csrf-token"), CSRFToken.verify(presented, sessionID: agent.sessionID, keys: keys) else {
                    context.logger.warning(
                        "csrf_failed",
                        [
                            "request_id": .string(request.requestID), "actor": .string(Principal.agent(agent).actor),
                            "route": .string(request.route ?? "unmatched"),
                        ])
                    throw Problem.forbidden(code: ErrorCode.csrfFailed, detail: "Send the session's CSRF token as X-CSRF-Token.")
                }
            }
        }
        return nil
    }

    /// The agent behind a cookie token, or nil when the session is unknown, expired or its agent disabled.
    func resolveSession(_ token: String) throws -> AgentIdentity? {
        // A real token is 43 characters; anything far off is not worth a query.
        guard token.utf8.count <= 128 else { return nil }
        let now = context.clock.now()
        return try context.pool.withConnection { connection -> AgentIdentity? in
            guard
                let session = try SessionStore.find(
                    tokenHash: SessionCookie.hash(token), now: now, idleTimeout: policy.sessionIdleTimeout,
                    on: connection)
            else { return nil }
            if now.timeIntervalSince(session.lastSeenAt) >= policy.sessionTouchInterval {
                try SessionStore.touch(id: session.id, now: now, on: connection)
            }
            return AgentIdentity(
                id: session.agentID, name: session.agentName, email: session.agentEmail, tier: session.agentTier,
                isAdmin: session.agentIsAdmin, sessionID: session.id)
        }
    }

    /// The API client behind a bearer key; on changing requests also checks the signature and records it once.
    func authenticateClient(_ authorization: String, _ request: HTTPRequest, _ keys: KeyFile) throws -> ClientIdentity {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 256 else {
            throw Self.unauthenticated("Send Authorization: Bearer <api key>.")
        }
        let apiKey = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let now = context.clock.now()
        return try context.pool.withConnection { connection -> ClientIdentity in
            guard let client = try APIClientStore.find(keyHash: APIKey.hash(apiKey), on: connection), !client.revoked else {
                throw Self.unauthenticated("Unknown or revoked API key.")
            }
            let identity = ClientIdentity(id: client.id, name: client.name)
            guard request.method.changesState else { return identity }
            let secret = try SigningSecretSeal.open(client.sealedSigningSecret, keyID: client.signingKeyID, clientID: client.id, keys: keys)
            var verified = try RequestSignature.verify(
                header: request.header("reclaim-signature"), secret: secret, method: request.method.rawValue,
                target: request.target, content: request.content, now: now, window: policy.signatureWindow)
            // Administration: after a rotation the previous secret keeps working until its overlap ends.
            if case .failure(.invalid) = verified, let previous = client.previous, now < previous.expiresAt {
                let old = try SigningSecretSeal.open(previous.sealed, keyID: previous.keyID, clientID: client.id, keys: keys)
                verified = try RequestSignature.verify(
                    header: request.header("reclaim-signature"), secret: old, method: request.method.rawValue,
                    target: request.target, content: request.content, now: now, window: policy.signatureWindow)
            }
            switch verified {
            case .failure(.invalid):
                throw signatureProblem(.invalidSignature, "Reclaim-Signature is missing, malformed or does not match the request.", request, identity)
            case .failure(.stale):
                throw signatureProblem(
                    .staleSignature, "The signature's timestamp is more than \(Int(policy.signatureWindow)) s from the server's time.", request,
                    identity)
            case .success(let (mac, timestamp)):
                let expiresAt = Date(timeIntervalSince1970: Double(timestamp) + policy.signatureWindow + 1)
                let fresh = try SignatureReplayStore.record(
                    clientID: client.id, signatureHash: SHA256.hash(mac), expiresAt: expiresAt, now: now, on: connection)
                guard fresh else {
                    throw signatureProblem(.replayedSignature, "This signature was already used; sign each request afresh.", request, identity)
                }
                // Forget old signatures now and then, on the request path but rarely (1 in 256).
                if UInt8.random(in: 0...255) == 0 { try SignatureReplayStore.purgeExpired(now: now, on: connection) }
            }
            return identity
        }
    }

    private func signatureProblem(_ code: ErrorCode, _ detail: String, _ request: HTTPRequest, _ client: ClientIdentity) -> Problem {
        context.logger.warning(
            "signature_refused",
            [
                "request_id": .string(request.requestID), "actor": .string(Principal.apiClient(client).actor),
                "route": .string(request.route ?? "unmatched"), "code": .string(code.code),
            ])
        return Problem(code, detail: detail)
    }

    static func unauthenticated(_ detail: String) -> Problem {
        Problem(HTTPProblemCode.unauthenticated, detail: detail, extraHeaders: [("WWW-Authenticate", "Bearer")])
    }
}

extension HTTPMethod {
    /// True for methods that may change state (everything but GET, HEAD, OPTIONS): these need CSRF tokens and signatures.
    var changesState: Bool {
        switch self {
        case .GET, .HEAD, .OPTIONS: false
        default: true
        }
    }
}
