import Crypto
import Foundation
import HTTPServer
import ReclaimCore
import ReclaimStore

/// The pieces every case handler shares: number parsing, If-Match, refusals, the case representation.
enum CaseHTTP {
    /// A JSON response from a `JSONValue` (canonical form: sorted keys, no whitespace).
    static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        var response = HTTPResponse.json(status, body: Array(value.canonical.utf8))
        for (name, value) in headers { response.addHeader(name, value) }
        return response
    }

    /// The `{case_number}` path parameter, or 404 `invalid_case_number` before any database query.
    static func caseNumber(_ request: HTTPRequest) throws -> CaseNumber {
        try parseCaseNumber(request.parameter("case_number") ?? "")
    }

    /// Parses a typed case number, or 404 `invalid_case_number`.
    static func parseCaseNumber(_ text: String) throws -> CaseNumber {
        do {
            return try CaseNumber(parsing: text)
        } catch {
            throw Problem.notFound(code: "invalid_case_number", detail: "This is not a valid case number: check it for a typo.")
        }
    }

    /// The version in `If-Match` (`"3"`, `W/"3"` or `3`): 428 without the header, 412 when it is not a version.
    static func ifMatch(_ request: HTTPRequest) throws -> Int {
        guard let raw = request.header("if-match")?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            throw Problem.preconditionRequired(detail: "Send If-Match with the case's current ETag.")
        }
        var text = Substring(raw)
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        guard let version = Int(text), version >= 1 else {
            throw Problem.preconditionFailed(detail: "If-Match does not name a version of this case.")
        }
        return version
    }

    /// 412 `stale_version`.
    static func stale(current: Int) -> Problem {
        Problem(status: 412, code: "stale_version", detail: "The case changed (now at version \(current)); reload it and try again.",
                extraHeaders: [("ETag", "\"\(current)\"")])
    }

    /// 404 for a case that does not exist (or that the caller may not know about).
    static var caseNotFound: Problem { Problem.notFound(detail: "No case has this number.") }

    /// The problem for a workflow refusal: forbidden 403, conflict 409, invalid 422.
    static func problem(for refusal: WorkflowRefusal) -> Problem {
        let status = switch refusal.category {
        case .forbidden: 403
        case .conflict: 409
        case .invalid: 422
        }
        var members: [String: any Sendable & Encodable] = [:]
        if case .verificationFailed(let outcome) = refusal {
            members["factors"] = Dictionary(uniqueKeysWithValues: outcome.factors.map { ($0.key.rawValue, $0.value.rawValue) })
        }
        if case .insufficientTier(let required) = refusal { members["required_tier"] = required.rawValue }
        return Problem(status: status, code: refusal.code, detail: refusal.message, extraMembers: members)
    }

    /// The case representation of api.md, with `allowed_actions` for `actorTier` (nil: none).
    static func representation(_ record: CaseRecord, actorTier: Tier?, workflow: Workflow, now: Date) -> JSONValue {
        let s = record.snapshot
        let facts: JSONValue = [
            "rescue_email_added": .bool(s.facts.rescueEmailAdded), "security_questions_changed": .bool(s.facts.securityQuestionsChanged),
            "two_step_enabled": .bool(s.facts.twoStepEnabled), "lost_mode_enabled": .bool(s.facts.lostModeEnabled),
        ]
        var assignee = JSONValue.null
        if let id = record.assigneeID {
            assignee = ["id": .string(id.uuidString.lowercased()), "name": .optional(record.assigneeName),
                        "tier": .optional(record.assigneeTier?.rawValue)]
        }
        return [
            "case_number": .string(record.number),
            "kind": .string(s.kind.rawValue),
            "state": .string(s.state.rawValue),
            "tier": .string(s.tier.rawValue),
            "path": .string(s.path.rawValue),
            "facts": facts,
            "account_email": .string(record.accountEmail),
            "customer": ["name": .string(record.customerName), "contact_email": .string(record.customerContactEmail)],
            "devices": .array(record.devices.map(\.json)),
            "summary": .string(record.summary),
            "assignee": assignee,
            "frozen": .bool(record.frozen),
            "due_at": Timestamp.json(record.dueAt),
            "overdue": .bool(workflow.sla.isOverdue(dueAt: record.dueAt, state: s.state, now: now)),
            "allowed_actions": .array(workflow.allowedActions(for: s, actorTier: actorTier).map { .string($0.rawValue) }),
            "created_at": Timestamp.json(record.createdAt),
            "updated_at": Timestamp.json(record.updatedAt),
            "version": .int(Int64(record.version)),
        ]
    }

    /// The same text as `representation(...).canonical`, written directly with the keys in JCS order: a queue page
    /// renders fifty of these, and building and sorting dictionaries cost most of the page's CPU.
    static func writeRepresentation(_ record: CaseRecord, actorTier: Tier?, workflow: Workflow, now: Date, to out: inout String) {
        let s = record.snapshot
        func key(_ name: String) { out += "\"" + name + "\":" }
        func string(_ value: String) { JSONValue.writeString(value, to: &out) }
        func time(_ date: Date?) { if let date { out += "\"" + Timestamp.format(date) + "\"" } else { out += "null" } }
        func optional(_ value: String?) { if let value { string(value) } else { out += "null" } }
        out += "{"
        key("account_email"); string(record.accountEmail)
        out += ","; key("allowed_actions"); out += "["
        for (index, action) in workflow.allowedActions(for: s, actorTier: actorTier).enumerated() {
            if index > 0 { out += "," }
            out += "\"" + action.rawValue + "\""
        }
        out += "],"; key("assignee")
        if let id = record.assigneeID {
            out += "{\"id\":\"" + id.uuidString.lowercased() + "\",\"name\":"
            optional(record.assigneeName)
            out += ",\"tier\":"
            optional(record.assigneeTier?.rawValue)
            out += "}"
        } else {
            out += "null"
        }
        out += ","; key("case_number"); out += "\"" + record.number + "\""
        out += ","; key("created_at"); time(record.createdAt)
        out += ","; key("customer"); out += "{\"contact_email\":"; string(record.customerContactEmail); out += ",\"name\":"; string(record.customerName); out += "}"
        out += ","; key("devices"); out += "["
        for (index, device) in record.devices.enumerated() {
            if index > 0 { out += "," }
            out += "{\"imei\":"; optional(device.imei); out += ",\"model\":"; optional(device.model); out += ",\"serial\":"; optional(device.serial); out += "}"
        }
        out += "],"; key("due_at"); time(record.dueAt)
        out += ","; key("facts")
        out += "{\"lost_mode_enabled\":\(s.facts.lostModeEnabled),\"rescue_email_added\":\(s.facts.rescueEmailAdded),"
        out += "\"security_questions_changed\":\(s.facts.securityQuestionsChanged),\"two_step_enabled\":\(s.facts.twoStepEnabled)}"
        out += ","; key("frozen"); out += record.frozen ? "true" : "false"
        out += ","; key("kind"); out += "\"" + s.kind.rawValue + "\""
        out += ","; key("overdue"); out += workflow.sla.isOverdue(dueAt: record.dueAt, state: s.state, now: now) ? "true" : "false"
        out += ","; key("path"); out += "\"" + s.path.rawValue + "\""
        out += ","; key("state"); out += "\"" + s.state.rawValue + "\""
        out += ","; key("summary"); string(record.summary)
        out += ","; key("tier"); out += "\"" + s.tier.rawValue + "\""
        out += ","; key("updated_at"); time(record.updatedAt)
        out += ","; key("version"); out += String(record.version)
        out += "}"
    }

    /// `ETag: "<version>"`.
    static func etag(_ version: Int) -> (String, String) { ("ETag", "\"\(version)\"") }

    /// The keyed hash stored for an access code.
    static func accessCodeHash(_ symbols: String, key: SymmetricKey) -> [UInt8] {
        HMACSHA256.authenticate(message: Array(symbols.utf8), key: key)
    }

    /// A list response: `{"items": [...], "next_cursor": ... | null}`.
    static func list(_ items: [JSONValue], nextCursor: String?) -> JSONValue {
        ["items": .array(items), "next_cursor": .optional(nextCursor)]
    }

    /// `?limit=`: default 50, 1...200, else 422.
    static func limit(_ request: HTTPRequest) throws -> Int {
        guard let text = request.query("limit") else { return 50 }
        guard let value = Int(text), (1...200).contains(value) else {
            throw Problem.unprocessable(errors: [FieldError(field: "limit", message: "limit is 1 to 200")])
        }
        return value
    }

    /// 422 from validation issues collected with ReclaimCore's validators.
    static func problem(for failure: ValidationFailure) -> Problem {
        Problem.unprocessable(errors: failure.issues.map { FieldError(field: $0.field, message: $0.message) })
    }
}

extension CaseRecord {
    /// The record after a change this request made (saves re-reading the row).
    func with(snapshot: CaseSnapshot? = nil, dueAt: Date?? = nil, assigneeID: UUID? = nil, assigneeName: String? = nil,
              assigneeTier: Tier? = nil, frozen: Bool? = nil, updatedAt: Date, version: Int) -> CaseRecord {
        CaseRecord(id: id, number: number, accessCodeHash: accessCodeHash, accessCodeKeyID: accessCodeKeyID,
                   snapshot: snapshot ?? self.snapshot, dueAt: dueAt ?? self.dueAt, accountEmail: accountEmail,
                   customerName: customerName, customerContactEmail: customerContactEmail, devices: devices, summary: summary,
                   assigneeID: assigneeID ?? self.assigneeID, assigneeName: assigneeName ?? self.assigneeName,
                   assigneeTier: assigneeTier ?? self.assigneeTier, frozen: frozen ?? self.frozen, createdAt: createdAt,
                   updatedAt: updatedAt, version: version)
    }
}
