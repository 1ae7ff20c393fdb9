import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Typed evidence after validation (answers are filed through `AnswerCheck`; the card only until fingerprinted).
public enum TypedEvidence: Sendable {
    case card(CardNumber, CardExpiry)
    case device(SerialNumber?, IMEI?)
    case transcript(String)
}

/// Security answers given by the customer, checked against the hashes on file: which matched and how many did not.
/// Never holds an answer.
public struct AnswerCheck: Sendable, Equatable {
    /// The questions answered, in the order given.
    public let questionIDs: [String]
    /// Those whose answer matched the account on file.
    public let matchedQuestionIDs: Set<String>
}

/// The account's answer budget (9 wrong answers in 8 hours lock its answers for 8 hours, even right ones), shared by
/// answers filed as evidence and answers given with `send_reset`. Answers are claimed as wrong before they are checked
/// (check and count in one step), so concurrent checks cannot all start under the limit; the right ones are given back.
public enum AnswerBudget {
    /// Claims `count` answers, committed at once: the claim, or when the account's answers are locked until.
    public static func claim(_ count: Int, accountEmail: String, now: Date, pool: PostgresPool) throws -> ThrottleAdmission {
        try pool.withTransaction { try ThrottleStore.claimAnswers(email: accountEmail, count: count, now: now, on: $0) }
    }

    /// Settles a claim once checked: only `wrong` of its answers count.
    public static func settle(_ claim: ThrottleClaim, wrong: Int, accountEmail: String, now: Date, pool: PostgresPool) throws {
        guard wrong < claim.count else { return }
        try pool.withTransaction { try ThrottleStore.settleAnswers(email: accountEmail, claim: claim, wrong: wrong, now: now, on: $0) }
    }
}

extension CaseOperations {
    /// At most this many answers in one filing.
    public static let maximumAnswers = 20

    /// Checks given answers (normalised) for the case's account: refused while its answers are locked; each answer
    /// that does not match (an unknown question included, at the same cost) counts one failure. All are claimed as
    /// failures before hashing and the matches given back after, each step committed at once, so concurrent checks
    /// stop at the budget. Runs argon2id per answer (~15 ms), so it takes the pool and holds no transaction while
    /// hashing: call it before the operation's transaction, off the HTTP workers.
    public func checkAnswers(
        _ answers: [(questionID: String, normalized: String)], number: CaseNumber, hasher: PasswordHash,
        at now: Date, pool: PostgresPool
    ) throws -> AnswerCheck {
        if answers.count > Self.maximumAnswers { throw OperationError.invalid(field: "answers", "At most \(Self.maximumAnswers) answers.") }
        let (accountEmail, onFile) = try pool.withConnection { connection in
            let record = try load(number, on: connection)
            // Refused before any answer is hashed or counted against the account (`insert` checks again, under the lock).
            try Self.checkFiling(on: record)
            return (record.accountEmail, try AccountStore.securityAnswers(email: record.accountEmail, on: connection))
        }
        let claim: ThrottleClaim
        switch try AnswerBudget.claim(answers.count, accountEmail: accountEmail, now: now, pool: pool) {
        case .locked(let until): throw OperationError.answersLocked(until: until, now: now)
        case .admitted(let admitted): claim = admitted
        }
        var matched = Set<String>()
        var failures = 0
        for answer in answers {
            let hash = onFile?.answers[answer.questionID]
            if hasher.verify(answer.normalized, against: hash ?? PasswordHash.dummyHash), hash != nil {
                matched.insert(answer.questionID)
            } else {
                failures += 1
            }
        }
        try AnswerBudget.settle(claim, wrong: failures, accountEmail: accountEmail, now: now, pool: pool)
        return AnswerCheck(questionIDs: answers.map(\.questionID), matchedQuestionIDs: matched)
    }

    /// The security questions on file for the case's account (never an answer), each with whether an answer filed on
    /// the case and not rejected matched it; `noAccountOnFile` when the account is not on file.
    public func questions(_ number: CaseNumber, on connection: PostgresConnection) throws -> [(id: String, question: String, matched: Bool)] {
        let record = try load(number, on: connection)
        guard let questions = try AccountStore.securityQuestions(email: record.accountEmail, on: connection) else {
            throw OperationError.noAccountOnFile
        }
        let matched = try EvidenceStore.matchedQuestionIDs(caseID: record.id, on: connection)
        return questions.map { ($0.id, $0.question, matched.contains($0.id)) }
    }

    /// Files checked answers as `security_answers` evidence (which questions, which matched; never an answer).
    public func fileAnswers(
        _ check: AnswerCheck, number: CaseNumber, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> EvidenceRecord {
        let caseID = try lockID(number, on: connection)
        let matched = check.questionIDs.filter(check.matchedQuestionIDs.contains)
        return try insert(
            NewEvidence(
                id: UUID(), caseID: caseID, kind: .securityAnswers, matched: !matched.isEmpty,
                summary: check.questionIDs.count == 1 ? "1 answer" : "\(check.questionIDs.count) answers",
                details: [
                    "question_ids": .array(check.questionIDs.map(JSONValue.string)),
                    "matched_question_ids": .array(matched.map(JSONValue.string)),
                ],
                filedBy: actor, filedAt: now), on: connection)
    }

    /// Files a card (compared by fingerprint, only the masked form kept), a device (compared with the account on
    /// file) or a transcript (sealed).
    public func fileTyped(
        _ typed: TypedEvidence, number: CaseNumber, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> EvidenceRecord {
        let keys = try requireKeys()
        let id = UUID()
        let record = try load(number, on: connection)
        try CaseStore.lock(id: record.id, on: connection)
        let new: NewEvidence
        switch typed {
        case .card(let card, let expiry):
            let active = keys.activeKey(for: .cardFingerprint)
            let matched = try EvidenceOnFile.cardMatches(card, accountEmail: record.accountEmail, keys: keys, on: connection)
            let summary = card.summary
            new = NewEvidence(
                id: id, caseID: record.id, kind: .card, matched: matched, summary: summary.masked,
                details: [
                    "first_six": .string(summary.firstSix), "last_four": .string(summary.lastFour), "length": .int(Int64(summary.length)),
                    "exp_month": .int(Int64(expiry.month)), "exp_year": .int(Int64(expiry.year)),
                ],
                cardFingerprint: (CardFingerprint.compute(card, key: active.key), active.id), filedBy: actor, filedAt: now)
        case .device(let serial, let imei):
            let matched = try EvidenceOnFile.deviceMatches(serial: serial, imei: imei, accountEmail: record.accountEmail, on: connection)
            let parts = [serial.map { "serial \($0.value)" }, imei.map { ($0.isSoftwareVersion ? "IMEISV " : "IMEI ") + $0.digits }].compactMap { $0 }
            new = NewEvidence(
                id: id, caseID: record.id, kind: .device, matched: matched, summary: "Device " + parts.joined(separator: ", "),
                details: ["serial": .optional(serial?.value), "imei": .optional(imei?.digits)], filedBy: actor, filedAt: now)
        case .transcript(let text):
            let bytes = Array(text.utf8)
            new = NewEvidence(
                id: id, caseID: record.id, kind: .transcript, matched: nil, summary: "Transcript, \(text.count) characters", details: [:],
                sealedContent: EvidenceSealing.seal(bytes, id: id, keys: keys), sha256: SHA256.hash(bytes), size: bytes.count,
                mediaType: "text/plain; charset=utf-8", filedBy: actor, filedAt: now)
        }
        return try insert(new, on: connection)
    }

    /// Files a document: sniffed (refused unless PDF/JPEG/PNG/HEIC and the type it was declared as), sealed, inserted.
    public func fileDocument(
        type: DocumentType, bytes: [UInt8], declaredType: String?, number: CaseNumber, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> EvidenceRecord {
        try fileDocument(upload: .document(type), content: bytes, declaredType: declaredType, number: number, by: actor, at: now, on: connection)
    }

    /// Files an upload, a document or a transcript, through one path: at most 10 MiB, sniffed (a document as PDF/JPEG/PNG/HEIC;
    /// a transcript also as UTF-8 text or a saved e-mail) and refused when it disagrees with its declared type, sealed, inserted.
    /// The bytes are read in pieces, twice: once for the digest and the text checks, before the case's row lock; once more
    /// while they are sealed straight into the row, so a spooled upload is never in memory whole.
    public func fileDocument(
        upload: UploadKind, content: some UploadedBytes, declaredType: String?, number: CaseNumber, by actor: String,
        at now: Date, on connection: PostgresConnection
    ) throws -> EvidenceRecord {
        let keys = try requireKeys()
        let size = content.count
        if size == 0 { throw OperationError.invalid(field: "file", "The file is empty.") }
        if size > DocumentUpload.maximumBytes { throw OperationError.tooLarge(limit: DocumentUpload.maximumBytes) }
        let head = try content.head(TranscriptTextCheck.headLength)
        var digest = SHA256.Hasher()
        var text = TranscriptTextCheck()
        try content.forEachPiece { piece in
            digest.update(piece)
            if case .transcript = upload { text.feed(piece) }
        }
        let sniffed: TranscriptMediaType
        switch upload {
        case .document:
            guard let type = sniffMediaType(head) else { throw OperationError.unsupportedMedia(declaredMismatch: false) }
            sniffed = .document(type)
        case .transcript:
            guard let type = sniffTranscriptMediaType(head: head, text: text) else { throw OperationError.unsupportedMedia(declaredMismatch: false) }
            sniffed = type
        }
        if let declaredType, !Self.declared(declaredType, agreesWith: sniffed) { throw OperationError.unsupportedMedia(declaredMismatch: true) }
        let id = UUID()
        let name = upload.evidenceKind.rawValue.replacingOccurrences(of: "_", with: " ")
        let summary = "\(name.prefix(1).uppercased() + name.dropFirst()), \(sniffed.label), \(Self.size(size))"
        let caseID = try lockID(number, on: connection)
        return try insert(
            NewEvidence(
                id: id, caseID: caseID, kind: upload.evidenceKind, matched: nil, summary: summary, details: [:],
                sealedContent: EvidenceSealing.sealing(content, id: id, keys: keys), sha256: digest.finalize(), size: size,
                mediaType: sniffed.rawValue, filedBy: actor, filedAt: now), on: connection)
    }

    /// Inserts and appends `evidence_filed` (type and id only: never a value). The caller holds the case's row lock; a
    /// finished case takes no evidence, whoever files it (`CaseWork.fileEvidence`: 409 `case_not_open`), and a case
    /// holding `documentLimit` documents no other document (409 `too_many_documents`), counted under that lock.
    func insert(_ new: NewEvidence, on connection: PostgresConnection) throws -> EvidenceRecord {
        guard let record = try CaseStore.find(id: new.caseID, on: connection) else { throw OperationError.caseNotFound }
        try Self.checkFiling(on: record)
        if new.kind.isDocument, try EvidenceStore.documentCount(caseID: new.caseID, on: connection) >= documentLimit {
            throw OperationError.tooManyDocuments(limit: documentLimit)
        }
        try EvidenceStore.insert(new, on: connection)
        try CaseTimeline.append(
            .evidenceFiled(evidenceID: new.id, kind: new.kind), caseID: new.caseID, actor: new.filedBy, at: new.filedAt, on: connection)
        try CaseMessages.webhook(
            .evidenceFiled, for: record, state: record.snapshot.state,
            data: ["evidence_id": .string(new.id.lowercased), "type": .string(new.kind.rawValue)], at: new.filedAt, on: connection)
        try Self.checkRisk(new, on: record, on: connection)
        if new.kind.isDocument { try documentArrived(new, on: connection) }
        return new.record
    }

    /// The risk a new piece of evidence reveals, in its transaction: a device claimed by another account
    /// (`device_claimed_elsewhere`), a document filed on another account's case (`document_reused`).
    static func checkRisk(_ new: NewEvidence, on record: CaseRecord, on connection: PostgresConnection) throws {
        if new.kind == .device, case .object(let details) = new.details {
            func text(_ key: String) -> String? { if case .string(let value)? = details[key] { value } else { nil } }
            let device = CaseDevice(serial: text("serial"), imei: text("imei"), model: nil)
            try RiskSignals.checkDevices([device], of: record, at: new.filedAt, on: connection)
        }
        if new.kind.isDocument, let sha256 = new.sha256 {
            try RiskSignals.checkDocument(sha256: sha256, of: record, at: new.filedAt, on: connection)
        }
    }

    /// `case_not_open` unless the case takes evidence now.
    static func checkFiling(on record: CaseRecord) throws(OperationError) {
        guard record.erasedAt == nil else { throw .caseErased }
        do { try CaseWork.fileEvidence.check(in: record.snapshot.state) } catch { throw .refused(error, caseID: nil) }
    }

    /// The actor the service acts as when a case moves by itself.
    public static let systemActor = "system"

    /// A document filed on a case waiting for documents, by anyone: recorded as arrived (with the count of documents
    /// still unreviewed); once every requirement of the path has a document, the case moves itself to
    /// `document_review` as `system`, and its clock resumes. The caller holds the case's row lock.
    func documentArrived(_ new: NewEvidence, on connection: PostgresConnection) throws {
        guard let record = try CaseStore.find(id: new.caseID, on: connection), record.snapshot.state == .awaitingDocuments else { return }
        try CaseTimeline.append(
            .documentArrived(evidenceID: new.id, kind: new.kind, unreviewed: record.unreviewedDocuments),
            caseID: record.id, actor: new.filedBy, at: new.filedAt, on: connection)
        let documents = try EvidenceStore.list(caseID: record.id, on: connection).filter(\.kind.isDocument).map {
            (kind: $0.countsAs, status: $0.status)
        }
        guard let decision = workflow.documentsArrived(on: record.snapshot, documents: documents, now: new.filedAt) else { return }
        _ = try apply(decision, to: record, by: Self.systemActor, at: new.filedAt, on: connection)
    }

    /// A mail attachment is accepted as what it proves, and only it names that (`accepted_as`, a document kind one
    /// uploads): it then counts for the gate as that kind.
    static func checkAcceptedAs(_ acceptedAs: EvidenceKind?, decision: EvidenceStatus, kind: EvidenceKind) throws {
        let words = DocumentType.allCases.map(\.rawValue).joined(separator: ", ")
        switch (acceptedAs, kind == .mailAttachment && decision == .accepted) {
        case (nil, true):
            throw OperationError.invalid(field: "accepted_as", "Accepting a mail attachment names what it proves: \(words).")
        case (_?, false):
            throw OperationError.invalid(field: "accepted_as", "Only accepting a mail attachment names what it proves.")
        default: return
        }
    }

    /// Whether a declared media type agrees with the sniffed one (`application/octet-stream` declares nothing).
    static func declared(_ declared: String, agreesWith sniffed: TranscriptMediaType) -> Bool {
        switch declared {
        case "", "application/octet-stream": true
        case "image/jpg", "image/pjpeg": sniffed == .document(.jpeg)
        case "image/heif": sniffed == .document(.heic)
        // A saved e-mail is text too: browsers label .txt exports of a mail text/plain.
        case "text/plain": sniffed == .plainText || sniffed == .email
        default: declared == sniffed.rawValue
        }
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MiB", Double(bytes) / 1_048_576) : bytes >= 1024 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
    }

    // MARK: Review and reading

    /// Records a review decision (tier2+ for typed evidence, tier3+ for documents and transcripts) with `evidence_reviewed`.
    /// Rejecting a document names the `customerReason` the customer reads (and only then may one be given); the
    /// customer is mailed, and a case under review left short of a requirement returns to `awaiting_documents`.
    public func review(
        evidence id: UUID, decision: EvidenceStatus, reason: String, customerReason: CustomerReason? = nil, acceptedAs: EvidenceKind? = nil,
        actorTier: Tier,
        by actor: String, at now: Date, on connection: PostgresConnection
    ) throws -> EvidenceRecord {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard decision != .pending else { throw OperationError.invalid(field: "decision", "accepted or rejected") }
        if reason.isEmpty || reason.count > 2000 { throw OperationError.invalid(field: "reason", "A reason has 1 to 2000 characters.") }
        guard let (record, _) = try EvidenceStore.find(id: id, on: connection) else { throw OperationError.evidenceNotFound }
        guard actorTier.isAtLeast(record.kind.reviewMinimumTier) else { throw OperationError.reviewNeedsTier(record.kind.reviewMinimumTier) }
        try Self.checkCustomerReason(customerReason, decision: decision, kind: record.kind)
        try Self.checkAcceptedAs(acceptedAs, decision: decision, kind: record.kind)
        try CaseStore.lock(id: record.caseID, on: connection)
        // Evidence a merged case brought counts, and is reviewed, on the case it went into: that case must take the review.
        guard let filedOn = try CaseStore.find(id: record.caseID, on: connection) else { throw OperationError.evidenceNotFound }
        guard filedOn.erasedAt == nil else { throw OperationError.caseErased }
        do { try CaseWork.review.check(in: filedOn.mergedIntoState ?? filedOn.snapshot.state) } catch {
            throw OperationError.refused(error, caseID: nil)
        }
        var review = EvidenceReview(
            evidenceID: id, decision: decision, reason: reason, customerReason: customerReason, reviewedBy: actor, reviewedAt: now)
        review.acceptedAs = acceptedAs
        try EvidenceStore.insertReview(review, on: connection)
        try CaseTimeline.append(
            .evidenceReviewed(evidenceID: id, kind: record.kind, decision: decision, reason: reason, customerReason: customerReason),
            caseID: record.caseID, actor: actor, at: now, on: connection)
        guard let (updated, _) = try EvidenceStore.find(id: id, on: connection) else { throw OperationError.evidenceNotFound }
        if let caseRecord = try CaseStore.find(id: record.caseID, on: connection) {
            try CaseMessages.webhook(
                .evidenceReviewed, for: caseRecord, state: caseRecord.snapshot.state,
                data: ["evidence_id": .string(id.lowercased), "type": .string(record.kind.rawValue), "decision": .string(decision.rawValue)],
                at: now, on: connection)
            if let customerReason { try documentRejected(on: caseRecord, reason: customerReason, at: now, on: connection) }
        }
        return updated
    }

    /// A customer reason goes with, and only with, the rejection of a document: the customer sees typed details and
    /// transcripts only as received, so a reason there would tell them a match result.
    static func checkCustomerReason(_ customerReason: CustomerReason?, decision: EvidenceStatus, kind: EvidenceKind) throws {
        let words = CustomerReason.allCases.map(\.rawValue).joined(separator: ", ")
        switch (customerReason, decision == .rejected && kind.isDocument) {
        case (nil, true):
            throw OperationError.invalid(field: "customer_reason", "Rejecting a document needs the reason the customer reads: \(words).")
        case (_?, false) where decision != .rejected:
            throw OperationError.invalid(field: "customer_reason", "Only a rejection names a customer reason.")
        case (_?, false):
            throw OperationError.invalid(
                field: "customer_reason", "The customer sees typed details and transcripts only as received: no customer reason.")
        default: return
        }
    }

    /// After a document was rejected (the caller holds the case's lock): a case under review with nothing else pending
    /// and a requirement now unmet returns to `awaiting_documents` as `system` (the clock paused); then one mail tells
    /// the customer why, with the state as it now stands (instead of the documents-requested mail), and partners hear
    /// of the state change.
    func documentRejected(on filedOn: CaseRecord, reason: CustomerReason, at now: Date, on connection: PostgresConnection) throws {
        // A document of a case merged away counts on the case it went into: that case returns, and its customer hears.
        var record = filedOn
        if filedOn.snapshot.state == .merged, let into = filedOn.mergedInto, let target = try CaseStore.find(number: into, on: connection) {
            try CaseStore.lock(id: target.id, on: connection)
            record = target
        }
        let evidence = try EvidenceStore.list(caseID: record.id, on: connection)
        let documents = evidence.filter(\.kind.isDocument).map { (kind: $0.countsAs, status: $0.status) }
        var current = record
        if let decision = workflow.documentRejected(on: record.snapshot, documents: documents, now: now) {
            current = try apply(decision, to: record, by: Self.systemActor, at: now, on: connection, messages: false)
        }
        try CaseMessages.documentRejected(current, reason: reason, from: record.snapshot.state, keys: keys, at: now, on: connection)
    }

    /// The decrypted content of a document or transcript; the read is recorded on the timeline (`evidence_content_read`).
    public func readContent(evidence id: UUID, by actor: String, at now: Date, on connection: PostgresConnection) throws -> (EvidenceRecord, [UInt8])
    {
        let keys = try requireKeys()
        guard let (record, _) = try EvidenceStore.find(id: id, on: connection),
            let sealed = try EvidenceStore.sealedContent(id: id, on: connection)
        else { throw OperationError.evidenceNotFound }
        try CaseStore.lock(id: record.caseID, on: connection)
        try CaseTimeline.append(.evidenceContentRead(evidenceID: id, kind: record.kind), caseID: record.caseID, actor: actor, at: now, on: connection)
        guard let key = keys.key(id: sealed.keyID, purpose: .documents) else { throw OperationError.keysUnavailable }
        return (record, try SecretBox.open(sealed.sealed, key: key, associatedData: EvidenceSealing.associatedData(id)))
    }

    /// The case an evidence id belongs to, nil when there is none (for recording a refused attempt on it).
    public func caseID(ofEvidence id: UUID, on connection: PostgresConnection) throws -> UUID? {
        try EvidenceStore.find(id: id, on: connection)?.record.caseID
    }
}

/// What the customer must still send for the case's path, given the evidence that still counts (not rejected).
/// One source with the status page: both read `CustomerGuidance`.
public enum EvidenceRequirements {
    /// The guidance the customer reads for this case and its evidence.
    public static func guidance(_ record: CaseRecord, _ items: [EvidenceRecord]) -> CustomerGuidance {
        let s = record.snapshot
        return CustomerGuidance(
            state: s.state, path: s.path, kind: s.kind, facts: s.facts,
            evidence: items.map { FiledEvidence(kind: $0.countsAs, status: $0.status, customerReason: $0.customerReason) })
    }

    /// The `missing` words (see `CustomerGuidance.missing`).
    public static func missing(_ record: CaseRecord, _ items: [EvidenceRecord]) -> [String] {
        guidance(record, items).missing.map(\.rawValue)
    }
}

/// Sealing of documents and transcripts: XChaCha20-Poly1305 under the active `documents` key.
enum EvidenceSealing {
    /// The associated data of sealed content: the evidence id, so sealed bytes cannot be moved to another row.
    static func associatedData(_ id: UUID) -> [UInt8] { Array(id.uuidString.lowercased().utf8) }

    static func seal(_ bytes: [UInt8], id: UUID, keys: KeyFile) -> SealedContent {
        let key = keys.activeKey(for: .documents)
        return SealedContent(SecretBox.seal(bytes, key: key.key, associatedData: associatedData(id)), keyID: key.id)
    }

    /// The same sealed box, made piece by piece while the store writes it (`SecretBox.Sealer`): one 64 KiB piece in memory.
    static func sealing(_ content: some UploadedBytes, id: UUID, keys: KeyFile) -> SealedContent {
        let key = keys.activeKey(for: .documents)
        let length = content.count
        return SealedContent(keyID: key.id, count: length + SecretBox.overhead) { write in
            let sealer = SecretBox.Sealer(messageLength: length, key: key.key, associatedData: associatedData(id))
            try sealer.prefix.withUnsafeBytes { try write($0) }
            var buffer: [UInt8] = []
            try content.forEachPiece { piece in
                buffer.removeAll(keepingCapacity: true)
                buffer.append(contentsOf: piece)
                try buffer.withUnsafeMutableBytes { sealed in
                    sealer.seal(sealed)
                    try write(UnsafeRawBufferPointer(sealed))
                }
            }
            try sealer.finish().withUnsafeBytes { try write($0) }
        }
    }
}

/// The bytes of an upload as the evidence operations read them: in pieces, each but the last a multiple of 64 bytes
/// (what `SecretBox.Sealer` takes), so an upload spooled to disk is never in memory whole. `HTTPServer.BodyContent`
/// is one (see ReclaimAPI); a byte array is another.
public protocol UploadedBytes: Sendable {
    /// How many bytes there are.
    var count: Int { get }
    /// The first `count` bytes, or all when there are fewer.
    func head(_ count: Int) throws -> [UInt8]
    /// Calls `body` with the bytes in order, in pieces whose lengths (but the last's) are multiples of 64.
    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws
}

extension Array: UploadedBytes where Element == UInt8 {
    /// Pieces of 64 KiB.
    public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = Swift.min(all.count, offset + 64 * 1024)
                try body(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
    }

    /// The first `count` bytes.
    public func head(_ count: Int) throws -> [UInt8] { Array(self[..<Swift.min(count, self.count)]) }
}

extension TranscriptMediaType {
    /// A short name for summaries.
    public var label: String {
        switch self {
        case .document(let type): type.label
        case .plainText: "text"
        case .email: "e-mail"
        }
    }
}

extension MediaType {
    /// A short name for summaries.
    public var label: String {
        switch self {
        case .pdf: "PDF"
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        }
    }
}
