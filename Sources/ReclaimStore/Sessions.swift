import Foundation
import Postgres
import ReclaimCore

/// A live session and its agent, as resolved from a cookie token's hash.
public struct SessionRecord: Sendable {
    public let id: UUID
    public let agentID: UUID
    public let lastSeenAt: Date
    public let expiresAt: Date
    public let agentEmail: String
    public let agentName: String
    public let agentTier: Tier
    public let agentIsAdmin: Bool
}

/// The `sessions` table: tokens are stored only as their SHA-256.
public enum SessionStore {
    /// Starts a session for `agentID` expiring absolutely at `expiresAt`.
    public static func insert(id: UUID, tokenHash: [UInt8], agentID: UUID, now: Date, expiresAt: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO sessions (id, token_hash, agent_id, created_at, last_seen_at, expires_at)
            VALUES (\(id), \(tokenHash), \(agentID), \(now), \(now), \(expiresAt))
            """)
    }

    /// The session whose token hashes to `tokenHash`, if it is within both timeouts and its agent is enabled.
    public static func find(tokenHash: [UInt8], now: Date, idleTimeout: TimeInterval, on connection: PostgresConnection) throws -> SessionRecord? {
        let idleSince = now.addingTimeInterval(-idleTimeout)
        let rows = try connection.query(
            """
            SELECT s.id, s.agent_id, s.last_seen_at, s.expires_at, a.email, a.name, a.tier, a.is_admin
            FROM sessions s JOIN agents a ON a.id = s.agent_id
            WHERE s.token_hash = \(tokenHash) AND s.expires_at > \(now) AND s.last_seen_at > \(idleSince) AND NOT a.disabled
            """)
        guard let row = rows.first else { return nil }
        var columns = rows.columns()
        let id = try columns("id")
        let agentID = try columns("agent_id")
        let lastSeenAt = try columns("last_seen_at")
        let expiresAt = try columns("expires_at")
        let email = try columns("email")
        let name = try columns("name")
        let tierColumn = try columns("tier")
        let isAdmin = try columns("is_admin")
        let tier = try AgentStore.tier(row, tierColumn)
        return SessionRecord(
            id: try row.decode(id), agentID: try row.decode(agentID), lastSeenAt: try row.decode(lastSeenAt),
            expiresAt: try row.decode(expiresAt), agentEmail: try row.decode(email), agentName: try row.decode(name),
            agentTier: tier, agentIsAdmin: try row.decode(isAdmin))
    }

    /// Moves the idle clock forward (called at most about once a minute per session, not per request).
    public static func touch(id: UUID, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE sessions SET last_seen_at = \(now) WHERE id = \(id) AND last_seen_at < \(now)")
    }

    /// Ends one session.
    @discardableResult
    public static func delete(id: UUID, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("DELETE FROM sessions WHERE id = \(id)") == 1
    }

    /// Ends every session of an agent (disable, password reset).
    @discardableResult
    public static func deleteAll(agentID: UUID, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM sessions WHERE agent_id = \(agentID)")
    }

    /// Forgets sessions past their absolute timeout or idle for longer than `idleTimeout`.
    @discardableResult
    public static func purgeExpired(now: Date, idleTimeout: TimeInterval, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM sessions WHERE expires_at <= \(now) OR last_seen_at <= \(now.addingTimeInterval(-idleTimeout))")
    }
}
