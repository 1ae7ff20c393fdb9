import Foundation
import Postgres
import ReclaimCore

/// An agent row as stored: credentials stay hashed or sealed; the caller decides what to open.
public struct AgentRecord: Sendable {
    public let id: UUID
    public let email: String
    public let name: String
    public let tier: Tier
    public let isAdmin: Bool
    public let disabled: Bool
    /// argon2id PHC string.
    public let passwordHash: String
    /// The TOTP seed sealed with the `totp` key (associated data: the agent id).
    public let sealedTOTPSecret: [UInt8]
    /// Key-file id of the key that sealed the seed.
    public let totpKeyID: String
    /// The last accepted TOTP time step, nil before the first sign-in.
    public let totpLastStep: UInt64?

    public init(id: UUID, email: String, name: String, tier: Tier, isAdmin: Bool, disabled: Bool, passwordHash: String,
                sealedTOTPSecret: [UInt8], totpKeyID: String, totpLastStep: UInt64?) {
        self.id = id
        self.email = email
        self.name = name
        self.tier = tier
        self.isAdmin = isAdmin
        self.disabled = disabled
        self.passwordHash = passwordHash
        self.sealedTOTPSecret = sealedTOTPSecret
        self.totpKeyID = totpKeyID
        self.totpLastStep = totpLastStep
    }
}

/// The `agents` table.
public enum AgentStore {
    private static let columns = "id, email, name, tier, is_admin, disabled, password_hash, totp_secret, totp_key_id, totp_last_step"

    /// Inserts a new agent; a duplicate email (any case) fails with SQLSTATE 23505 (`agents_email_key`).
    public static func insert(_ agent: AgentRecord, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO agents (id, email, name, tier, is_admin, disabled, password_hash, totp_secret, totp_key_id, totp_last_step, created_at, updated_at)
            VALUES (\(agent.id), \(agent.email), \(agent.name), \(agent.tier.rawValue), \(agent.isAdmin), \(agent.disabled),
                    \(agent.passwordHash), \(agent.sealedTOTPSecret), \(agent.totpKeyID), \(agent.totpLastStep.map { Int64($0) }), \(now), \(now))
            """)
    }

    /// Whether any agent exists (a fresh database has none).
    public static func any(on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT EXISTS (SELECT 1 FROM agents)").first?.decode(0, as: Bool.self) ?? false
    }

    /// The agent with this email, compared case-insensitively.
    public static func find(email: String, on connection: PostgresConnection) throws -> AgentRecord? {
        try connection.query("SELECT \(unescaped: columns) FROM agents WHERE lower(email) = lower(\(email))")
            .first.map(decode)
    }

    /// Active agents of any of `tiers`, by name then id, at most `limit`: whom a case can be handed to.
    public static func colleagues(tiers: [Tier], limit: Int, on connection: PostgresConnection) throws -> [(id: UUID, name: String, tier: Tier)] {
        let list = tiers.map(\.rawValue).joined(separator: ",")
        return try connection.query("""
            SELECT id, name, tier FROM agents
            WHERE NOT disabled AND tier = ANY(string_to_array(\(list)::text, ','))
            ORDER BY name, id LIMIT \(Int64(limit))
            """).map { row in
            (try row.decode(0, as: UUID.self), try row.decode(1, as: String.self), Tier(rawValue: try row.decode(2, as: String.self)) ?? .tier1)
        }
    }

    /// Display names of the agents with these ids (disabled ones included: they still acted); unknown ids are left out.
    public static func names(ids: Set<UUID>, on connection: PostgresConnection) throws -> [UUID: String] {
        guard !ids.isEmpty else { return [:] }
        let list = ids.map { $0.uuidString.lowercased() }.joined(separator: ",")
        var names: [UUID: String] = [:]
        for row in try connection.query("SELECT id, name FROM agents WHERE id = ANY(string_to_array(\(list)::text, ',')::uuid[])") {
            names[try row.decode(0, as: UUID.self)] = try row.decode(1, as: String.self)
        }
        return names
    }

    /// The agent with this id.
    public static func find(id: UUID, on connection: PostgresConnection) throws -> AgentRecord? {
        try connection.query("SELECT \(unescaped: columns) FROM agents WHERE id = \(id)")
            .first.map(decode)
    }

    /// Records `step` as used unless it (or a later one) already was: true when this call won, so a
    /// TOTP code is accepted once even by two concurrent sign-ins.
    public static func consumeTOTPStep(agentID: UUID, step: UInt64, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE agents SET totp_last_step = \(Int64(step))
            WHERE id = \(agentID) AND (totp_last_step IS NULL OR totp_last_step < \(Int64(step)))
            """) == 1
    }

    /// Replaces the password hash (reset, or re-hash with stronger parameters).
    @discardableResult
    public static func setPasswordHash(agentID: UUID, hash: String, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE agents SET password_hash = \(hash), updated_at = \(now) WHERE id = \(agentID)") == 1
    }

    /// Replaces the sealed TOTP seed and forgets the last used step (the new seed has its own codes).
    @discardableResult
    public static func setTOTPSecret(agentID: UUID, sealed: [UInt8], keyID: String, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE agents SET totp_secret = \(sealed), totp_key_id = \(keyID), totp_last_step = NULL, updated_at = \(now)
            WHERE id = \(agentID)
            """) == 1
    }

    /// Disables the agent (sign-in refused, sessions no longer resolve).
    @discardableResult
    public static func disable(agentID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE agents SET disabled = true, updated_at = \(now) WHERE id = \(agentID)") == 1
    }

    private static func decode(_ row: PostgresRow) throws -> AgentRecord {
        let tierText = try row.decode(3, as: String.self)
        guard let tier = Tier(rawValue: tierText) else { throw PostgresError(.decoding, message: "agents.tier holds an unknown tier") }
        let lastStep = try row.decode(9, as: Int64?.self)
        return AgentRecord(
            id: try row.decode(0), email: try row.decode(1), name: try row.decode(2), tier: tier,
            isAdmin: try row.decode(4), disabled: try row.decode(5), passwordHash: try row.decode(6),
            sealedTOTPSecret: try row.decode(7), totpKeyID: try row.decode(8), totpLastStep: lastStep.map { UInt64(max(0, $0)) })
    }
}
