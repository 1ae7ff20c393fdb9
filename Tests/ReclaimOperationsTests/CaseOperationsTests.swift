import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The operations layer on a real database, without HTTP: what each operation stores, which events it appends
/// (from the one catalogue), and which domain error it throws.
@Suite final class CaseOperationsTests {
    let database: TestDatabase
    let pool: PostgresPool
    let operations = CaseOperations(keys: KeyFile.generate())
    let now = Timestamp.truncated(Date())
    let agent = "agent:00000000-0000-0000-0000-000000000001"

    init() throws {
        database = try TestDatabase.create()
        pool = database.makePool()
    }

    deinit {
        pool.close()
        database.drop()
    }

    func open(_ opening: CaseOperations.Opening? = nil) throws -> CaseOperations.Opened {
        let opening =
            opening
            ?? CaseOperations.Opening(
                kind: .accountTakeover, accountEmail: "victim@example.com", customerName: "Ada Victim",
                customerContactEmail: "ada@example.net",
                devices: [.init(serial: "C02XK1ZJH3QD", imei: nil, model: "Phone")],
                facts: CaseFacts(rescueEmailAdded: true), summary: "Rescue address added.")
        return try pool.withTransaction { try operations.open(opening, by: agent, at: now, on: $0) }
    }

    func events(_ record: CaseRecord) throws -> [CaseEvent] {
        try pool.withConnection { try CaseEventStore.list(caseID: record.id, on: $0) }
    }

    @Test func openStoresTheCaseWithItsOpeningEventAndAnAccessCodeOnlyHashed() throws {
        let opened = try open()
        let stored = try pool.withConnection { try CaseStore.find(number: opened.record.number, on: $0) }
        #expect(stored?.version == 1)
        #expect(stored?.accessCodeHash != Array(opened.accessCode.symbols.utf8))
        let events = try events(opened.record)
        #expect(events.map(\.type) == [CaseEventType.caseOpened.rawValue])
        #expect(events.first?.actor == agent)
    }

    @Test func openReportsEveryBadFieldAtOnceAndStoresNothing() throws {
        let bad = CaseOperations.Opening(
            kind: .accountTakeover, accountEmail: "not an email", customerName: " ", customerContactEmail: "x@",
            devices: [.init(serial: "!", imei: "123", model: nil)])
        #expect {
            try pool.withTransaction { try operations.open(bad, by: agent, at: now, on: $0) }
        } throws: { error in
            guard case OperationError.invalid(let failure) = error else { return false }
            let fields = Set(failure.issues.map(\.field))
            return fields.isSuperset(of: ["account_email", "customer.contact_email", "customer.name"])
                && fields.contains { $0.hasPrefix("devices[0]") }
        }
        #expect(try pool.withConnection { try $0.query("SELECT count(*) FROM cases").first?.decode(0, as: Int.self) } == 0)
    }

    @Test func transitionChecksTheVersionAndAppendsOneTransitionEvent() throws {
        let opened = try open()
        let number = try CaseNumber(parsing: opened.record.number)
        #expect(throws: OperationError.stale(current: 1)) {
            try pool.withTransaction {
                try operations.transition(number, expectedVersion: 7, .init(action: .escalate), actorTier: .tier1, by: agent, at: now, on: $0)
            }
        }
        let escalated = try pool.withTransaction {
            try operations.transition(number, expectedVersion: 1, .init(action: .escalate), actorTier: .tier1, by: agent, at: now, on: $0).taken()
        }
        #expect(escalated.version == 2)
        #expect(escalated.snapshot.state == .identityCheck)
        #expect(try events(opened.record).map(\.type) == ["case_opened", "transition"])
    }

    @Test func aRefusedTransitionCarriesTheCaseForTheDenialRecordAndChangesNothing() throws {
        let opened = try open()
        let number = try CaseNumber(parsing: opened.record.number)
        var caught: OperationError?
        do {
            _ = try pool.withTransaction {
                try operations.transition(
                    number, expectedVersion: 1, .init(action: .complete, unlock: .removeRescueEmail), actorTier: .tier1,
                    by: agent, at: now, on: $0)
            }
        } catch let error as OperationError { caught = error }
        guard case .refused(let refusal, let caseID)? = caught else {
            Issue.record("expected a refusal, got \(String(describing: caught))")
            return
        }
        #expect(caseID == opened.record.id)
        #expect(refusal == .insufficientTier(required: .engineering))
        #expect(try events(opened.record).count == 1)
        try pool.withTransaction {
            try operations.recordDenial(caseID: opened.record.id, attempted: "complete", code: "insufficient_tier", by: agent, at: now, on: $0)
        }
        let last = try events(opened.record).last
        #expect(last?.type == CaseEventType.denied.rawValue)
        #expect(last?.data == ["attempted": "complete", "code": "insufficient_tier"])
    }

    @Test func notesAndFreezesAppendTheirCatalogueEvents() throws {
        let opened = try open()
        let number = try CaseNumber(parsing: opened.record.number)
        let note = try pool.withTransaction {
            try operations.addNote(number, body: "  Called back.  ", visibility: .internal, by: agent, at: now, on: $0)
        }
        #expect(note.body == "Called back.")
        #expect(throws: OperationError.self) {
            try pool.withTransaction { try operations.addNote(number, body: "   ", visibility: .customer, by: agent, at: now, on: $0) }
        }
        let frozen = try pool.withTransaction { try operations.freeze(number, expectedVersion: 1, actorTier: .tier2, by: agent, at: now, on: $0) }
        #expect(frozen.frozen)
        #expect(throws: OperationError.alreadyFrozen) {
            try pool.withTransaction { try operations.freeze(number, expectedVersion: 2, actorTier: .tier2, by: agent, at: now, on: $0) }
        }
        let events = try events(opened.record)
        #expect(events.map(\.type) == ["case_opened", "note_added", "frozen"])
        #expect(events[2].data == ["account_email": "victim@example.com"])
    }

    @Test func documentsAreSniffedBeforeAnythingIsStored() throws {
        let opened = try open()
        let number = try CaseNumber(parsing: opened.record.number)
        #expect(throws: OperationError.unsupportedMedia(declaredMismatch: false)) {
            try pool.withTransaction {
                try operations.fileDocument(
                    type: DocumentType(.invoice)!, bytes: Array("<html>".utf8), declaredType: nil, number: number, by: "customer", at: now, on: $0)
            }
        }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 32)
        #expect(throws: OperationError.unsupportedMedia(declaredMismatch: true)) {
            try pool.withTransaction {
                try operations.fileDocument(
                    type: DocumentType(.invoice)!, bytes: png, declaredType: "application/pdf", number: number, by: "customer", at: now, on: $0)
            }
        }
        #expect(try events(opened.record).count == 1)
        let filed = try pool.withTransaction {
            try operations.fileDocument(
                type: DocumentType(.invoice)!, bytes: png, declaredType: "image/png", number: number, by: "customer", at: now, on: $0)
        }
        #expect(filed.mediaType == "image/png")
        let (_, content) = try pool.withTransaction { try operations.readContent(evidence: filed.id, by: agent, at: now, on: $0) }
        #expect(content == png)
        #expect(try events(opened.record).map(\.type) == ["case_opened", "evidence_filed", "evidence_content_read"])
    }

    @Test func everyEventTypeHasAStableName() {
        #expect(
            CaseEventType.allCases.map(\.rawValue) == [
                "case_opened", "transition", "reset_sent", "note_added", "assigned", "frozen", "evidence_filed", "evidence_reviewed",
                "evidence_content_read", "denied", "unlock_done", "unfrozen", "unassigned", "document_arrived", "access_code_reissued", "merged",
                "merge_received", "unmerged", "unmerge_left",
                "mail_refused", "case_corrected", "case_erased", "risk_raised", "risk_cleared", "unlock_scheduled",
                "unlock_cancelled", "handed_back", "message_received", "caller_verified", "caller_code_mailed", "caller_code_locked",
            ])
    }
}
