import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Why an administrative identity command was refused, in one line for the operator.
public struct IdentityAdministrationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
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

    public init(pool: PostgresPool, keys: KeyFile, hasher: PasswordHash = PasswordHash()) {
        self.pool = pool
        self.keys = keys
        self.hasher = hasher
    }

    /// Creates an agent; `password` and `totpSecret` are generated unless given (tests pass canaries).
    public func addAgent(email: String, name: String, tier: Tier, isAdmin: Bool, password: String? = nil, totpSecret: [UInt8]? = nil,
                         now: Date) throws -> NewAgent {
        let address: EmailAddress
        switch EmailAddress.validate(email) {
        case .success(let value): address = value
        case .failure: throw IdentityAdministrationError("--email: not a valid email address")
        }
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmedName.count) else { throw IdentityAdministrationError("--name: 1 to 200 characters") }
        let password = password ?? AgentPassword.generate()
        if let problem = AgentPassword.problem(with: password) { throw IdentityAdministrationError(problem) }
        let secret = totpSecret ?? TOTP.generateSecret()
        guard secret.count >= 20 else { throw IdentityAdministrationError("a TOTP secret must be at least 160 bits") }
        let id = UUID()
        let sealed = TOTPSeal.seal(secret, agentID: id, keys: keys)
        let record = AgentRecord(id: id, email: address.value, name: trimmedName, tier: tier, isAdmin: isAdmin, disabled: false,
                                 passwordHash: try hasher.hash(password), sealedTOTPSecret: sealed.sealed, totpKeyID: sealed.keyID,
                                 totpLastStep: nil)
        do {
            try pool.withTransaction { try AgentStore.insert(record, now: now, on: $0) }
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw IdentityAdministrationError("an agent with email \(address.value) already exists")
        }
        return NewAgent(id: id, email: address.value, name: trimmedName, tier: tier, isAdmin: isAdmin, password: password, totpSecret: secret)
    }

    /// Disables an agent and ends its sessions.
    public func disableAgent(email: String, now: Date) throws -> UUID {
        try pool.withTransaction { connection in
            let agent = try requireAgent(email, connection)
            try AgentStore.disable(agentID: agent.id, now: now, on: connection)
            try SessionStore.deleteAll(agentID: agent.id, on: connection)
            return agent.id
        }
    }

    /// Sets a new (generated) password and ends the agent's sessions; returns the password to print once.
    public func resetPassword(email: String, password: String? = nil, now: Date) throws -> (id: UUID, password: String) {
        let password = password ?? AgentPassword.generate()
        if let problem = AgentPassword.problem(with: password) { throw IdentityAdministrationError(problem) }
        let hash = try hasher.hash(password)
        let id = try pool.withTransaction { connection in
            let agent = try requireAgent(email, connection)
            try AgentStore.setPasswordHash(agentID: agent.id, hash: hash, now: now, on: connection)
            try SessionStore.deleteAll(agentID: agent.id, on: connection)
            return agent.id
        }
        return (id, password)
    }

    /// Replaces the TOTP seed and ends the agent's sessions; returns the agent and its new seed.
    public func resetTOTP(email: String, now: Date) throws -> NewAgent {
        let secret = TOTP.generateSecret()
        let agent = try pool.withTransaction { connection -> AgentRecord in
            let agent = try requireAgent(email, connection)
            let sealed = TOTPSeal.seal(secret, agentID: agent.id, keys: keys)
            try AgentStore.setTOTPSecret(agentID: agent.id, sealed: sealed.sealed, keyID: sealed.keyID, now: now, on: connection)
            try SessionStore.deleteAll(agentID: agent.id, on: connection)
            return agent
        }
        return NewAgent(id: agent.id, email: agent.email, name: agent.name, tier: agent.tier, isAdmin: agent.isAdmin, password: "", totpSecret: secret)
    }

    /// Creates an API client; `apiKey` and `signingSecret` are generated unless given (tests pass canaries).
    public func addClient(name: String, apiKey: String? = nil, signingSecret: String? = nil, now: Date) throws -> NewAPIClient {
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(trimmedName.count) else { throw IdentityAdministrationError("--name: 1 to 200 characters") }
        let key = apiKey ?? APIKey.newKey()
        let secret = signingSecret ?? APIKey.newSigningSecret()
        let id = UUID()
        let sealed = SigningSecretSeal.seal(Array(secret.utf8), clientID: id, keys: keys)
        try pool.withTransaction { connection in
            try APIClientStore.insert(id: id, name: trimmedName, keyHash: APIKey.hash(key), sealedSigningSecret: sealed.sealed,
                                      signingKeyID: sealed.keyID, now: now, on: connection)
        }
        return NewAPIClient(id: id, name: trimmedName, apiKey: key, signingSecret: secret)
    }

    /// Revokes a client; its key gets 401 from now on.
    public func revokeClient(id: UUID, now: Date) throws {
        let revoked = try pool.withTransaction { try APIClientStore.revoke(id: id, now: now, on: $0) }
        guard revoked else { throw IdentityAdministrationError("no active API client with id \(id.uuidString.lowercased())") }
    }

    private func requireAgent(_ email: String, _ connection: PostgresConnection) throws -> AgentRecord {
        guard let agent = try AgentStore.find(email: email, on: connection) else {
            throw IdentityAdministrationError("no agent with email \(email)")
        }
        return agent
    }
}
