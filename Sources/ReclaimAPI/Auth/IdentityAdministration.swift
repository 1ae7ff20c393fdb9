import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Why an administrative identity command was refused. How each is answered (status, code, message) is declared once,
/// in the refusal catalogue (`ErrorCatalogue.swift`): HTTP and the command line say the same.
public enum IdentityAdministrationError: Error, Sendable, Equatable {
    /// Bad values, each naming its field in the API's words (`email`, `name`, `password`).
    case invalid(ValidationFailure)
    /// No agent has this id or email.
    case noSuchAgent
    /// No API client has this id (`activeOnly`: none that is not revoked).
    case noSuchClient(activeOnly: Bool)
    /// An agent with this email already exists.
    case agentExists
    /// The change would lock administration, or an agent, out.
    case lockout(AdministrationLockout)
    /// No proposal has this id.
    case noSuchProposal
    /// The admin who proposed a change may not confirm it: two people means two people.
    case sameAdmin
    /// The proposal ran out of time before a second admin confirmed it.
    case proposalExpired
    /// The proposal was already confirmed or withdrawn, or whoever proposed it is no longer an active admin.
    case proposalClosed

    /// One field's bad value.
    static func invalid(field: String, _ message: String) -> IdentityAdministrationError {
        .invalid(ValidationFailure([FieldIssue(field: field, message: message)]))
    }
}

/// The ways a change could lock administration, or an agent, out.
public enum AdministrationLockout: Sendable, Equatable, CaseIterable {
    /// An admin deactivating or demoting themselves.
    case selfDemotion
    /// Deactivating or demoting the last active admin.
    case lastAdmin
    /// Requiring a passkey of an agent who has none yet.
    case noPasskeyYet
    /// Removing the last passkey of an agent who is required to use one.
    case lastRequiredPasskey
}

/// One agent as administration shows it (list, change): no credential.
public typealias AgentSummary = AgentStore.Summary

/// A rotated client's new signing secret, shown once, and until when the previous one still works.
public struct RotatedSigningSecret: Sendable {
    public let id: UUID
    public let signingSecret: String
    public let previousValidUntil: Date
}

/// A new agent and its one-time secrets (printed once by the command line, never stored in clear).
public struct NewAgent: Sendable {
    public let id: UUID
    public let email: String
    public let name: String
    public let tier: Tier
    public let isAdmin: Bool
    public let password: String
    public let totpSecret: [UInt8]
    /// `otpauth://totp/Reclaim:<email>?secret=BASE32&issuer=Reclaim&algorithm=SHA1&digits=6&period=30`.
    public var totpURI: String {
        // The secret is 160 bits, above TOTP's 128-bit floor, so this cannot fail.
        (try! TOTP(secret: totpSecret)).provisioningURI(issuer: "Reclaim", account: email)
    }
}

/// A new API client and its one-time secrets.
public struct NewAPIClient: Sendable {
    public let id: UUID
    public let name: String
    public let apiKey: String
    public let signingSecret: String
}

/// Agents and API clients as the command line (and test setup) manage them: one code path for both.
public struct IdentityAdministration: Sendable {
    public let pool: PostgresPool
    public let keys: KeyFile
    public let hasher: PasswordHash
    /// How long a proposal waits for a second admin (`RECLAIM_PROPOSAL_HOURS`).
    public let proposalLifetime: TimeInterval

    /// The actor recorded for changes made with the command line (whoever holds the key file and the database).
    public static let commandLineActor = "cli"
    /// How long a rotated client's previous signing secret keeps working: partners switch without an outage.
    public static let rotationOverlap: TimeInterval = 24 * 3600

    /// How long a proposal waits for a second admin unless configured (`RECLAIM_PROPOSAL_HOURS`, 72).
    public static let defaultProposalLifetime: TimeInterval = 72 * 3600

    public init(
        pool: PostgresPool, keys: KeyFile, hasher: PasswordHash = PasswordHash(),
        proposalLifetime: TimeInterval = IdentityAdministration.defaultProposalLifetime
    ) {
        self.pool = pool
        self.keys = keys
        self.hasher = hasher
        self.proposalLifetime = proposalLifetime
    }

    /// Creates an agent; `password` and `totpSecret` are generated unless given (tests pass canaries). Acts at once: the
    /// command line's path (the operator's break-glass); the API asks `requestAddAgent`, which may propose instead.
    public func addAgent(
        email: String, name: String, tier: Tier, isAdmin: Bool, password: String? = nil, totpSecret: [UInt8]? = nil,
        now: Date, by actor: String = commandLineActor
    ) throws -> NewAgent {
        let (address, trimmedName) = try Self.validateNewAgent(email: email, name: name)
        let password = password ?? AgentPassword.generate()
        if let problem = AgentPassword.problem(with: password) { throw IdentityAdministrationError.invalid(field: "password", problem) }
        let secret = totpSecret ?? TOTP.generateSecret()
        guard secret.count >= 20 else { throw IdentityAdministrationError.invalid(field: "totp_secret", "A TOTP secret has at least 160 bits.") }
        let id = UUID()
        let hash = try hasher.hash(password)
        try Self.unlessTaken {
            try pool.withTransaction { connection in
                try insertAgent(
                    id: id, email: address, name: trimmedName, tier: tier, isAdmin: isAdmin, passwordHash: hash, totpSecret: secret, now: now,
                    by: actor, connection)
            }
        }
        return NewAgent(id: id, email: address, name: trimmedName, tier: tier, isAdmin: isAdmin, password: password, totpSecret: secret)
    }

    /// A new agent's email (normalised) and name (trimmed), or the fields at fault.
    static func validateNewAgent(email: String, name: String) throws -> (email: String, name: String) {
        let address: EmailAddress
        switch EmailAddress.validate(email) {
        case .success(let value): address = value
        case .failure: throw IdentityAdministrationError.invalid(field: "email", "Not a valid email address.")
        }
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmedName.count) else {
            throw IdentityAdministrationError.invalid(field: "name", "A name has 1 to 200 characters.")
        }
        return (address.value, trimmedName)
    }

    /// Runs `body`, answering a duplicate email (SQLSTATE 23505) as `agentExists`.
    static func unlessTaken<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as PostgresError where error.sqlState == "23505" { throw IdentityAdministrationError.agentExists }
    }

    /// Stores a new agent and its admin-log entry in the caller's transaction (`extra`: the proposal it confirms, if any).
    func insertAgent(
        id: UUID, email: String, name: String, tier: Tier, isAdmin: Bool, passwordHash: String, totpSecret: [UInt8], now: Date,
        by actor: String, extra: [String: JSONValue] = [:], _ connection: PostgresConnection
    ) throws {
        let sealed = TOTPSeal.seal(totpSecret, agentID: id, keys: keys)
        let record = AgentRecord(
            id: id, email: email, name: name, tier: tier, isAdmin: isAdmin, disabled: false, passwordHash: passwordHash,
            sealedTOTPSecret: sealed.sealed, totpKeyID: sealed.keyID, totpLastStep: nil)
        try AgentStore.insert(record, now: now, on: connection)
        try audit(
            .agentAdded,
            ["agent_id": .string(id.lowercased), "email": .string(email), "tier": .string(tier.rawValue), "admin": .bool(isAdmin)].merging(extra) {
                a, _ in a
            }, by: actor, now: now, connection)
    }

    /// Disables an agent and ends its sessions.
    public func disableAgent(email: String, now: Date, by actor: String = commandLineActor) throws -> UUID {
        try updateAgent(.email(email), active: false, now: now, by: actor).id
    }

    /// Enables a disabled agent again (its old sessions stay ended).
    public func enableAgent(email: String, now: Date, by actor: String = commandLineActor) throws -> UUID {
        try updateAgent(.email(email), active: true, now: now, by: actor).id
    }

    /// Which agent a command means: the command line names agents by email, the API by id.
    public enum AgentReference: Sendable {
        case email(String)
        case id(UUID)
    }

    /// Changes tier, admin flag and active state (nil keeps a value). Deactivating ends the agent's sessions. An agent
    /// acting on itself may not deactivate or demote itself, and the last active admin stays one, so administration
    /// cannot lock itself out. Only real changes are recorded. Acts at once (the command line's path).
    public func updateAgent(
        _ reference: AgentReference, tier: Tier? = nil, active: Bool? = nil, admin: Bool? = nil, passkeyRequired: Bool? = nil,
        now: Date, by actor: String = commandLineActor
    ) throws -> AgentSummary {
        try pool.withTransaction { connection in
            let current = try requireSummary(reference, connection)
            let change = AgentChangeRequest(tier: tier, active: active, admin: admin, passkeyRequired: passkeyRequired)
            return try applyUpdate(current, change, now: now, by: actor, lockoutActor: actor, connection)
        }
    }

    /// The members of an agent change as asked (nil keeps a value).
    struct AgentChangeRequest: Sendable {
        var tier: Tier?
        var active: Bool?
        var admin: Bool?
        var passkeyRequired: Bool?
    }

    /// Refuses a change that would lock administration, or the agent, out; `lockoutActor` is the admin who asked for it
    /// (the proposer when another admin confirms).
    func checkLockout(_ current: AgentSummary, _ change: AgentChangeRequest, lockoutActor: String, _ connection: PostgresConnection) throws {
        let newAdmin = change.admin ?? current.isAdmin
        let newDisabled = change.active.map { !$0 } ?? current.disabled
        let newRequired = change.passkeyRequired ?? current.passkeyRequired
        // Requiring a passkey of an agent without one would leave them no way to sign in.
        if newRequired && !current.passkeyRequired && current.passkeys == 0 {
            throw IdentityAdministrationError.lockout(.noPasskeyYet)
        }
        let losesAdministration = (current.isAdmin && !current.disabled) && (!newAdmin || newDisabled)
        if losesAdministration {
            if Principal.agentID(fromActor: lockoutActor) == current.id {
                throw IdentityAdministrationError.lockout(.selfDemotion)
            }
            if try AgentStore.otherActiveAdmins(than: current.id, on: connection) == 0 {
                throw IdentityAdministrationError.lockout(.lastAdmin)
            }
        }
    }

    /// Applies a change in the caller's transaction after the lockout checks, with its admin-log entry (`extra`: the
    /// proposal it confirms, if any).
    func applyUpdate(
        _ current: AgentSummary, _ change: AgentChangeRequest, now: Date, by actor: String, lockoutActor: String,
        extra: [String: JSONValue] = [:], _ connection: PostgresConnection
    ) throws -> AgentSummary {
        try checkLockout(current, change, lockoutActor: lockoutActor, connection)
        let newTier = change.tier ?? current.tier
        let newAdmin = change.admin ?? current.isAdmin
        let newDisabled = change.active.map { !$0 } ?? current.disabled
        let newRequired = change.passkeyRequired ?? current.passkeyRequired
        var changes: [String: JSONValue] = [:]
        if newTier != current.tier { changes["tier"] = ["from": .string(current.tier.rawValue), "to": .string(newTier.rawValue)] }
        if newAdmin != current.isAdmin { changes["admin"] = ["from": .bool(current.isAdmin), "to": .bool(newAdmin)] }
        if newDisabled != current.disabled { changes["active"] = ["from": .bool(!current.disabled), "to": .bool(!newDisabled)] }
        if newRequired != current.passkeyRequired {
            changes["passkey_required"] = ["from": .bool(current.passkeyRequired), "to": .bool(newRequired)]
        }
        guard !changes.isEmpty else { return current }
        try AgentStore.update(
            agentID: current.id, tier: newTier, isAdmin: newAdmin, disabled: newDisabled, passkeyRequired: newRequired,
            now: now, on: connection)
        // Sessions carry no tier or role of their own, so only deactivation needs to end them.
        if newDisabled { try SessionStore.deleteAll(agentID: current.id, on: connection) }
        try audit(
            .agentUpdated,
            ["agent_id": .string(current.id.lowercased), "email": .string(current.email), "changes": .object(changes)].merging(extra) { a, _ in a },
            by: actor, now: now, connection)
        return AgentSummary(
            id: current.id, email: current.email, name: current.name, tier: newTier, isAdmin: newAdmin, disabled: newDisabled,
            lastSignInAt: current.lastSignInAt, createdAt: current.createdAt, passkeyRequired: newRequired, passkeys: current.passkeys)
    }

    /// Every agent, by email, those after `afterEmail`, at most `limit`.
    public func listAgents(afterEmail: String?, limit: Int) throws -> [AgentSummary] {
        try pool.withConnection { try AgentStore.list(afterEmail: afterEmail?.lowercased(), limit: limit, on: $0) }
    }

    /// Sets a new (generated) password and ends the agent's sessions; returns the password to print once.
    public func resetPassword(email: String, password: String? = nil, now: Date, by actor: String = commandLineActor) throws -> (
        id: UUID, password: String
    ) {
        try resetPassword(.email(email), password: password, now: now, by: actor)
    }

    /// Sets a new (generated) password and ends the agent's sessions; returns the password to show once. Acts at once
    /// (the command line's path).
    public func resetPassword(_ reference: AgentReference, password: String? = nil, now: Date, by actor: String = commandLineActor) throws -> (
        id: UUID, password: String
    ) {
        let password = password ?? AgentPassword.generate()
        if let problem = AgentPassword.problem(with: password) { throw IdentityAdministrationError.invalid(field: "password", problem) }
        let hash = try hasher.hash(password)
        let id = try pool.withTransaction { connection in
            let agent = try requireSummary(reference, connection)
            try applyPasswordReset(agent, hash: hash, now: now, by: actor, connection)
            return agent.id
        }
        return (id, password)
    }

    /// Replaces the password hash and ends the agent's sessions, with its admin-log entry, in the caller's transaction.
    func applyPasswordReset(
        _ agent: AgentSummary, hash: String, now: Date, by actor: String, extra: [String: JSONValue] = [:], _ connection: PostgresConnection
    )
        throws
    {
        try AgentStore.setPasswordHash(agentID: agent.id, hash: hash, now: now, on: connection)
        try SessionStore.deleteAll(agentID: agent.id, on: connection)
        try audit(
            .passwordReset, ["agent_id": .string(agent.id.lowercased), "email": .string(agent.email)].merging(extra) { a, _ in a }, by: actor,
            now: now, connection)
    }

    /// Replaces the TOTP seed and ends the agent's sessions; returns the agent and its new seed.
    public func resetTOTP(email: String, now: Date, by actor: String = commandLineActor) throws -> NewAgent {
        try resetTOTP(.email(email), now: now, by: actor)
    }

    /// Replaces the TOTP seed and ends the agent's sessions; returns the agent and its new seed (shown once). Acts at once
    /// (the command line's path).
    public func resetTOTP(_ reference: AgentReference, now: Date, by actor: String = commandLineActor) throws -> NewAgent {
        try pool.withTransaction { connection in
            try applyTOTPReset(try requireSummary(reference, connection), now: now, by: actor, connection)
        }
    }

    /// Gives the agent a new TOTP seed and ends its sessions, with its admin-log entry, in the caller's transaction.
    func applyTOTPReset(_ agent: AgentSummary, now: Date, by actor: String, extra: [String: JSONValue] = [:], _ connection: PostgresConnection) throws
        -> NewAgent
    {
        let secret = TOTP.generateSecret()
        let sealed = TOTPSeal.seal(secret, agentID: agent.id, keys: keys)
        try AgentStore.setTOTPSecret(agentID: agent.id, sealed: sealed.sealed, keyID: sealed.keyID, now: now, on: connection)
        try SessionStore.deleteAll(agentID: agent.id, on: connection)
        try audit(
            .totpReset, ["agent_id": .string(agent.id.lowercased), "email": .string(agent.email)].merging(extra) { a, _ in a }, by: actor, now: now,
            connection)
        return NewAgent(
            id: agent.id, email: agent.email, name: agent.name, tier: agent.tier, isAdmin: agent.isAdmin, password: "", totpSecret: secret)
    }

    /// Creates an API client; `apiKey` and `signingSecret` are generated unless given (tests pass canaries).
    public func addClient(
        name: String, apiKey: String? = nil, signingSecret: String? = nil, now: Date,
        by actor: String = commandLineActor
    ) throws -> NewAPIClient {
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmedName.count) else {
            throw IdentityAdministrationError.invalid(field: "name", "A name has 1 to 200 characters.")
        }
        let key = apiKey ?? APIKey.newKey()
        let secret = signingSecret ?? APIKey.newSigningSecret()
        let id = UUID()
        let sealed = SigningSecretSeal.seal(Array(secret.utf8), clientID: id, keys: keys)
        try pool.withTransaction { connection in
            try APIClientStore.insert(
                id: id, name: trimmedName, keyHash: APIKey.hash(key), sealedSigningSecret: sealed.sealed,
                signingKeyID: sealed.keyID, now: now, on: connection)
            try audit(.clientAdded, ["client_id": .string(id.lowercased), "name": .string(trimmedName)], by: actor, now: now, connection)
        }
        return NewAPIClient(id: id, name: trimmedName, apiKey: key, signingSecret: secret)
    }

    /// Revokes a client; its key gets 401 from now on.
    public func revokeClient(id: UUID, now: Date, by actor: String = commandLineActor) throws {
        try pool.withTransaction { connection in
            guard try APIClientStore.revoke(id: id, now: now, on: connection) else {
                throw IdentityAdministrationError.noSuchClient(activeOnly: true)
            }
            try audit(.clientRevoked, ["client_id": .string(id.lowercased)], by: actor, now: now, connection)
        }
    }

    /// Gives a client a new signing secret (shown once); the previous one keeps working for `rotationOverlap`.
    /// Rotating again within the overlap retires the oldest secret at once: only one previous secret is kept.
    public func rotateClient(id: UUID, signingSecret: String? = nil, now: Date, by actor: String = commandLineActor) throws -> RotatedSigningSecret {
        let secret = signingSecret ?? APIKey.newSigningSecret()
        let sealed = SigningSecretSeal.seal(Array(secret.utf8), clientID: id, keys: keys)
        let until = now.addingTimeInterval(Self.rotationOverlap)
        try pool.withTransaction { connection in
            guard
                try APIClientStore.rotate(
                    id: id, sealedSigningSecret: sealed.sealed, signingKeyID: sealed.keyID, overlapUntil: until, now: now,
                    on: connection)
            else {
                throw IdentityAdministrationError.noSuchClient(activeOnly: true)
            }
            try audit(
                .clientRotated, ["client_id": .string(id.lowercased), "previous_valid_until": Timestamp.json(until)], by: actor, now: now, connection)
        }
        return RotatedSigningSecret(id: id, signingSecret: secret, previousValidUntil: until)
    }

    /// Gives a client a new API key (shown once); the previous key is refused at once, unlike a signing secret's overlap:
    /// a key is rotated because it may be known to someone else. The signing secret stays.
    public func rotateClientKey(id: UUID, apiKey: String? = nil, now: Date, by actor: String = commandLineActor) throws -> String {
        let key = apiKey ?? APIKey.newKey()
        try pool.withTransaction { connection in
            guard try APIClientStore.rotateKey(id: id, keyHash: APIKey.hash(key), on: connection) else {
                throw IdentityAdministrationError.noSuchClient(activeOnly: true)
            }
            try audit(.clientKeyRotated, ["client_id": .string(id.lowercased)], by: actor, now: now, connection)
        }
        return key
    }

    /// Records that an admin queued a webhook delivery again (`AdminWebhooksController.retry`), in the caller's transaction.
    public func recordWebhookRetry(
        clientID: UUID, endpointID: UUID, deliveryID: UUID, now: Date, by actor: String, on connection: PostgresConnection
    ) throws {
        try audit(
            .webhookRetried,
            [
                "client_id": .string(clientID.lowercased), "endpoint_id": .string(endpointID.lowercased),
                "delivery_id": .string(deliveryID.lowercased),
            ], by: actor, now: now, connection)
    }

    /// Records that an admin replaced an account on file (`AccountsController.replace`), in the caller's transaction: the
    /// addresses only, never an answer or a card.
    public func recordAccountReplaced(email: String, newEmail: String, now: Date, by actor: String, on connection: PostgresConnection) throws {
        try audit(.accountReplaced, ["email": .string(email), "new_email": .string(newEmail)], by: actor, now: now, connection)
    }

    /// Clients by creation, those after the cursor, at most `limit`.
    public func listClients(after cursor: (createdAt: Date, id: UUID)?, limit: Int) throws -> [APIClientSummary] {
        try pool.withConnection { try APIClientStore.list(after: cursor, limit: limit, on: $0) }
    }

    /// One client's admin view.
    public func client(id: UUID) throws -> APIClientSummary {
        guard let client = try pool.withConnection({ try APIClientStore.summary(id: id, on: $0) }) else {
            throw IdentityAdministrationError.noSuchClient(activeOnly: false)
        }
        return client
    }

    /// The admin audit log after `afterSeq`, at most `limit`.
    public func auditLog(afterSeq: Int, limit: Int) throws -> [CaseEvent] {
        try pool.withConnection { try AdminEventStore.list(afterSeq: afterSeq, limit: limit, on: $0) }
    }

    /// Records a passkey sign-in refused because its sign count went backwards (a cloned authenticator is the likely cause),
    /// where admins look: the audit log, with the agent as actor.
    public func recordSignCountRegression(agentID: UUID, passkeyID: UUID, stored: Int64, received: Int64, now: Date) throws {
        try pool.withTransaction { connection in
            try audit(
                .passkeySignCountRegressed,
                [
                    "agent_id": .string(agentID.lowercased), "passkey_id": .string(passkeyID.lowercased),
                    "stored_sign_count": .int(stored), "received_sign_count": .int(received),
                ],
                by: "agent:" + agentID.lowercased, now: now, connection)
        }
    }

    /// Every kind of administrative change, as its audit event `type`.
    public enum AuditType: String, CaseIterable, Sendable {
        case agentAdded = "agent_added"
        case agentUpdated = "agent_updated"
        case passwordReset = "password_reset"
        case totpReset = "totp_reset"
        case clientAdded = "client_added"
        case clientRotated = "client_rotated"
        case clientRevoked = "client_revoked"
        case clientKeyRotated = "client_key_rotated"
        case webhookRetried = "webhook_retried"
        case accountReplaced = "account_replaced"
        case passkeySignCountRegressed = "passkey_sign_count_regressed"
        case proposalMade = "proposal_made"
        case proposalConfirmed = "proposal_confirmed"
        case proposalExpired = "proposal_expired"
        case proposalWithdrawn = "proposal_withdrawn"
    }

    /// Appends to the admin chain in the change's own transaction: the change and its record commit together.
    func audit(_ type: AuditType, _ data: [String: JSONValue], by actor: String, now: Date, _ connection: PostgresConnection) throws {
        try AdminEventStore.append(at: now, actor: actor, type: type.rawValue, data: .object(data), on: connection)
    }

    func requireSummary(_ reference: AgentReference, _ connection: PostgresConnection) throws -> AgentSummary {
        let found: AgentSummary? =
            switch reference {
            case .id(let id): try AgentStore.summary(id: id, on: connection)
            case .email(let email): try AgentStore.find(email: email, on: connection).flatMap { try AgentStore.summary(id: $0.id, on: connection) }
            }
        guard let found else { throw IdentityAdministrationError.noSuchAgent }
        return found
    }

}

extension UUID {
    /// The lower-case text form the API and the audit log use.
    var lowercased: String { uuidString.lowercased() }
}
