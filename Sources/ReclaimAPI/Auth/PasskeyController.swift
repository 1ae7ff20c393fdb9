import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore

/// Passkeys (WebAuthn, ES256, attestation `none`): an agent registers them while signed in and may then sign in with
/// one instead of password and TOTP. Every check is the server's: the challenge (single use, 5 minutes, in
/// PostgreSQL so every instance agrees), the origin, the RP ID hash, user presence and verification, the signature
/// (OpenSSL, `ES256`) and the sign count (a regression is refused and recorded in the admin audit log).
final class PasskeyController: Sendable {
    let context: ServiceContext
    let sessions: SessionController
    let policy: IdentityPolicy

    /// How long a challenge may be answered.
    static let challengeLifetime: TimeInterval = 300

    init(context: ServiceContext, sessions: SessionController, policy: IdentityPolicy = .standard) {
        self.context = context
        self.sessions = sessions
        self.policy = policy
    }

    struct Registration: Decodable {
        let name: String?
        let clientDataJSON: String
        let attestationObject: String

        enum CodingKeys: String, CodingKey {
            case name
            case clientDataJSON = "client_data_json"
            case attestationObject = "attestation_object"
        }
    }

    struct Assertion: Decodable {
        let credentialID: String
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String

        enum CodingKeys: String, CodingKey {
            case credentialID = "credential_id"
            case clientDataJSON = "client_data_json"
            case authenticatorData = "authenticator_data"
            case signature
        }
    }

    // MARK: Registration (signed in)

    /// `POST /api/v1/passkeys/registration-options`: a fresh challenge and what `navigator.credentials.create` needs.
    @Sendable func registrationOptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        let challenge = SecureRandom.bytes(32)
        let now = context.now
        let existing = try context.pool.withTransaction { connection in
            try PasskeyStore.insertChallenge(
                hash: SHA256.hash(challenge), purpose: "register", agentID: agent.id,
                expiresAt: now.addingTimeInterval(Self.challengeLifetime), on: connection)
            if UInt8.random(in: 0...15) == 0 { try PasskeyStore.purgeChallenges(now: now, on: connection) }
            return try PasskeyStore.list(agentID: agent.id, on: connection)
        }
        return CaseHTTP.json(
            [
                "challenge": .string(Base64URL.encode(challenge)), "timeout": .int(Int64(Self.challengeLifetime * 1000)),
                "rp": ["id": .string(context.configuration.webAuthnRPID), "name": "Reclaim"],
                "user": [
                    "id": .string(Base64URL.encode(Self.bytes(of: agent.id))), "name": .string(agent.email), "display_name": .string(agent.name),
                ],
                "pub_key_cred_params": [["type": "public-key", "alg": -7]],
                "attestation": "none",
                "authenticator_selection": ["resident_key": "required", "user_verification": "required"],
                "exclude_credentials": .array(existing.map { ["type": "public-key", "id": .string(Base64URL.encode($0.credentialID))] }),
            ], headers: [("Cache-Control", "no-store")])
    }

    /// `POST /api/v1/passkeys` `{name?, client_data_json, attestation_object}` (base64url): 201 with the passkey.
    @Sendable func register(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        let body = try request.decodeJSON(Registration.self)
        let clientDataBytes = try Self.decode(body.clientDataJSON, field: "client_data_json")
        let attestation = try Self.decode(body.attestationObject, field: "attestation_object")
        let name = (body.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= 100 else { throw Problem.unprocessable(errors: [FieldError(field: "name", message: "at most 100 characters")]) }
        let now = context.now
        let passkey: PasskeyRecord = try refused(request, agent: agent.id) {
            let clientData = try WebAuthn.ClientData(json: clientDataBytes)
            try clientData.check(type: "webauthn.create", origins: isAllowedOrigin)
            let data = try WebAuthn.authenticatorData(attestationObject: attestation)
            try data.check(rpIDHash: SHA256.hash(context.configuration.webAuthnRPID))
            guard let credentialID = data.credentialID, let key = data.publicKey else { throw WebAuthn.Refusal.malformedAuthenticatorData }
            try consume(clientData.challenge, purpose: "register", agentID: agent.id, now: now)
            return try context.pool.withTransaction { connection in
                let id = UUID()
                do {
                    try PasskeyStore.insert(
                        id: id, agentID: agent.id, credentialID: credentialID, publicKey: key.uncompressed,
                        signCount: Int64(data.signCount), name: name.isEmpty ? "Passkey" : name, now: now, on: connection)
                } catch let error as PostgresError where error.sqlState == "23505" {
                    throw Problem.conflict(code: ErrorCode.passkeyExists, detail: "This passkey is already registered.")
                }
                return PasskeyRecord(
                    id: id, agentID: agent.id, credentialID: credentialID, publicKey: key.uncompressed, signCount: Int64(data.signCount),
                    name: name.isEmpty ? "Passkey" : name, createdAt: now, lastUsedAt: nil)
            }
        }
        context.logger.info("passkey_registered", ["request_id": .string(request.requestID), "actor": .string(Principal.agent(agent).actor)])
        return CaseHTTP.json(Self.json(passkey), status: 201)
    }

    /// `GET /api/v1/passkeys`: the signed-in agent's passkeys.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        let passkeys = try context.pool.withConnection { try PasskeyStore.list(agentID: agent.id, on: $0) }
        return CaseHTTP.json(CaseHTTP.list(passkeys.map(Self.json), nextCursor: nil))
    }

    /// `DELETE /api/v1/passkeys/{id}`: removes one of the agent's own passkeys (404 for anyone else's).
    @Sendable func remove(_ request: HTTPRequest) throws -> HTTPResponse {
        let agent = try context.requireAgent(request)
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw Problem.notFound(detail: "No such passkey.") }
        let removed = try context.pool.withTransaction { connection -> Bool in
            guard try PasskeyStore.delete(id: id, agentID: agent.id, on: connection) else { return false }
            // The last passkey of an agent who must use one cannot go: they could not sign in again.
            if try PasskeyStore.isRequired(agentID: agent.id, on: connection), try PasskeyStore.list(agentID: agent.id, on: connection).isEmpty {
                throw IdentityAdministrationError.lockout(.lastRequiredPasskey)
            }
            return true
        }
        guard removed else { throw Problem.notFound(detail: "No such passkey.") }
        return HTTPResponse.noContent()
    }

    // MARK: Sign-in (not signed in)

    /// `POST /api/v1/session/passkey-options`: a fresh sign-in challenge (the passkey itself names the agent). Anyone
    /// may ask, so each challenge counts against the client address's budget (429 past it) and expired ones are deleted:
    /// one address keeps at most `passkeyOptionsLimit` rows alive.
    @Sendable func signInOptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let challenge = SecureRandom.bytes(32)
        let now = context.now
        try context.pool.withTransaction { connection in
            let key = ThrottleStore.passkeyOptionsKey(request.clientAddress)
            if case .locked(let until) = try ThrottleStore.claim(key: key, rule: policy.passkeyOptionsRule, now: now, on: connection) {
                context.logger.warning("passkey_options_throttled", ["request_id": .string(request.requestID)])
                throw Problem.tooManyRequests(
                    retryAfter: Int(until.timeIntervalSince(now).rounded(.up)),
                    detail: "Too many passkey sign-ins from this address. Try again later.")
            }
            try PasskeyStore.purgeChallenges(now: now, on: connection)
            try PasskeyStore.insertChallenge(
                hash: SHA256.hash(challenge), purpose: "sign_in", agentID: nil,
                expiresAt: now.addingTimeInterval(Self.challengeLifetime), on: connection)
        }
        return CaseHTTP.json(
            [
                "challenge": .string(Base64URL.encode(challenge)), "timeout": .int(Int64(Self.challengeLifetime * 1000)),
                "rp_id": .string(context.configuration.webAuthnRPID), "user_verification": "required",
            ],
            headers: [("Cache-Control", "no-store")])
    }

    /// `POST /api/v1/session/passkey` `{credential_id, client_data_json, authenticator_data, signature}` (base64url):
    /// 201 with the session, as a password sign-in answers. Every refusal is the same 401 `invalid_credentials`.
    @Sendable func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let keys = context.keys else { throw Problem.internal }
        let body = try request.decodeJSON(Assertion.self)
        let credentialID = try Self.decode(body.credentialID, field: "credential_id")
        let clientDataBytes = try Self.decode(body.clientDataJSON, field: "client_data_json")
        let authenticatorBytes = try Self.decode(body.authenticatorData, field: "authenticator_data")
        let signature = try Self.decode(body.signature, field: "signature")
        let now = context.now
        var regression: (agent: UUID, passkey: UUID, stored: Int64, received: UInt32)?
        do {
            let clientData = try WebAuthn.ClientData(json: clientDataBytes)
            try clientData.check(type: "webauthn.get", origins: isAllowedOrigin)
            let data = try WebAuthn.AuthenticatorData(authenticatorBytes)
            try data.check(rpIDHash: SHA256.hash(context.configuration.webAuthnRPID))
            try consume(clientData.challenge, purpose: "sign_in", agentID: nil, now: now)
            let (agent, token) = try context.pool.withTransaction { connection -> (AgentRecord, String) in
                guard let passkey = try PasskeyStore.find(credentialID: credentialID, on: connection),
                    let agent = try AgentStore.find(id: passkey.agentID, on: connection), !agent.disabled
                else { throw WebAuthn.Refusal.unknownCredential }
                let key = try WebAuthn.ES256Key(uncompressed: passkey.publicKey)
                guard ES256.verify(signature: signature, message: authenticatorBytes + SHA256.hash(clientDataBytes), x: key.x, y: key.y) else {
                    throw WebAuthn.Refusal.badSignature
                }
                do {
                    try WebAuthn.checkSignCount(stored: UInt32(clamping: passkey.signCount), received: data.signCount)
                } catch {
                    regression = (agent.id, passkey.id, passkey.signCount, data.signCount)
                    throw error
                }
                try PasskeyStore.recordUse(id: passkey.id, signCount: Int64(data.signCount), now: now, on: connection)
                try AgentStore.recordSignIn(agentID: agent.id, now: now, on: connection)
                let token = SessionCookie.newToken()
                return (agent, token)
            }
            let sessionID = UUID()
            try context.pool.withConnection { connection in
                try SessionStore.insert(
                    id: sessionID, tokenHash: SessionCookie.hash(token), agentID: agent.id, now: now,
                    expiresAt: now.addingTimeInterval(policy.sessionAbsoluteTimeout), on: connection)
            }
            context.logger.info(
                "sign_in", ["request_id": .string(request.requestID), "actor": .string("agent:" + agent.id.lowercased), "method": "passkey"])
            let identity = AgentIdentity(
                id: agent.id, name: agent.name, email: agent.email, tier: agent.tier, isAdmin: agent.isAdmin, sessionID: sessionID)
            var response = try HTTPResponse.json(sessions.view(identity, keys: keys), status: 201)
            response.addHeader("Set-Cookie", SessionCookie.setCookie(token))
            return response
        } catch let refusal as WebAuthn.Refusal {
            if let regression {
                // A cloned authenticator is the likeliest cause: recorded where admins look, in its own transaction.
                try? IdentityAdministration(pool: context.pool, keys: keys)
                    .recordSignCountRegression(
                        agentID: regression.agent, passkeyID: regression.passkey, stored: regression.stored,
                        received: Int64(regression.received), now: now)
            }
            context.logger.warning("passkey_sign_in_failed", ["request_id": .string(request.requestID), "reason": .string(refusal.rawValue)])
            throw SessionController.invalidCredentials
        }
    }

    // MARK: Shared

    /// Registration refusals are the agent's own device talking: 422 naming why (no secret is involved).
    private func refused<T>(_ request: HTTPRequest, agent: UUID, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let refusal as WebAuthn.Refusal {
            context.logger.warning(
                "passkey_registration_refused",
                [
                    "request_id": .string(request.requestID), "reason": .string(refusal.rawValue),
                    "actor": .string("agent:" + agent.lowercased),
                ])
            throw Problem(ErrorCode.passkeyRefused, detail: "The passkey could not be registered (\(refusal.rawValue)).")
        }
    }

    /// Takes the challenge in a transaction of its own, committed before anything else is checked: whatever follows,
    /// a refused ceremony cannot be tried again with it.
    private func consume(_ text: String, purpose: String, agentID: UUID?, now: Date) throws {
        guard let challenge = Self.decodeChallenge(text),
            try context.pool.withTransaction({
                try PasskeyStore.consumeChallenge(hash: SHA256.hash(challenge), purpose: purpose, agentID: agentID, now: now, on: $0)
            })
        else { throw WebAuthn.Refusal.unknownChallenge }
    }

    /// The configured origin exactly, or (none configured) a loopback origin.
    private func isAllowedOrigin(_ origin: String) -> Bool {
        if let configured = context.configuration.webAuthnOrigin { return origin == configured }
        return WebAuthn.isLoopbackOrigin(origin)
    }

    static func json(_ passkey: PasskeyRecord) -> JSONValue {
        [
            "id": .string(passkey.id.lowercased), "name": .string(passkey.name), "created_at": Timestamp.json(passkey.createdAt),
            "last_used_at": Timestamp.json(passkey.lastUsedAt),
        ]
    }

    /// A WebAuthn user handle: the agent id's 16 bytes (no e-mail, nothing personal).
    static func bytes(of id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    /// Base64url (padding optional) to bytes, or 422 naming the field.
    static func decode(_ text: String, field: String) throws -> [UInt8] {
        guard let bytes = base64URL(text), !bytes.isEmpty, bytes.count <= 8192 else {
            throw Problem.unprocessable(errors: [FieldError(field: field, message: "must be base64url")])
        }
        return bytes
    }

    /// The challenge in the client data (base64url, 32 bytes), or nil.
    static func decodeChallenge(_ text: String) -> [UInt8]? {
        guard let bytes = base64URL(text), bytes.count == 32 else { return nil }
        return bytes
    }

    static func base64URL(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 12_000, text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard = standard.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
