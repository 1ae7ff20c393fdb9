import Foundation
import HTTPServer
import ReclaimOperations
import ReclaimStore

/// `GET /api/v1/cases/{case_number}/messages`: what the case sent to whom and when, for the agents who read its
/// timeline. Never a body and never a sealed secret: only the outbox's bookkeeping and the refusals.
final class CaseMessagesController: Sendable {
    let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    /// `{"items": [...]}`, both directions in time order: each mail and webhook with its state, attempts and last error,
    /// each mail refused because the contact address is the rescue address (state `refused`), all `"direction": "out"`;
    /// and each mail received on the case (`"direction": "in"`, its text as text). A sent row comes before a received
    /// one of the same moment.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readEvents, request)
        let number = try CaseHTTP.caseNumber(request)
        let (sent, received) = try context.pool.withConnection { connection -> ([CaseMessageLog.Item], [InboundMessageRecord]) in
            guard let record = try CaseStore.find(number: number.digits, on: connection) else { throw CaseHTTP.caseNotFound }
            return (try CaseMessageLog.list(for: record, on: connection), try InboundMessageStore.list(caseID: record.id, on: connection))
        }
        var items: [JSONValue] = []
        items.reserveCapacity(sent.count + received.count)
        var s = sent.startIndex
        var r = received.startIndex
        while s < sent.endIndex || r < received.endIndex {
            if s < sent.endIndex, r == received.endIndex || sent[s].at <= received[r].receivedAt {
                items.append(Self.json(sent[s]))
                s += 1
            } else {
                items.append(Self.json(received[r]))
                r += 1
            }
        }
        return CaseHTTP.json(["items": .array(items)])
    }

    /// A received message as the case shows it.
    static func json(_ message: InboundMessageRecord) -> JSONValue {
        [
            "direction": "in", "id": .string(message.id.uuidString.lowercased()), "from": .optional(message.from),
            "subject": .optional(message.subject), "received_at": Timestamp.json(message.receivedAt), "text": .string(message.text),
            "matched_by": .string((message.matchedBy ?? .agent).rawValue), "auto": .bool(message.auto),
            "from_rescue_address": .bool(message.fromRescueAddress),
            "attachments": .array(message.attachments.map { .string($0.uuidString.lowercased()) }),
        ]
    }

    static func json(_ item: CaseMessageLog.Item) -> JSONValue {
        switch item {
        case .message(let message):
            let entry = message.entry
            let to: JSONValue =
                entry.channel == .mail
                ? ["email": .optional(entry.recipient)]
                : ["client": .optional(message.clientName), "url": .optional(message.endpointURL)]
            return [
                "direction": "out", "id": .string(entry.id.uuidString.lowercased()), "channel": .string(entry.channel.rawValue),
                "kind": .string(entry.kind),
                "to": to, "state": .string(entry.state.rawValue), "attempts": .int(Int64(entry.attempts)),
                "created_at": Timestamp.json(entry.createdAt), "sent_at": Timestamp.json(entry.sentAt),
                "next_attempt_at": entry.state == .queued ? Timestamp.json(entry.nextAttemptAt) : .null,
                "last_error": .optional(entry.lastError), "reason": .null,
            ]
        case .refused(let kind, let reason, let to, let at, let seq):
            return [
                "direction": "out", "id": .null, "channel": .string(OutboxChannel.mail.rawValue), "kind": .string(kind),
                "to": ["email": .optional(to)],
                "state": "refused", "attempts": 0, "created_at": Timestamp.json(at), "sent_at": .null, "next_attempt_at": .null,
                "last_error": .null, "reason": .string(reason), "event_seq": .int(Int64(seq)),
            ]
        }
    }
}
