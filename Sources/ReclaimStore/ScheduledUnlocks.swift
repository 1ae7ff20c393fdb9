import Foundation
import Postgres
import ReclaimCore

/// One recorded unlock step and where it stands (api.md v1.2 "Cooling-off").
public struct ScheduledUnlock: Sendable, Equatable {
    public let id: UUID
    public let caseID: UUID
    public let step: UnlockKind
    public let status: UnlockStatus
    /// The engineer's reason, carried into `unlock_done`.
    public let reason: String?
    public let scheduledBy: String
    public let scheduledAt: Date
    /// When the service does it.
    public let effectiveAt: Date
    public let finishedAt: Date?
    public let finishedBy: String?
    public let cancelReason: String?
}

/// The `scheduled_unlocks` and `unlock_stop_tokens` tables. Lock order, everywhere: a step's row before its case's
/// row (the scheduler claims steps, then locks their case; a cancel updates the step, then the case).
public enum ScheduledUnlockStore {
    static let columns: PostgresQuery = """
        id, case_id, step, status, reason, scheduled_by, scheduled_at, effective_at, finished_at, finished_by, cancel_reason
        """

    static func decode(_ rows: PostgresRows) throws -> [ScheduledUnlock] {
        var c = rows.columns()
        let (id, caseID, step, status, reason) = (try c("id"), try c("case_id"), try c("step"), try c("status"), try c("reason"))
        let (by, at, effective, finishedAt) = (try c("scheduled_by"), try c("scheduled_at"), try c("effective_at"), try c("finished_at"))
        let (finishedBy, cancelReason) = (try c("finished_by"), try c("cancel_reason"))
        return try rows.map { row in
            guard let kind = UnlockKind(rawValue: try row.decode(step, as: String.self)),
                let state = UnlockStatus(rawValue: try row.decode(status, as: String.self))
            else { throw PostgresError(.decoding, message: "unknown unlock step or status") }
            return ScheduledUnlock(
                id: try row.decode(id), caseID: try row.decode(caseID), step: kind, status: state, reason: try row.decode(reason),
                scheduledBy: try row.decode(by), scheduledAt: try row.decode(at), effectiveAt: try row.decode(effective),
                finishedAt: try row.decode(finishedAt), finishedBy: try row.decode(finishedBy), cancelReason: try row.decode(cancelReason))
        }
    }

    /// Schedules a step; a step already scheduled on the case fails with 23505 on `scheduled_unlocks_one_pending`.
    public static func insert(
        id: UUID, caseID: UUID, step: UnlockKind, reason: String?, by actor: String, at now: Date, effectiveAt: Date,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO scheduled_unlocks (id, case_id, step, reason, scheduled_by, scheduled_at, effective_at)
            VALUES (\(id), \(caseID), \(step.rawValue), \(reason), \(actor), \(now), \(effectiveAt))
            """)
    }

    /// Serialises scheduling on one account for the rest of the transaction (a transaction-scoped advisory lock on the
    /// account e-mail), so two cases of one account cannot both pass `pendingElsewhere` at once.
    public static func lockAccount(email: String, on connection: PostgresConnection) throws {
        try connection.execute("SELECT pg_advisory_xact_lock(hashtextextended('scheduled_unlocks:' || lower(\(email)), 0))")
    }

    /// The number of another case of this account e-mail with a step scheduled, if any (api.md v1.3 `account_busy`).
    public static func pendingElsewhere(accountEmail: String, except caseID: UUID, on connection: PostgresConnection) throws -> String? {
        guard let term = CaseSearch.term(for: accountEmail) else { return nil }
        let rows = try connection.query(
            """
            SELECT c.case_number FROM case_search s JOIN cases c ON c.id = s.case_id
            WHERE s.term = \(term) AND lower(c.account_email) = \(term) AND c.id <> \(caseID)
                AND EXISTS (SELECT 1 FROM scheduled_unlocks u WHERE u.case_id = c.id AND u.status = 'scheduled')
            ORDER BY c.case_number LIMIT 1
            """)
        return try rows.first?.decode("case_number", as: String.self)
    }

    /// Every step recorded on a case, oldest first.
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [ScheduledUnlock] {
        try decode(connection.query("SELECT \(columns) FROM scheduled_unlocks WHERE case_id = \(caseID) ORDER BY scheduled_at, id"))
    }

    /// The steps scheduled (not yet done or cancelled) on a case.
    public static func pending(caseID: UUID, on connection: PostgresConnection) throws -> [ScheduledUnlock] {
        try decode(
            connection.query(
                "SELECT \(columns) FROM scheduled_unlocks WHERE case_id = \(caseID) AND status = 'scheduled' ORDER BY effective_at, id"))
    }

    /// The soonest due scheduled step, its row locked for the caller's transaction; rows another instance holds are
    /// skipped (`SKIP LOCKED`), so each due step is claimed by one scheduler at a time and done at most once.
    public static func claimDue(now: Date, on connection: PostgresConnection) throws -> ScheduledUnlock? {
        try decode(
            connection.query(
                """
                SELECT \(columns) FROM scheduled_unlocks WHERE status = 'scheduled' AND effective_at <= \(now)
                ORDER BY effective_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
                """)
        ).first
    }

    /// Marks a claimed step done.
    public static func markDone(id: UUID, by actor: String, at now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE scheduled_unlocks SET status = 'done', finished_at = \(now), finished_by = \(actor) WHERE id = \(id) AND status = 'scheduled'"
        )
    }

    /// Cancels the scheduled `steps` of a case (all of them when nil); the steps cancelled.
    public static func cancel(
        caseID: UUID, steps: [UnlockKind]?, reason: String, by actor: String, at now: Date, on connection: PostgresConnection
    ) throws -> [ScheduledUnlock] {
        let only = steps?.map(\.rawValue) ?? []
        let all = steps == nil
        return try decode(
            connection.query(
                """
                UPDATE scheduled_unlocks SET status = 'cancelled', finished_at = \(now), finished_by = \(actor), cancel_reason = \(reason)
                WHERE case_id = \(caseID) AND status = 'scheduled' AND (\(all) OR step = ANY(\(only)))
                RETURNING \(columns)
                """))
    }

    // MARK: Stop links

    /// Stores a stop link's token hash, bound to the case.
    public static func insertStopToken(hash: [UInt8], caseID: UUID, at now: Date, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO unlock_stop_tokens (token_hash, case_id, created_at) VALUES (\(hash), \(caseID), \(now))")
    }

    /// The case a stop token is bound to and when it was first used, its row locked; nil for an unknown token.
    public static func findStopToken(hash: [UInt8], on connection: PostgresConnection) throws -> (caseID: UUID, usedAt: Date?)? {
        guard let row = try connection.query("SELECT case_id, used_at FROM unlock_stop_tokens WHERE token_hash = \(hash) FOR UPDATE").first
        else { return nil }
        return (try row.decode("case_id"), try row.decode("used_at"))
    }

    /// Records a stop token's first use.
    public static func useStopToken(hash: [UInt8], at now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE unlock_stop_tokens SET used_at = \(now) WHERE token_hash = \(hash) AND used_at IS NULL")
    }
}
