import Foundation
import Postgres
import ReclaimCore

/// One proposed administrative change, waiting for (or decided by) a second admin.
public struct AdminProposal: Sendable {
    public let id: UUID
    public let kind: AdminProposalKind
    /// The agent the change is for; for `agentAdd` the id the agent gets when confirmed.
    public let targetAgentID: UUID
    public let targetEmail: String
    /// What was asked (no secret): agent_add `{name, tier, admin}`, agent_change the members sent.
    public let change: JSONValue
    /// agent_add only, while pending: the hash of the password shown to the proposer.
    public let passwordHash: String?
    public let proposedBy: String
    public let proposedAt: Date
    public let expiresAt: Date
    /// As stored: a pending proposal past `expiresAt` is still `pending` here until the sweep records it.
    public let storedStatus: AdminProposalStatus
    public let decidedBy: String?
    public let decidedAt: Date?

    public init(
        id: UUID, kind: AdminProposalKind, targetAgentID: UUID, targetEmail: String, change: JSONValue, passwordHash: String?,
        proposedBy: String, proposedAt: Date, expiresAt: Date, storedStatus: AdminProposalStatus = .pending, decidedBy: String? = nil,
        decidedAt: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.targetAgentID = targetAgentID
        self.targetEmail = targetEmail
        self.change = change
        self.passwordHash = passwordHash
        self.proposedBy = proposedBy
        self.proposedAt = Timestamp.truncated(proposedAt)
        self.expiresAt = Timestamp.truncated(expiresAt)
        self.storedStatus = storedStatus
        self.decidedBy = decidedBy
        self.decidedAt = decidedAt
    }

    /// Where it stands at `now`: a pending proposal past its time is expired, recorded or not.
    public func status(at now: Date) -> AdminProposalStatus {
        storedStatus == .pending && now >= expiresAt ? .expired : storedStatus
    }
}

/// The `admin_proposals` table.
public enum AdminProposalStore {
    private static let columns: PostgresQuery = """
        id, kind, target_agent_id, target_email, change, password_hash, proposed_by, proposed_at, expires_at, status, decided_by, decided_at
        """

    /// Stores a new pending proposal.
    public static func insert(_ proposal: AdminProposal, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO admin_proposals (id, kind, target_agent_id, target_email, change, password_hash, proposed_by, proposed_at, expires_at)
            VALUES (\(proposal.id), \(proposal.kind.rawValue), \(proposal.targetAgentID), \(proposal.targetEmail), \(proposal.change.canonical),
                    \(proposal.passwordHash), \(proposal.proposedBy), \(proposal.proposedAt), \(proposal.expiresAt))
            """)
    }

    /// The proposal with this id, locked for the caller's transaction when `forUpdate`.
    public static func find(id: UUID, forUpdate: Bool = false, on connection: PostgresConnection) throws -> AdminProposal? {
        let lock: PostgresQuery = forUpdate ? "FOR UPDATE" : ""
        return try decode(connection.query("SELECT \(columns) FROM admin_proposals WHERE id = \(id) \(lock)")).first
    }

    /// Newest first, those after the proposal `after` (a keyset cursor), at most `limit`.
    public static func list(after: UUID?, limit: Int, on connection: PostgresConnection) throws -> [AdminProposal] {
        try decode(
            connection.query(
                """
                SELECT \(columns) FROM admin_proposals
                WHERE \(after)::uuid IS NULL OR (proposed_at, id) < (SELECT proposed_at, id FROM admin_proposals WHERE id = \(after))
                ORDER BY proposed_at DESC, id DESC LIMIT \(Int64(limit))
                """))
    }

    /// Records a decision on a pending proposal (and forgets any password hash it held); false when it was not pending.
    @discardableResult
    public static func decide(
        id: UUID, status: AdminProposalStatus, by actor: String, at now: Date, on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE admin_proposals SET status = \(status.rawValue), decided_by = \(actor), decided_at = \(now), password_hash = NULL
            WHERE id = \(id) AND status = 'pending'
            """) == 1
    }

    /// Marks every pending proposal past its time expired (actor `system`) and returns them, for the admin log.
    public static func expireDue(now: Date, on connection: PostgresConnection) throws -> [AdminProposal] {
        try decode(
            connection.query(
                """
                UPDATE admin_proposals SET status = 'expired', decided_by = 'system', decided_at = expires_at, password_hash = NULL
                WHERE status = 'pending' AND expires_at <= \(now)
                RETURNING \(columns)
                """))
    }

    /// The rows of a `SELECT \(columns)`, read by column name.
    private static func decode(_ rows: PostgresRows) throws -> [AdminProposal] {
        var columns = rows.columns()
        let id = try columns("id")
        let kind = try columns("kind")
        let target = try columns("target_agent_id")
        let email = try columns("target_email")
        let change = try columns("change")
        let hash = try columns("password_hash")
        let proposedBy = try columns("proposed_by")
        let proposedAt = try columns("proposed_at")
        let expiresAt = try columns("expires_at")
        let status = try columns("status")
        let decidedBy = try columns("decided_by")
        let decidedAt = try columns("decided_at")
        return try rows.map { row in
            guard let kindValue = AdminProposalKind(rawValue: try row.decode(kind, as: String.self)),
                let statusValue = AdminProposalStatus(rawValue: try row.decode(status, as: String.self))
            else { throw PostgresError(.decoding, message: "admin_proposals holds an unknown kind or status") }
            return AdminProposal(
                id: try row.decode(id), kind: kindValue, targetAgentID: try row.decode(target), targetEmail: try row.decode(email),
                change: try JSONValue.parse(try row.decode(change, as: String.self)), passwordHash: try row.decode(hash),
                proposedBy: try row.decode(proposedBy), proposedAt: try row.decode(proposedAt), expiresAt: try row.decode(expiresAt),
                storedStatus: statusValue, decidedBy: try row.decode(decidedBy), decidedAt: try row.decode(decidedAt))
        }
    }
}
