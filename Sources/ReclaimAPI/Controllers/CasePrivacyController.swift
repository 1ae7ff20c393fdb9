import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

// Personal data has an end (api.md v1.2): erasure and export of a case, for admins.
extension CasesController {
    /// `POST /api/v1/cases/{n}/erasure` `{"reason"}` (admins): erases what identifies the customer of a finished case;
    /// 409 `case_open` while it is open, `already_erased` the second time. Answers the case, its erased fields null.
    @Sendable func erase(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, _) = try authorizeOnCase(.eraseCase, request, number: number, attempted: "erasure")
        let members = try CaseHTTP.jsonObject(request)
        let reason = try CaseHTTP.requiredString(members, "reason")
        let now = self.now
        return try context.transaction(for: request, attempting: "erasure") { connection in
            respond(try operations.erase(number, reason: reason, by: principal.actor, at: now, on: connection), principal: principal)
        }
    }

    /// `GET /api/v1/cases/{n}/export` (admins): `application/zip` holding `case.json` (the case, its timeline, notes,
    /// evidence and messages) and each document as `documents/<evidence id>.<ext>`; an admin-log entry, committed before
    /// any byte leaves. The archive is streamed: `case.json` first, then each document read, opened and sent one at a
    /// time on the stream's own thread, so an export holds about one document in memory whatever the case holds.
    @Sendable func export(_ request: HTTPRequest) throws -> HTTPResponse {
        let number = try CaseHTTP.caseNumber(request)
        let (principal, _) = try authorizeOnCase(.exportCase, request, number: number, attempted: "export")
        let now = self.now
        let export = try context.pool.withTransaction { connection in
            try operations.export(number, by: principal.actor, at: now, on: connection)
        }
        var entries: [(evidence: EvidenceRecord, name: String)] = []
        var files: [JSONValue] = []
        for document in export.documents {
            let mediaType = document.mediaType ?? "application/octet-stream"
            let name = "documents/\(document.id.uuidString.lowercased()).\(EvidenceController.fileExtension(mediaType))"
            entries.append((document, name))
            files.append([
                "evidence_id": .string(document.id.uuidString.lowercased()), "file": .string(name), "media_type": .string(mediaType),
            ])
        }
        let caseJSON = Array(Self.caseJSON(export, files: files, workflow: workflow, now: now).canonical.utf8)
        let documents = entries
        let pool = context.pool
        let exporting = self.operations
        let stream = HTTPBodyStream { writer in
            var zip = StoredZipWriter(modified: now)
            try writer.write(try zip.header("case.json", for: caseJSON) + caseJSON)
            for entry in documents {
                // One short statement per document on this thread's own connection: nothing held while the client reads.
                let bytes = try pool.withConnection { try exporting.exportedContent(of: entry.evidence, on: $0) }
                try writer.write(try zip.header(entry.name, for: bytes))
                try writer.write(bytes)
            }
            try writer.write(zip.end())
        }
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "application/zip"),
                ("Content-Disposition", "attachment; filename=\"case-\(export.record.number).zip\""),
                ("Cache-Control", "no-store"),
            ], stream: stream)
    }

    /// The export's `case.json`: the case (without its `risk` flag), its timeline, notes, evidence, the messages both
    /// ways in time order (sent, and received with `from`, `to`, `subject`, `date`, `message_id`, text and attachments'
    /// evidence ids), the documents' files, and `withheld` (what the desk recorded about fraud, left out, by kind and count).
    static func caseJSON(_ export: CaseOperations.CaseExport, files: [JSONValue], workflow: Workflow, now: Date) -> JSONValue {
        var kase = CaseHTTP.representation(export.record, actorTier: nil, workflow: workflow, now: now)
        if case .object(var members) = kase {
            members["risk"] = nil
            kase = .object(members)
        }
        var messages: [JSONValue] = []
        var received = export.received[...]
        for item in export.messages {
            while let mail = received.first, mail.message.receivedAt < item.at {
                messages.append(Self.exportJSON(mail))
                received = received.dropFirst()
            }
            messages.append(CaseMessagesController.json(item))
        }
        messages += received.map(Self.exportJSON)
        return [
            "exported_at": Timestamp.json(now), "case": kase,
            "timeline": .array(export.events.map(\.json)), "notes": .array(export.notes.map(\.json)),
            "evidence": .array(export.evidence.map(\.json)), "messages": .array(messages), "documents": .array(files),
            "withheld": .object(export.withheld.mapValues { .int(Int64($0)) }),
        ]
    }

    /// A received mail as the export holds it.
    static func exportJSON(_ mail: CaseOperations.ReceivedMail) -> JSONValue {
        let message = mail.message
        return [
            "direction": "in", "id": .string(message.id.uuidString.lowercased()), "received_at": Timestamp.json(message.receivedAt),
            "from": .optional(message.from), "to": .array(mail.to.map(JSONValue.string)), "subject": .optional(message.subject),
            "date": Timestamp.json(mail.date), "message_id": .optional(message.messageID), "text": .string(message.text),
            "attachments": .array(message.attachments.map { .string($0.uuidString.lowercased()) }),
        ]
    }
}
