import Foundation
import Postgres

/// Erasing what identifies a case's customer (api.md v1.2 "Personal data has an end"): one step per table, in one
/// place, run in the caller's one transaction (so a kill -9 leaves the case whole or erased, never half). The case keeps
/// its number, kind, path, states, times and actors; its timeline keeps every event and hash (personal members are
/// only commitments there, and their values go with `case_event_values`). A new table holding a customer's data adds
/// its step here, and the dump test (`ErasureTests`) proves nothing of it is left.
public enum CaseErasure {
    /// One table's part of an erasure.
    public struct Step: Sendable {
        /// The table it clears.
        public let table: String
        /// The statement, for the case's id and the time of the erasure.
        public let statement: @Sendable (_ caseID: UUID, _ now: Date) -> PostgresQuery
    }

    /// Every step, in order (children before the case row, whose `erased_at` marks the erasure done).
    public static let steps: [Step] = [
        // The committed values (addresses, reasons) of its timeline events and their salts: the events keep their
        // commitments and still verify.
        Step(table: "case_event_values") { id, _ in "DELETE FROM case_event_values WHERE case_id = \(id)" },
        Step(table: "case_notes") { id, _ in "UPDATE case_notes SET body = NULL WHERE case_id = \(id)" },
        Step(table: "evidence_reviews") { id, _ in
            "UPDATE evidence_reviews SET reason = NULL WHERE evidence_id IN (SELECT e.id FROM evidence e WHERE e.case_id = \(id))"
        },
        // Details and summaries (device identifiers, card first six and last four), the documents' sealed content, its
        // SHA-256 and the card's fingerprint: each could find the customer again.
        Step(table: "evidence") { id, _ in
            """
            UPDATE evidence SET summary = '', details = '{}', content = NULL, sha256 = NULL, card_fingerprint = NULL,
                card_fingerprint_key_id = NULL
            WHERE case_id = \(id)
            """
        },
        // Its messages' addresses, bodies and sealed secrets, and delivery errors (an SMTP error names the address); a
        // message not yet sent never will be.
        Step(table: "outbox_attempts") { id, _ in
            "UPDATE outbox_attempts SET error = NULL WHERE message_id IN (SELECT o.id FROM outbox o WHERE o.case_id = \(id))"
        },
        Step(table: "outbox") { id, _ in
            """
            UPDATE outbox SET recipient = CASE WHEN channel = 'mail' THEN '' END, payload = '{}', secret_sealed = NULL,
                secret_key_id = NULL, last_error = NULL, state = CASE WHEN state = 'queued' THEN 'failed' ELSE state END,
                leased_until = NULL, lease_holder = NULL
            WHERE case_id = \(id)
            """
        },
        // Risk signals' details (a flag's reason is the agent's words, which may name the customer) and clearing reasons.
        Step(table: "case_risk_signals") { id, _ in
            """
            UPDATE case_risk_signals SET detail = '', clear_reason = CASE WHEN clear_reason IS NOT NULL THEN 'erased' END
            WHERE case_id = \(id)
            """
        },
        // Received mail: its sender, its Message-ID (`<1733.ada@ada-family.example>` carries the customer's address or
        // domain), subject, text and sealed raw message (its attachments are evidence, above). The digest stays: it keeps
        // a mailbox's copy from being stored again (0030), and names no one.
        Step(table: "inbound_messages") { id, _ in
            """
            UPDATE inbound_messages SET from_address = NULL, from_mailbox = NULL, message_id = NULL, subject = NULL, text = '', raw = '\\x'::bytea, raw_size = 0,
                discard_reason = NULL
            WHERE case_id = \(id)
            """
        },
        // Its search terms but the case number: the case is still found by its number.
        // The engineers' reasons for unlock steps and for cancelling them (the stop tokens are hashes of random bytes).
        Step(table: "scheduled_unlocks") { id, _ in
            "UPDATE scheduled_unlocks SET reason = NULL, cancel_reason = NULL WHERE case_id = \(id)"
        },
        Step(table: "case_search") { id, _ in
            "DELETE FROM case_search WHERE case_id = \(id) AND term <> (SELECT c.case_number FROM cases c WHERE c.id = \(id))"
        },
        Step(table: "cases") { id, now in
            """
            UPDATE cases SET customer_name = '', customer_contact_email = '', customer_phone = NULL, account_email = '', devices = '[]', summary = '',
                rescue_email = NULL, previous_access_code_hash = NULL, previous_access_code_key_id = NULL,
                access_code_replaced_at = NULL, erased_at = \(now), updated_at = \(now), version = version + 1
            WHERE id = \(id)
            """
        },
    ]

    /// Runs every step for the case, in the caller's transaction (which holds the case's row lock).
    public static func erase(caseID: UUID, at now: Date, on connection: PostgresConnection) throws {
        for step in steps { try connection.execute(step.statement(caseID, now)) }
    }

    /// When the case was erased (nil: not erased).
    public static func erasedAt(caseID: UUID, on connection: PostgresConnection) throws -> Date? {
        try connection.query("SELECT erased_at FROM cases WHERE id = \(caseID)").first?.decode("erased_at", as: Date?.self)
    }

    /// Finished cases not erased whose state was entered before `cutoff`, oldest first, at most `limit`, each row
    /// locked and skipped when another instance holds it (`FOR UPDATE SKIP LOCKED`): the retention worker's claim.
    public static func claimExpired(before cutoff: Date, limit: Int, on connection: PostgresConnection) throws -> [(id: UUID, number: String)] {
        try connection.query(
            """
            SELECT id, case_number FROM cases
            WHERE erased_at IS NULL AND state IN ('resolved', 'rejected', 'closed', 'merged') AND state_entered_at < \(cutoff)
            ORDER BY state_entered_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """
        ).map { (try $0.decode("id"), try $0.decode("case_number")) }
    }
}
