import Foundation
import ReclaimCore
import ReclaimTestSupport
import Testing

/// The vocabularies reach the pages and `/openapi.json` from their one declaration (`allCases`), never as copies.
@Suite struct VocabularyTests {
    @Test func everyoneReadsTheVocabulariesInTheServicesOrder() throws {
        let service = try TestService()
        defer { service.stop() }
        // No session and no key: the status page reads them before anyone has a case.
        let response = try service.client().request("GET", "/api/v1/vocabulary")
        #expect(response.status == 200)
        let lists = try response.json()
        #expect(lists["document_kinds"] as? [String] == DocumentType.allCases.map(\.rawValue))
        #expect(lists["evidence_kinds"] as? [String] == EvidenceKind.allCases.map(\.rawValue))
        #expect(lists["upload_kinds"] as? [String] == DocumentType.allCases.map(\.rawValue) + ["transcript"])
        #expect(lists["tiers"] as? [String] == ["tier1", "tier2", "tier3", "engineering"])
        #expect(lists["case_states"] as? [String] == CaseState.allCases.map(\.rawValue))
        #expect(lists["finished_states"] as? [String] == ["resolved", "rejected", "closed", "merged"])
        #expect((lists["event_types"] as? [String])?.contains("evidence_filed") == true)
        #expect((lists["webhook_events"] as? [String])?.contains("evidence.filed") == true)
        let uploads = try #require(lists["requirement_uploads"] as? [String: [String]])
        #expect(
            uploads == [
                "proof_of_purchase": ["invoice", "box_photo", "carrier_contract"], "imei_photo": ["imei_photo"],
                "lock_screen_photo": ["lock_screen_photo"],
            ])
    }

    @Test func openAPIEnumeratesEachVocabularyFromItsDeclaration() throws {
        let service = try TestService()
        defer { service.stop() }
        let document = try service.client().request("GET", "/openapi.json").json()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        func words(_ schema: String, _ path: String...) -> [String]? {
            var node: Any? = schemas[schema]
            for key in path { node = ((node as? [String: Any])?["properties"] as? [String: Any])?[key] ?? (node as? [String: Any])?[key] }
            return (node as? [String: Any])?["enum"] as? [String]
        }
        #expect(words("Evidence", "type") == EvidenceKind.allCases.map(\.rawValue))
        #expect(words("DocumentForm", "type") == DocumentType.allCases.map(\.rawValue))
        #expect(words("CustomerUpload", "type") == UploadKind.allRawValues)
        #expect(words("Case", "state") == CaseState.allCases.map(\.rawValue))
        #expect(words("Case", "tier") == Tier.allCases.map(\.rawValue))
        #expect(words("Case", "path") == RecoveryPath.allCases.map(\.rawValue))
        #expect(words("Case", "kind") == CaseKind.allCases.map(\.rawValue))
        #expect(words("Transition", "action") == CaseAction.allCases.map(\.rawValue))
        #expect(words("Transition", "unlock") == UnlockKind.allCases.map(\.rawValue))
        #expect(words("EvidenceReview", "decision") == ["accepted", "rejected"])
        #expect(words("Vocabulary", "document_kinds", "items") == DocumentType.allCases.map(\.rawValue))
    }
}
