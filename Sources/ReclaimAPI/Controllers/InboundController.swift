import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `/api/v1/inbound`: the received mail no rule matched to a case, for agents (tier 1 and up) to attach or discard.
final class InboundController: Sendable {
    let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    /// The most unmatched messages one list shows (newest first).
    static let listLimit = 200

    struct AttachBody: Decodable {
        var caseNumber: String

        enum CodingKeys: String, CodingKey {
            case caseNumber = "case_number"
        }
    }

    struct DiscardBody: Decodable {
        var reason: String
    }

    /// `GET /api/v1/inbound[?kind=auto]`: `{"items": [{"id", "from", "from_rescue_address", "subject", "text",
    /// "received_at", "reason"}]}`, newest first: people's mail, or the auto-submitted and bulk mail with `kind=auto`.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.handleInboundMail, request)
        let automatic: Bool
        switch request.query("kind") {
        case nil, "unmatched": automatic = false
        case "auto": automatic = true
        default: throw Problem.unprocessable(errors: [FieldError(field: "kind", message: "One of unmatched, auto.")])
        }
        let (messages, rescue) = try context.pool.withConnection { connection in
            let messages = try InboundMessageStore.unmatched(automatic: automatic, limit: Self.listLimit, on: connection)
            return (messages, try InboundMessageStore.rescueSenders(Array(Set(messages.compactMap(\.from))), on: connection))
        }
        return CaseHTTP.json(["items": .array(messages.map { Self.json($0, fromRescueAddress: $0.from.map(rescue.contains) ?? false) })])
    }

    /// `POST /api/v1/inbound/{id}/attach` `{"case_number"}`: the mail becomes that case's message (`matched_by: agent`).
    @Sendable func attach(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.handleInboundMail, request)
        let id = try Self.id(request)
        let input = try request.decodeJSON(AttachBody.self)
        guard let number = try? CaseNumber(parsing: input.caseNumber) else {
            throw Problem.unprocessable(errors: [FieldError(field: "case_number", message: "Not a valid case number: check it for a typo.")])
        }
        let now = context.now
        return try context.transaction(for: request) { connection in
            let message = try CaseOperations(keys: context.keys, documentLimit: context.configuration.caseDocuments).attachInbound(
                id, to: number, by: principal.actor, at: now, on: connection)
            return CaseHTTP.json(CaseMessagesController.json(message))
        }
    }

    /// `POST /api/v1/inbound/{id}/discard` `{"reason"}`: off the list (kept, with who and why); 204.
    @Sendable func discard(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.handleInboundMail, request)
        let id = try Self.id(request)
        let input = try request.decodeJSON(DiscardBody.self)
        let now = context.now
        return try context.transaction(for: request) { connection in
            try CaseOperations(keys: context.keys).discardInbound(id, reason: input.reason, by: principal.actor, at: now, on: connection)
            return HTTPResponse.noContent()
        }
    }

    static func id(_ request: HTTPRequest) throws -> UUID {
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw OperationError.inboundNotFound }
        return id
    }

    static func json(_ message: InboundMessageRecord, fromRescueAddress: Bool) -> JSONValue {
        [
            "id": .string(message.id.uuidString.lowercased()), "from": .optional(message.from),
            "from_rescue_address": .bool(fromRescueAddress), "subject": .optional(message.subject), "text": .string(message.text),
            "received_at": Timestamp.json(message.receivedAt), "reason": .optional(message.unmatchedReason),
        ]
    }
}
