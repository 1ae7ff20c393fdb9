import Foundation
import Postgres
import ReclaimCore

/// Who may read a note: agents only, or the customer too (on the status page).
public enum NoteVisibility: String, Sendable, CaseIterable {
    /// Agents only; never reaches the customer.
    case `internal`
    /// Shown on the customer's status page.
    case customer
}

/// A note on a case.
public struct CaseNote: Sendable, Equatable {
    /// Primary key.
    public let id: UUID
    /// The text ("" once erased: a note is never empty otherwise).
    public let body: String
    /// Who may read it.
    public let visibility: NoteVisibility
    /// The actor who wrote it.
    public let author: String
    /// When (milliseconds).
    public let createdAt: Date
    /// The case number it was written on, when that case was merged into the one listed.
    public var fromCase: String?

    /// A note; the time is truncated to milliseconds.
    public init(id: UUID, body: String, visibility: NoteVisibility, author: String, createdAt: Date) {
        self.id = id
        self.body = body
        self.visibility = visibility
        self.author = author
        self.createdAt = Timestamp.truncated(createdAt)
    }

    /// The agent-facing representation.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id.uuidString.lowercased()), "body": body.isEmpty ? .null : .string(body), "visibility": .string(visibility.rawValue),
            "author": .string(author), "created_at": Timestamp.json(createdAt),
        ]
        if let fromCase { members["from_case"] = .string(fromCase) }
        return .object(members)
    }
}

/// A customer-visible note as the customer's status shows it: no author, no id.
/// What the customer's status page shows of the conversation, read with the status look-up (`CaseStore.findForStatus`):
/// the customer notes, oldest first, and the human mail that reached the case (automatic mail and the rescue address's
/// left out), oldest first.
public struct CustomerThread: Sendable, Equatable {
    /// The customer-visible notes, oldest first.
    public let notes: [CustomerNote]
    /// The mail received on the case, oldest first: the customer's replies and what others sent.
    public let received: [ReceivedMail]

    /// A thread of these parts.
    public init(notes: [CustomerNote] = [], received: [ReceivedMail] = []) {
        self.notes = notes
        self.received = received
    }

    /// When the customer's latest reply reached the case: mail from the case's contact address (compared as mailboxes),
    /// nil when none. A mail from anyone else is never the customer's reply (api.md v1.3).
    public func replyReceivedAt(contact: String) -> Date? {
        received.last { $0.isFrom(contact) }?.at
    }

    /// The mail an agent attached from someone other than the customer, oldest first: the customer reads each as "a
    /// message from (masked sender) added by our team". Mail from others matched any other way is not shown to them.
    public func addedByTeam(contact: String) -> [ReceivedMail] {
        received.filter { $0.matchedBy == "agent" && !$0.isFrom(contact) }
    }
}

/// A mail that reached a case, as the customer's status page may mention it: its sender, when, and how it was matched.
public struct ReceivedMail: Sendable, Equatable {
    /// The `From` address (nil when the mail had none, or once erased).
    public let from: String?
    /// When it was received (milliseconds).
    public let at: Date
    /// How it was matched to the case (`reply_token`, `references`, `subject`, `agent`).
    public let matchedBy: String

    /// A mail as read by `CaseStore.findForStatus`.
    public init(from: String?, at: Date, matchedBy: String) {
        self.from = from
        self.at = at
        self.matchedBy = matchedBy
    }

    /// Whether it came from `contact`'s mailbox (an empty or missing address is nobody's).
    public func isFrom(_ contact: String) -> Bool {
        guard let from, !from.isEmpty, !contact.isEmpty else { return false }
        return EmailAddress.sameMailbox(from, contact)
    }
}

public struct CustomerNote: Sendable, Equatable {
    /// The text ("" once erased: a note is never empty otherwise).
    public let body: String
    /// When it was written (milliseconds).
    public let at: Date
    /// The case number it was written on, when that case was merged into the one shown.
    public let fromCase: String?

    /// A note as read by `CaseStore.findForStatus`.
    public init(body: String, at: Date, fromCase: String? = nil) {
        self.body = body
        self.at = at
        self.fromCase = fromCase
    }
}

/// The `case_notes` table.
public enum NoteStore {
    /// Longest note body accepted (characters).
    public static let maximumLength = 10_000

    /// Inserts a note.
    public static func insert(_ note: CaseNote, caseID: UUID, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO case_notes (id, case_id, body, visibility, author, created_at)
            VALUES (\(note.id), \(caseID), \(note.body), \(note.visibility.rawValue), \(note.author), \(note.createdAt))
            """)
    }

    /// Every note of a case, oldest first (the customer's are read with the status look-up, `CaseStore.findForStatus`).
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [CaseNote] {
        // The case's own notes and those of the cases merged into it (with the number they were written on).
        let rows = try connection.query(
            """
            SELECT n.id, n.body, n.visibility, n.author, n.created_at, CASE WHEN n.case_id = \(caseID) THEN NULL ELSE c.case_number END AS from_case
            FROM case_notes n JOIN cases c ON c.id = n.case_id
            WHERE n.case_id IN (SELECT \(caseID)::uuid UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = \(caseID)) ORDER BY n.created_at, n.id
            """)
        var columns = rows.columns()
        let id = try columns("id")
        let body = try columns("body")
        let visibility = try columns("visibility")
        let author = try columns("author")
        let createdAt = try columns("created_at")
        let fromCase = try columns("from_case")
        return try rows.map { row in
            var note = CaseNote(
                id: try row.decode(id), body: try row.decode(body, as: String?.self) ?? "",
                visibility: NoteVisibility(rawValue: try row.decode(visibility)) ?? .internal,
                author: try row.decode(author), createdAt: try row.decode(createdAt))
            note.fromCase = try row.decode(fromCase, as: String?.self)
            return note
        }
    }
}
