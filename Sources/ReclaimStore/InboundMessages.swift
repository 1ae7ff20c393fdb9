import Foundation
import Postgres
import ReclaimCore

/// How a received message found its case (`inbound_matches`, 0018).
public enum InboundMatch: String, Sendable, CaseIterable {
    /// A valid reply token in a recipient header.
    case replyToken = "reply_token"
    /// `In-Reply-To` or `References` naming a mail the service sent.
    case references
    /// The case number in the subject, from the case's contact address.
    case subject
    /// An agent attached it from the unmatched list.
    case agent
}

/// A received message to store.
public struct NewInboundMessage: Sendable {
    public var id: UUID
    public var caseID: UUID?
    public var matchedBy: InboundMatch?
    public var messageID: String?
    public var digest: [UInt8]
    public var from: String?
    public var subject: String?
    public var text: String
    public var receivedAt: Date
    public var auto: Bool
    public var fromRescueAddress: Bool
    public var unmatchedReason: String?
    public var sealedRaw: [UInt8]
    public var rawKeyID: String
    public var rawSize: Int

    public init(
        id: UUID, caseID: UUID?, matchedBy: InboundMatch?, messageID: String?, digest: [UInt8], from: String?, subject: String?,
        text: String, receivedAt: Date, auto: Bool, fromRescueAddress: Bool, unmatchedReason: String?, sealedRaw: [UInt8],
        rawKeyID: String, rawSize: Int
    ) {
        self.id = id
        self.caseID = caseID
        self.matchedBy = matchedBy
        self.messageID = messageID
        self.digest = digest
        self.from = from
        self.subject = subject
        self.text = text
        self.receivedAt = receivedAt
        self.auto = auto
        self.fromRescueAddress = fromRescueAddress
        self.unmatchedReason = unmatchedReason
        self.sealedRaw = sealedRaw
        self.rawKeyID = rawKeyID
        self.rawSize = rawSize
    }
}

/// A stored received message (the raw bytes stay sealed in the row; `raw` reads them).
public struct InboundMessageRecord: Sendable {
    public let id: UUID
    public let caseID: UUID?
    public let caseNumber: String?
    public let matchedBy: InboundMatch?
    public let messageID: String?
    public let from: String?
    public let subject: String?
    public let text: String
    public let receivedAt: Date
    public let auto: Bool
    public let fromRescueAddress: Bool
    public let unmatchedReason: String?
    public let discardedAt: Date?
    /// The documents its attachments became, in order.
    public var attachments: [UUID] = []
}

/// The `inbound_messages` table: received mail, each message once.
public enum InboundMessageStore {
    static let columns: PostgresQuery = """
        i.id, i.case_id, (SELECT c.case_number FROM cases c WHERE c.id = i.case_id) AS case_number, i.matched_by, i.message_id,
        i.from_address, i.subject, i.text, i.received_at, i.auto, i.from_rescue_address, i.unmatched_reason, i.discarded_at
        """

    /// Inserts the message unless the same bytes (its digest) are stored: false then, and nothing was written (the
    /// mailbox's copy is a duplicate to remove). Another message under the same Message-ID is stored (0030).
    public static func insert(_ new: NewInboundMessage, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            INSERT INTO inbound_messages (id, case_id, matched_by, message_id, digest, from_address, from_mailbox, subject, text,
                received_at, auto, from_rescue_address, unmatched_reason, raw, raw_key_id, raw_size)
            VALUES (\(new.id), \(new.caseID), \(new.matchedBy?.rawValue), \(new.messageID), \(new.digest), \(new.from),
                \(new.from.map(EmailAddress.mailbox)), \(new.subject),
                \(new.text), \(Timestamp.truncated(new.receivedAt)), \(new.auto), \(new.fromRescueAddress), \(new.unmatchedReason),
                \(new.sealedRaw), \(new.rawKeyID), \(new.rawSize))
            ON CONFLICT (digest) DO NOTHING
            """) == 1
    }

    /// Whether the message with these bytes (their SHA-256) is already stored.
    public static func exists(digest: [UInt8], on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT 1 FROM inbound_messages WHERE digest = \(digest)").first != nil
    }

    /// How many messages from the mailbox `address` reaches arrived since `since` (the per-sender limit): `thief+1@`,
    /// `thief+2@` and `THIEF@` are one sender (`EmailAddress.mailbox`).
    public static func count(from address: String, since: Date, on connection: PostgresConnection) throws -> Int {
        try connection.query(
            "SELECT count(*) AS n FROM inbound_messages WHERE from_mailbox = \(EmailAddress.mailbox(address)) AND received_at >= \(since)"
        ).first?.decode("n", as: Int.self) ?? 0
    }

    /// The case of the mail the service sent with this outbox id (its Message-ID's left part), if it is one.
    public static func caseOfSentMail(outboxID: UUID, on connection: PostgresConnection) throws -> UUID? {
        try connection.query("SELECT case_id FROM outbox WHERE id = \(outboxID) AND channel = 'mail'").first?.decode("case_id", as: UUID?.self)
    }

    /// The case's received messages, oldest first, with the documents each filed.
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [InboundMessageRecord] {
        try withAttachments(
            decode(
                connection.query(
                    "SELECT \(columns) FROM inbound_messages i WHERE i.case_id = \(caseID) ORDER BY i.received_at, i.id")), on: connection)
    }

    /// The unmatched messages not discarded, newest first (at most `limit`): people's mail, or with `automatic` the
    /// auto-submitted and bulk mail (api.md v1.3 "Inbound hygiene": never listed as unmatched).
    public static func unmatched(automatic: Bool = false, limit: Int, on connection: PostgresConnection) throws -> [InboundMessageRecord] {
        try decode(
            connection.query(
                """
                SELECT \(columns) FROM inbound_messages i WHERE i.case_id IS NULL AND i.discarded_at IS NULL AND i.auto = \(automatic)
                ORDER BY i.received_at DESC, i.id LIMIT \(limit)
                """))
    }

    /// Which of `senders` reach the mailbox of a rescue address any case recorded, current or former
    /// (`EmailAddress.sameMailbox`): the thief writing in. Reads every recorded rescue address (no index can apply the
    /// providers' rules); the unmatched list is an agent's triage page, not a hot path.
    public static func rescueSenders(_ senders: [String], on connection: PostgresConnection) throws -> Set<String> {
        guard !senders.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT DISTINCT a.address FROM cases c, unnest(c.former_rescue_emails || c.rescue_email) AS a(address)
            WHERE a.address IS NOT NULL
            """)
        let rescue = Set(try rows.map { EmailAddress.mailbox(try $0.decode("address", as: String.self)) })
        return Set(senders.filter { rescue.contains(EmailAddress.mailbox($0)) })
    }

    /// One message, locked for the rest of the transaction when `lock`.
    public static func find(id: UUID, lock: Bool = false, on connection: PostgresConnection) throws -> InboundMessageRecord? {
        let rows =
            lock
            ? try connection.query("SELECT \(columns) FROM inbound_messages i WHERE i.id = \(id) FOR UPDATE")
            : try connection.query("SELECT \(columns) FROM inbound_messages i WHERE i.id = \(id)")
        return try decode(rows).first
    }

    /// The sealed raw message and its key id.
    public static func raw(id: UUID, on connection: PostgresConnection) throws -> (sealed: [UInt8], keyID: String)? {
        guard let row = try connection.query("SELECT raw, raw_key_id FROM inbound_messages WHERE id = \(id)").first else { return nil }
        return (try row.decode("raw"), try row.decode("raw_key_id"))
    }

    /// Attaches an unmatched message to a case (an agent's `matched_by: agent`); false when it is no longer unmatched.
    public static func attach(id: UUID, caseID: UUID, fromRescueAddress: Bool, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE inbound_messages SET case_id = \(caseID), matched_by = 'agent', unmatched_reason = NULL,
                from_rescue_address = \(fromRescueAddress)
            WHERE id = \(id) AND case_id IS NULL AND discarded_at IS NULL
            """) == 1
    }

    /// Discards an unmatched message from the list (kept, with who and why); false when it is no longer unmatched.
    public static func discard(id: UUID, by actor: String, reason: String, at now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE inbound_messages SET discarded_at = \(Timestamp.truncated(now)), discarded_by = \(actor), discard_reason = \(reason)
            WHERE id = \(id) AND case_id IS NULL AND discarded_at IS NULL
            """) == 1
    }

    /// Sets whether the case waits for the agents' answer (the newest human message is the customer's); sent with the
    /// transaction's next statement that needs an answer, or with its COMMIT (`executeLater`).
    public static func setAwaitingReply(_ awaiting: Bool, caseID: UUID, on connection: PostgresConnection) throws {
        try connection.executeLater("UPDATE cases SET awaiting_reply = \(awaiting) WHERE id = \(caseID) AND awaiting_reply <> \(awaiting)")
    }

    static func decode(_ rows: PostgresRows) throws -> [InboundMessageRecord] {
        try rows.map { row in
            let matched: String? = try row.decode("matched_by")
            return InboundMessageRecord(
                id: try row.decode("id"), caseID: try row.decode("case_id"), caseNumber: try row.decode("case_number"),
                matchedBy: matched.flatMap(InboundMatch.init(rawValue:)), messageID: try row.decode("message_id"),
                from: try row.decode("from_address"), subject: try row.decode("subject"), text: try row.decode("text"),
                receivedAt: try row.decode("received_at"), auto: try row.decode("auto"), fromRescueAddress: try row.decode("from_rescue_address"),
                unmatchedReason: try row.decode("unmatched_reason"), discardedAt: try row.decode("discarded_at"))
        }
    }

    /// Fills each message's documents: evidence whose details name it (`inbound_message_id`), in filing order.
    static func withAttachments(_ records: [InboundMessageRecord], on connection: PostgresConnection) throws -> [InboundMessageRecord] {
        guard let caseID = records.first?.caseID else { return records }
        var byMessage: [String: [UUID]] = [:]
        for row in try connection.query(
            """
            SELECT id, details->>'inbound_message_id' AS message FROM evidence
            WHERE case_id = \(caseID) AND details ? 'inbound_message_id' ORDER BY filed_at, id
            """)
        {
            let message: String = try row.decode("message")
            byMessage[message, default: []].append(try row.decode("id"))
        }
        return records.map { record in
            var record = record
            record.attachments = byMessage[record.id.uuidString.lowercased()] ?? []
            return record
        }
    }
}

/// The session advisory lock that keeps one reader per mailbox across instances (held from pass start to end).
public enum InboundLock {
    /// Takes the lock if no other session holds it.
    public static func acquire(_ key: Int64, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT pg_try_advisory_lock(\(key)) AS held").first?.decode("held", as: Bool.self) ?? false
    }

    /// Gives it back.
    public static func release(_ key: Int64, on connection: PostgresConnection) throws {
        _ = try connection.query("SELECT pg_advisory_unlock(\(key))")
    }
}
