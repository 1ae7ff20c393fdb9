import Foundation
import Testing

@testable import ReclaimCore

@Suite struct WorkflowRuleTests {
    let workflow = Workflow()
    let t0 = utc(2026, 3, 1, 9)

    func snapshot(_ state: CaseState, kind: CaseKind = .accountTakeover, facts: CaseFacts = CaseFacts(), path: RecoveryPath? = nil, tier: Tier? = nil)
        -> CaseSnapshot
    {
        CaseSnapshot(
            kind: kind, state: state, tier: tier ?? state.tier ?? .tier2, path: path ?? Workflow.initialPath(kind: kind, facts: facts), facts: facts,
            clock: .opened(at: t0))
    }

    func decide(_ action: CaseAction, _ snapshot: CaseSnapshot, as tier: Tier = .engineering, _ context: TransitionContext = permissiveContext)
        -> Result<TransitionDecision, WorkflowRefusal>
    {
        workflow.decide(action, on: snapshot, actorTier: tier, context: context, now: t0.addingTimeInterval(hour))
    }

    @Test func openingStartsNewAtTierOne() {
        let opened = workflow.opening(kind: .accountTakeover, facts: CaseFacts(rescueEmailAdded: true), at: t0)
        #expect(opened.state == .new && opened.tier == .tier1 && opened.path == .undetermined)
        #expect(opened.clock == SLAClock(openedAt: t0, stateEnteredAt: t0))
        #expect(workflow.opening(kind: .activationLock, facts: CaseFacts(), at: t0).path == .activationLock)
        #expect(workflow.opening(kind: .accountTakeover, facts: CaseFacts(twoStepEnabled: true), at: t0).path == .activationLock)
    }

    @Test func pathsFollowTheDecidingAction() throws {
        #expect(try decide(.sendReset, snapshot(.new)).get().after.path == .reset)
        #expect(try decide(.verify, snapshot(.identityCheck)).get().after.path == .verifiedIdentity)
        #expect(try decide(.requestDocuments, snapshot(.identityCheck)).get().after.path == .documents)
        #expect(try decide(.requestDocuments, snapshot(.new, kind: .activationLock)).get().after.path == .activationLock)
        #expect(try decide(.requestDocuments, snapshot(.new, facts: CaseFacts(twoStepEnabled: true))).get().after.path == .activationLock)
        #expect(try decide(.escalate, snapshot(.new)).get().after.path == .undetermined)
        #expect(try decide(.reopen, snapshot(.resolved, path: .reset)).get().after.path == .undetermined)
        #expect(try decide(.reopen, snapshot(.rejected, kind: .activationLock)).get().after.path == .activationLock)
        #expect(try decide(.approve, snapshot(.documentReview, path: .documents)).get().after.path == .documents)
    }

    @Test func finishedStatesKeepTheLastTier() throws {
        #expect(try decide(.sendReset, snapshot(.new)).get().after.tier == .tier1)
        #expect(try decide(.sendReset, snapshot(.identityCheck)).get().after.tier == .tier2)
        #expect(try decide(.reject, snapshot(.documentReview, path: .documents)).get().after.tier == .tier3)
        #expect(try decide(.complete, snapshot(.engineering, path: .verifiedIdentity)).get().after.tier == .engineering)
        #expect(try decide(.close, snapshot(.resolved, tier: .engineering), as: .tier1).get().after.tier == .engineering)
        #expect(try decide(.reopen, snapshot(.rejected, tier: .tier3), as: .tier2).get().after.tier == .tier2)
    }

    @Test(arguments: [CaseFacts(twoStepEnabled: true), CaseFacts(twoStepEnabled: true, lostModeEnabled: true)])
    func twoStepMeansOnlyTheDeviceCanBeRecovered(facts: CaseFacts) throws {
        for state in [CaseState.new, .identityCheck] {
            let s = snapshot(state, facts: facts)
            #expect(decide(.sendReset, s) == .failure(.notRecoverable))
            #expect(!workflow.allowedActions(for: s, standing: answersMatched, actorTier: .engineering).contains(.sendReset))
            #expect(!workflow.allowedActions(for: s, standing: answersMatched, actorTier: .engineering).contains(.verify))
        }
        #expect(decide(.verify, snapshot(.identityCheck, facts: facts)) == .failure(.notRecoverable))
        let engineering = snapshot(.engineering, facts: facts)
        #expect(decide(.complete, engineering, TransitionContext(unlock: .removeRescueEmail)) == .failure(.unlockNotAllowed))
        #expect(decide(.complete, engineering, TransitionContext(unlock: .resetSecurityQuestions)) == .failure(.unlockNotAllowed))
        let done = try decide(.complete, engineering, TransitionContext(unlock: .removeActivationLock, unlocksDone: [.removeActivationLock])).get()
        #expect(done.after.state == .resolved && done.unlock == .removeActivationLock)
        #expect(Workflow.allowedUnlocks(kind: .accountTakeover, facts: facts) == [.removeActivationLock])
    }

    @Test func activationLockKindFollowsTheDeviceRules() {
        let s = snapshot(.identityCheck, kind: .activationLock)
        #expect(decide(.sendReset, s) == .failure(.notRecoverable))
        #expect(decide(.verify, s) == .failure(.notRecoverable))
        #expect(workflow.allowedActions(for: s, standing: answersMatched, actorTier: .tier2) == [.requestDocuments])
        let engineering = snapshot(.engineering, kind: .activationLock)
        #expect(decide(.complete, engineering, TransitionContext(unlock: .removeRescueEmail)) == .failure(.unlockNotAllowed))
        #expect(
            (try? decide(.complete, engineering, TransitionContext(unlock: .removeActivationLock, unlocksDone: [.removeActivationLock])).get().after
                .state) == .resolved)
    }

    @Test func accountCasesDoNotRemoveActivationLocks() {
        let engineering = snapshot(.engineering, path: .verifiedIdentity)
        #expect(decide(.complete, engineering, TransitionContext(unlock: .removeActivationLock)) == .failure(.unlockNotAllowed))
        #expect(decide(.complete, engineering, TransitionContext()) == .failure(.unlockRequired))
        for unlock in [UnlockKind.removeRescueEmail, .resetSecurityQuestions] {
            #expect((try? decide(.complete, engineering, TransitionContext(unlock: unlock, unlocksDone: [unlock])).get().unlock) == unlock)
        }
    }

    @Test func sendResetNeedsEveryAnswer() {
        #expect(decide(.sendReset, snapshot(.new), as: .tier1, TransitionContext(allOnFileAnswersMatched: false)) == .failure(.answersNotMatched))
        #expect(
            (try? decide(.sendReset, snapshot(.new), as: .tier1, TransitionContext(allOnFileAnswersMatched: true)).get().after.state) == .resolved)
        #expect(VerificationPolicy.allOnFileAnswersMatched(onFile: ["q1", "q2"], matched: ["q1", "q2", "q3"]))
        #expect(!VerificationPolicy.allOnFileAnswersMatched(onFile: ["q1", "q2"], matched: ["q1"]))
        #expect(!VerificationPolicy.allOnFileAnswersMatched(onFile: [], matched: ["q1"]))
    }

    @Test func verifyNeedsTwoFactorsAndReportsThem() throws {
        let s = snapshot(.identityCheck)
        let one = VerificationOutcome(factors: [.card: .matched, .device: .mismatched])
        #expect(decide(.verify, s, TransitionContext(verification: one)) == .failure(.verificationFailed(one)))
        #expect(decide(.verify, s, TransitionContext()) == .failure(.verificationFailed(VerificationOutcome(factors: [:]))))
        let two = VerificationOutcome(factors: [.card: .matched, .device: .matched, .securityAnswer: .mismatched])
        let decision = try decide(.verify, s, as: .tier2, TransitionContext(verification: two)).get()
        #expect(decision.verification == two && decision.after.state == .engineering)
    }

    @Test func reasonsAreRequiredWhereTheyExplainAChoice() throws {
        #expect(CaseAction.allCases.filter(\.requiresReason) == [.requestDocuments, .reject, .reopen, .close])
        let cases: [(CaseAction, CaseSnapshot)] = [
            (.requestDocuments, snapshot(.identityCheck)), (.reject, snapshot(.documentReview, path: .documents)),
            (.reopen, snapshot(.resolved, path: .reset)), (.close, snapshot(.rejected, path: .documents)),
        ]
        for (action, s) in cases {
            for blank in [nil, "", "  \n\t "] as [String?] {
                var context = permissiveContext
                context.reason = blank
                #expect(decide(action, s, context) == .failure(.reasonRequired), "\(action) with \(String(describing: blank))")
            }
            var context = permissiveContext
            context.reason = "  customer has no invoice \n"
            #expect(try decide(action, s, context).get().reason == "customer has no invoice")
        }
        var noReason = permissiveContext
        noReason.reason = nil
        #expect((try? decide(.escalate, snapshot(.new), noReason).get().reason) == .some(nil))
    }

    @Test func freezeAndAssignment() {
        for state in CaseState.allCases {
            let s = snapshot(state, path: .documents, tier: state.tier ?? .tier3)
            #expect(throws: WorkflowRefusal.insufficientTier(required: .tier2)) { try Workflow.checkFreeze(actorTier: .tier1, on: s) }
            for actor in [Tier.tier2, .tier3, .engineering] {
                if state.isOpen {
                    #expect(throws: Never.self) { try Workflow.checkFreeze(actorTier: actor, on: s) }
                } else {
                    #expect(throws: WorkflowRefusal.caseNotOpen) { try Workflow.checkFreeze(actorTier: actor, on: s) }
                }
            }
        }
        let review = snapshot(.documentReview, path: .documents)
        #expect(throws: Never.self) { try Workflow.checkAssignment(actorTier: .tier3, assigneeTier: .engineering, on: review) }
        #expect(throws: WorkflowRefusal.insufficientTier(required: .tier3)) {
            try Workflow.checkAssignment(actorTier: .tier3, assigneeTier: .tier2, on: review)
        }
        #expect(throws: WorkflowRefusal.insufficientTier(required: .tier3)) {
            try Workflow.checkAssignment(actorTier: .tier2, assigneeTier: .tier3, on: review)
        }
        #expect(EvidenceKind.allCases.filter { $0.reviewMinimumTier == .tier2 } == [.securityAnswers, .card, .device])
    }

    @Test func wireValues() throws {
        #expect(CaseKind.allCases.map(\.rawValue) == ["account_takeover", "activation_lock"])
        #expect(
            CaseState.allCases.map(\.rawValue) == [
                "new", "identity_check", "awaiting_documents", "document_review", "engineering", "resolved", "rejected", "closed", "merged",
            ])
        #expect(RecoveryPath.allCases.map(\.rawValue) == ["undetermined", "reset", "verified_identity", "documents", "activation_lock"])
        #expect(
            CaseAction.allCases.map(\.rawValue) == [
                "send_reset", "escalate", "verify", "request_documents", "begin_review", "approve", "reject", "complete", "reopen", "close",
            ])
        #expect(UnlockKind.allCases.map(\.rawValue) == ["remove_rescue_email", "reset_security_questions", "remove_activation_lock"])
        let facts = CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: false, twoStepEnabled: true, lostModeEnabled: false)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(
            String(decoding: try encoder.encode(facts), as: UTF8.self)
                == #"{"lost_mode_enabled":false,"rescue_email_added":true,"security_questions_changed":false,"two_step_enabled":true}"#)
        #expect(try JSONDecoder().decode(CaseFacts.self, from: Data(#"{"two_step_enabled": true}"#.utf8)) == CaseFacts(twoStepEnabled: true))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CaseFacts.self, from: Data(#"{"two_step_enabled": "yes"}"#.utf8)) }
    }
}
