import Crypto
import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
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
            throw Problem.notFound(code: ErrorCode.invalidCaseNumber, detail: "This is not a valid case number: check it for a typo.")
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

    /// 404 for a case that does not exist (or that the caller may not know about).
    static var caseNotFound: Problem { OperationError.caseNotFound.problem }

    /// `allowed_actions`: the transitions the caller may take now (table order), then the other work the case takes
    /// from them (`CaseWork`'s order): what the dashboard offers, and nothing else.
    static func allowedActions(_ record: CaseRecord, actorTier: Tier?, workflow: Workflow) -> [String] {
        let standing = record.standing
        return workflow.allowedActions(for: record.snapshot, standing: standing, actorTier: actorTier).map(\.rawValue)
            + workflow.allowedWork(for: record.snapshot, standing: standing, actorTier: actorTier).map(\.rawValue)
    }

    /// The case representation of api.md, with `allowed_actions` for `actorTier` (nil: none).
    static func representation(
        _ record: CaseRecord, actorTier: Tier?, workflow: Workflow, now: Date, riskSignals: [RiskSignalRecord]? = nil,
        related: [RelatedCase]? = nil, call: CaseCall? = nil
    ) -> JSONValue {
        let s = record.snapshot
        let erased = record.erasedAt != nil
        let facts: JSONValue = [
            "rescue_email": .optional(record.rescueEmail), "former_rescue_emails": .array(record.formerRescueEmails.map(JSONValue.string)),
            "rescue_email_added": .bool(s.facts.rescueEmailAdded), "security_questions_changed": .bool(s.facts.securityQuestionsChanged),
            "two_step_enabled": .bool(s.facts.twoStepEnabled), "lost_mode_enabled": .bool(s.facts.lostModeEnabled),
        ]
        var assignee = JSONValue.null
        if let id = record.assigneeID {
            assignee = [
                "id": .string(id.uuidString.lowercased()), "name": .optional(record.assigneeName),
                "tier": .optional(record.assigneeTier?.rawValue),
            ]
        }
        var members: [String: JSONValue] = [
            "case_number": .string(record.number),
            "kind": .string(s.kind.rawValue),
            "language": .optional(record.language?.rawValue),
            "merged_into": .optional(record.mergedInto),
            "state": .string(s.state.rawValue),
            "tier": .string(s.tier.rawValue),
            "path": .string(s.path.rawValue),
            "facts": facts,
            "account_email": erased ? .null : .string(record.accountEmail),
            "customer": erased
                ? ["name": nil, "contact_email": nil, "phone": nil]
                : [
                    "name": .string(record.customerName), "contact_email": .string(record.customerContactEmail),
                    "phone": .optional(record.customerPhone),
                ],
            "devices": erased ? .null : .array(record.devices.map(\.json)),
            "summary": erased ? .null : .string(record.summary),
            "erased_at": Timestamp.json(record.erasedAt),
            "assignee": assignee,
            "awaiting_reply": .bool(record.awaitingReply),
            "frozen": .bool(record.frozen),
            "due_at": Timestamp.json(record.dueAt),
            "overdue": .bool(workflow.sla.isOverdue(dueAt: record.dueAt, state: s.state, now: now)),
            "allowed_actions": .array(allowedActions(record, actorTier: actorTier, workflow: workflow).map(JSONValue.string)),
            "created_at": Timestamp.json(record.createdAt),
            "unlocks": [
                "required": .array(UnlockChecklist.required(kind: s.kind, facts: s.facts).map { .string($0.rawValue) }),
                "done": .array(record.unlocksDone.map { .string($0.rawValue) }),
                "scheduled": .array(
                    record.unlocksScheduled.map {
                        [
                            "step": .string($0.step.rawValue), "status": .string(UnlockStatus.scheduled.rawValue),
                            "effective_at": Timestamp.json($0.effectiveAt),
                        ]
                    }),
            ],
            "unreviewed_documents": .int(Int64(record.unreviewedDocuments)),
            "updated_at": Timestamp.json(record.updatedAt),
            "version": .int(Int64(record.version)),
            "risk": .bool(record.risk),
        ]
        if let riskSignals { members["risk_signals"] = .array(riskSignals.map(\.json)) }
        if let related { members["related"] = .array(related.map(\.json)) }
        if let call {
            members["call_codes"] = call.codes
            members["caller_verification"] = call.verification
        }
        return .object(members)
    }

    /// The same bytes as `representation(...).canonical`, written directly with the keys in JCS order: a queue page
    /// renders fifty of these, and building and sorting dictionaries (then String appends) cost most of its CPU.
    static func writeRepresentation(
        _ record: CaseRecord, actorTier: Tier?, workflow: Workflow, now: Date, riskSignals: [RiskSignalRecord]? = nil,
        related: [RelatedCase]? = nil, call: CaseCall? = nil, to out: inout [UInt8]
    ) {
        let s = record.snapshot
        // Erased fields read null (the columns hold empty values).
        let erased = record.erasedAt != nil
        func raw(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        func plain(_ text: String) { out.append(contentsOf: text.utf8) }  // known not to need escaping
        func string(_ value: String) { JSONValue.writeString(value, to: &out) }
        func quoted(_ text: String) {
            out.append(0x22)
            out.append(contentsOf: text.utf8)
            out.append(0x22)
        }
        func time(_ date: Date?) { if let date { quoted(Timestamp.format(date)) } else { raw("null") } }
        func optional(_ value: String?) { if let value { string(value) } else { raw("null") } }
        func bool(_ value: Bool) { if value { raw("true") } else { raw("false") } }
        raw("{\"account_email\":")
        optional(erased ? nil : record.accountEmail)
        raw(",\"allowed_actions\":[")
        for (index, word) in allowedActions(record, actorTier: actorTier, workflow: workflow).enumerated() {
            if index > 0 { out.append(0x2C) }
            quoted(word)
        }
        raw("],\"assignee\":")
        if let id = record.assigneeID {
            raw("{\"id\":")
            quoted(id.uuidString.lowercased())
            raw(",\"name\":")
            optional(record.assigneeName)
            raw(",\"tier\":")
            optional(record.assigneeTier?.rawValue)
            raw("}")
        } else {
            raw("null")
        }
        raw(",\"awaiting_reply\":")
        bool(record.awaitingReply)
        if let call {
            raw(",\"call_codes\":")
            out.append(contentsOf: call.codes.canonical.utf8)
            raw(",\"caller_verification\":")
            out.append(contentsOf: call.verification.canonical.utf8)
        }
        raw(",\"case_number\":")
        quoted(record.number)
        raw(",\"created_at\":")
        time(record.createdAt)
        raw(",\"customer\":{\"contact_email\":")
        optional(erased ? nil : record.customerContactEmail)
        raw(",\"name\":")
        optional(erased ? nil : record.customerName)
        raw(",\"phone\":")
        optional(erased ? nil : record.customerPhone)
        raw("},\"devices\":")
        if erased { raw("null") } else { raw("[") }
        for (index, device) in record.devices.enumerated() where !erased {
            if index > 0 { out.append(0x2C) }
            raw("{\"imei\":")
            optional(device.imei)
            raw(",\"model\":")
            optional(device.model)
            raw(",\"serial\":")
            optional(device.serial)
            raw("}")
        }
        if !erased { raw("]") }
        raw(",\"due_at\":")
        time(record.dueAt)
        raw(",\"erased_at\":")
        time(record.erasedAt)
        raw(",\"facts\":{\"former_rescue_emails\":[")
        for (index, address) in record.formerRescueEmails.enumerated() {
            if index > 0 { out.append(0x2C) }
            string(address)
        }
        raw("],\"lost_mode_enabled\":")
        bool(s.facts.lostModeEnabled)
        raw(",\"rescue_email\":")
        optional(record.rescueEmail)
        raw(",\"rescue_email_added\":")
        bool(s.facts.rescueEmailAdded)
        raw(",\"security_questions_changed\":")
        bool(s.facts.securityQuestionsChanged)
        raw(",\"two_step_enabled\":")
        bool(s.facts.twoStepEnabled)
        raw("},\"frozen\":")
        bool(record.frozen)
        raw(",\"kind\":")
        quoted(s.kind.rawValue)
        raw(",\"language\":")
        optional(record.language?.rawValue)
        raw(",\"merged_into\":")
        optional(record.mergedInto)
        raw(",\"overdue\":")
        bool(workflow.sla.isOverdue(dueAt: record.dueAt, state: s.state, now: now))
        raw(",\"path\":")
        quoted(s.path.rawValue)
        if let related {
            raw(",\"related\":")
            out.append(contentsOf: JSONValue.array(related.map(\.json)).canonical.utf8)
        }
        raw(",\"risk\":")
        bool(record.risk)
        if let riskSignals {
            raw(",\"risk_signals\":")
            out.append(contentsOf: JSONValue.array(riskSignals.map(\.json)).canonical.utf8)
        }
        raw(",\"state\":")
        quoted(s.state.rawValue)
        raw(",\"summary\":")
        optional(erased ? nil : record.summary)
        raw(",\"tier\":")
        quoted(s.tier.rawValue)
        raw(",\"unlocks\":{\"done\":[")
        for (index, step) in record.unlocksDone.enumerated() {
            if index > 0 { out.append(0x2C) }
            quoted(step.rawValue)
        }
        raw("],\"required\":[")
        for (index, step) in UnlockChecklist.required(kind: s.kind, facts: s.facts).enumerated() {
            if index > 0 { out.append(0x2C) }
            quoted(step.rawValue)
        }
        raw("],\"scheduled\":[")
        for (index, waiting) in record.unlocksScheduled.enumerated() {
            if index > 0 { out.append(0x2C) }
            raw("{\"effective_at\":")
            time(waiting.effectiveAt)
            raw(",\"status\":\"scheduled\",\"step\":")
            quoted(waiting.step.rawValue)
            raw("}")
        }
        raw("]},\"unreviewed_documents\":")
        plain(String(record.unreviewedDocuments))
        raw(",\"updated_at\":")
        time(record.updatedAt)
        raw(",\"version\":")
        plain(String(record.version))
        raw("}")
    }

    /// A JSON object body parsed with the small parser (cheaper than JSONDecoder on the hot status route), after the
    /// checks every JSON body gets (`checkedJSONBody`: 415, 400 when empty, 422 for U+0000): 400 `malformed_json`
    /// only when the bytes are not JSON, 422 `validation_failed` when they are JSON but not an object.
    static func jsonObject(_ request: HTTPRequest) throws -> [String: JSONValue] {
        let body = try request.checkedJSONBody()
        var value = try? JSONValue.parse(String(decoding: body, as: UTF8.self))
        if value == nil {
            // The small parser refuses some JSON (fractions, exponents, deep nesting): JSONDecoder decides between 400
            // (not JSON) and 422 naming the field it cannot hold, through the one DecodingError mapping.
            value = try request.decodeJSON(ExactJSON.self).value
        }
        guard case .object(let members)? = value else {
            throw Problem.unprocessable(
                detail: "The request body is not a JSON object.", errors: [FieldError(field: "", message: "expected an object")])
        }
        return members
    }

    /// A required string member, or 422 `validation_failed` naming the field.
    static func requiredString(_ members: [String: JSONValue], _ name: String) throws -> String {
        guard case .string(let value)? = members[name] else {
            let message = members[name] == nil ? "required" : "expected a string"
            throw Problem.unprocessable(
                detail: "The field '\(name)' is required and is a string.", errors: [FieldError(field: name, message: message)])
        }
        return value
    }

    /// `ETag: "<version>"`.
    static func etag(_ version: Int) -> (String, String) { ("ETag", "\"\(version)\"") }

    /// A list response: `{"items": [...], "next_cursor": ... | null}`.
    static func list(_ items: [JSONValue], nextCursor: String?, actors: JSONValue? = nil) -> JSONValue {
        var list: JSONValue = ["items": .array(items), "next_cursor": .optional(nextCursor)]
        if let actors, case .object(var members) = list {
            members["actors"] = actors
            list = .object(members)
        }
        return list
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

/// Decodes JSON into a `JSONValue` as the small parser would, but through JSONDecoder and without `try?` between levels,
/// so a value it cannot hold (a fraction, an exponent, an integer beyond Int64) fails at its own coding path.
struct ExactJSON: Decodable {
    let value: JSONValue

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(ExactJSON.self, forKey: key).value }
            value = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(ExactJSON.self).value) }
            value = .array(items)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = .null
            } else if let bool = try? single.decode(Bool.self) {
                value = .bool(bool)
            } else if let int = try? single.decode(Int64.self) {
                value = .int(int)
            } else if let string = try? single.decode(String.self) {
                value = .string(string)
            } else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "numbers here are integers")
            }
        }
    }
}

/// The call members of the agents' own GET of a case (api.md v1.3 "The call, verified both ways"): the desk code (never
/// the customer's) and the verification in force.
struct CaseCall {
    /// `{"desk", "valid_until"}`, or null for a finished case.
    let codes: JSONValue
    /// `{"verified_until", "method", "agent"}`, or null.
    let verification: JSONValue

    init(_ record: CaseRecord, verification: CallerVerificationState?, keys: KeyFile?, now: Date) {
        codes =
            CallCodeDerivation.shown(for: record, keys: keys, at: now).map {
                ["desk": .string($0.desk), "valid_until": Timestamp.json($0.validUntil)]
            } ?? .null
        self.verification =
            verification.map {
                ["verified_until": Timestamp.json($0.verifiedUntil), "method": .string($0.method.rawValue), "agent": .string($0.agent)]
            } ?? .null
    }
}
