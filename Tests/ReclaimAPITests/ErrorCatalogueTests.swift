import Foundation
import HTTPServer
@testable import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Testing

/// One catalogue of problem codes: each declared once, with the status it is always answered with, and all of them
/// in `/openapi.json`.
@Suite struct ErrorCatalogueTests {
    @Test func everyCodeIsDeclaredOnceAcrossTheTransportAndTheService() {
        let codes = ErrorCode.everyKind.map(\.code)
        #expect(Set(codes).count == codes.count)
        for kind in ErrorCode.everyKind {
            #expect((400...599).contains(kind.status), "\(kind.code)")
            #expect(!kind.title.isEmpty && kind.title != "Error", "\(kind.code)")
        }
    }

    @Test func aWorkflowRefusalIsAnsweredWithTheStatusOfItsCategory() {
        let refusals: [WorkflowRefusal] = [
            .invalidTransition(from: .new, action: .complete), .insufficientTier(required: .tier3), .notRecoverable, .caseNotOpen,
            .unlockRequired, .unlockNotAllowed, .answersNotMatched, .reasonRequired,
        ]
        for refusal in refusals {
            let expected = switch refusal.category {
            case .forbidden: 403
            case .conflict: 409
            case .invalid: 422
            }
            let problem = CaseHTTP.problem(for: refusal)
            #expect(problem.status == expected, "\(refusal.code)")
            #expect(problem.code == refusal.code)
        }
    }

    @Test func openAPIListsEveryCodeWithItsStatus() throws {
        let service = try TestService()
        defer { service.stop() }
        let document = try service.client().request("GET", "/openapi.json").json()
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let code = ((schemas?["Problem"] as? [String: Any])?["properties"] as? [String: Any])?["code"] as? [String: Any]
        let listed = try #require(code?["enum"] as? [String])
        #expect(Set(listed) == Set(ErrorCode.everyKind.map(\.code)))
        let table = try #require(code?["x-codes"] as? [String: [String: Any]])
        #expect(table["stale_version"]?["status"] as? Int == 412)
        #expect(table["case_not_open"]?["status"] as? Int == 409)
    }
}
