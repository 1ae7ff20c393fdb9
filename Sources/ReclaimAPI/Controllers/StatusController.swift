import Crypto
import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `POST /api/v1/status`: what a customer may see with their case number and access code, and nothing more.
///
/// A wrong code and an unknown case answer the same 404 after the same work (an HMAC is computed either way,
/// and either way a failure is recorded); 9 failures on a number lock it for 8 hours, even to the right code;
/// an address is limited to 50 failures an hour (mistyped numbers included). Both limits live in PostgreSQL.
final class StatusController: Sendable {
    let context: ServiceContext
    let workflow: Workflow
    let policy: StatusThrottlePolicy

    init(context: ServiceContext, workflow: Workflow = Workflow(), policy: StatusThrottlePolicy = .default) {
        self.context = context
        self.workflow = workflow
        self.policy = policy
    }

    struct StatusBody {
        var caseNumber: String
        var accessCode: String
        /// The language asked for (`language`), if any.
        var language: CustomerLanguage?
    }

    /// Compared against when the case does not exist, so both answers cost the same.
    private static let dummyHash = [UInt8](repeating: 0, count: HMACSHA256.byteCount)

    /// `language` as sent (en, zh-Hans, zh-Hant), or 422 naming the field.
    static func requestedLanguage(_ text: String?) throws -> CustomerLanguage? {
        guard let text else { return nil }
        guard let language = CustomerLanguage(rawValue: text) else {
            throw Problem.unprocessable(errors: [
                FieldError(field: "language", message: CustomerLanguage.allCases.map(\.rawValue).joined(separator: ", "))
            ])
        }
        return language
    }

    /// The language of an answer that shows no case (a refusal): the one asked for, else `Accept-Language`, never the
    /// case's own, so that a wrong code and an unknown case still answer alike.
    static func refusalLanguage(_ body: StatusBody, _ request: HTTPRequest) -> CustomerLanguage {
        CustomerLanguage.negotiate(requested: body.language, caseLanguage: nil, acceptLanguage: request.header("accept-language"))
    }

    @Sendable func status(_ request: HTTPRequest) throws -> HTTPResponse {
        let members = try CaseHTTP.jsonObject(request)
        var language: String?
        switch members["language"] {
        case nil, .null?: language = nil
        case .string(let text)?: language = text
        default: throw Problem.unprocessable(errors: [FieldError(field: "language", message: "expected a string")])
        }
        let body = StatusBody(
            caseNumber: try CaseHTTP.requiredString(members, "case_number"), accessCode: try CaseHTTP.requiredString(members, "access_code"),
            language: try Self.requestedLanguage(language))
        let (record, thread) = try customerCase(body, request)
        let (view, chosen) = try customerView(record, thread: thread, requested: body.language, request)
        guard case .object(var members) = view else { throw Problem.internal }
        // The call codes (api.md v1.3): the customer's own look-up only, never an API client's, never a mail.
        members["call_codes"] =
            CallCodeDerivation.shown(for: record, keys: context.keys, at: context.clock.now()).map {
                ["desk": .string($0.desk), "customer": .string($0.customer), "valid_until": Timestamp.json($0.validUntil)]
            } ?? .null
        return Self.answer(.object(members), chosen)
    }

    /// The customer's view of `record`; for a merged case, the status of the case it went into (its number, plus
    /// `merged_from`) showing only the notes and evidence the merged case itself brought: its code was given to its own
    /// customer, and the target's items are another customer's (api.md v1.2 "Merge knows whose case it is").
    private func customerView(
        _ record: CaseRecord, thread: CustomerThread, requested: CustomerLanguage?,
        _ request: HTTPRequest
    ) throws -> (JSONValue, CustomerLanguage) {
        if record.snapshot.state == .merged, let into = record.mergedInto {
            let now = context.clock.now()
            let (target, _, targetThread, _) = try context.pool.withConnection {
                try CaseStore.findForStatus(number: into, throttleKeys: [], now: now, on: $0)
            }
            if let target {
                let (view, chosen) = try view(target, thread: targetThread, requested: requested, request, onlyFrom: record)
                guard case .object(var members) = view else { throw Problem.internal }
                members["merged_from"] = .string(record.number)
                return (.object(members), chosen)
            }
        }
        return try view(record, thread: thread, requested: requested, request)
    }

    /// The customer's view, never stored by a cache, in the language chosen.
    static func answer(_ view: JSONValue, _ chosen: CustomerLanguage) -> HTTPResponse {
        CaseHTTP.json(view, headers: [("Cache-Control", "no-store"), ("Content-Language", chosen.rawValue), ("Vary", "Accept-Language")])
    }

    /// `GET /api/v1/cases/{n}/status` (API clients): the customer's view of a case the client opened; 404 for any other.
    @Sendable func clientStatus(_ request: HTTPRequest) throws -> HTTPResponse {
        let principal = try context.authorize(.readOwnCaseStatus, request)
        let number = try CaseHTTP.caseNumber(request)
        let now = context.clock.now()
        let (record, _, thread, _) = try context.pool.withConnection {
            try CaseStore.findForStatus(number: number.digits, throttleKeys: [], now: now, on: $0)
        }
        guard let record, record.createdBy == principal.actor else { throw CaseHTTP.caseNotFound }
        // Gone, as the customer's look-up is (api.md v1.3 "An erased case is finished for good").
        if record.erasedAt != nil { throw Problem(ErrorCode.caseErased, detail: "What identified the customer was erased: the case is gone.") }
        let (view, chosen) = try customerView(record, thread: thread, requested: nil, request)
        return Self.answer(view, chosen)
    }

    /// The body of `POST /api/v1/status`: what the customer may see, and nothing more, in the language chosen. With
    /// `onlyFrom` (a case merged into `record`), the lists hold only that case's notes and evidence; the heading, next
    /// step and missing list stay the whole case's.
    private func view(
        _ record: CaseRecord, thread: CustomerThread, requested: CustomerLanguage?,
        _ request: HTTPRequest, onlyFrom merged: CaseRecord? = nil
    ) throws -> (JSONValue, CustomerLanguage) {
        // Evidence: what the customer filed and how it is shown (never its content, summary or a match result); items a
        // merged case brought say which (`from_case`), their numbers read only when there are such items.
        let (evidence, sources) = try context.pool.withConnection { connection -> ([EvidenceRecord], [UUID: String]) in
            let evidence = try EvidenceStore.list(caseID: record.id, on: connection)
            let merged = evidence.contains { $0.caseID != record.id }
            return (evidence, merged ? try CaseStore.mergedSources(into: record.id, on: connection) : [:])
        }
        let chosen = CustomerLanguage.negotiate(
            requested: requested, caseLanguage: record.language, acceptLanguage: request.header("accept-language"))
        let contact = context.configuration.supportContact
        let guidance = EvidenceRequirements.guidance(record, evidence)
        let shown = zip(evidence, zip(guidance.evidence, guidance.reasons)).filter { item, _ in merged.map { item.caseID == $0.id } ?? true }
        let notes = thread.notes.filter { note in merged.map { note.fromCase == $0.number } ?? true }
        func say(_ text: CustomerText) -> JSONValue { .string(text.text(chosen, contact: contact)) }

        let s = record.snapshot
        let response: JSONValue = [
            "case_number": .string(record.number),
            "language": .string(chosen.rawValue),
            "state": .string(s.state.rawValue),
            "stage": say(guidance.stage),
            "stage_key": .string(guidance.stage.rawValue),
            "progress": .array(
                guidance.progress.map {
                    ["key": .string($0.key), "label": say($0.label), "mark": .string($0.mark.rawValue)]
                }),
            "next_step": say(guidance.nextStep),
            "next_step_key": .string(guidance.nextStep.rawValue),
            "updated_at": Timestamp.json(record.updatedAt),
            "due_at": Timestamp.json(record.dueAt),
            "evidence": .array(
                shown.map { item, shownAndReason in
                    let (shown, reason) = shownAndReason
                    var members: [String: JSONValue] = [
                        "type": .string(item.kind.rawValue), "status": .string(shown.rawValue), "filed_at": Timestamp.json(item.filedAt),
                    ]
                    if let from = sources[item.caseID] { members["from_case"] = .string(from) }
                    // A rejected document says why, in the reader's language.
                    if let reason {
                        members["customer_reason"] = .string(reason.rawValue)
                        members["customer_reason_text"] = say(reason.text)
                    }
                    return .object(members)
                }),
            "missing": .array(guidance.missing.map { .string($0.rawValue) }),
            "missing_text": .array(guidance.missing.map { say($0.text) }),
            "can_upload": .bool(guidance.canUpload),
            // The cooling-off: what will be undone, and when, so the customer can tell whether it was them.
            "unlocks_scheduled": .array(
                record.unlocksScheduled.map {
                    ["step": .string($0.step.rawValue), "text": say($0.step.customerText), "effective_at": Timestamp.json($0.effectiveAt)]
                }),
            "notices": .array(guidance.notices.map { ["key": .string($0.rawValue), "text": say($0)] }),
            "support_contact": .optional(s.state.isOpen ? nil : contact),
            // The customer's reply reached the case (the time only: what it said is the agents'); only mail from their
            // contact address is theirs.
            "reply_received_at": Timestamp.json(thread.replyReceivedAt(contact: record.customerContactEmail)),
            // Mail an agent attached from someone else: who (masked) and when, never as the customer's reply.
            "messages_added": .array(
                thread.addedByTeam(contact: record.customerContactEmail).map {
                    ["from": .string(EmailAddress.masked($0.from ?? "")), "received_at": Timestamp.json($0.at)]
                }),
            "notes": .array(
                notes.map { note in
                    var members: [String: JSONValue] = ["body": .string(note.body), "created_at": Timestamp.json(note.at)]
                    if let from = note.fromCase { members["from_case"] = .string(from) }
                    return .object(members)
                }),
        ]
        return (response, chosen)
    }

    /// Evidence: `POST /api/v1/status/evidence`, a customer's upload with `case_number` and `access_code` as multipart
    /// fields: a document (`type` and `file` as for agents) or the ransom conversation (`type` `transcript`: a screenshot,
    /// PDF, UTF-8 text or saved e-mail); a wrong code counts as a status failure → 201.
    @Sendable func uploadEvidence(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = try request.multipart()
        guard let caseNumber = form.field("case_number"), let accessCode = form.field("access_code") else {
            throw Problem.unprocessable(errors: [FieldError(field: "case_number", message: "Send case_number and access_code as form fields.")])
        }
        let body = StatusBody(caseNumber: caseNumber, accessCode: accessCode, language: try Self.requestedLanguage(form.field("language")))
        var (record, _) = try customerCase(body, request)
        // A merged number's customer files into the case it went into, where its evidence now counts.
        if record.snapshot.state == .merged, let into = record.mergedInto,
            let target = try context.pool.withConnection({ try CaseStore.find(number: into, on: $0) })
        {
            record = target
        }
        // A finished case is in nobody's queue: a document filed there would wait for no one, so say whom to contact.
        guard record.snapshot.state.isOpen else {
            let language = CustomerLanguage.negotiate(
                requested: body.language, caseLanguage: record.language, acceptLanguage: request.header("accept-language"))
            throw Problem(
                ErrorCode.caseNotOpen, detail: CustomerText.problemCaseNotOpen.text(language, contact: context.configuration.supportContact))
        }
        let (type, content, declared) = try EvidenceInput.uploadFromForm(form)
        let number = try CaseHTTP.parseCaseNumber(record.number)
        let now = context.now
        return try context.transaction(for: request) { connection in
            let evidence = try CaseOperations(keys: context.keys, documentLimit: context.configuration.caseDocuments).fileDocument(
                upload: type, content: content, declaredType: declared, number: number,
                by: Principal.customer(number).actor, at: now, on: connection)
            let response: JSONValue = [
                "type": .string(evidence.kind.rawValue), "status": .string(evidence.status.rawValue),
                "filed_at": Timestamp.json(evidence.filedAt), "size": .int(Int64(content.count)),
                "sha256": .optional(evidence.sha256.map { Hex.encode($0) }), "media_type": .optional(evidence.mediaType),
            ]
            return CaseHTTP.json(response, status: 201, headers: [("Cache-Control", "no-store")])
        }
    }

    /// `POST /api/v1/status/stop` `{"token"}` (no sign-in): the "this wasn't me" link of an unlock notice. Every
    /// scheduled step of the token's case is cancelled, the case kept frozen and handed back to tier 3, and the answer
    /// says so in the case's language; the same token again answers alike and changes nothing. An unknown token is
    /// 404 and counts as a failure against the address (the status look-up's limit), so tokens cannot be guessed.
    @Sendable func stop(_ request: HTTPRequest) throws -> HTTPResponse {
        let members = try CaseHTTP.jsonObject(request)
        let token = try CaseHTTP.requiredString(members, "token").trimmingCharacters(in: .whitespacesAndNewlines)
        let now = context.now
        let address = request.clientAddress
        let refusalLanguage = CustomerLanguage.negotiate(requested: nil, caseLanguage: nil, acceptLanguage: request.header("accept-language"))
        let contact = context.configuration.supportContact
        if let until = try context.pool.withConnection({
            try ThrottleStore.lockedUntil(keys: [ThrottleStore.addressKey(address)], now: now, on: $0)
        }) {
            throw Self.locked(until: until, now: now, language: refusalLanguage)
        }
        let stopped: CaseOperations.Stopped
        do {
            // Tokens are 43 base64url characters: anything much longer is not one of ours, and is not hashed.
            guard token.count <= 128 else { throw OperationError.stopLinkUnknown }
            stopped = try context.pool.withTransaction { try CaseOperations(keys: context.keys).stopUnlocks(token: token, at: now, on: $0) }
        } catch OperationError.stopLinkUnknown {
            try context.pool.withTransaction { connection in
                try ThrottleStore.recordFailure(caseNumber: nil, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(code: ErrorCode.stopLinkUnknown, detail: CustomerText.problemStopUnknown.text(refusalLanguage, contact: contact))
        }
        let record = stopped.record
        let language = CustomerLanguage.negotiate(requested: nil, caseLanguage: record.language, acceptLanguage: request.header("accept-language"))
        let message: CustomerText = !stopped.firstUse ? .stopAgain : stopped.alreadyDone.isEmpty ? .stopDone : .stopTooLate
        let response: JSONValue = [
            "case_number": .string(record.number),
            "language": .string(language.rawValue),
            "stopped": .bool(true),
            "first_use": .bool(stopped.firstUse),
            "cancelled": .array(stopped.cancelled.map { .string($0.rawValue) }),
            "cancelled_text": .array(stopped.cancelled.map { .string($0.customerText.text(language, contact: contact)) }),
            "already_done": .array(stopped.alreadyDone.map { .string($0.rawValue) }),
            "message_key": .string(message.rawValue),
            "message": .string(message.text(language, contact: contact)),
            "support_contact": .string(contact),
        ]
        return Self.answer(response, language)
    }

    /// The case behind a case number and access code, under the throttles: 404 (the same for an unknown case and a wrong
    /// code, each recorded as a failure), 404 `invalid_case_number`, 429 while locked.
    private func customerCase(_ body: StatusBody, _ request: HTTPRequest) throws -> (CaseRecord, CustomerThread) {
        guard let keys = context.keys else { throw Problem.internal }
        let now = context.clock.now()
        let address = request.clientAddress
        let addressKey = ThrottleStore.addressKey(address)

        guard let number = try? CaseNumber(parsing: body.caseNumber) else {
            try context.pool.withTransaction { connection in
                if let until = try ThrottleStore.lockedUntil(keys: [addressKey], now: now, on: connection) {
                    throw Self.locked(until: until, now: now, language: Self.refusalLanguage(body, request))
                }
                try ThrottleStore.recordFailure(caseNumber: nil, address: address, policy: policy, now: now, on: connection)
            }
            throw Problem.notFound(
                code: ErrorCode.invalidCaseNumber,
                detail: CustomerText.problemInvalidCaseNumber.text(Self.refusalLanguage(body, request), contact: ""))
        }

        let (record, lockedUntil, thread, replaced) = try context.pool.withConnection { connection in
            try CaseStore.findForStatus(
                number: number.digits, throttleKeys: [ThrottleStore.caseKey(number.digits), addressKey], now: now, on: connection)
        }
        if let lockedUntil { throw Self.locked(until: lockedUntil, now: now, language: Self.refusalLanguage(body, request)) }

        // The same work whether or not the case exists and whether or not the code is well-formed.
        let symbols = AccessCode.normalize(body.accessCode) ?? "-"
        let key = record.flatMap { keys.key(id: $0.accessCodeKeyID, purpose: .accessCode) } ?? keys.activeKey(for: .accessCode).key
        let computed = AccessCodeHash.compute(symbols: symbols, key: key)
        let matches = ConstantTime.equals(computed, record?.accessCodeHash ?? Self.dummyHash) && record != nil && symbols != "-"
        // The code a re-issue replaced, compared the same way (and computed whether or not there is one).
        let previousKey = replaced.flatMap { keys.key(id: $0.keyID, purpose: .accessCode) } ?? keys.activeKey(for: .accessCode).key
        let previousComputed = AccessCodeHash.compute(symbols: symbols, key: previousKey)
        let matchesReplaced = ConstantTime.equals(previousComputed, replaced?.hash ?? Self.dummyHash) && replaced != nil && symbols != "-"
        guard let record, matches else {
            try context.pool.withTransaction { connection in
                try ThrottleStore.recordFailure(caseNumber: number.digits, address: address, policy: policy, now: now, on: connection)
            }
            let language = Self.refusalLanguage(body, request)
            if matchesReplaced, let record, let replaced, record.erasedAt == nil,
                AccessCode.replacedHintApplies(replacedAt: replaced.replacedAt, now: now)
            {
                throw Self.codeReplaced(at: replaced.replacedAt, to: record.customerContactEmail, language: language)
            }
            throw Problem.notFound(detail: CustomerText.problemNotFound.text(language, contact: ""))
        }
        // Only after the right code: an erased case's number alone says nothing.
        if record.erasedAt != nil {
            throw Problem(
                ErrorCode.caseErased,
                detail: CustomerText.problemErased.text(Self.refusalLanguage(body, request), contact: context.configuration.supportContact))
        }
        return (record, thread)
    }

    /// The look-up with a code that a re-issue replaced within `AccessCode.replacedHintWindow`: still the 404 of a wrong
    /// code (the status alone says nothing), its detail and `access_code_replaced` saying only when a new code was mailed
    /// and to which masked address, nothing else of the case.
    static func codeReplaced(at replacedAt: Date, to contact: String, language: CustomerLanguage) -> Problem {
        let mailedAt = Timestamp.format(replacedAt)
        let masked = EmailAddress.masked(contact)
        let detail = CustomerText.problemCodeReplaced.text(language, contact: "")
            .replacingOccurrences(of: "{date}", with: String(mailedAt.prefix(10))).replacingOccurrences(of: "{address}", with: masked)
        return Problem(
            HTTPProblemCode.notFound, detail: detail,
            extraMembers: ["access_code_replaced": ["mailed_at": mailedAt, "to": masked]])
    }

    static func locked(until: Date, now: Date, language: CustomerLanguage = .english) -> Problem {
        Problem.tooManyRequests(
            retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: ErrorCode.lockedOut,
            detail: CustomerText.problemLocked.text(language, contact: ""))
    }
}
