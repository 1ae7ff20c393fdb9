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

    public init(
        id: UUID, email: String, name: String, tier: Tier, isAdmin: Bool, disabled: Bool, passwordHash: String,
        sealedTOTPSecret: [UInt8], totpKeyID: String, totpLastStep: UInt64?
    ) {
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
    private static let columns: PostgresQuery = "id, email, name, tier, is_admin, disabled, password_hash, totp_secret, totp_key_id, totp_last_step"

    /// Inserts a new agent; a duplicate email (any case) fails with SQLSTATE 23505 (`agents_email_key`).
    public static func insert(_ agent: AgentRecord, now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
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
        try decode(connection.query("SELECT \(columns) FROM agents WHERE lower(email) = lower(\(email))")).first
    }

    /// Active agents of any of `tiers`, by name then id, at most `limit`: whom a case can be handed to.
    public static func colleagues(tiers: [Tier], limit: Int, on connection: PostgresConnection) throws -> [(id: UUID, name: String, tier: Tier)] {
        let rows = try connection.query(
            """
            SELECT id, name, tier FROM agents
            WHERE NOT disabled AND tier = ANY(\(tiers.map(\.rawValue)))
            ORDER BY name, id LIMIT \(Int64(limit))
            """)
        var columns = rows.columns()
        let id = try columns("id")
        let name = try columns("name")
        let tier = try columns("tier")
        return try rows.map { row in
            (
                try row.decode(id, as: UUID.self), try row.decode(name, as: String.self),
                Tier(rawValue: try row.decode(tier, as: String.self)) ?? .tier1
            )
        }
    }

    /// Display names of the agents with these ids (disabled ones included: they still acted); unknown ids are left out.
    public static func names(ids: Set<UUID>, on connection: PostgresConnection) throws -> [UUID: String] {
        guard !ids.isEmpty else { return [:] }
        var names: [UUID: String] = [:]
        let rows = try connection.query("SELECT id, name FROM agents WHERE id = ANY(\(Array(ids)))")
        var columns = rows.columns()
        let id = try columns("id")
        let name = try columns("name")
        for row in rows {
            names[try row.decode(id, as: UUID.self)] = try row.decode(name, as: String.self)
        }
        return names
    }

    /// The agent with this id.
    public static func find(id: UUID, on connection: PostgresConnection) throws -> AgentRecord? {
        try decode(connection.query("SELECT \(columns) FROM agents WHERE id = \(id)")).first
    }

    /// Records `step` as used unless it (or a later one) already was: true when this call won, so a
    /// TOTP code is accepted once even by two concurrent sign-ins.
    public static func consumeTOTPStep(agentID: UUID, step: UInt64, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
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
        try connection.execute(
            """
            UPDATE agents SET totp_secret = \(sealed), totp_key_id = \(keyID), totp_last_step = NULL, updated_at = \(now)
            WHERE id = \(agentID)
            """) == 1
    }

    /// Disables the agent (sign-in refused, sessions no longer resolve).
    @discardableResult
    public static func disable(agentID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE agents SET disabled = true, updated_at = \(now) WHERE id = \(agentID)") == 1
    }

    /// An agent as the admin list shows it: no credential, sealed or not.
    public struct Summary: Sendable {
        public let id: UUID
        public let email: String
        public let name: String
        public let tier: Tier
        public let isAdmin: Bool
        public let disabled: Bool
        public let lastSignInAt: Date?
        public let createdAt: Date
        /// Passkeys: the agent must sign in with one (password and TOTP no longer do).
        public let passkeyRequired: Bool
        /// Passkeys the agent has registered.
        public let passkeys: Int

        public init(
            id: UUID, email: String, name: String, tier: Tier, isAdmin: Bool, disabled: Bool, lastSignInAt: Date?, createdAt: Date,
            passkeyRequired: Bool = false, passkeys: Int = 0
        ) {
            self.passkeyRequired = passkeyRequired
            self.passkeys = passkeys
            self.id = id
            self.email = email
            self.name = name
            self.tier = tier
            self.isAdmin = isAdmin
            self.disabled = disabled
            self.lastSignInAt = lastSignInAt
            self.createdAt = createdAt
        }
    }

    /// Agents ordered by lower-cased email, those after `afterEmail` (a keyset cursor), at most `limit`.
    public static func list(afterEmail: String?, limit: Int, on connection: PostgresConnection) throws -> [Summary] {
        let rows = try connection.query(
            """
            SELECT id, email, name, tier, is_admin, disabled, last_sign_in_at, created_at, passkey_required,
                   (SELECT count(*) FROM passkeys p WHERE p.agent_id = agents.id) AS passkeys
            FROM agents WHERE \(afterEmail)::text IS NULL OR lower(email) > \(afterEmail)
            ORDER BY lower(email) LIMIT \(Int64(limit))
            """)
        var columns = rows.columns()
        let id = try columns("id")
        let email = try columns("email")
        let name = try columns("name")
        let tier = try columns("tier")
        let isAdmin = try columns("is_admin")
        let disabled = try columns("disabled")
        let lastSignIn = try columns("last_sign_in_at")
        let createdAt = try columns("created_at")
        let required = try columns("passkey_required")
        let passkeys = try columns("passkeys")
        return try rows.map { row in
            let tierValue = try AgentStore.tier(row, tier)
            return Summary(
                id: try row.decode(id), email: try row.decode(email), name: try row.decode(name), tier: tierValue,
                isAdmin: try row.decode(isAdmin), disabled: try row.decode(disabled), lastSignInAt: try row.decode(lastSignIn),
                createdAt: try row.decode(createdAt), passkeyRequired: try row.decode(required), passkeys: try row.decode(passkeys, as: Int.self))
        }
    }

    /// The admin view of one agent.
    public static func summary(id: UUID, on connection: PostgresConnection) throws -> Summary? {
        let rows = try connection.query(
            """
            SELECT id, email, name, tier, is_admin, disabled, last_sign_in_at, created_at, passkey_required,
                   (SELECT count(*) FROM passkeys p WHERE p.agent_id = agents.id) AS passkeys
            FROM agents WHERE id = \(id) FOR UPDATE
            """)
        guard let row = rows.first, let tier = Tier(rawValue: try row.decode("tier", as: String.self)) else { return nil }
        return Summary(
            id: try row.decode("id"), email: try row.decode("email"), name: try row.decode("name"), tier: tier,
            isAdmin: try row.decode("is_admin"), disabled: try row.decode("disabled"), lastSignInAt: try row.decode("last_sign_in_at"),
            createdAt: try row.decode("created_at"), passkeyRequired: try row.decode("passkey_required"),
            passkeys: try row.decode("passkeys", as: Int.self))
    }

    /// Sets tier, admin flag, disabled state and the passkey requirement at once (the caller passes the values it keeps unchanged).
    @discardableResult
    public static func update(
        agentID: UUID, tier: Tier, isAdmin: Bool, disabled: Bool, passkeyRequired: Bool, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE agents SET tier = \(tier.rawValue), is_admin = \(isAdmin), disabled = \(disabled), passkey_required = \(passkeyRequired),
                updated_at = \(now) WHERE id = \(agentID)
            """) == 1
    }

    /// How many enabled admins there are besides `agentID` (the last one may not be demoted or disabled).
    public static func otherActiveAdmins(than agentID: UUID, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) FROM agents WHERE is_admin AND NOT disabled AND id <> \(agentID)").first?.decode(0, as: Int.self) ?? 0
    }

    /// Records a successful sign-in, for the admin list.
    public static func recordSignIn(agentID: UUID, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE agents SET last_sign_in_at = \(now) WHERE id = \(agentID)")
    }

    /// The `agents.tier` column of a row, refusing a value no `Tier` names.
    static func tier(_ row: PostgresRow, _ column: PostgresColumn) throws -> Tier {
        guard let tier = Tier(rawValue: try row.decode(column, as: String.self)) else {
            throw PostgresError(.decoding, message: "agents.tier holds an unknown tier")
        }
        return tier
    }

    /// The rows of a `SELECT \(columns)`, read by column name.
    private static func decode(_ rows: PostgresRows) throws -> [AgentRecord] {
        var columns = rows.columns()
        let id = try columns("id")
        let email = try columns("email")
        let name = try columns("name")
        let tier = try columns("tier")
        let isAdmin = try columns("is_admin")
        let disabled = try columns("disabled")
        let passwordHash = try columns("password_hash")
        let totpSecret = try columns("totp_secret")
        let totpKeyID = try columns("totp_key_id")
        let totpLastStep = try columns("totp_last_step")
        return try rows.map { row in
            let tierValue = try AgentStore.tier(row, tier)
            let lastStep = try row.decode(totpLastStep, as: Int64?.self)
            return AgentRecord(
                id: try row.decode(id), email: try row.decode(email), name: try row.decode(name), tier: tierValue,
                isAdmin: try row.decode(isAdmin), disabled: try row.decode(disabled), passwordHash: try row.decode(passwordHash),
                sealedTOTPSecret: try row.decode(totpSecret), totpKeyID: try row.decode(totpKeyID), totpLastStep: lastStep.map { UInt64(max(0, $0)) })
        }
    }
}

extension AgentStore {
    /// How many admins there are besides `agentID`, disabled ones included: whether an admin is alone (two people are needed
    /// while another admin exists; disabling them does not make one alone).
    public static func otherAdmins(than agentID: UUID, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) FROM agents WHERE is_admin AND id <> \(agentID)").first?.decode(0, as: Int.self) ?? 0
    }
}
