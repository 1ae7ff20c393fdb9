import Foundation
import Testing

@testable import ReclaimCore

@Suite struct UnlockChecklistTests {
    typealias Row = (kind: CaseKind, facts: CaseFacts, required: [UnlockKind])

    static let rows: [Row] = [
        (.accountTakeover, CaseFacts(), []),
        (.accountTakeover, CaseFacts(rescueEmailAdded: true), [.removeRescueEmail]),
        (.accountTakeover, CaseFacts(securityQuestionsChanged: true), [.resetSecurityQuestions]),
        (.accountTakeover, CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: true), [.removeRescueEmail, .resetSecurityQuestions]),
        // Two-step on: only the device can be recovered, whatever else the thief changed.
        (.accountTakeover, CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: true, twoStepEnabled: true), [.removeActivationLock]),
        (.activationLock, CaseFacts(), [.removeActivationLock]),
        (.activationLock, CaseFacts(rescueEmailAdded: true, lostModeEnabled: true), [.removeActivationLock]),
    ]

    @Test func requiredStepsFollowWhatTheThiefChanged() {
        for row in Self.rows {
            #expect(UnlockChecklist.required(kind: row.kind, facts: row.facts) == row.required, "\(row)")
        }
    }

    @Test func outstandingAndStepChecks() throws {
        let required: [UnlockKind] = [.removeRescueEmail, .resetSecurityQuestions]
        #expect(UnlockChecklist.outstanding(required: required, done: []) == required)
        #expect(UnlockChecklist.outstanding(required: required, done: [.removeRescueEmail]) == [.resetSecurityQuestions])
        #expect(UnlockChecklist.outstanding(required: required, done: Set(required)).isEmpty)
        #expect(throws: WorkflowRefusal.unlockNotAllowed) { try UnlockChecklist.check(step: .removeActivationLock, schedulable: required, done: []) }
        #expect(throws: WorkflowRefusal.alreadyDone) {
            try UnlockChecklist.check(step: .removeRescueEmail, schedulable: required, done: [.removeRescueEmail])
        }
        try UnlockChecklist.check(step: .resetSecurityQuestions, schedulable: required, done: [.removeRescueEmail])
    }

    /// With nothing required (no thief change known, or a correction emptied the list) a step may still be scheduled,
    /// one the kind allows: `complete` needs one done, and only the cooling-off does one (api.md v1.3).
    @Test func withNoStepRequiredTheKindsStepsMayBeScheduled() {
        #expect(UnlockChecklist.schedulable(kind: .accountTakeover, facts: CaseFacts()) == [.removeRescueEmail, .resetSecurityQuestions])
        #expect(UnlockChecklist.schedulable(kind: .activationLock, facts: CaseFacts()) == [.removeActivationLock])
        #expect(UnlockChecklist.schedulable(kind: .accountTakeover, facts: CaseFacts(securityQuestionsChanged: true)) == [.resetSecurityQuestions])
    }

    func snapshot(_ state: CaseState, facts: CaseFacts, kind: CaseKind = .accountTakeover) -> CaseSnapshot {
        CaseSnapshot(
            kind: kind, state: state, tier: state.tier ?? .engineering, path: .verifiedIdentity, facts: facts, clock: .opened(at: utc(2026, 3, 1)))
    }

    @Test func recordingAStepNeedsEngineeringOnAnEngineeringCase() throws {
        let facts = CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: true)
        #expect(throws: WorkflowRefusal.insufficientTier(required: .engineering)) {
            try Workflow.checkUnlock(.removeRescueEmail, actorTier: .tier3, on: snapshot(.engineering, facts: facts), done: [])
        }
        #expect(throws: WorkflowRefusal.invalidTransition(from: .resolved, action: .complete)) {
            try Workflow.checkUnlock(.removeRescueEmail, actorTier: .engineering, on: snapshot(.resolved, facts: facts), done: [])
        }
        try Workflow.checkUnlock(.removeRescueEmail, actorTier: .engineering, on: snapshot(.engineering, facts: facts), done: [])
    }

    @Test func completeWaitsForEveryRequiredStep() throws {
        let workflow = Workflow()
        let now = utc(2026, 3, 2)
        let s = snapshot(.engineering, facts: CaseFacts(rescueEmailAdded: true, securityQuestionsChanged: true))
        func complete(_ unlock: UnlockKind?, done: Set<UnlockKind>) -> Result<TransitionDecision, WorkflowRefusal> {
            workflow.decide(.complete, on: s, actorTier: .engineering, context: TransitionContext(unlock: unlock, unlocksDone: done), now: now)
        }
        // Complete never performs a step (api.md v1.3): one it names must be done already.
        #expect(complete(.removeRescueEmail, done: []) == .failure(.unlockNotScheduled))
        #expect(complete(nil, done: []) == .failure(.unlocksOutstanding([.removeRescueEmail, .resetSecurityQuestions])))
        #expect(complete(.removeActivationLock, done: []) == .failure(.unlockNotAllowed))
        #expect(complete(.resetSecurityQuestions, done: [.removeRescueEmail]) == .failure(.unlockNotScheduled))
        #expect(complete(nil, done: [.removeRescueEmail]) == .failure(.unlocksOutstanding([.resetSecurityQuestions])))
        // Everything done: complete, naming a done step or none.
        #expect((try? complete(nil, done: [.removeRescueEmail, .resetSecurityQuestions]).get().after.state) == .resolved)
        #expect((try? complete(.resetSecurityQuestions, done: [.removeRescueEmail, .resetSecurityQuestions]).get().after.state) == .resolved)
        // Nothing required (a correction emptied the list, or nothing was known): still one step done, never by complete.
        let plain = snapshot(.engineering, facts: CaseFacts())
        func completePlain(_ unlock: UnlockKind?, done: Set<UnlockKind>) -> Result<TransitionDecision, WorkflowRefusal> {
            workflow.decide(.complete, on: plain, actorTier: .engineering, context: TransitionContext(unlock: unlock, unlocksDone: done), now: now)
        }
        #expect(completePlain(nil, done: []) == .failure(.unlockRequired))
        #expect(completePlain(.resetSecurityQuestions, done: []) == .failure(.unlockNotScheduled))
        #expect((try? completePlain(nil, done: [.resetSecurityQuestions]).get().after.state) == .resolved)
        #expect((try? completePlain(.resetSecurityQuestions, done: [.resetSecurityQuestions]).get().after.state) == .resolved)
    }
}

@Suite struct DocumentsGateTests {
    typealias Docs = [(kind: EvidenceKind, status: EvidenceStatus)]
    let facts = CaseFacts()

    @Test func approveNeedsAcceptedDocumentsAndNothingPending() {
        func gate(_ docs: Docs, path: RecoveryPath = .documents, facts: CaseFacts = CaseFacts(), kind: CaseKind = .accountTakeover)
            -> WorkflowRefusal?
        {
            DocumentsGate.refusal(path: path, kind: kind, facts: facts, documents: docs)
        }
        #expect(gate([]) == .documentsMissing([.proofOfPurchase, .imeiPhoto]))
        // Pending and rejected documents do not meet a requirement.
        #expect(gate([(.invoice, .pending), (.imeiPhoto, .rejected)]) == .documentsMissing([.proofOfPurchase, .imeiPhoto]))
        #expect(gate([(.boxPhoto, .accepted), (.imeiPhoto, .accepted)]) == nil)
        // Everything met, but a document still pending: review it first.
        #expect(gate([(.boxPhoto, .accepted), (.imeiPhoto, .accepted), (.policeReport, .pending)]) == .documentsPending)
        #expect(gate([(.boxPhoto, .accepted), (.imeiPhoto, .accepted), (.policeReport, .rejected)]) == nil)
        // Lost mode adds the lock-screen photo; the activation-lock path always needs it.
        #expect(
            gate([(.invoice, .accepted), (.imeiPhoto, .accepted)], facts: CaseFacts(lostModeEnabled: true)) == .documentsMissing([.lockScreenPhoto]))
        #expect(
            gate([(.invoice, .accepted), (.imeiPhoto, .accepted)], path: .activationLock, kind: .activationLock)
                == .documentsMissing([.lockScreenPhoto]))
    }

    @Test func documentsArrivingMoveTheCaseOnceEveryRequirementHasOne() throws {
        let workflow = Workflow()
        let t0 = utc(2026, 3, 1)
        var s = CaseSnapshot(kind: .accountTakeover, state: .identityCheck, tier: .tier2, path: .undetermined, facts: facts, clock: .opened(at: t0))
        s = try workflow.decide(.requestDocuments, on: s, actorTier: .tier2, context: TransitionContext(reason: "no match"), now: t0).get().after
        #expect(s.state == .awaitingDocuments && workflow.dueAt(s) == nil)
        #expect(workflow.documentsArrived(on: s, documents: [(.invoice, .pending)], now: t0 + day) == nil)
        #expect(workflow.documentsArrived(on: s, documents: [(.invoice, .pending), (.imeiPhoto, .rejected)], now: t0 + day) == nil)
        let moved = try #require(workflow.documentsArrived(on: s, documents: [(.invoice, .pending), (.imeiPhoto, .pending)], now: t0 + day))
        #expect(moved.action == .beginReview && moved.after.state == .documentReview)
        // The clock resumes: a due date again.
        #expect(moved.dueAt != nil)
        // Only a case waiting for documents moves.
        #expect(workflow.documentsArrived(on: moved.after, documents: [(.invoice, .pending), (.imeiPhoto, .pending)], now: t0 + day) == nil)
    }

    /// api.md v1.2: a rejection that leaves a requirement unmet, with nothing else waiting for review, sends the case
    /// back to the customer by itself, its clock paused.
    @Test func aRejectionThatLeavesARequirementUnmetReturnsTheCaseToTheCustomer() throws {
        let workflow = Workflow()
        let t0 = utc(2026, 3, 1)
        var s = CaseSnapshot(kind: .accountTakeover, state: .identityCheck, tier: .tier2, path: .undetermined, facts: facts, clock: .opened(at: t0))
        s = try workflow.decide(.requestDocuments, on: s, actorTier: .tier2, context: TransitionContext(reason: "no match"), now: t0).get().after
        s = try #require(workflow.documentsArrived(on: s, documents: [(.invoice, .pending), (.imeiPhoto, .pending)], now: t0 + day)).after
        let due = try #require(workflow.dueAt(s))
        // The photo is still pending: nothing moves; every requirement accepted: nothing moves.
        #expect(workflow.documentRejected(on: s, documents: [(.invoice, .rejected), (.imeiPhoto, .pending)], now: t0 + 2 * day) == nil)
        #expect(
            workflow.documentRejected(on: s, documents: [(.invoice, .rejected), (.boxPhoto, .accepted), (.imeiPhoto, .accepted)], now: t0 + 2 * day)
                == nil)
        let back = try #require(workflow.documentRejected(on: s, documents: [(.invoice, .rejected), (.imeiPhoto, .accepted)], now: t0 + 2 * day))
        #expect(back.action == .requestDocuments && back.after.state == .awaitingDocuments && back.dueAt == nil && back.reason != nil)
        // The path's clock kept its start and is paused: when the new document arrives, the time away is not counted.
        #expect(back.after.clock.pathClockStartedAt == s.clock.pathClockStartedAt && back.after.clock.pausedSince == t0 + 2 * day)
        let resumed = try #require(
            workflow.documentsArrived(on: back.after, documents: [(.invoice, .pending), (.imeiPhoto, .accepted)], now: t0 + 5 * day))
        #expect(resumed.dueAt == due.addingTimeInterval(3 * day))
        // Only from review.
        #expect(workflow.documentRejected(on: back.after, documents: [(.invoice, .rejected)], now: t0 + 5 * day) == nil)
    }
}

@Suite struct DeskRulesTests {
    @Test func assigneeLeavesWhenTheCaseGoesAboveTheirTier() {
        let rows: [(Tier?, CaseState, Bool)] = [
            (.tier2, .engineering, false), (.tier2, .awaitingDocuments, false), (.tier3, .documentReview, true),
            (.engineering, .engineering, true), (.tier3, .engineering, false), (.tier1, .resolved, true), (.tier2, .closed, true),
            (.tier2, .identityCheck, true), (nil, .engineering, false),
        ]
        for (tier, state, keeps) in rows {
            #expect(Workflow.keepsAssignee(assigneeTier: tier, after: state) == keeps, "\(String(describing: tier)) → \(state)")
        }
    }

    @Test func finishedStatesLiftAFreeze() {
        for state in CaseState.allCases {
            #expect(Workflow.liftsFreeze(entering: state) == [.resolved, .rejected, .closed, .merged].contains(state), "\(state)")
        }
    }
}

@Suite struct ReachAndMergeRuleTests {
    @Test func clientFilingScope() {
        let rows: [(Bool, Bool, CaseState, ClientFilingScope.Verdict)] = [
            (true, false, .identityCheck, .allowed), (false, true, .awaitingDocuments, .allowed), (false, false, .new, .notFound),
            (true, false, .resolved, .notOpen), (false, true, .closed, .notOpen), (false, false, .closed, .notFound),
            (true, true, .merged, .notOpen),
        ]
        for (opened, code, state, verdict) in rows {
            #expect(ClientFilingScope.verdict(openedByCaller: opened, accessCodeMatches: code, state: state) == verdict, "\(opened) \(code) \(state)")
        }
    }

    @Test func mergeNeedsTierTwoTwoOpenCasesAndOneAccount() throws {
        func check(_ tier: Tier, _ source: CaseState, _ target: CaseState, same: Bool = false, other: String = "A@example.com") throws {
            try CaseMerge.check(actorTier: tier, source: source, target: target, sameCase: same, sourceAccount: "a@example.com", targetAccount: other)
        }
        try check(.tier2, .new, .engineering)
        #expect(throws: WorkflowRefusal.insufficientTier(required: .tier2)) { try check(.tier1, .new, .new) }
        #expect(throws: WorkflowRefusal.caseNotOpen) { try check(.tier3, .resolved, .new) }
        #expect(throws: WorkflowRefusal.caseNotOpen) { try check(.tier3, .new, .merged) }
        #expect(throws: WorkflowRefusal.caseNotOpen) { try check(.tier3, .new, .new, same: true) }
        #expect(throws: WorkflowRefusal.notSameAccount) { try check(.tier2, .new, .new, other: "b@example.com") }
        try CaseMerge.checkUnmerge(actorTier: .tier2, source: .merged, target: .identityCheck)
        #expect(throws: WorkflowRefusal.caseNotOpen) { try CaseMerge.checkUnmerge(actorTier: .tier2, source: .merged, target: .rejected) }
        #expect(throws: WorkflowRefusal.caseNotOpen) { try CaseMerge.checkUnmerge(actorTier: .tier2, source: .new, target: .new) }
        #expect(throws: WorkflowRefusal.insufficientTier(required: .tier2)) {
            try CaseMerge.checkUnmerge(actorTier: .tier1, source: .merged, target: .new)
        }
    }

    /// api.md v1.2: merging cases whose customers differ (name or contact address) needs the agent's confirmation;
    /// names compare folded (case, spacing, accents, width), addresses whole and case-insensitively.
    @Test func mergingDifferentCustomersNeedsAConfirmation() throws {
        let ada = CaseMerge.Customer(name: "Ada Lovelace", contactEmail: "ada@example.net")
        func check(_ other: CaseMerge.Customer, confirmed: Bool = false) throws {
            try CaseMerge.check(
                actorTier: .tier2, source: .new, target: .new, sameCase: false, sourceAccount: "a@example.com", targetAccount: "a@example.com",
                sourceCustomer: ada, targetCustomer: other, sameCustomerConfirmed: confirmed)
        }
        try check(CaseMerge.Customer(name: "  ada  LOVELACE ", contactEmail: "ADA@example.net"))
        try check(CaseMerge.Customer(name: "Adá Lovelace", contactEmail: "ada@example.net"))
        #expect(throws: WorkflowRefusal.differentCustomer(["customer.name"])) {
            try check(CaseMerge.Customer(name: "Eve", contactEmail: "ada@example.net"))
        }
        #expect(throws: WorkflowRefusal.differentCustomer(["customer.contact_email"])) {
            try check(CaseMerge.Customer(name: "Ada Lovelace", contactEmail: "ada+2@example.net"))
        }
        let eve = CaseMerge.Customer(name: "Eve", contactEmail: "eve@example.org")
        #expect(throws: WorkflowRefusal.differentCustomer(["customer.name", "customer.contact_email"])) { try check(eve) }
        try check(eve, confirmed: true)
        // The account rule comes first: another account is never merged, confirmed or not.
        #expect(throws: WorkflowRefusal.notSameAccount) {
            try CaseMerge.check(
                actorTier: .tier2, source: .new, target: .new, sameCase: false, sourceAccount: "a@example.com", targetAccount: "b@example.com",
                sourceCustomer: ada, targetCustomer: eve, sameCustomerConfirmed: true)
        }
    }
}
