import Foundation

/// The unlock checklist (api.md v1.1): every part the thief changed must be undone before a case is complete.
public enum UnlockChecklist {
    /// The steps engineering must perform: `remove_activation_lock` alone when only the device can be recovered;
    /// otherwise `remove_rescue_email` when a rescue address was added and `reset_security_questions` when the
    /// questions were changed (possibly none: then `complete` needs an unlock, as before).
    public static func required(kind: CaseKind, facts: CaseFacts) -> [UnlockKind] {
        if Workflow.isDeviceOnly(kind: kind, facts: facts) { return [.removeActivationLock] }
        var steps: [UnlockKind] = []
        if facts.rescueEmailAdded { steps.append(.removeRescueEmail) }
        if facts.securityQuestionsChanged { steps.append(.resetSecurityQuestions) }
        return steps
    }

    /// The steps that may be scheduled (api.md v1.3 "Every change to the account waits"): the required ones, or, when
    /// none is required (nothing the thief changed is known, or a correction emptied the list), any step the case's kind
    /// allows, since `complete` then still needs one done, and a step is only ever done through the cooling-off.
    public static func schedulable(kind: CaseKind, facts: CaseFacts) -> [UnlockKind] {
        let steps = required(kind: kind, facts: facts)
        return steps.isEmpty ? Workflow.allowedUnlocks(kind: kind, facts: facts) : steps
    }

    /// The required steps not done yet, in checklist order.
    public static func outstanding(required: [UnlockKind], done: Set<UnlockKind>) -> [UnlockKind] {
        required.filter { !done.contains($0) }
    }

    /// Whether `step` may be scheduled now: `unlockNotAllowed` when it is not `schedulable`, `alreadyDone` when it was
    /// done or is scheduled.
    public static func check(step: UnlockKind, schedulable: [UnlockKind], done: Set<UnlockKind>) throws(WorkflowRefusal) {
        guard schedulable.contains(step) else { throw .unlockNotAllowed }
        guard !done.contains(step) else { throw .alreadyDone }
    }
}

/// The documents gate and documents arriving (api.md v1.1), from the documents on a case and their review status.
public enum DocumentsGate {
    /// Why `approve` must wait, or nil: `documentsMissing` unless every document requirement of the path is met by an
    /// accepted document, then `documentsPending` while any document is still pending. Approval judges proof of
    /// ownership, so a path other than the two document paths is read as the one the case's facts call for.
    public static func refusal(
        path: RecoveryPath, kind: CaseKind, facts: CaseFacts,
        documents: [(kind: EvidenceKind, status: EvidenceStatus)]
    ) -> WorkflowRefusal? {
        let accepted = Set(documents.filter { $0.status == .accepted }.map(\.kind))
        let documentPath: RecoveryPath =
            switch path {
            case .documents, .activationLock: path
            case .undetermined, .reset, .verifiedIdentity: Workflow.isDeviceOnly(kind: kind, facts: facts) ? .activationLock : .documents
            }
        let missing = missingRequirements(path: documentPath, kind: kind, facts: facts, have: accepted)
        if !missing.isEmpty { return .documentsMissing(missing) }
        if documents.contains(where: { $0.status == .pending }) { return .documentsPending }
        return nil
    }

    /// True when every document requirement of the path has a document filed (pending or accepted): the case may move
    /// itself from `awaiting_documents` to `document_review`.
    public static func everyRequirementFiled(
        path: RecoveryPath, kind: CaseKind, facts: CaseFacts,
        documents: [(kind: EvidenceKind, status: EvidenceStatus)]
    ) -> Bool {
        let filed = Set(documents.filter { $0.status != .rejected }.map(\.kind))
        return missingRequirements(path: path, kind: kind, facts: facts, have: filed).isEmpty
    }
}

extension Workflow {
    /// True when an assignee of `assigneeTier` keeps a case that moved to `state`: the desk holding it now is not above
    /// theirs. A finished case keeps its assignee (nobody needs to pick it up).
    public static func keepsAssignee(assigneeTier: Tier?, after state: CaseState) -> Bool {
        guard let holder = state.tier else { return true }
        guard let assigneeTier else { return false }
        return assigneeTier.isAtLeast(holder)
    }

    /// True when entering `state` lifts a freeze by itself (the case is finished: resolved, rejected, closed).
    public static func liftsFreeze(entering state: CaseState) -> Bool { !state.isOpen }
}

extension Workflow {
    /// The move a case makes by itself when documents arrive: `begin_review` once every document requirement of the
    /// path has a document filed on an `awaiting_documents` case (the clock resumes); nil otherwise.
    public func documentsArrived(
        on snapshot: CaseSnapshot, documents: [(kind: EvidenceKind, status: EvidenceStatus)],
        now: Date
    ) -> TransitionDecision? {
        guard snapshot.state == .awaitingDocuments,
            DocumentsGate.everyRequirementFiled(path: snapshot.path, kind: snapshot.kind, facts: snapshot.facts, documents: documents)
        else {
            return nil
        }
        // The service acts, not an agent: the highest tier stands for "no tier check".
        return try? decide(
            .beginReview, on: snapshot, actorTier: .engineering,
            context: TransitionContext(reason: "Every requested document has arrived."), now: now
        ).get()
    }
}

extension Workflow {
    /// The move a case makes by itself when a review rejects a document (api.md v1.2): `request_documents` back to
    /// `awaiting_documents` (the clock paused) when the case is under review, no document is still pending and the
    /// accepted ones leave a requirement of the gate unmet; nil otherwise (something else still waits for review).
    public func documentRejected(
        on snapshot: CaseSnapshot, documents: [(kind: EvidenceKind, status: EvidenceStatus)],
        now: Date
    ) -> TransitionDecision? {
        guard snapshot.state == .documentReview, !documents.contains(where: { $0.status == .pending }),
            case .documentsMissing? = DocumentsGate.refusal(path: snapshot.path, kind: snapshot.kind, facts: snapshot.facts, documents: documents)
        else {
            return nil
        }
        // The service acts, not an agent: the highest tier stands for "no tier check".
        return try? decide(
            .requestDocuments, on: snapshot, actorTier: .engineering,
            context: TransitionContext(reason: "A rejected document left a requirement unmet."), now: now
        ).get()
    }
}

extension Workflow {
    /// Whether `actorTier` may schedule unlock `step` now: engineering only, on a case in `engineering`, a schedulable
    /// step not done or scheduled yet.
    public static func checkUnlock(_ step: UnlockKind, actorTier: Tier, on snapshot: CaseSnapshot, done: Set<UnlockKind>) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(.engineering) else { throw .insufficientTier(required: .engineering) }
        guard snapshot.state == .engineering else { throw .invalidTransition(from: snapshot.state, action: .complete) }
        try UnlockChecklist.check(step: step, schedulable: UnlockChecklist.schedulable(kind: snapshot.kind, facts: snapshot.facts), done: done)
    }
}
