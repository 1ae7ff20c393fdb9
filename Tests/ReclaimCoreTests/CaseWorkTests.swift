import Foundation
import Testing

@testable import ReclaimCore

/// Finished cases take no work, and `allowed_actions` offers only what would be taken (api.md v1.2).
@Suite struct CaseWorkTests {
    let workflow = Workflow()
    let now = utc(2026, 3, 1, 9)

    func snapshot(_ state: CaseState, tier: Tier = .tier3) -> CaseSnapshot {
        CaseSnapshot(kind: .accountTakeover, state: state, tier: state.tier ?? tier, path: .undetermined, facts: CaseFacts(), clock: .opened(at: now))
    }

    @Test func finishedCasesTakeOnlyAnInternalNoteANewCodeAndTheirOwnUndo() {
        for state in CaseState.allCases where !state.isOpen {
            let work = workflow.allowedWork(
                for: snapshot(state), standing: CaseStanding(mergedIntoState: state == .merged ? .new : nil), actorTier: .engineering)
            for refused in [CaseWork.fileEvidence, .review, .assign, .freeze, .recordUnlock, .merge] {
                #expect(!work.contains(refused), "\(refused) offered on \(state)")
                #expect(throws: WorkflowRefusal.caseNotOpen) { try refused.check(in: state) }
            }
            #expect(work.contains(.noteInternal) && work.contains(.reissueAccessCode))
            #expect(work.contains(.noteCustomer) == (state != .merged))
            #expect(work.contains(.unmerge) == (state == .merged))
        }
    }

    @Test func openCasesTakeWorkByTier() {
        let open = snapshot(.identityCheck)
        #expect(
            workflow.allowedWork(for: open, standing: CaseStanding(), actorTier: .tier1) == [
                .fileEvidence, .noteInternal, .noteCustomer, .reissueAccessCode,
            ])
        #expect(
            workflow.allowedWork(for: open, standing: CaseStanding(), actorTier: .tier2)
                == [.fileEvidence, .review, .assign, .noteInternal, .noteCustomer, .freeze, .merge, .reissueAccessCode, .giveAccessCode])
        #expect(workflow.allowedWork(for: open, standing: CaseStanding(), actorTier: nil).isEmpty)
        #expect(workflow.allowedWork(for: open, standing: CaseStanding(frozen: true), actorTier: .tier2).contains(.unfreeze))
    }

    /// `CaseStore.answerProgress` names these states in its SQL text.
    @Test func sendResetIsTakenFromTriageAndTheIdentityCheck() {
        #expect(CaseAction.sendReset.rule.from == [.new, .identityCheck])
    }

    @Test func sendResetOnlyOnceEveryAnswerOnFileMatched() {
        let triage = snapshot(.new)
        for (onFile, matched, offered) in [(2, 0, false), (2, 1, false), (2, 2, true), (0, 0, false)] {
            let standing = CaseStanding(answers: AnswerProgress(onFile: onFile, matched: matched))
            #expect(
                workflow.allowedActions(for: triage, standing: standing, actorTier: .tier1).contains(.sendReset) == offered, "\(matched) of \(onFile)"
            )
        }
    }
}
