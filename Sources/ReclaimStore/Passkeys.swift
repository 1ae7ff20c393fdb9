import Foundation
import Postgres

/// A registered passkey: its credential id and public key (nothing secret).
public struct PasskeyRecord: Sendable {
    public let id: UUID
    public let agentID: UUID
    public let credentialID: [UInt8]
    /// 65-byte uncompressed P-256 point.
    public let publicKey: [UInt8]
    public let signCount: Int64
    public let name: String
    public let createdAt: Date
    public let lastUsedAt: Date?

    public init(
        id: UUID, agentID: UUID, credentialID: [UInt8], publicKey: [UInt8], signCount: Int64, name: String, createdAt: Date, lastUsedAt: Date?
    ) {
        self.id = id
        self.agentID = agentID
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.signCount = signCount
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// The `passkeys` and `webauthn_challenges` tables.
public enum PasskeyStore {
    private static let columns: PostgresQuery = "id, agent_id, credential_id, public_key, sign_count, name, created_at, last_used_at"

    /// Stores a challenge for `purpose` (and the registering agent) until `expiresAt`.
    public static func insertChallenge(hash: [UInt8], purpose: String, agentID: UUID?, expiresAt: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO webauthn_challenges (challenge_hash, purpose, agent_id, expires_at) VALUES (\(hash), \(purpose), \(agentID), \(expiresAt))
            """)
    }

    /// Takes a challenge: true when it existed for this purpose (and agent) and had not expired. It is deleted either
    /// way, so it is used once at most, whichever of two racing requests comes first.
    public static func consumeChallenge(hash: [UInt8], purpose: String, agentID: UUID?, now: Date, on connection: PostgresConnection) throws -> Bool {
        let rows = try connection.query(
            """
            DELETE FROM webauthn_challenges WHERE challenge_hash = \(hash) RETURNING purpose, agent_id, expires_at
            """)
        guard let row = rows.first else { return false }
        let expiresAt: Date = try row.decode("expires_at")
        let owner: UUID? = try row.decode("agent_id")
        return try row.decode("purpose", as: String.self) == purpose && owner == agentID && expiresAt > now
    }

    /// Forgets expired challenges.
    public static func purgeChallenges(now: Date, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM webauthn_challenges WHERE expires_at <= \(now)")
    }

    /// Stores a new passkey; a credential id already registered fails with 23505.
    public static func insert(
        id: UUID, agentID: UUID, credentialID: [UInt8], publicKey: [UInt8], signCount: Int64, name: String, now: Date,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO passkeys (id, agent_id, credential_id, public_key, sign_count, name, created_at)
            VALUES (\(id), \(agentID), \(credentialID), \(publicKey), \(signCount), \(name), \(now))
            """)
    }

    /// The passkey with this credential id, locked for the rest of the transaction (the sign count is compared and set).
    public static func find(credentialID: [UInt8], on connection: PostgresConnection) throws -> PasskeyRecord? {
        try decode(connection.query("SELECT \(columns) FROM passkeys WHERE credential_id = \(credentialID) FOR UPDATE")).first
    }

    /// An agent's passkeys, oldest first.
    public static func list(agentID: UUID, on connection: PostgresConnection) throws -> [PasskeyRecord] {
        try decode(connection.query("SELECT \(columns) FROM passkeys WHERE agent_id = \(agentID) ORDER BY created_at, id"))
    }

    /// Records a sign-in with the passkey.
    public static func recordUse(id: UUID, signCount: Int64, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE passkeys SET sign_count = \(signCount), last_used_at = \(now) WHERE id = \(id)")
    }

    /// Removes one of the agent's passkeys; false when it has no such passkey.
    public static func delete(id: UUID, agentID: UUID, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("DELETE FROM passkeys WHERE id = \(id) AND agent_id = \(agentID)") == 1
    }

    /// Whether the agent must sign in with a passkey.
    public static func isRequired(agentID: UUID, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT passkey_required FROM agents WHERE id = \(agentID)").first?.decode(0, as: Bool.self) ?? false
    }

    /// Sets whether the agent must sign in with a passkey.
    public static func setRequired(agentID: UUID, _ required: Bool, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE agents SET passkey_required = \(required) WHERE id = \(agentID)")
    }

    private static func decode(_ rows: PostgresRows) throws -> [PasskeyRecord] {
        try rows.map { row in
            PasskeyRecord(
                id: try row.decode("id"), agentID: try row.decode("agent_id"), credentialID: try row.decode("credential_id"),
                publicKey: try row.decode("public_key"), signCount: try row.decode("sign_count"), name: try row.decode("name"),
                createdAt: try row.decode("created_at"), lastUsedAt: try row.decode("last_used_at"))
        }
    }
}
