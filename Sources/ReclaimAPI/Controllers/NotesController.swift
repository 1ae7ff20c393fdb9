import Foundation
import HTTPServer
import ReclaimCore
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

    /// `POST /api/v1/cases/{n}/notes` `{"body", "visibility"}` → 201 with the note (no `If-Match`: notes do not change the case).
    @Sendable func add(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.addNote, request)
        let number = try CaseHTTP.caseNumber(request)
        let input = try request.decodeJSON(NoteBody.self)
        var errors: [FieldError] = []
        let body = input.body.trimmingCharacters(in: .whitespacesAndNewlines)
        if body.isEmpty || body.count > NoteStore.maximumLength { errors.append(FieldError(field: "body", message: "A note has 1 to \(NoteStore.maximumLength) characters.")) }
        let visibility = NoteVisibility(rawValue: input.visibility)
        if visibility == nil { errors.append(FieldError(field: "visibility", message: "internal or customer")) }
        guard errors.isEmpty, let visibility else { throw Problem.unprocessable(errors: errors) }
        let note = CaseNote(id: UUID(), body: body, visibility: visibility, author: principal.actor, createdAt: context.clock.now())
        try context.pool.withTransaction { connection in
            // The row lock orders this note's event after any concurrent change to the case.
            guard let id = try CaseStore.id(number: number.digits, lock: true, on: connection) else {
                throw CaseHTTP.caseNotFound
            }
            try NoteStore.insert(note, caseID: id, on: connection)
            try CaseEventStore.append(caseID: id, at: note.createdAt, actor: principal.actor, type: "note_added",
                                      data: ["note_id": .string(note.id.uuidString.lowercased()), "visibility": .string(visibility.rawValue)],
                                      on: connection)
        }
        return CaseHTTP.json(note.json, status: 201)
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
