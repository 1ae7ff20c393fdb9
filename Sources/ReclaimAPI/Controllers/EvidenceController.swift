import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore

/// `/api/v1/cases/{n}/evidence`, `/api/v1/cases/{n}/verification`, `/api/v1/evidence/{id}/...`: filing typed evidence
/// and documents, the lists, the two-of-three verification, decrypted content for tier 3 and reviews.
/// Filing is deferred: security answers are checked against argon2id hashes (~15 ms each) on a small queue
/// of their own; every other kind is answered at once on the HTTP worker.
final class EvidenceController: Sendable {
    let context: ServiceContext
    let filing: EvidenceFiling
    let hashQueue: PasswordHashQueue
    let hasher = PasswordHash()
    let workflow: Workflow

    init(context: ServiceContext, workflow: Workflow = Workflow(), hashQueue: PasswordHashQueue = PasswordHashQueue(threads: 2, capacity: 32)) {
        self.context = context
        self.filing = EvidenceFiling(context: context)
        self.hashQueue = hashQueue
        self.workflow = workflow
    }

    /// At most this many answers in one filing.
    static let maximumAnswers = 20

    // MARK: File

    /// `POST /api/v1/cases/{n}/evidence`: JSON typed evidence, a multipart document or raw document bytes with `?type=` → 201.
    @Sendable func file(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        do {
            let principal = try context.authorize(.fileEvidence, request)
            let number = try CaseHTTP.caseNumber(request)
            let contentType = request.header("content-type") ?? ""
            let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            if media == "application/json" {
                let members = try CaseHTTP.jsonObject(request)
                if let typed = try EvidenceFiling.parseTyped(members, now: context.clock.now()) {
                    if case .answers(let answers) = typed {
                        fileAnswers(answers, number: number, principal: principal, completion)
                        return
                    }
                    completion(.success(try filing.fileTyped(typed, number: number, actor: principal.actor)))
                    return
                }
                throw Problem.internal
            }
            let document: (DocumentType, [UInt8], String?)
            if media == "multipart/form-data" {
                let form = try request.multipart()
                document = try EvidenceFiling.documentFromForm(form)
            } else {
                guard let typeText = request.query("type"), let type = DocumentType(rawValue: typeText) else {
                    throw Problem.unprocessable(errors: [FieldError(field: "type", message: "Name the document with ?type=: "
                                                                    + DocumentType.allCases.map(\.rawValue).joined(separator: ", ") + ".")])
                }
                document = (type, request.body, media.isEmpty ? nil : media)
            }
            let record = try filing.fileDocument(type: document.0, bytes: document.1, declaredType: document.2, number: number, actor: principal.actor)
            completion(.success(CaseHTTP.json(record.json, status: 201)))
        } catch {
            completion(.failure(error))
        }
    }

    /// Security answers: checked on the hash queue; each mismatch counts against the account on file.
    private func fileAnswers(_ answers: [(questionID: String, normalized: String)], number: CaseNumber, principal: Principal,
                             _ completion: @escaping HTTPResponder.Completion) {
        let accepted = hashQueue.submit { [self] in
            completion(Result { try filing.fileAnswers(answers, number: number, actor: principal.actor, hasher: hasher) })
        }
        if !accepted {
            completion(.failure(Problem.unavailable(retryAfter: 2, code: "busy", detail: "Too many answers being checked at once; try again in a moment.")))
        }
    }

    // MARK: Read

    /// `GET /api/v1/cases/{n}/evidence`: summaries only, oldest first, and what is still missing for the case's path.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.listEvidence, request)
        let number = try CaseHTTP.caseNumber(request)
        let (record, items, actors) = try context.pool.withConnection { connection -> (CaseRecord, [EvidenceRecord], JSONValue) in
            guard let record = try CaseStore.find(number: number.digits, on: connection) else { throw CaseHTTP.caseNotFound }
            let items = try EvidenceStore.list(caseID: record.id, on: connection)
            return (record, items, try ActorNames.names(of: items.map(\.filedBy), on: connection))
        }
        var body = CaseHTTP.list(items.map(\.json), nextCursor: nil, actors: actors)
        if case .object(var members) = body {
            members["missing"] = .array(EvidenceFiling.missing(record, items).map(JSONValue.string))
            body = .object(members)
        }
        return CaseHTTP.json(body)
    }

    /// `GET /api/v1/cases/{n}/verification`: `{"verified", "factors"}` from the evidence filed on the case.
    @Sendable func verification(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readVerification, request)
        let number = try CaseHTTP.caseNumber(request)
        let outcome = try context.pool.withConnection { connection -> VerificationOutcome in
            guard let id = try CaseStore.id(number: number.digits, on: connection) else {
                throw CaseHTTP.caseNotFound
            }
            return VerificationPolicy.evaluate(try EvidenceStore.factorEvidence(caseID: id, on: connection))
        }
        return CaseHTTP.json(Self.json(outcome))
    }

    /// `{"verified", "factors": {"security_answer", "card", "device"}}`.
    static func json(_ outcome: VerificationOutcome) -> JSONValue {
        ["verified": .bool(outcome.verified),
         "factors": .object(Dictionary(uniqueKeysWithValues: Factor.allCases.map { ($0.rawValue, JSONValue.string(outcome[$0].rawValue)) }))]
    }

    /// `GET /api/v1/evidence/{id}/content` (tier3+): the decrypted bytes, as an attachment; the read is recorded on the timeline.
    @Sendable func content(_ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.evidenceID(request)
        // `?disposition=inline` lets the dashboard show an image or PDF in the page; anything else stays a download.
        let inline: Bool
        switch request.query("disposition") {
        case nil, "attachment": inline = false
        case "inline": inline = true
        default: throw Problem.unprocessable(errors: [FieldError(field: "disposition", message: "Use inline or attachment.")])
        }
        let principal = try authorizeOnEvidence(.readEvidenceContent, request, id: id, attempted: "evidence_content")
        guard let keys = context.keys else { throw Problem.internal }
        let now = Timestamp.truncated(context.clock.now())
        let (record, sealed) = try context.pool.withTransaction { connection -> (EvidenceRecord, (sealed: [UInt8], keyID: String)) in
            guard let (record, _) = try EvidenceStore.find(id: id, on: connection),
                  let sealed = try EvidenceStore.sealedContent(id: id, on: connection) else { throw Self.evidenceNotFound }
            try CaseStore.lock(id: record.caseID, on: connection)
            try CaseEventStore.append(caseID: record.caseID, at: now, actor: principal.actor, type: "evidence_content_read",
                                      data: ["evidence_id": .string(id.uuidString.lowercased()), "type": .string(record.kind.rawValue)],
                                      on: connection)
            return (record, sealed)
        }
        guard let key = keys.key(id: sealed.keyID, purpose: .documents) else { throw Problem.internal }
        let bytes = try SecretBox.open(sealed.sealed, key: key, associatedData: EvidenceFiling.associatedData(id))
        let mediaType = record.mediaType ?? "application/octet-stream"
        let ext = switch mediaType {
        case MediaType.pdf.rawValue: "pdf"
        case MediaType.jpeg.rawValue: "jpg"
        case MediaType.png.rawValue: "png"
        case MediaType.heic.rawValue: "heic"
        default: "txt"
        }
        let showable = [MediaType.pdf.rawValue, MediaType.jpeg.rawValue, MediaType.png.rawValue].contains(mediaType)
        let disposition = inline && showable ? "inline" : "attachment"
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", mediaType),
            ("Content-Disposition", "\(disposition); filename=\"evidence-\(id.uuidString.lowercased()).\(ext)\""),
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "default-src 'none'; sandbox"),
            ("Cache-Control", "no-store"),
        ], body: bytes)
    }

    // MARK: Review

    /// `POST /api/v1/evidence/{id}/review` `{"decision", "reason"}`: tier2+ for typed evidence, tier3+ for documents and transcripts.
    @Sendable func review(_ request: HTTPRequest) throws -> HTTPResponse {
        let id = try Self.evidenceID(request)
        let principal = try authorizeOnEvidence(.reviewEvidence, request, id: id, attempted: "evidence_review")
        let agent = try context.requireAgent(request)
        let members = try CaseHTTP.jsonObject(request)
        var errors: [FieldError] = []
        var decision: EvidenceStatus?
        if case .string(let text)? = members["decision"], let parsed = EvidenceStatus(rawValue: text), parsed != .pending {
            decision = parsed
        } else {
            errors.append(FieldError(field: "decision", message: "accepted or rejected"))
        }
        var reason = ""
        if case .string(let text)? = members["reason"] { reason = text.trimmingCharacters(in: .whitespacesAndNewlines) }
        if reason.isEmpty || reason.count > 2000 { errors.append(FieldError(field: "reason", message: "A reason has 1 to 2000 characters.")) }
        guard errors.isEmpty, let decision else { throw Problem.unprocessable(errors: errors) }
        let now = Timestamp.truncated(context.clock.now())
        let record = try context.pool.withTransaction { connection -> EvidenceRecord in
            guard let (record, _) = try EvidenceStore.find(id: id, on: connection) else { throw Self.evidenceNotFound }
            guard agent.tier.isAtLeast(record.kind.reviewMinimumTier) else {
                context.logDenied(principal, reason: "evidence.review: insufficient_tier", request)
                throw Problem(status: 403, code: "insufficient_tier", detail: "Reviewing this evidence needs \(record.kind.reviewMinimumTier.rawValue) or above.",
                              extraMembers: ["required_tier": record.kind.reviewMinimumTier.rawValue])
            }
            try CaseStore.lock(id: record.caseID, on: connection)
            try EvidenceStore.insertReview(EvidenceReview(evidenceID: id, decision: decision, reason: reason, reviewedBy: principal.actor, reviewedAt: now),
                                           on: connection)
            try CaseEventStore.append(caseID: record.caseID, at: now, actor: principal.actor, type: "evidence_reviewed",
                                      data: ["evidence_id": .string(id.uuidString.lowercased()), "type": .string(record.kind.rawValue),
                                             "decision": .string(decision.rawValue), "reason": .string(reason)], on: connection)
            guard let (updated, _) = try EvidenceStore.find(id: id, on: connection) else { throw Self.evidenceNotFound }
            return updated
        }
        return CaseHTTP.json(record.json)
    }

    /// The principal if it holds `permission`; otherwise the attempt is recorded as a `denied` event on the evidence's
    /// case (when it exists), as refused case actions are, and answered 403.
    func authorizeOnEvidence(_ permission: Permission, _ request: HTTPRequest, id: UUID, attempted: String) throws -> Principal {
        let principal = try context.requirePrincipal(request)
        if PermissionTable.allows(permission, principal) { return principal }
        let now = Timestamp.truncated(context.clock.now())
        try context.pool.withTransaction { connection in
            guard let caseID = try connection.query("SELECT case_id FROM evidence WHERE id = \(id)").first?.decode(0, as: UUID.self) else { return }
            try CaseStore.lock(id: caseID, on: connection)
            try CaseEventStore.append(caseID: caseID, at: now, actor: principal.actor, type: "denied",
                                      data: ["attempted": .string(attempted), "code": "forbidden", "evidence_id": .string(id.uuidString.lowercased())],
                                      on: connection)
        }
        return try context.authorize(permission, request)
    }

    static var evidenceNotFound: Problem { Problem.notFound(detail: "No evidence has this id.") }

    static func evidenceID(_ request: HTTPRequest) throws -> UUID {
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw evidenceNotFound }
        return id
    }
}

/// Typed evidence after validation (answers normalised; the card only until fingerprinted).
enum TypedEvidence {
    case answers([(questionID: String, normalized: String)])
    case card(CardNumber, CardExpiry)
    case device(SerialNumber?, IMEI?)
    case transcript(String)
}

/// Filing shared by agents, API clients and customers: validate, reduce secrets, seal, insert with an event.
struct EvidenceFiling: Sendable {
    let context: ServiceContext

    /// The associated data of sealed content: the evidence id, so sealed bytes cannot be moved to another row.
    static func associatedData(_ id: UUID) -> [UInt8] { Array(id.uuidString.lowercased().utf8) }

    /// Card security codes are never accepted (nor echoed, nor logged): their presence alone refuses the request.
    static let forbiddenCardFields: Set<String> = ["cvv", "cvc", "cvv2", "cvc2", "cid", "csc"]

    /// Validates a JSON body, reporting every bad field (422); never echoes a value.
    static func parseTyped(_ members: [String: JSONValue], now: Date) throws -> TypedEvidence? {
        let present = members.keys.filter { forbiddenCardFields.contains($0.lowercased()) }.sorted()
        if !present.isEmpty {
            throw Problem.unprocessable(errors: present.map { FieldError(field: $0, message: "Never send the card's security code: it is neither needed nor accepted.") })
        }
        guard case .string(let typeText)? = members["type"], let kind = EvidenceKind(rawValue: typeText), !kind.isDocument else {
            throw Problem.unprocessable(errors: [FieldError(field: "type", message: "security_answers, card, device or transcript (documents are uploaded as files).")])
        }
        var issues = IssueCollector()
        func string(_ name: String) -> String? { if case .string(let value)? = members[name] { value } else { nil } }
        func int(_ name: String) -> Int? {
            switch members[name] {
            case .int(let value)?: Int(value)
            case .string(let text)?: Int(text)
            default: nil
            }
        }
        switch kind {
        case .securityAnswers:
            guard case .array(let items)? = members["answers"], !items.isEmpty else {
                issues.add(field: "answers", message: "Give at least one answer.")
                try Self.check(issues)
                return nil
            }
            if items.count > EvidenceController.maximumAnswers { issues.add(field: "answers", message: "At most \(EvidenceController.maximumAnswers) answers.") }
            var answers: [(String, String)] = []
            var seen = Set<String>()
            for (index, item) in items.enumerated() {
                let field = "answers[\(index)]"
                guard case .object(let answer) = item, case .string(let questionID)? = answer["question_id"], case .string(let text)? = answer["answer"] else {
                    issues.add(field: field, message: "Each answer is {\"question_id\", \"answer\"}.")
                    continue
                }
                let id = questionID.trimmingCharacters(in: .whitespaces)
                if id.isEmpty || id.count > 32 { issues.add(field: field + ".question_id", message: "A question id has 1 to 32 characters.") }
                if !seen.insert(id).inserted { issues.add(field: field + ".question_id", message: "One answer per question.") }
                if let normalized = issues.take(SecurityAnswer.validate(text, field: field + ".answer")) { answers.append((id, normalized)) }
            }
            try Self.check(issues)
            return .answers(answers)
        case .card:
            let number = string("number").flatMap { issues.take(CardNumber.validate($0, field: "number")) }
            if string("number") == nil { issues.add(field: "number", message: "The card number is required, as a string.") }
            var expiry: CardExpiry?
            if let month = int("exp_month"), let year = int("exp_year") {
                expiry = issues.take(CardExpiry.validate(month: month, year: year, now: now))
            } else {
                if int("exp_month") == nil { issues.add(field: "exp_month", message: "The expiry month is required.") }
                if int("exp_year") == nil { issues.add(field: "exp_year", message: "The expiry year is required.") }
            }
            try Self.check(issues)
            return .card(number!, expiry!)
        case .device:
            let serialText = string("serial")?.trimmingCharacters(in: .whitespaces)
            let imeiText = string("imei")?.trimmingCharacters(in: .whitespaces)
            if (serialText ?? "").isEmpty && (imeiText ?? "").isEmpty {
                issues.add(field: "serial", message: "Give the device's serial number or its IMEI.")
            }
            let serial = serialText.flatMap { $0.isEmpty ? nil : issues.take(SerialNumber.validate($0, field: "serial")) }
            let imei = imeiText.flatMap { $0.isEmpty ? nil : issues.take(IMEI.validate($0, field: "imei")) }
            try Self.check(issues)
            return .device(serial, imei)
        case .transcript:
            guard let text = string("text") else {
                issues.add(field: "text", message: "The transcript's text is required.")
                try Self.check(issues)
                return nil
            }
            let valid = issues.take(Transcript.validate(text))
            try Self.check(issues)
            return .transcript(valid!)
        default:
            return nil
        }
    }

    /// Throws the collected issues as 422 `validation_failed`.
    static func check(_ issues: IssueCollector) throws {
        do { try issues.check() } catch { throw CaseHTTP.problem(for: error) }
    }

    /// Card, device or transcript: compared or sealed, inserted with its event → 201.
    func fileTyped(_ typed: TypedEvidence, number: CaseNumber, actor: String) throws -> HTTPResponse {
        guard let keys = context.keys else { throw Problem.internal }
        let id = UUID()
        let now = context.clock.now()
        let record = try context.pool.withTransaction { connection -> EvidenceRecord in
            let (caseID, accountEmail) = try lockCase(number, on: connection)
            let new: NewEvidence
            switch typed {
            case .card(let card, let expiry):
                let active = keys.activeKey(for: .cardFingerprint)
                let matched = try EvidenceOnFile.cardMatches(card, accountEmail: accountEmail, keys: keys, on: connection)
                let summary = card.summary
                new = NewEvidence(id: id, caseID: caseID, kind: .card, matched: matched, summary: summary.masked,
                                  details: ["first_six": .string(summary.firstSix), "last_four": .string(summary.lastFour), "length": .int(Int64(summary.length)),
                                            "exp_month": .int(Int64(expiry.month)), "exp_year": .int(Int64(expiry.year))],
                                  cardFingerprint: (CardFingerprint.compute(card, key: active.key), active.id), filedBy: actor, filedAt: now)
            case .device(let serial, let imei):
                let matched = try EvidenceOnFile.deviceMatches(serial: serial, imei: imei, accountEmail: accountEmail, on: connection)
                let parts = [serial.map { "serial \($0.value)" }, imei.map { ($0.isSoftwareVersion ? "IMEISV " : "IMEI ") + $0.digits }].compactMap { $0 }
                new = NewEvidence(id: id, caseID: caseID, kind: .device, matched: matched, summary: "Device " + parts.joined(separator: ", "),
                                  details: ["serial": .optional(serial?.value), "imei": .optional(imei?.digits)], filedBy: actor, filedAt: now)
            case .transcript(let text):
                let bytes = Array(text.utf8)
                new = NewEvidence(id: id, caseID: caseID, kind: .transcript, matched: nil, summary: "Transcript, \(text.count) characters", details: [:],
                                  sealedContent: Self.seal(bytes, id: id, keys: keys), sha256: SHA256.hash(bytes), size: bytes.count,
                                  mediaType: "text/plain; charset=utf-8", filedBy: actor, filedAt: now)
            case .answers:
                throw Problem.internal
            }
            return try insert(new, on: connection)
        }
        return CaseHTTP.json(record.json, status: 201)
    }

    /// Answers: refused (429) while the account's answers are locked; each mismatch counts one failure; none is stored.
    /// Runs on the hash queue, outside any transaction while hashing.
    func fileAnswers(_ answers: [(questionID: String, normalized: String)], number: CaseNumber, actor: String, hasher: PasswordHash) throws -> HTTPResponse {
        let now = context.clock.now()
        let (lockedUntil, onFile) = try context.pool.withConnection { connection in
            guard let email = try connection.query("SELECT account_email FROM cases WHERE case_number = \(number.digits)").first?
                .decode(0, as: String.self) else { throw CaseHTTP.caseNotFound }
            return (try ThrottleStore.lockedUntil(keys: [ThrottleStore.accountKey(email)], now: now, on: connection),
                    try AccountStore.securityAnswers(email: email, on: connection))
        }
        if let lockedUntil { throw Self.answersLocked(until: lockedUntil, now: now) }
        var matchedIDs: [String] = []
        var failures = 0
        for answer in answers {
            // Unknown questions cost the same as known ones, and count as a wrong answer.
            let hash = onFile?.answers[answer.questionID]
            if hasher.verify(answer.normalized, against: hash ?? PasswordHash.dummyHash), hash != nil {
                matchedIDs.append(answer.questionID)
            } else {
                failures += 1
            }
        }
        let id = UUID()
        let record = try context.pool.withTransaction { connection -> EvidenceRecord in
            let (caseID, accountEmail) = try lockCase(number, on: connection)
            try ThrottleStore.recordAnswerFailures(email: accountEmail, count: failures, now: now, on: connection)
            let new = NewEvidence(id: id, caseID: caseID, kind: .securityAnswers, matched: !matchedIDs.isEmpty,
                                  summary: answers.count == 1 ? "1 answer" : "\(answers.count) answers",
                                  details: ["question_ids": .array(answers.map { .string($0.questionID) }),
                                            "matched_question_ids": .array(matchedIDs.map(JSONValue.string))],
                                  filedBy: actor, filedAt: now)
            return try insert(new, on: connection)
        }
        return CaseHTTP.json(record.json, status: 201)
    }

    /// 429 while the account's answers are locked (answers filed here and given with `send_reset` share the budget).
    static func answersLocked(until: Date, now: Date) -> Problem {
        Problem.tooManyRequests(retryAfter: Int(until.timeIntervalSince(now).rounded(.up)), code: "locked_out",
                                detail: "Too many wrong answers for this account. Try again later.")
    }

    /// The document part of a form: fields `type` and `file`.
    static func documentFromForm(_ form: MultipartForm) throws -> (DocumentType, [UInt8], String?) {
        var errors: [FieldError] = []
        let type = form.field("type").flatMap(DocumentType.init(rawValue:))
        if type == nil {
            errors.append(FieldError(field: "type", message: DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        let file = form.file("file")
        if file == nil { errors.append(FieldError(field: "file", message: "Attach the document as the part named file.")) }
        guard errors.isEmpty, let type, let file else { throw Problem.unprocessable(errors: errors) }
        let declared = file.declaredContentType.flatMap { $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        return (type, file.bytes, declared)
    }

    /// A document: sniffed (415 when not PDF/JPEG/PNG/HEIC or contradicting the declared type), sealed, inserted with its event.
    func fileDocument(type: DocumentType, bytes: [UInt8], declaredType: String?, number: CaseNumber, actor: String) throws -> EvidenceRecord {
        guard let keys = context.keys else { throw Problem.internal }
        if bytes.isEmpty { throw Problem.unprocessable(errors: [FieldError(field: "file", message: "The file is empty.")]) }
        if bytes.count > DocumentUpload.maximumBytes { throw Problem.payloadTooLarge(limit: DocumentUpload.maximumBytes) }
        guard let sniffed = sniffMediaType(bytes) else {
            throw Problem(status: 415, code: "unsupported_media_type", detail: "Only PDF, JPEG, PNG and HEIC files are accepted.")
        }
        if let declaredType, !Self.declared(declaredType, agreesWith: sniffed) {
            throw Problem(status: 415, code: "unsupported_media_type", detail: "The file's content is not the type it was declared as.")
        }
        let id = UUID()
        let now = context.clock.now()
        // Sealing and hashing happen before the transaction: the case's row lock is held only for the insert.
        let sealedContent = Self.seal(bytes, id: id, keys: keys)
        let digest = SHA256.hash(bytes)
        let summary = "\(type.rawValue.replacingOccurrences(of: "_", with: " ").capitalizedFirst), \(sniffed.label), \(Self.size(bytes.count))"
        return try context.pool.withTransaction { connection in
            let (caseID, _) = try lockCase(number, on: connection)
            return try insert(NewEvidence(id: id, caseID: caseID, kind: type.evidenceKind, matched: nil, summary: summary, details: [:],
                                          sealedContent: sealedContent, sha256: digest, size: bytes.count, mediaType: sniffed.rawValue,
                                          filedBy: actor, filedAt: now), on: connection)
        }
    }

    /// Whether a declared media type agrees with the sniffed one (`application/octet-stream` declares nothing).
    static func declared(_ declared: String, agreesWith sniffed: MediaType) -> Bool {
        switch declared {
        case "", "application/octet-stream": true
        case "image/jpg", "image/pjpeg": sniffed == .jpeg
        case "image/heif": sniffed == .heic
        default: declared == sniffed.rawValue
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MiB", Double(bytes) / 1048576) : bytes >= 1024 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
    }

    /// The bytes sealed under the active `documents` key, the evidence id as associated data.
    static func seal(_ bytes: [UInt8], id: UUID, keys: KeyFile) -> (sealed: [UInt8], keyID: String) {
        let key = keys.activeKey(for: .documents)
        return (SecretBox.seal(bytes, key: key.key, associatedData: associatedData(id)), key.id)
    }

    /// The case's id and account e-mail, its row locked so the event lands in order; 404 when unknown.
    func lockCase(_ number: CaseNumber, on connection: PostgresConnection) throws -> (UUID, String) {
        guard let row = try connection.query("SELECT id, account_email FROM cases WHERE case_number = \(number.digits) FOR UPDATE").first else {
            throw CaseHTTP.caseNotFound
        }
        return (try row.decode(0, as: UUID.self), try row.decode(1, as: String.self))
    }

    /// Inserts and appends `evidence_filed` (type and id only: never a value).
    func insert(_ new: NewEvidence, on connection: PostgresConnection) throws -> EvidenceRecord {
        try EvidenceStore.insert(new, on: connection)
        try CaseEventStore.append(caseID: new.caseID, at: new.filedAt, actor: new.filedBy, type: "evidence_filed",
                                  data: ["evidence_id": .string(new.id.uuidString.lowercased()), "type": .string(new.kind.rawValue)], on: connection)
        return new.record
    }

    /// What is still missing for the case's path, given the evidence that still counts (not rejected).
    static func missing(_ record: CaseRecord, _ items: [EvidenceRecord]) -> [String] {
        let have = Set(items.filter { $0.status != .rejected }.map(\.kind))
        let s = record.snapshot
        return missingEvidence(state: s.state, path: s.path, kind: s.kind, facts: s.facts, have: have)
    }
}

extension MediaType {
    /// A short name for summaries.
    var label: String {
        switch self {
        case .pdf: "PDF"
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        }
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
