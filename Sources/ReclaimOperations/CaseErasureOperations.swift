import Crypto
import Foundation
import InboundMail
import Logging
import Postgres
import ReclaimCore
import ReclaimStore

extension CaseOperations {
    /// The admin-log types of erasure and export.
    public enum PrivacyAuditType: String, Sendable, CaseIterable {
        case caseErased = "case_erased"
        case caseExported = "case_exported"
    }

    /// Erases what identifies a finished case's customer (`CaseErasure`'s steps), under the case's row lock in the
    /// caller's one transaction, with `case_erased` on its timeline and an admin-log entry (case number, cause, reason:
    /// never an erased value). `caseOpen` unless resolved, rejected, closed or merged; `alreadyErased` the second time.
    public func erase(
        _ number: CaseNumber, reason: String?, byRetention: Bool = false, by actor: String, at now: Date, on connection: PostgresConnection
    ) throws -> CaseRecord {
        let text = reason?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if !byRetention {
            guard !text.isEmpty else { throw OperationError.invalid(field: "reason", "say why the customer's data is erased") }
            guard text.count <= 2000 else { throw OperationError.invalid(field: "reason", "at most 2000 characters") }
        }
        // Not `lockID`: a second erasure is `alreadyErased`, not a change refused (nothing can be added after the first).
        guard let (id, _) = try CaseStore.lockForChange(number: number.digits, on: connection),
            let record = try CaseStore.find(id: id, on: connection)
        else { throw OperationError.caseNotFound }
        guard !record.snapshot.state.isOpen else { throw OperationError.caseOpen }
        guard record.erasedAt == nil else { throw OperationError.alreadyErased }
        try CaseErasure.erase(caseID: id, at: now, on: connection)
        try CaseTimeline.append(.caseErased(byRetention: byRetention), caseID: id, actor: actor, at: now, on: connection)
        var data: [String: JSONValue] = ["case_number": .string(record.number), "cause": byRetention ? "retention" : "request"]
        if !text.isEmpty { data["reason"] = .string(text) }
        try AdminEventStore.append(at: now, actor: actor, type: PrivacyAuditType.caseErased.rawValue, data: .object(data), on: connection)
        guard let erased = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
        return erased
    }
}

extension CaseOperations {
    /// Everything held about the customer on a case, for a data-subject request (`GET …/export`).
    public struct CaseExport: Sendable {
        /// The case.
        public let record: CaseRecord
        /// Its timeline.
        public let events: [CaseEvent]
        /// Its notes (and those of cases merged into it).
        public let notes: [CaseNote]
        /// Its evidence.
        public let evidence: [EvidenceRecord]
        /// Its messages.
        public let messages: [CaseMessageLog.Item]
        /// The evidence whose content is exported (the case's own documents and transcripts), in order: each is read
        /// on its own by `exportedContent`, while the export is sent.
        public let documents: [EvidenceRecord]
        /// The mail received on the case, oldest first (api.md v1.3 "Export both ways").
        public var received: [ReceivedMail] = []
        /// What the desk recorded about fraud and the export leaves out, by kind (`risk_signals`, `risk_clearances`,
        /// `risk_webhooks`, `risk_flag`): how many of each; a kind with none is not listed.
        public var withheld: [String: Int] = [:]
    }

    /// A received mail as an export holds it: the stored message (its text, its attachments' evidence ids) and the
    /// headers needed to read it, `To` and `Date` parsed again from the sealed raw message (empty and nil when it
    /// cannot be read).
    public struct ReceivedMail: Sendable {
        public let message: InboundMessageRecord
        /// The `To` addresses.
        public let to: [String]
        /// The `Date` header.
        public let date: Date?
    }

    /// The timeline events that record the desk's view of fraud (a signal raised with its detail, a flag, a clearance
    /// with its reason): never exported, so a thief posing as the owner does not learn what caught him.
    static let withheldEvents: [CaseEventType: String] = [.riskRaised: "risk_signals", .riskCleared: "risk_clearances"]

    /// Reads what an export holds, but the documents' bytes (the mail received as well as sent; what the desk recorded
    /// about fraud left out and counted in `withheld`), and records it in the admin log (`case_exported`, the case number
    /// and how many documents: never a value), in the caller's transaction. The documents are read afterwards, one at a
    /// time (`exportedContent`), so an export's memory does not grow with them.
    public func export(_ number: CaseNumber, by actor: String, at now: Date, on connection: PostgresConnection) throws -> CaseExport {
        let keys = try requireKeys()
        let record = try load(number, on: connection)
        let evidence = try EvidenceStore.list(caseID: record.id, on: connection)
        let withContent = try EvidenceStore.contentIDs(caseID: record.id, on: connection)
        let documents = evidence.filter { $0.caseID == record.id && withContent.contains($0.id) }
        var withheld: [String: Int] = [:]
        let events = try CaseEventStore.list(caseID: record.id, on: connection).filter { event in
            guard let kind = CaseEventType(rawValue: event.type).flatMap({ Self.withheldEvents[$0] }) else { return true }
            withheld[kind, default: 0] += 1
            return false
        }
        let messages = try CaseMessageLog.list(for: record, on: connection).filter { item in
            guard case .message(let message) = item, message.entry.kind == WebhookEvent.caseRiskRaised.rawValue else { return true }
            withheld["risk_webhooks", default: 0] += 1
            return false
        }
        if record.risk { withheld["risk_flag"] = 1 }
        var received: [ReceivedMail] = []
        for message in try InboundMessageStore.list(caseID: record.id, on: connection) {
            var parsed: InboundMessage?
            if let raw = try InboundMessageStore.raw(id: message.id, on: connection), let key = keys.key(id: raw.keyID, purpose: .documents),
                let bytes = try? SecretBox.open(raw.sealed, key: key, associatedData: Self.inboundAssociatedData(message.id))
            {
                parsed = try? MailParser().parse(bytes)
            }
            received.append(ReceivedMail(message: message, to: parsed?.to.map(\.address) ?? [], date: parsed?.date))
        }
        var export = CaseExport(
            record: record, events: events, notes: try NoteStore.list(caseID: record.id, on: connection), evidence: evidence,
            messages: messages, documents: documents)
        export.received = received
        export.withheld = withheld
        try AdminEventStore.append(
            at: now, actor: actor, type: PrivacyAuditType.caseExported.rawValue,
            data: ["case_number": .string(record.number), "documents": .int(Int64(documents.count))], on: connection)
        return export
    }

    /// One exported document's clear bytes, read and opened on its own (not through `readContent`: no timeline event
    /// per document, the export's admin-log entry says it). `evidenceNotFound` when it was emptied since (an erasure).
    public func exportedContent(of evidence: EvidenceRecord, on connection: PostgresConnection) throws -> [UInt8] {
        let keys = try requireKeys()
        guard let sealed = try EvidenceStore.exportedContent(id: evidence.id, caseID: evidence.caseID, on: connection) else {
            throw OperationError.evidenceNotFound
        }
        guard let key = keys.key(id: sealed.keyID, purpose: .documents) else { throw OperationError.keysUnavailable }
        return try SecretBox.open(sealed.sealed, key: key, associatedData: EvidenceSealing.associatedData(evidence.id))
    }
}

/// The retention worker: a thread of its own in every `reclaim serve` that, every `pollInterval`, erases the cases
/// finished more than `retention` ago (actor `system`), one transaction per case, each claimed with `FOR UPDATE SKIP
/// LOCKED` so instances never erase the same case twice and a kill -9 leaves a case whole or erased.
public final class RetentionWorker: Sendable {
    /// How long after a case finished it is erased.
    public let retention: TimeInterval
    let pool: PostgresPool
    let operations: CaseOperations
    let logger: Logger
    let pollInterval: TimeInterval
    let now: @Sendable () -> Date
    private let thread: PollingThread

    /// A worker erasing cases finished `retention` seconds ago.
    public init(
        retention: TimeInterval, pool: PostgresPool, operations: CaseOperations, logger: Logger, pollInterval: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.retention = retention
        self.pool = pool
        self.operations = operations
        self.logger = logger
        self.pollInterval = pollInterval
        self.now = now
        // A pass after each interval, not at start: a starting instance adds no work to the database at once.
        thread = PollingThread(name: "reclaim-retention", interval: pollInterval, waitsFirst: true)
    }

    /// Starts the thread; returns at once. Each erased case passes again at once, until none is left.
    public func start() {
        thread.start { [self] in
            do {
                return try runOnce()
            } catch {
                logger.warning("retention_failed", ["error": .string(String(describing: error))])
                return false
            }
        }
    }

    /// Asks the thread to stop and waits for its pass to end.
    public func stop() { thread.stop() }

    /// Erases one expired case in a transaction of its own; false when none is left (or every one is being erased by
    /// another instance).
    @discardableResult
    public func runOnce() throws -> Bool {
        let now = now()
        let erased = try pool.withTransaction { connection -> String? in
            guard let claimed = try CaseErasure.claimExpired(before: now.addingTimeInterval(-retention), limit: 1, on: connection).first,
                let number = try? CaseNumber(parsing: claimed.number)
            else { return nil }
            _ = try operations.erase(number, reason: nil, byRetention: true, by: "system", at: now, on: connection)
            return claimed.number
        }
        if let erased { logger.info("case_erased_by_retention", ["case_number": .string(erased)]) }
        return erased != nil
    }
}
