import Foundation
import Postgres
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Every vocabulary the database stores is a lookup table (0012) that holds exactly the words of its Swift enum, the
/// one declaration: a word added on one side only fails here. The columns take nothing else.
@Suite struct VocabularyTableTests {
    /// Each lookup table (as a query for its words) and the Swift vocabulary it mirrors.
    static let tables: [(table: String, query: PostgresQuery, words: [String])] = [
        ("tiers", "SELECT tier AS word FROM tiers", Tier.allCases.map(\.rawValue)),
        ("case_kinds", "SELECT kind AS word FROM case_kinds", CaseKind.allCases.map(\.rawValue)),
        ("case_states", "SELECT state AS word FROM case_states", CaseState.allCases.map(\.rawValue)),
        ("recovery_paths", "SELECT path AS word FROM recovery_paths", RecoveryPath.allCases.map(\.rawValue)),
        ("languages", "SELECT language AS word FROM languages", CustomerLanguage.allCases.map(\.rawValue)),
        ("unlock_steps", "SELECT step AS word FROM unlock_steps", UnlockKind.allCases.map(\.rawValue)),
        ("factors", "SELECT factor AS word FROM factors", Factor.allCases.map(\.rawValue)),
        ("evidence_kinds", "SELECT kind AS word FROM evidence_kinds", EvidenceKind.allCases.map(\.rawValue)),
        (
            "evidence_kinds (documents)", "SELECT kind AS word FROM evidence_kinds WHERE document",
            EvidenceKind.allCases.filter(\.isDocument).map(\.rawValue)
        ),
        ("inbound_matches", "SELECT matched_by AS word FROM inbound_matches", InboundMatch.allCases.map(\.rawValue)),
        ("customer_reasons", "SELECT reason AS word FROM customer_reasons", CustomerReason.allCases.map(\.rawValue)),
        ("risk_signal_kinds", "SELECT signal AS word FROM risk_signal_kinds", RiskSignal.allCases.map(\.rawValue)),
        ("unlock_statuses", "SELECT status AS word FROM unlock_statuses", UnlockStatus.allCases.map(\.rawValue)),
    ]

    @Test func eachLookupTableHoldsTheWordsOfItsSwiftVocabulary() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        for (table, query, words) in Self.tables {
            let stored = try connection.query(query).map { try $0.decode("word", as: String.self) }
            #expect(stored.sorted() == words.sorted(), "\(table) differs from its Swift vocabulary")
        }
    }

    @Test func theColumnsTakeOnlyTheirVocabularyAndADocumentOnlyAsADocument() throws {
        let database = try TestDatabase.create()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let caseID = try EvidenceStoreTests.insertCase(on: connection)
        let now = Date()
        func refused(_ constraint: String, _ query: PostgresQuery) throws {
            try connection.execute("SAVEPOINT attempt")
            do {
                try connection.execute(query)
                Issue.record("accepted: \(query)")
            } catch let error as PostgresError {
                #expect(error.constraint == constraint, "\(query): \(error)")
            } catch {
                Issue.record("\(error)")
            }
            try connection.execute("ROLLBACK TO SAVEPOINT attempt")
        }
        func evidence(kind: String, document: Bool) -> PostgresQuery {
            "INSERT INTO evidence (id, case_id, kind, document, summary, filed_by, filed_at) VALUES (\(UUID()), \(caseID), \(kind), \(document), 'x', 'test', \(now))"
        }
        try connection.execute("BEGIN")
        try refused("cases_state_fkey", "UPDATE cases SET state = 'withdrawn' WHERE id = \(caseID)")
        try refused("cases_tier_fkey", "UPDATE cases SET tier = 'tier4' WHERE id = \(caseID)")
        try refused("cases_path_fkey", "UPDATE cases SET path = 'guesswork' WHERE id = \(caseID)")
        try refused("cases_kind_fkey", "UPDATE cases SET kind = 'sim_swap' WHERE id = \(caseID)")
        try refused("cases_language_fkey", "UPDATE cases SET language = 'fr' WHERE id = \(caseID)")
        try refused("cases_unlocks_done_known", "UPDATE cases SET unlocks_done = ARRAY['remove_rescue_email', 'wipe_device'] WHERE id = \(caseID)")
        try refused("evidence_kind_fkey", evidence(kind: "receipt", document: true))
        // The flag must agree with the kind, or the documents index and the unreviewed count would miss it or count it.
        try refused("evidence_kind_fkey", evidence(kind: "invoice", document: false))
        try refused("evidence_kind_fkey", evidence(kind: "card", document: true))
        try refused(
            "evidence_factor_fkey",
            """
            INSERT INTO evidence (id, case_id, kind, document, factor, matched, summary, filed_by, filed_at)
            VALUES (\(UUID()), \(caseID), 'card', false, 'fingerprint', true, 'x', 'test', \(now))
            """)
        try refused(
            "agents_tier_fkey",
            "INSERT INTO agents (id, email, name, tier, password_hash, totp_secret, totp_key_id, created_at, updated_at) VALUES (\(UUID()), 'x@example.com', 'X', 'tier9', 'h', '\\x00'::bytea, 'k', \(now), \(now))"
        )
        try connection.execute("UPDATE cases SET unlocks_done = ARRAY['remove_rescue_email'] WHERE id = \(caseID)")
        try connection.execute(evidence(kind: "invoice", document: true))
        try connection.execute(evidence(kind: "transcript", document: false))
        try connection.execute("COMMIT")
    }
}
