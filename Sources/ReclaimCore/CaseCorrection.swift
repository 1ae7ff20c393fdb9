import Foundation

/// Correcting an open case's details (api.md v1.2 "A case can be corrected"): what a change of the facts does to
/// the case's path, and which facts changed. Pure: the operation loads, asks and stores.
public enum CaseCorrectionRule {
    /// The path after the facts become `facts`: unchanged unless the change makes the case device-only or no longer
    /// so (two-step verification, on an account takeover). Then, in `new` and `identity_check`, the initial path for
    /// the new facts (nothing was decided yet); in `awaiting_documents` and `document_review` the documents path that
    /// `request_documents` would have chosen (the documents gate reads the path, so approval asks for the new path's
    /// documents). In `engineering` the case got there by `verify` or `approve` on the old facts, and neither would
    /// have been taken on the new ones (verify is refused on a device-only case; approval checked the other path's
    /// documents): `pathDecided`. A finished case is `caseNotOpen`.
    public static func path(after facts: CaseFacts, on snapshot: CaseSnapshot) -> Result<RecoveryPath, WorkflowRefusal> {
        guard snapshot.state.isOpen else { return .failure(.caseNotOpen) }
        let deviceOnly = Workflow.isDeviceOnly(kind: snapshot.kind, facts: facts)
        guard deviceOnly != Workflow.isDeviceOnly(kind: snapshot.kind, facts: snapshot.facts) else { return .success(snapshot.path) }
        switch snapshot.state {
        case .new, .identityCheck: return .success(Workflow.initialPath(kind: snapshot.kind, facts: facts))
        case .awaitingDocuments, .documentReview: return .success(deviceOnly ? .activationLock : .documents)
        case .engineering: return .failure(.pathDecided)
        case .resolved, .rejected, .closed, .merged: return .failure(.caseNotOpen)
        }
    }
}

extension CaseCorrectionRule {
    /// The least tier that may correct what the thief changed (the facts and the rescue address) on a case in this
    /// state: nil (any agent) while tier 1 holds it, tier 2 once it left tier 1 (api.md v1.3 "What the thief added is
    /// never forgotten").
    public static func thiefFactsMinimumTier(on snapshot: CaseSnapshot) -> Tier? {
        guard let holder = snapshot.state.tier, holder != .tier1 else { return nil }
        return .tier2
    }
}

/// One of the four things the thief may have changed, by its API name (`facts.<name>`), in the representation's order.
public enum CaseFact: String, Sendable, CaseIterable {
    case rescueEmailAdded = "rescue_email_added"
    case securityQuestionsChanged = "security_questions_changed"
    case twoStepEnabled = "two_step_enabled"
    case lostModeEnabled = "lost_mode_enabled"
}

extension CaseFacts {
    /// The value of one fact.
    public subscript(fact: CaseFact) -> Bool {
        get {
            switch fact {
            case .rescueEmailAdded: rescueEmailAdded
            case .securityQuestionsChanged: securityQuestionsChanged
            case .twoStepEnabled: twoStepEnabled
            case .lostModeEnabled: lostModeEnabled
            }
        }
        set {
            switch fact {
            case .rescueEmailAdded: rescueEmailAdded = newValue
            case .securityQuestionsChanged: securityQuestionsChanged = newValue
            case .twoStepEnabled: twoStepEnabled = newValue
            case .lostModeEnabled: lostModeEnabled = newValue
            }
        }
    }

    /// The facts that differ in `other`, with their new value, in `CaseFact` order.
    public func changes(to other: CaseFacts) -> [(fact: CaseFact, value: Bool)] {
        CaseFact.allCases.filter { self[$0] != other[$0] }.map { ($0, other[$0]) }
    }
}
