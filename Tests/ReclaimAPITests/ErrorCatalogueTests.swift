import Foundation
import HTTPServer
import ReclaimCore
import ReclaimOperations
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// One catalogue of problem codes and refusals: each code declared once with the status it is always answered with,
/// each refusal with its code, message and members; all of them in `/openapi.json`, all rendered by the one mapper.
@Suite struct ErrorCatalogueTests {
    /// Every refusal of the domain, one value of each case.
    static let refusals: [any Refusal] = WorkflowRefusal.examples + OperationError.examples + IdentityAdministrationError.examples

    @Test func everyCodeIsDeclaredOnceAcrossTheTransportAndTheService() {
        let codes = ErrorCode.everyKind.map(\.code)
        #expect(Set(codes).count == codes.count)
        for kind in ErrorCode.everyKind {
            #expect((400...599).contains(kind.status), "\(kind.code)")
            #expect(!kind.title.isEmpty && kind.title != "Error", "\(kind.code)")
        }
    }

    @Test func everyRefusalHasADeclaredCodeItsStatusAndASentence() {
        // The examples name each case once (a value listed twice would hide a case left out).
        #expect(Set(Self.refusals.map { String(reflecting: $0) }).count == Self.refusals.count)
        #expect(WorkflowRefusal.examples.count == 17)
        for refusal in Self.refusals {
            let problem = refusal.problem
            let declared = ErrorCode.everyKind.filter { $0.code == problem.code }
            #expect(declared.count == 1, "\(refusal): \(problem.code) is declared once")
            // One status per code, but for the one the contract answers with two (case_erased: a look-up 410, a change 409).
            let also = (declared.first as? ErrorCode)?.alsoAnswered
            #expect(
                declared.first?.status == problem.status || also == problem.status,
                "\(refusal): \(problem.code) is always \(declared.first?.status ?? 0)")
            #expect(declared.first?.title == problem.title || also == problem.status, "\(refusal)")
            let detail = problem.detail ?? ""
            #expect(detail.count > 10 && detail.hasSuffix("."), "\(refusal): a sentence, not \(detail)")
            #expect(!refusal.message.isEmpty)
        }
    }

    @Test func theOneMapperRendersEveryRefusalAsTheCatalogueDeclaresIt() throws {
        for refusal in Self.refusals {
            let mapped = try #require(ProblemMapping.map(refusal), "\(refusal)")
            let declared = refusal.problem
            #expect(mapped.code == declared.code && mapped.status == declared.status && mapped.detail == declared.detail, "\(refusal)")
            let response = HTTPResponse.problem(mapped, requestID: "r1")
            #expect(response.status == declared.status)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect(json["code"] as? String == declared.code)
            #expect(json["detail"] as? String == declared.detail)
            for key in declared.extraMembers.keys { #expect(json[key] != nil, "\(refusal) carries \(key)") }
            for (name, value) in declared.extraHeaders { #expect(response.header(name) == value, "\(refusal) sends \(name)") }
        }
    }

    @Test func theWorkflowsCodesAndStatusesAreStable() {
        // What clients switch on: a change here breaks them.
        let table: [(WorkflowRefusal, String, Int)] = [
            (.invalidTransition(from: .new, action: .approve), "invalid_transition", 409),
            (.insufficientTier(required: .tier2), "insufficient_tier", 403),
            (.verificationFailed(VerificationOutcome(factors: [:])), "verification_failed", 409), (.notRecoverable, "not_recoverable", 409),
            (.caseNotOpen, "case_not_open", 409), (.unlockRequired, "unlock_required", 422), (.unlockNotAllowed, "unlock_not_allowed", 422),
            (.answersNotMatched, "answers_not_matched", 409), (.reasonRequired, "reason_required", 422),
            (.documentsMissing([]), "documents_missing", 409),
            (.documentsPending, "documents_pending", 409), (.unlocksOutstanding([]), "unlocks_outstanding", 409), (.alreadyDone, "already_done", 409),
            (.notSameAccount, "not_same_account", 409), (.differentCustomer(["customer.name"]), "different_customer", 409),
        ]
        for (refusal, code, status) in table {
            #expect(refusal.problem.code == code && refusal.problem.status == status, "\(refusal)")
        }
    }

    @Test func refusalsCarryTheirMembersAndHeaders() {
        let outcome = VerificationOutcome(factors: [.card: .matched, .device: .mismatched])
        #expect(
            WorkflowRefusal.verificationFailed(outcome).problem.extraMembers["factors"] as? [String: String] == [
                "card": "matched", "device": "mismatched", "security_answer": "missing",
            ])
        #expect(WorkflowRefusal.documentsMissing([.proofOfPurchase]).problem.extraMembers["missing"] as? [String] == ["proof_of_purchase"])
        #expect(WorkflowRefusal.insufficientTier(required: .tier3).problem.extraMembers["required_tier"] as? String == "tier3")
        let incomplete = OperationError.refusedAfterRecording(.unlocksOutstanding([.resetSecurityQuestions]), version: 7).problem
        #expect(incomplete.code == "unlocks_outstanding" && incomplete.extraMembers["outstanding"] as? [String] == ["reset_security_questions"])
        #expect(incomplete.extraHeaders.contains { $0 == ("ETag", "\"7\"") })
        #expect(OperationError.stale(current: 3).problem.extraHeaders.contains { $0 == ("ETag", "\"3\"") })
        let invalid = IdentityAdministrationError.invalid(field: "email", "Not a valid email address.").problem
        #expect(invalid.code == "validation_failed" && invalid.fieldErrors == [FieldError(field: "email", message: "Not a valid email address.")])
    }

    @Test func theCommandLinePrintsTheCataloguesMessages() {
        #expect(Refusals.message(for: IdentityAdministrationError.agentExists) == "An agent with this email already exists.")
        #expect(IdentityAdministrationError.lockout(.lastAdmin).description == IdentityAdministrationError.lockout(.lastAdmin).problem.detail)
        #expect(
            Refusals.message(for: IdentityAdministrationError.invalid(field: "email", "Not a valid email address."))
                == "email: Not a valid email address.")
        #expect(Refusals.message(for: OperationError.accountExists) == OperationError.accountExists.problem.detail)
        #expect(Refusals.message(for: OperationError.refused(.reasonRequired, caseID: nil)) == "Give a reason for this action.")
        #expect(Refusals.message(for: CancellationError()) == nil)
    }

    @Test func openAPIListsEveryCodeAndEveryRefusalWithItsStatus() throws {
        let service = try TestService()
        defer { service.stop() }
        let document = try service.client().request("GET", "/openapi.json").json()
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let code = ((schemas?["Problem"] as? [String: Any])?["properties"] as? [String: Any])?["code"] as? [String: Any]
        let listed = try #require(code?["enum"] as? [String])
        #expect(Set(listed) == Set(ErrorCode.everyKind.map(\.code)))
        let table = try #require(code?["x-codes"] as? [String: [String: Any]])
        #expect(table["stale_version"]?["status"] as? Int == 412)
        for refusal in Self.refusals {
            let problem = refusal.problem
            let documented = [table[problem.code]?["status"] as? Int, table[problem.code]?["also_status"] as? Int]
            #expect(documented.contains(problem.status), "\(refusal) documented as \(problem.code) \(problem.status)")
        }
        // The case-changing routes name each of their refusals' codes, by status, from the catalogue.
        let transition =
            ((document["paths"] as? [String: Any])?["/api/v1/cases/{case_number}/transitions"] as? [String: Any])?["post"] as? [String: Any]
        let responses = try #require(transition?["responses"] as? [String: [String: Any]])
        for refusal in WorkflowRefusal.examples {
            let text = responses[String(refusal.problem.status)]?["description"] as? String ?? ""
            #expect(text.contains(refusal.problem.code), "\(refusal.problem.code) under \(refusal.problem.status): \(text)")
        }
        #expect((responses["409"]?["description"] as? String)?.contains("documents_missing (with missing)") == true)
    }
}
