import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `/api/v1/cases/{n}/notes`: internal notes for agents, customer notes also on the status page.
final class NotesController: Sendable {
    let context: ServiceContext

    init(context: ServiceContext) {
        self.context = context
    }

    struct NoteBody: Decodable {
        var body: String
        var visibility: String
    }

    /// `POST /api/v1/cases/{n}/notes` `{"body", "visibility"}` → 201 with the note (no `If-Match`: notes do not change the case;
    /// an `Idempotency-Key` makes a retry after a lost answer store the note once).
    @Sendable func add(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.addNote, request)
        let number = try CaseHTTP.caseNumber(request)
        let input = try request.decodeJSON(NoteBody.self)
        guard let visibility = NoteVisibility(rawValue: input.visibility) else {
            throw Problem.unprocessable(errors: [FieldError(field: "visibility", message: "internal or customer")])
        }
        let now = context.now
        return try context.transaction(for: request) { connection in
            let note = try CaseOperations(keys: context.keys).addNote(
                number, body: input.body, visibility: visibility, by: principal.actor, at: now, on: connection)
            return CaseHTTP.json(note.json, status: 201)
        }
    }

    /// `GET /api/v1/cases/{n}/notes`: every note, oldest first (agents).
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readCase, request)
        let number = try CaseHTTP.caseNumber(request)
        let (notes, actors) = try context.pool.withConnection { connection -> ([CaseNote], JSONValue) in
            guard let id = try CaseStore.id(number: number.digits, on: connection) else {
                throw CaseHTTP.caseNotFound
            }
            let notes = try NoteStore.list(caseID: id, on: connection)
            return (notes, try ActorNames.names(of: notes.map(\.author), on: connection))
        }
        return CaseHTTP.json(CaseHTTP.list(notes.map(\.json), nextCursor: nil, actors: actors))
    }
}
