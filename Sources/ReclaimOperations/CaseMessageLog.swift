import Foundation
import Postgres
import ReclaimStore

/// What an agent sees of a case's messages: every outbox row (what was sent to whom and when, never a body or a
/// secret) and every mail refused because the contact address was the rescue address (kept on the timeline).
public enum CaseMessageLog {
    /// One line of the log, oldest first.
    public enum Item: Sendable {
        /// A queued, sent or failed message; a webhook knows its endpoint's URL and client's name.
        case message(CaseMessageEntry)
        /// A mail not written to the outbox: `kind` is its template, `reason` the refusal's (`rescue_address`),
        /// `seq` the timeline event that records it. `to` is nil for the notice to a previous contact address: that
        /// address reached the rescue mailbox and is not kept anywhere (the case's contact is the new one).
        case refused(kind: String, reason: String, to: String?, at: Date, seq: Int)

        /// When it was queued or refused.
        public var at: Date {
            switch self {
            case .message(let message): message.entry.createdAt
            case .refused(_, _, _, let at, _): at
            }
        }
    }

    /// The case's messages and refusals, oldest first; a refusal comes before a message of the same moment (the
    /// opening refuses its mail before it queues its webhook).
    public static func list(for record: CaseRecord, on connection: PostgresConnection) throws -> [Item] {
        let messages = try OutboxStore.listWithDestinations(caseID: record.id, on: connection).map(Item.message)
        let refusals = try CaseEventStore.list(caseID: record.id, type: CaseEventType.mailRefused.rawValue, on: connection).map { event -> Item in
            // The data `CaseEventEntry.mailRefused` writes: {"mail": template, "reason": why}.
            func text(_ key: String) -> String {
                if case .object(let data) = event.data, case .string(let value)? = data[key] { return value }
                return ""
            }
            let kind = text("mail")
            return .refused(
                kind: kind, reason: text("reason"),
                to: kind == CustomerMailKind.contactChanged.rawValue || record.erasedAt != nil ? nil : record.customerContactEmail,
                at: event.at, seq: event.seq)
        }
        // Both lists are already in time order: a stable merge keeps each one's own order for equal times.
        var merged: [Item] = []
        merged.reserveCapacity(messages.count + refusals.count)
        var m = messages.startIndex
        var r = refusals.startIndex
        while m < messages.endIndex || r < refusals.endIndex {
            if r < refusals.endIndex, m == messages.endIndex || refusals[r].at <= messages[m].at {
                merged.append(refusals[r])
                r += 1
            } else {
                merged.append(messages[m])
                m += 1
            }
        }
        return merged
    }
}
