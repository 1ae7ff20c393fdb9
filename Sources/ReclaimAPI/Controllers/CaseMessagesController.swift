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

    /// `{"items": [...]}`, oldest first: each mail and webhook with its state, attempts and last error, and each mail
    /// refused because the contact address is the rescue address (state `refused`).
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readEvents, request)
        let number = try CaseHTTP.caseNumber(request)
        let items = try context.pool.withConnection { connection -> [CaseMessageLog.Item] in
            guard let record = try CaseStore.find(number: number.digits, on: connection) else { throw CaseHTTP.caseNotFound }
            return try CaseMessageLog.list(for: record, on: connection)
        }
        return CaseHTTP.json(["items": .array(items.map(Self.json))])
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
                "id": .string(entry.id.uuidString.lowercased()), "channel": .string(entry.channel.rawValue), "kind": .string(entry.kind),
                "to": to, "state": .string(entry.state.rawValue), "attempts": .int(Int64(entry.attempts)),
                "created_at": Timestamp.json(entry.createdAt), "sent_at": Timestamp.json(entry.sentAt),
                "next_attempt_at": entry.state == .queued ? Timestamp.json(entry.nextAttemptAt) : .null,
                "last_error": .optional(entry.lastError), "reason": .null,
            ]
        case .refused(let kind, let reason, let to, let at, let seq):
            return [
                "id": .null, "channel": .string(OutboxChannel.mail.rawValue), "kind": .string(kind), "to": ["email": .optional(to)],
                "state": "refused", "attempts": 0, "created_at": Timestamp.json(at), "sent_at": .null, "next_attempt_at": .null,
                "last_error": .null, "reason": .string(reason), "event_seq": .int(Int64(seq)),
            ]
        }
    }
}
