/// What was taken: the account, or a device locked through it.
public enum CaseKind: String, Sendable, Codable, CaseIterable {
    case accountTakeover = "account_takeover"
    case activationLock = "activation_lock"
}

/// Where a case stands in the workflow.
public enum CaseState: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    case new
    case identityCheck = "identity_check"
    case awaitingDocuments = "awaiting_documents"
    case documentReview = "document_review"
    case engineering
    case resolved
    case rejected
    case closed

    /// The tier that holds a case in this state; nil in resolved, rejected and closed, which keep the last one.
    public var tier: Tier? {
        switch self {
        case .new: .tier1
        case .identityCheck: .tier2
        case .awaitingDocuments, .documentReview: .tier3
        case .engineering: .engineering
        case .resolved, .rejected, .closed: nil
        }
    }

    /// True while work remains (every state but resolved, rejected and closed): only open cases have a due date.
    public var isOpen: Bool { tier != nil }
}

/// How the case will be recovered, known once an agent takes the first deciding step.
public enum RecoveryPath: String, Sendable, Codable, CaseIterable {
    case undetermined
    case reset
    case verifiedIdentity = "verified_identity"
    case documents
    case activationLock = "activation_lock"
}

/// A workflow transition an agent may request (see `Workflow.rules`).
public enum CaseAction: String, Sendable, Codable, CaseIterable {
    case sendReset = "send_reset"
    case escalate
    case verify
    case requestDocuments = "request_documents"
    case beginReview = "begin_review"
    case approve
    case reject
    case complete
    case reopen
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
    case removeRescueEmail = "remove_rescue_email"
    case resetSecurityQuestions = "reset_security_questions"
    case removeActivationLock = "remove_activation_lock"
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

    /// JSON field names.
    public enum CodingKeys: String, CodingKey {
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
