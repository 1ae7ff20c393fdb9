import Foundation
import Postgres
import ReclaimCore
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

/// The evidence tables: status follows the latest review, typed evidence feeds the verification rule, content needs its key id.
@Suite(.serialized) struct EvidenceStoreTests {
    static func insertCase(on connection: PostgresConnection) throws -> UUID {
        let id = UUID()
        let now = Date()
        try connection.execute(
            """
            INSERT INTO cases (id, case_number, access_code_hash, access_code_key_id, kind, state, tier, path, rescue_email_added,
                               security_questions_changed, two_step_enabled, lost_mode_enabled, account_email, customer_name,
                               customer_contact_email, opened_at, state_entered_at, created_by, created_at, updated_at)
            VALUES (\(id), '100000000001', '\\x00'::bytea, 'k', 'account_takeover', 'identity_check', 'tier2', 'undetermined', true, false, false, false,
                    'a@example.com', 'A', 'b@example.com', \(now), \(now), 'test', \(now), \(now))
            """)
        return id
    }

    @Test func statusFollowsTheLatestReviewAndRejectedFactorsAreMissing() throws {
        let database = try TestDatabase.create()
        let connection = try database.connect()
        let caseID = try Self.insertCase(on: connection)
        let now = Date()
        let card = NewEvidence(
            id: UUID(), caseID: caseID, kind: .card, matched: true, summary: "411111******1111", details: [:],
            cardFingerprint: ([1, 2, 3], "fp1"), filedBy: "agent:x", filedAt: now)
        let device = NewEvidence(
            id: UUID(), caseID: caseID, kind: .device, matched: true, summary: "Device serial C02XK1ZJH3QD", details: [:],
            filedBy: "agent:x", filedAt: now.addingTimeInterval(1))
        let document = NewEvidence(
            id: UUID(), caseID: caseID, kind: .invoice, matched: nil, summary: "Invoice", details: [:],
            sealedContent: SealedContent([9, 9, 9], keyID: "doc1"), sha256: [UInt8](repeating: 7, count: 32), size: 3, mediaType: "application/pdf",
            filedBy: "customer", filedAt: now.addingTimeInterval(2))
        for item in [card, device, document] { try EvidenceStore.insert(item, on: connection) }

        var listed = try EvidenceStore.list(caseID: caseID, on: connection)
        #expect(listed.map(\.id) == [card.id, device.id, document.id])
        #expect(listed.allSatisfy { $0.status == .pending })
        // Times round-trip to the millisecond (Double seconds may differ in the last bits).
        #expect(listed[0].json == card.record.json)
        #expect(VerificationPolicy.evaluate(try EvidenceStore.factorEvidence(caseID: caseID, on: connection)).verified)

        try EvidenceStore.insertReview(
            EvidenceReview(evidenceID: card.id, decision: .accepted, reason: "ok", reviewedBy: "agent:y", reviewedAt: now), on: connection)
        try EvidenceStore.insertReview(
            EvidenceReview(
                evidenceID: card.id, decision: .rejected, reason: "stolen card", reviewedBy: "agent:y",
                reviewedAt: now.addingTimeInterval(5)), on: connection)
        listed = try EvidenceStore.list(caseID: caseID, on: connection)
        #expect(listed[0].status == .rejected)
        let outcome = VerificationPolicy.evaluate(try EvidenceStore.factorEvidence(caseID: caseID, on: connection))
        #expect(outcome[.card] == .missing)
        #expect(!outcome.verified)

        // Matched question ids of answers that still count.
        let answers = NewEvidence(
            id: UUID(), caseID: caseID, kind: .securityAnswers, matched: true, summary: "2 answers",
            details: ["question_ids": ["q1", "q2"], "matched_question_ids": ["q1"]], filedBy: "agent:x", filedAt: now)
        let rejected = NewEvidence(
            id: UUID(), caseID: caseID, kind: .securityAnswers, matched: true, summary: "1 answer",
            details: ["question_ids": ["q3"], "matched_question_ids": ["q3"]], filedBy: "agent:x", filedAt: now)
        try EvidenceStore.insert(answers, on: connection)
        try EvidenceStore.insert(rejected, on: connection)
        try EvidenceStore.insertReview(
            EvidenceReview(
                evidenceID: rejected.id, decision: .rejected, reason: "read to the customer", reviewedBy: "agent:y",
                reviewedAt: now), on: connection)
        #expect(try EvidenceStore.matchedQuestionIDs(caseID: caseID, on: connection) == ["q1"])

        #expect(try EvidenceStore.sealedContent(id: document.id, on: connection)?.sealed == [9, 9, 9])
        #expect(try EvidenceStore.sealedContent(id: card.id, on: connection) == nil)
        #expect(try EvidenceStore.find(id: document.id, on: connection)?.caseNumber == "100000000001")
        // Content without its key id is refused by the schema.
        #expect(throws: PostgresError.self) {
            try connection.execute(
                """
                INSERT INTO evidence (id, case_id, kind, document, summary, content, filed_by, filed_at)
                VALUES (\(UUID()), \(caseID), 'invoice', true, 'x', '\\x01'::bytea, 'agent:x', \(now))
                """)
        }
    }
}
