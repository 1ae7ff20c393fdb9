/// What was taken: the account, or a device locked through it.
public enum CaseKind: String, Sendable, Codable, CaseIterable {
    /// The account was taken over (stolen credentials, rescue address added, …).
    case accountTakeover = "account_takeover"
    /// A device is activation-locked or in lost mode.
    case activationLock = "activation_lock"
}

/// Where a case stands in the workflow.
public enum CaseState: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    /// Opened, waiting for triage at tier 1.
    case new
    /// Tier 2 checks identity against what is on file.
    case identityCheck = "identity_check"
    /// Waiting for the customer's documents (the SLA clock is paused).
    case awaitingDocuments = "awaiting_documents"
    /// Tier 3 reviews the documents.
    case documentReview = "document_review"
    /// Engineering performs the unlock.
    case engineering
    /// Access restored or reset sent.
    case resolved
    /// Ownership could not be confirmed.
    case rejected
    /// Finished for good (until someone opens a new case).
    case closed
    /// A duplicate merged into another case (`merged_into`); its evidence and notes count there. Unmerge undoes it.
    case merged

    /// The tier that holds a case in this state; nil in resolved, rejected and closed, which keep the last one.
    public var tier: Tier? {
        switch self {
        case .new: .tier1
        case .identityCheck: .tier2
        case .awaitingDocuments, .documentReview: .tier3
        case .engineering: .engineering
        case .resolved, .rejected, .closed, .merged: nil
        }
    }

    /// True while work remains (every state but resolved, rejected, closed and merged): only open cases have a due date.
    public var isOpen: Bool { tier != nil }
}

/// How the case will be recovered, known once an agent takes the first deciding step.
public enum RecoveryPath: String, Sendable, Codable, CaseIterable {
    /// Not decided yet.
    case undetermined
    /// Answers matched: a reset went to the verified primary address.
    case reset
    /// Two of three factors matched: engineering removes what the thief added.
    case verifiedIdentity = "verified_identity"
    /// Identity not verified: proof of ownership by documents.
    case documents
    /// Only the device can be recovered: documents, then engineering removes the lock.
    case activationLock = "activation_lock"
}

/// A workflow transition an agent may request (see `Workflow.rules`).
public enum CaseAction: String, Sendable, Codable, CaseIterable {
    /// Send a reset to the verified primary address.
    case sendReset = "send_reset"
    /// Hand a new case to tier 2.
    case escalate
    /// Record that two of three factors matched; hand to engineering.
    case verify
    /// Ask the customer for proof of ownership.
    case requestDocuments = "request_documents"
    /// Start reviewing the documents received.
    case beginReview = "begin_review"
    /// Accept the documents; hand to engineering.
    case approve
    /// Refuse the documents.
    case reject
    /// Engineering performed the unlock.
    case complete
    /// Take a finished case back to tier 2.
    case reopen
    /// Close a finished case.
    case close

    /// The row of the transition table for this action.
    public var rule: TransitionRule { Workflow.rules.first { $0.action == self }! }

    /// True when the agent must say why: refusals, re-openings, closings and asking the victim for documents.
    public var requiresReason: Bool {
        switch self {
        case .reject, .reopen, .close, .requestDocuments: true
        default: false
        }
    }
}

/// What engineering undid to complete a case.
public enum UnlockKind: String, Sendable, Codable, CaseIterable {
    /// Remove the rescue address the thief added.
    case removeRescueEmail = "remove_rescue_email"
    /// Reset the security questions the thief changed.
    case resetSecurityQuestions = "reset_security_questions"
    /// Remove the activation lock so the device can be set up as new.
    case removeActivationLock = "remove_activation_lock"
}

/// Where a recorded unlock step stands (api.md v1.2 "Cooling-off"): it waits `RECLAIM_UNLOCK_DELAY`, then the service
/// does it, unless an engineer or the customer's "this wasn't me" link cancels it first.
public enum UnlockStatus: String, Sendable, Codable, CaseIterable {
    /// Recorded, waiting for its `effective_at`.
    case scheduled
    /// Done by the service when its time came (`unlock_done`, actor `system`).
    case done
    /// Cancelled before its time (`unlock_cancelled`).
    case cancelled
}

/// What the thief changed, as reported when the case was opened.
public struct CaseFacts: Sendable, Hashable, Codable {
    /// The thief added a rescue address.
    public var rescueEmailAdded: Bool
    /// The thief changed the security questions.
    public var securityQuestionsChanged: Bool
    /// The thief turned on two-step verification: the account cannot be recovered, only the device.
    public var twoStepEnabled: Bool
    /// The device was put in lost mode.
    public var lostModeEnabled: Bool

    /// Facts, all false unless given.
    public init(rescueEmailAdded: Bool = false, securityQuestionsChanged: Bool = false, twoStepEnabled: Bool = false, lostModeEnabled: Bool = false) {
        self.rescueEmailAdded = rescueEmailAdded
        self.securityQuestionsChanged = securityQuestionsChanged
        self.twoStepEnabled = twoStepEnabled
        self.lostModeEnabled = lostModeEnabled
    }

    // JSON field names.
    private enum CodingKeys: String, CodingKey {
        case rescueEmailAdded = "rescue_email_added"
        case securityQuestionsChanged = "security_questions_changed"
        case twoStepEnabled = "two_step_enabled"
        case lostModeEnabled = "lost_mode_enabled"
    }

    /// Decodes facts; an absent field means "not reported" and reads as false.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rescueEmailAdded = try c.decodeIfPresent(Bool.self, forKey: .rescueEmailAdded) ?? false
        securityQuestionsChanged = try c.decodeIfPresent(Bool.self, forKey: .securityQuestionsChanged) ?? false
        twoStepEnabled = try c.decodeIfPresent(Bool.self, forKey: .twoStepEnabled) ?? false
        lostModeEnabled = try c.decodeIfPresent(Bool.self, forKey: .lostModeEnabled) ?? false
    }
}

/// The customer's language: for the status page and every message sent to them (api.md v1.1).
public enum CustomerLanguage: String, Sendable, Codable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"
    case traditionalChinese = "zh-Hant"
}
