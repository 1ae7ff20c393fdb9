import Foundation
import Testing
@testable import ReclaimCore

@Suite struct GuidanceTests {
    let none = Set<EvidenceKind>()

    @Test func missingByPath() {
        let facts = CaseFacts()
        #expect(missingEvidence(path: .documents, kind: .accountTakeover, facts: facts, have: none) == ["proof_of_purchase", "imei_photo"])
        #expect(missingEvidence(path: .documents, kind: .accountTakeover, facts: facts, have: [.boxPhoto]) == ["imei_photo"])
        #expect(missingEvidence(path: .documents, kind: .accountTakeover, facts: facts, have: [.carrierContract, .imeiPhoto]) == [])
        #expect(missingEvidence(path: .documents, kind: .accountTakeover, facts: facts, have: [.warrantyCard, .policeReport, .transcript]) == ["proof_of_purchase", "imei_photo"])
        #expect(missingEvidence(path: .documents, kind: .accountTakeover, facts: CaseFacts(lostModeEnabled: true), have: [.invoice, .imeiPhoto]) == ["lock_screen_photo"])
        #expect(missingEvidence(path: .activationLock, kind: .activationLock, facts: facts, have: none) == ["proof_of_purchase", "imei_photo", "lock_screen_photo"])
        #expect(missingEvidence(path: .activationLock, kind: .accountTakeover, facts: CaseFacts(twoStepEnabled: true), have: [.invoice, .lockScreenPhoto]) == ["imei_photo"])
        #expect(missingEvidence(path: .undetermined, kind: .accountTakeover, facts: facts, have: none) == ["security_answer", "card", "device"])
        #expect(missingEvidence(path: .undetermined, kind: .accountTakeover, facts: facts, have: [.card, .invoice]) == ["security_answer", "device"])
        #expect(missingEvidence(path: .verifiedIdentity, kind: .accountTakeover, facts: facts, have: none) == [])
        #expect(missingEvidence(path: .reset, kind: .accountTakeover, facts: facts, have: none) == [])
        for state in [CaseState.engineering, .resolved, .rejected, .closed] {
            #expect(missingEvidence(state: state, path: .documents, kind: .accountTakeover, facts: facts, have: none) == [])
        }
        #expect(missingEvidence(state: .awaitingDocuments, path: .documents, kind: .accountTakeover, facts: facts, have: none) == ["proof_of_purchase", "imei_photo"])
        #expect(Requirement.allCases.allSatisfy { !$0.plainText.isEmpty })
    }

    @Test func plainWords() {
        #expect(plainState(.identityCheck) == "We are checking your identity")
        #expect(Set(CaseState.allCases.map(plainState)).count == CaseState.allCases.count)
        let due = utc(2026, 3, 14, 17, 30)
        #expect(customerNextStep(state: .engineering, path: .verifiedIdentity, dueAt: due).contains("14 March 2026"))
        #expect(customerNextStep(state: .new, path: .undetermined, dueAt: nil).contains("as soon as we can"))
        #expect(customerNextStep(state: .awaitingDocuments, path: .activationLock, dueAt: nil).contains("locked or lost"))
        #expect(!customerNextStep(state: .awaitingDocuments, path: .documents, dueAt: nil).contains("locked or lost"))
        #expect(customerNextStep(state: .resolved, path: .reset, dueAt: nil).contains("verified primary"))
        #expect(customerNextStep(state: .resolved, path: .activationLock, dueAt: nil).contains("activation lock"))
        for state in CaseState.allCases {
            for path in RecoveryPath.allCases {
                let text = customerNextStep(state: state, path: path, dueAt: due)
                #expect(!text.isEmpty && !text.lowercased().contains("rescue"), "never points the victim at the thief's address")
            }
        }
        #expect(plainDate(utc(2027, 1, 2, 23, 59)) == "2 January 2027 (UTC)")
        // Overdue: no promise of news by a date already gone.
        let late = customerNextStep(state: .new, path: .undetermined, dueAt: due, now: utc(2026, 3, 20, 9, 0))
        #expect(late.contains("longer than we promised") && !late.contains("We expect to have news"))
        #expect(customerNextStep(state: .new, path: .undetermined, dueAt: due, now: utc(2026, 3, 10, 9, 0)).contains("by 14 March 2026"))
    }

    /// "key:mark" per stage, for compact comparisons.
    private func line(_ state: CaseState, _ path: RecoveryPath) -> String {
        customerProgress(state: state, path: path).map { "\($0.key):\($0.mark.rawValue)" }.joined(separator: " ")
    }

    @Test func progressLineFollowsThePath() {
        #expect(line(.new, .undetermined) == "received:current identity_check:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.identityCheck, .undetermined) == "received:done identity_check:current restoring:upcoming finished:upcoming")
        #expect(line(.engineering, .verifiedIdentity) == "received:done identity_check:done restoring:current finished:upcoming")
        #expect(line(.resolved, .reset) == "received:done identity_check:done finished:done")
        #expect(line(.awaitingDocuments, .documents)
            == "received:done identity_check:done documents:current review:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.documentReview, .activationLock) == "received:done documents:done review:current restoring:upcoming finished:upcoming")
        // An activation-lock case escalated to the identity check has not reached a stage of its own path yet.
        #expect(line(.identityCheck, .activationLock) == "received:current documents:upcoming review:upcoming restoring:upcoming finished:upcoming")
        #expect(line(.rejected, .documents) == "received:done identity_check:done documents:done review:done finished:done")
        #expect(line(.closed, .activationLock) == "received:done documents:done review:done finished:done")
        #expect(customerProgress(state: .rejected, path: .documents).last?.label == "Not confirmed")
        #expect(customerProgress(state: .closed, path: .reset).last?.label == "Closed")
        #expect(customerProgress(state: .resolved, path: .reset).last?.label == "Reset link sent")
        #expect(customerProgress(state: .engineering, path: .activationLock).first { $0.mark == .current }?.label == "Removing the lock")
        // Exactly one current stage while open; none once finished.
        for path in RecoveryPath.allCases {
            for state in CaseState.allCases {
                let marks = customerProgress(state: state, path: path).map(\.mark)
                #expect(marks.filter { $0 == .current }.count == (state.isOpen ? 1 : 0), "\(state) on \(path)")
            }
        }
    }
}
