import Crypto
import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore

/// `/api/v1/cases/{n}/evidence`, `/api/v1/cases/{n}/verification`, `/api/v1/evidence/{id}/...`: filing typed evidence
/// and documents, the lists, the two-of-three verification, decrypted content for tier 3 and reviews.
/// Filing is deferred: security answers are checked against argon2id hashes (~15 ms each) on a small queue
/// of their own; every other kind is answered at once on the HTTP worker.
final class EvidenceController: Sendable {
    let context: ServiceContext
    let operations: CaseOperations
    let hashQueue: WorkQueue
    let hasher = PasswordHash()
    let workflow: Workflow

    init(context: ServiceContext, workflow: Workflow = Workflow(), hashQueue: WorkQueue = WorkQueue(threads: 2, capacity: 32)) {
        self.context = context
        self.operations = CaseOperations(keys: context.keys, workflow: workflow, documentLimit: context.configuration.caseDocuments)
        self.hashQueue = hashQueue
        self.workflow = workflow
    }

    // MARK: File

    /// `POST /api/v1/cases/{n}/evidence`: JSON typed evidence, a multipart document or raw document bytes with `?type=` → 201.
    @Sendable func file(_ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion) {
        do {
            let principal = try context.authorize(.fileEvidence, request)
            let number = try CaseHTTP.caseNumber(request)
            if case .apiClient = principal { try checkClientScope(number, principal: principal, request) }
            let contentType = request.header("content-type") ?? ""
            let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            let now = context.now
            if media == "application/json" {
                guard let body = try EvidenceInput.parse(try CaseHTTP.jsonObject(request), now: context.clock.now()) else { throw Problem.internal }
                switch body {
                case .answers(let answers):
                    fileAnswers(answers, number: number, principal: principal, request, completion)
                case .typed(let typed):
                    completion(
                        .success(
                            try context.transaction(for: request) { connection in
                                CaseHTTP.json(
                                    try operations.fileTyped(typed, number: number, by: principal.actor, at: now, on: connection).json, status: 201)
                            }))
                }
                return
            }
            let document: (DocumentType, BodyContent, String?)
            if media == "multipart/form-data" {
                document = try EvidenceInput.documentFromForm(try request.multipart())
            } else {
                guard let typeText = request.query("type"), let type = DocumentType(rawValue: typeText) else {
                    throw Problem.unprocessable(errors: [
                        FieldError(
                            field: "type",
                            message: "Name the document with ?type=: "
                                + DocumentType.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                    ])
                }
                document = (type, request.content, media.isEmpty ? nil : media)
            }
            completion(
                .success(
                    try context.transaction(for: request) { connection in
                        CaseHTTP.json(
                            try operations.fileDocument(
                                upload: .document(document.0), content: document.1, declaredType: document.2, number: number,
                                by: principal.actor, at: now, on: connection
                            ).json, status: 201)
                    }))
        } catch {
            completion(.failure(error))
        }
    }

    /// An API client files into a case it opened, or into another open case with that case's access code in
    /// `Reclaim-Access-Code`; otherwise 404; a finished case 409 `case_not_open`.
    private func checkClientScope(_ number: CaseNumber, principal: Principal, _ request: HTTPRequest) throws {
        let now = context.clock.now()
        let verdict = try context.pool.withTransaction { connection in
            try operations.clientFilingVerdict(
                number, client: principal.actor, accessCode: request.header("reclaim-access-code"), at: now, on: connection)
        }
        switch verdict {
        case .allowed: return
        case .notFound: throw CaseHTTP.caseNotFound
        case .notOpen: throw OperationError.caseNotOpen
        }
    }

    /// Security answers: checked on the hash queue; each mismatch counts against the account on file.
    private func fileAnswers(
        _ answers: [(questionID: String, normalized: String)], number: CaseNumber, principal: Principal,
        _ request: HTTPRequest, _ completion: @escaping HTTPResponder.Completion
    ) {
        let accepted = hashQueue.submit { [self] in
            completion(
                Result {
                    let now = context.now
                    let check = try operations.checkAnswers(answers, number: number, hasher: hasher, at: now, pool: context.pool)
                    return try context.transaction(for: request) { connection in
                        CaseHTTP.json(
                            try operations.fileAnswers(check, number: number, by: principal.actor, at: now, on: connection).json, status: 201)
                    }
                })
        }
        if !accepted {
            completion(
                .failure(
                    Problem.unavailable(retryAfter: 2, code: ErrorCode.busy, detail: "Too many answers being checked at once; try again in a moment.")
                ))
        }
    }

    // MARK: Read

    /// `GET /api/v1/cases/{n}/evidence`: summaries only, oldest first, and what is still missing for the case's path.
    @Sendable func list(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.listEvidence, request)
        let number = try CaseHTTP.caseNumber(request)
        let (record, items, actors, sources) = try context.pool.withConnection {
            connection -> (CaseRecord, [EvidenceRecord], JSONValue, [UUID: String]) in
            guard let record = try CaseStore.find(number: number.digits, on: connection) else { throw CaseHTTP.caseNotFound }
            let items = try EvidenceStore.list(caseID: record.id, on: connection)
            return (
                record, items, try ActorNames.names(of: items.map(\.filedBy), on: connection),
                try CaseStore.mergedSources(into: record.id, on: connection)
            )
        }
        // Items brought by a merged case say which one (`from_case`).
        let rendered: [JSONValue] = items.map { item in
            guard let from = sources[item.caseID], case .object(var members) = item.json else { return item.json }
            members["from_case"] = .string(from)
            return .object(members)
        }
        var body = CaseHTTP.list(rendered, nextCursor: nil, actors: actors)
        if case .object(var members) = body {
            members["missing"] = .array(EvidenceRequirements.missing(record, items).map(JSONValue.string))
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
        [
            "verified": .bool(outcome.verified),
            "factors": .object(Dictionary(uniqueKeysWithValues: Factor.allCases.map { ($0.rawValue, JSONValue.string(outcome[$0].rawValue)) })),
        ]
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
        let now = context.now
        return try context.transaction(for: request) { connection in
            let (record, bytes) = try operations.readContent(evidence: id, by: principal.actor, at: now, on: connection)
            return Self.content(record, bytes, id: id, inline: inline)
        }
    }

    /// The file name extension of stored content of `mediaType`.
    static func fileExtension(_ mediaType: String) -> String {
        switch mediaType {
        case MediaType.pdf.rawValue: "pdf"
        case MediaType.jpeg.rawValue: "jpg"
        case MediaType.png.rawValue: "png"
        case MediaType.heic.rawValue: "heic"
        case TranscriptMediaType.email.rawValue: "eml"
        default: "txt"
        }
    }

    /// The decrypted bytes as a download (or shown in the page), never sniffed by the browser.
    static func content(_ record: EvidenceRecord, _ bytes: [UInt8], id: UUID, inline: Bool) -> HTTPResponse {
        let mediaType = record.mediaType ?? "application/octet-stream"
        let ext = fileExtension(mediaType)
        let showable = [MediaType.pdf.rawValue, MediaType.jpeg.rawValue, MediaType.png.rawValue].contains(mediaType)
        let disposition = inline && showable ? "inline" : "attachment"
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", mediaType),
                ("Content-Disposition", "\(disposition); filename=\"evidence-\(id.uuidString.lowercased()).\(ext)\""),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", "default-src 'none'; sandbox"),
                ("Cache-Control", "no-store"),
            ], body: bytes)
    }

    // MARK: Review

    /// `POST /api/v1/evidence/{id}/review` `{"decision", "reason", "customer_reason"}`: tier2+ for typed evidence, tier3+ for
    /// documents and transcripts; rejecting a document needs a `customer_reason`.
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
        // What the customer reads when a document is rejected (api.md v1.2); whether the evidence needs one is the operation's.
        var customerReason: CustomerReason?
        switch members["customer_reason"] {
        case nil, .null?: break
        case .string(let word)? where CustomerReason(rawValue: word) != nil: customerReason = CustomerReason(rawValue: word)
        default: errors.append(FieldError(field: "customer_reason", message: CustomerReason.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        if customerReason != nil, decision == .accepted {
            errors.append(FieldError(field: "customer_reason", message: "Only a rejection names a customer reason."))
        }
        // What an accepted mail attachment proves (a document kind one may upload); whether one is needed is the operation's.
        var acceptedAs: EvidenceKind?
        switch members["accepted_as"] {
        case nil, .null?: break
        case .string(let word)? where DocumentType(rawValue: word) != nil: acceptedAs = DocumentType(rawValue: word)?.evidenceKind
        default: errors.append(FieldError(field: "accepted_as", message: DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        guard errors.isEmpty, let decision else { throw Problem.unprocessable(errors: errors) }
        let now = context.now
        return try context.transaction(for: request, attempting: "evidence.review") { connection in
            CaseHTTP.json(
                try operations.review(
                    evidence: id, decision: decision, reason: reason, customerReason: customerReason, acceptedAs: acceptedAs,
                    actorTier: agent.tier,
                    by: principal.actor, at: now, on: connection
                ).json)
        }
    }

    /// The principal if it holds `permission`; otherwise the attempt is recorded as a `denied` event on the evidence's
    /// case (when it exists), as refused case actions are, and answered 403.
    func authorizeOnEvidence(_ permission: Permission, _ request: HTTPRequest, id: UUID, attempted: String) throws -> Principal {
        let principal = try context.requirePrincipal(request)
        if PermissionTable.allows(permission, principal) { return principal }
        if let caseID = try context.pool.withConnection({ try operations.caseID(ofEvidence: id, on: $0) }) {
            try context.recordDenial(
                caseID: caseID, attempted: attempted, code: HTTPProblemCode.forbidden.code, evidenceID: id, by: principal, request)
        }
        return try context.authorize(permission, request)
    }

    static var evidenceNotFound: Problem { OperationError.evidenceNotFound.problem }

    static func evidenceID(_ request: HTTPRequest) throws -> UUID {
        guard let text = request.parameter("id"), let id = UUID(uuidString: text) else { throw evidenceNotFound }
        return id
    }
}

/// A typed evidence body as parsed at the edge: answers (checked on the hash queue) or evidence filed at once.
enum EvidenceBody {
    case answers([(questionID: String, normalized: String)])
    case typed(TypedEvidence)
}

/// Parsing of evidence requests (JSON bodies and document forms), shared by agents, API clients and customers.
enum EvidenceInput {
    /// Card security codes are never accepted (nor echoed, nor logged): their presence alone refuses the request.
    static let forbiddenCardFields: Set<String> = ["cvv", "cvc", "cvv2", "cvc2", "cid", "csc"]

    /// Validates a JSON body, reporting every bad field (422); never echoes a value.
    static func parse(_ members: [String: JSONValue], now: Date) throws -> EvidenceBody? {
        let present = members.keys.filter { forbiddenCardFields.contains($0.lowercased()) }.sorted()
        if !present.isEmpty {
            throw Problem.unprocessable(
                errors: present.map { FieldError(field: $0, message: "Never send the card's security code: it is neither needed nor accepted.") })
        }
        guard case .string(let typeText)? = members["type"], let kind = EvidenceKind(rawValue: typeText), !kind.isDocument else {
            throw Problem.unprocessable(errors: [
                FieldError(field: "type", message: "security_answers, card, device or transcript (documents are uploaded as files).")
            ])
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
            if items.count > CaseOperations.maximumAnswers {
                issues.add(field: "answers", message: "At most \(CaseOperations.maximumAnswers) answers.")
            }
            var answers: [(String, String)] = []
            var seen = Set<String>()
            for (index, item) in items.enumerated() {
                let field = "answers[\(index)]"
                guard case .object(let answer) = item, case .string(let questionID)? = answer["question_id"],
                    case .string(let text)? = answer["answer"]
                else {
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
            return .typed(.card(number!, expiry!))
        case .device:
            let serialText = string("serial")?.trimmingCharacters(in: .whitespaces)
            let imeiText = string("imei")?.trimmingCharacters(in: .whitespaces)
            if (serialText ?? "").isEmpty && (imeiText ?? "").isEmpty {
                issues.add(field: "serial", message: "Give the device's serial number or its IMEI.")
            }
            let serial = serialText.flatMap { $0.isEmpty ? nil : issues.take(SerialNumber.validate($0, field: "serial")) }
            let imei = imeiText.flatMap { $0.isEmpty ? nil : issues.take(IMEI.validate($0, field: "imei")) }
            try Self.check(issues)
            return .typed(.device(serial, imei))
        case .transcript:
            guard let text = string("text") else {
                issues.add(field: "text", message: "The transcript's text is required.")
                try Self.check(issues)
                return nil
            }
            let valid = issues.take(Transcript.validate(text))
            try Self.check(issues)
            return .typed(.transcript(valid!))
        default:
            return nil
        }
    }

    /// Throws the collected issues as 422 `validation_failed`.
    static func check(_ issues: IssueCollector) throws {
        do { try issues.check() } catch { throw CaseHTTP.problem(for: error) }
    }

    /// The document part of a form: fields `type` and `file`.
    /// A customer's upload form: `type` (a document type or `transcript`) and `file`.
    static func uploadFromForm(_ form: MultipartForm) throws -> (UploadKind, BodyContent, String?) {
        var errors: [FieldError] = []
        let type = form.field("type").flatMap(UploadKind.init(rawValue:))
        if type == nil { errors.append(FieldError(field: "type", message: UploadKind.allRawValues.joined(separator: ", "))) }
        let file = form.file("file")
        if file == nil { errors.append(FieldError(field: "file", message: "Attach the file as the part named file.")) }
        guard errors.isEmpty, let type, let file else { throw Problem.unprocessable(errors: errors) }
        let declared = file.declaredContentType.flatMap {
            $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        return (type, file.content, declared)
    }

    static func documentFromForm(_ form: MultipartForm) throws -> (DocumentType, BodyContent, String?) {
        var errors: [FieldError] = []
        let type = form.field("type").flatMap(DocumentType.init(rawValue:))
        if type == nil {
            errors.append(FieldError(field: "type", message: DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        let file = form.file("file")
        if file == nil { errors.append(FieldError(field: "file", message: "Attach the document as the part named file.")) }
        guard errors.isEmpty, let type, let file else { throw Problem.unprocessable(errors: errors) }
        let declared = file.declaredContentType.flatMap {
            $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        return (type, file.content, declared)
    }

}
