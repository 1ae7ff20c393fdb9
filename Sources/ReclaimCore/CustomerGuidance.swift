import Foundation

/// Something a path still needs from the customer; the raw value is the word listed in the status `missing`.
public enum Requirement: String, Sendable, Codable, CaseIterable {
    /// An invoice, the box (photo of its back) or a carrier contract.
    case proofOfPurchase = "proof_of_purchase"
    /// A photo of the serial/IMEI (ideally the setup assistant's "Hello" screen).
    case imeiPhoto = "imei_photo"
    /// A photo of the activation-lock or lost-mode screen.
    case lockScreenPhoto = "lock_screen_photo"
    /// At least one security answer.
    case securityAnswer = "security_answer"
    /// The payment card on file.
    case card
    /// The device serial or IMEI.
    case device

    /// The evidence kinds that satisfy it (any one is enough).
    public var satisfiedBy: Set<EvidenceKind> {
        switch self {
        case .proofOfPurchase: [.invoice, .boxPhoto, .carrierContract]
        case .imeiPhoto: [.imeiPhoto]
        case .lockScreenPhoto: [.lockScreenPhoto]
        case .securityAnswer: [.securityAnswers]
        case .card: [.card]
        case .device: [.device]
        }
    }

    /// True for documents the customer uploads on the status page; false for details told to an agent.
    public var isUpload: Bool { satisfiedBy.allSatisfy(\.isDocument) }

    /// What to send, as one sentence of the catalogue.
    public var text: CustomerText {
        switch self {
        case .proofOfPurchase: .missingProofOfPurchase
        case .imeiPhoto: .missingIMEIPhoto
        case .lockScreenPhoto: .missingLockScreenPhoto
        case .securityAnswer: .missingSecurityAnswer
        case .card: .missingCard
        case .device: .missingDevice
        }
    }
}

/// One stage of the status page's progress line.
public struct ProgressStage: Sendable, Hashable {
    /// Where the case is relative to this stage.
    public enum Mark: String, Sendable, CaseIterable {
        case done, current, upcoming
    }

    /// A stable word: received, identity_check, documents, review, restoring, finished.
    public let key: String
    /// The stage's name, as a sentence of the catalogue.
    public let label: CustomerText
    public let mark: Mark
}

/// How a piece of evidence is shown to the customer: typed details and transcripts as `received` (never a match or a
/// review result), documents as `pending`, `accepted` or `rejected`, and a document nobody will review any more
/// (the case is finished) as `received`.
public enum ShownEvidenceStatus: String, Sendable, CaseIterable {
    case received, pending, accepted, rejected
}

/// Why a document was not accepted, in words the customer reads (api.md v1.2 `customer_reason`): a review that rejects
/// a document names one, and the status page and the mail say it in the customer's language.
public enum CustomerReason: String, Sendable, CaseIterable {
    case unreadable
    case wrongDocument = "wrong_document"
    case doesNotMatch = "does_not_match"
    case incomplete
    case other

    /// What the customer reads, one sentence of the catalogue.
    public var text: CustomerText {
        switch self {
        case .unreadable: .reasonUnreadable
        case .wrongDocument: .reasonWrongDocument
        case .doesNotMatch: .reasonDoesNotMatch
        case .incomplete: .reasonIncomplete
        case .other: .reasonOther
        }
    }
}

/// A piece of evidence as the guidance needs it: its kind, review status and, when rejected, the customer's reason.
public struct FiledEvidence: Sendable, Hashable {
    public let kind: EvidenceKind
    public let status: EvidenceStatus
    /// Why the customer is told it was not accepted (nil unless rejected; nil on reviews older than the reason).
    public let customerReason: CustomerReason?
    /// Evidence of `kind` with review `status`.
    public init(kind: EvidenceKind, status: EvidenceStatus, customerReason: CustomerReason? = nil) {
        self.kind = kind
        self.status = status
        self.customerReason = customerReason
    }
}

/// Everything the customer reads about a case, derived together so that no part contradicts another: the heading
/// (named for the progress line's current stage), the next step (which refers to `missing` and is an upload only when
/// `missing` holds uploads), what is still needed, the notices, and how each piece of evidence is shown.
public struct CustomerGuidance: Sendable, Equatable {
    /// The heading.
    public let stage: CustomerText
    /// The progress line.
    public let progress: [ProgressStage]
    /// What happens next, one sentence.
    public let nextStep: CustomerText
    /// What the customer must still send or tell, in the path's order.
    public let missing: [Requirement]
    /// Whether the page offers the upload form (open cases only: a finished case is in nobody's queue).
    public let canUpload: Bool
    /// Notices beside the case, in order (never pay comes first, always).
    public let notices: [CustomerText]
    /// How each filed item is shown, in the order given.
    public let evidence: [ShownEvidenceStatus]
    /// Beside each item shown rejected, why (`other` for a review that named none); nil for every other item.
    public let reasons: [CustomerReason?]
    /// The upload requirements still unmet for which a document was rejected: the customer must send another, so the
    /// page says so (heading, next step) and never reads as if everything were under review.
    public let resend: [Requirement]

    /// Derives the whole view from the case's state, path, kind and facts and the evidence filed on it.
    public init(state: CaseState, path givenPath: RecoveryPath, kind: CaseKind, facts: CaseFacts, evidence filed: [FiledEvidence]) {
        let path = Self.effectivePath(state: state, path: givenPath, kind: kind, facts: facts)
        let have = Self.counting(filed)
        let missing = Self.requirements(state: state, path: path, kind: kind, facts: facts).filter { have.isDisjoint(with: $0.satisfiedBy) }
        let rejectedKinds = Set(filed.filter { $0.kind.isDocument && $0.status == .rejected }.map(\.kind))
        let resend = missing.filter { $0.isUpload && !rejectedKinds.isDisjoint(with: $0.satisfiedBy) }
        let progress = Self.progress(state: state, path: path, documentRejected: !resend.isEmpty)
        self.progress = progress
        self.missing = missing
        self.resend = resend
        canUpload = state.isOpen
        let stageKey = (state.isOpen ? progress.first { $0.mark == .current } : progress.last)?.key ?? "received"
        stage = stageKey == "documents" && !resend.isEmpty ? .stageDocumentRejected : Self.stage(stageKey, state: state, path: path)
        nextStep = Self.nextStep(state: state, path: path, missing: missing, resend: resend)

        var notices: [CustomerText] = [.noticeNeverPay]
        if facts.twoStepEnabled { notices.append(.noticeDeviceOnly) }
        if state == .resolved { notices.append(path == .activationLock ? .noticeNewAccount : .noticeSecureAccount) }
        if !state.isOpen { notices.append(.noticeContact) }
        self.notices = notices
        let shown: [ShownEvidenceStatus] = filed.map { item in
            if item.kind.factor != nil || item.kind == .transcript { return .received }
            switch item.status {
            case .pending: return state.isOpen ? .pending : .received
            case .accepted: return .accepted
            case .rejected: return .rejected
            }
        }
        evidence = shown
        reasons = zip(filed, shown).map { item, shown in shown == .rejected ? item.customerReason ?? .other : nil }
    }

    /// The path the customer's view follows: a device-only case is always on the activation-lock path (the account
    /// cannot be recovered), and a case waiting for or under document review is on a document path.
    public static func effectivePath(state: CaseState, path: RecoveryPath, kind: CaseKind, facts: CaseFacts) -> RecoveryPath {
        if Workflow.isDeviceOnly(kind: kind, facts: facts) { return .activationLock }
        if state == .awaitingDocuments || state == .documentReview, path != .documents { return .documents }
        return path
    }

    /// The evidence kinds that count towards requirements: typed details once told (a review does not un-tell them),
    /// documents unless rejected.
    public static func counting(_ filed: [FiledEvidence]) -> Set<EvidenceKind> {
        Set(filed.filter { $0.kind.factor != nil || $0.status != .rejected }.map(\.kind))
    }

    /// What the state and path ask for, before subtracting what was filed; nothing once engineering has the case.
    public static func requirements(state: CaseState, path: RecoveryPath, kind: CaseKind, facts: CaseFacts) -> [Requirement] {
        switch state {
        case .engineering, .resolved, .rejected, .closed, .merged: return []
        case .new, .identityCheck, .awaitingDocuments, .documentReview: break
        }
        switch path {
        case .undetermined: return [.securityAnswer, .card, .device]
        case .reset, .verifiedIdentity: return []
        case .documents: return facts.lostModeEnabled ? [.proofOfPurchase, .imeiPhoto, .lockScreenPhoto] : [.proofOfPurchase, .imeiPhoto]
        case .activationLock: return [.proofOfPurchase, .imeiPhoto, .lockScreenPhoto]
        }
    }

    static func stage(_ key: String, state: CaseState, path: RecoveryPath) -> CustomerText {
        switch key {
        case "identity_check": return .stageIdentityCheck
        case "documents": return .stageDocuments
        case "review": return .stageReview
        case "restoring": return path == .activationLock ? .stageRestoringLock : .stageRestoringAccess
        case "finished":
            switch state {
            case .rejected: return .stageRejected
            case .closed, .merged: return .stageClosed
            default: return path == .reset ? .stageResolvedReset : path == .activationLock ? .stageResolvedLock : .stageResolvedAccess
            }
        default: return .stageReceived
        }
    }

    static func nextStep(state: CaseState, path: RecoveryPath, missing: [Requirement], resend: [Requirement] = []) -> CustomerText {
        switch state {
        case .resolved: return path == .reset ? .nextDoneReset : path == .activationLock ? .nextDoneLock : .nextDoneAccess
        case .rejected: return .nextRejected
        // A merged case's customer is shown the case it went into; its own line reads as closed.
        case .closed, .merged: return .nextClosed
        case .engineering: return path == .activationLock ? .nextWaitEngineeringLock : .nextWaitEngineeringAccess
        case .new, .identityCheck, .awaitingDocuments, .documentReview: break
        }
        // A rejected document still needed: say so first, the reason is beside it.
        if !resend.isEmpty { return state == .awaitingDocuments ? .nextUploadAgainPaused : .nextUploadAgain }
        if missing.contains(where: \.isUpload) { return state == .awaitingDocuments ? .nextUploadPaused : .nextUpload }
        if !missing.isEmpty { return .nextTellAgent }
        switch state {
        case .new: return path == .activationLock ? .nextDocumentsComplete : .nextWaitTriage
        case .identityCheck: return path == .activationLock ? .nextDocumentsComplete : .nextWaitIdentity
        case .awaitingDocuments: return .nextDocumentsComplete
        default: return .nextWaitReview
        }
    }

    /// The stages a case on `path` goes through, in order, each marked done, current or upcoming for `state`.
    ///
    /// A line, not a map: the path decides which stages are drawn (the reset path skips engineering, the document
    /// paths add documents and review, the activation-lock path skips the identity check), and the state decides how
    /// far along it is. The last stage is named for how the case ended once it has (resolved, not confirmed, closed);
    /// rejected and closed lines leave out the restoring stage. While a rejected document is still needed
    /// (`documentRejected`), a case under review is shown back at the documents stage: the customer's turn, not ours.
    public static func progress(state: CaseState, path: RecoveryPath, documentRejected: Bool = false) -> [ProgressStage] {
        let received = "received"
        let identity = "identity_check"
        let documents = "documents"
        let review = "review"
        let restoring = "restoring"
        let finished = "finished"
        let order = [received, identity, documents, review, restoring, finished]
        var keys: [String]
        switch path {
        case .undetermined, .verifiedIdentity: keys = [received, identity, restoring, finished]
        case .reset: keys = [received, identity, finished]
        case .documents: keys = [received, identity, documents, review, restoring, finished]
        case .activationLock: keys = [received, documents, review, restoring, finished]
        }
        // A refused case never reached restoring, and a closed one may have been refused before it was closed:
        // neither line may claim that access was restored.
        if state == .rejected || state == .closed || state == .merged { keys.removeAll { $0 == restoring } }
        let reached: String =
            switch state {
            case .new: received
            case .identityCheck: identity
            case .awaitingDocuments: documents
            case .documentReview: documentRejected ? documents : review
            case .engineering: restoring
            case .resolved, .rejected, .closed, .merged: finished
            }
        // The current stage is the last drawn one not after the state's own (an activation-lock case escalated to the
        // identity check is still shown as received).
        let reachedIndex = order.firstIndex(of: reached)!
        let current = keys.lastIndex { order.firstIndex(of: $0)! <= reachedIndex } ?? 0
        let finishedLabel: CustomerText =
            switch state {
            case .rejected: .progressNotConfirmed
            case .closed, .merged: .progressClosed
            default: path == .reset ? .progressResetSent : .progressResolved
            }
        let labels: [String: CustomerText] = [
            received: .progressReceived, identity: .progressIdentityCheck, documents: .progressDocuments, review: .progressReview,
            restoring: path == .activationLock ? .progressRestoringLock : .progressRestoringAccess, finished: finishedLabel,
        ]
        let ended = !state.isOpen
        return keys.enumerated().map { index, key in
            let mark: ProgressStage.Mark = (index < current || (ended && index == current)) ? .done : index == current ? .current : .upcoming
            return ProgressStage(key: key, label: labels[key]!, mark: mark)
        }
    }
}

/// What of the path's requirements `have` does not meet yet, as on an open case (the documents gate asks this of
/// accepted documents, and of filed ones to move a case to review by itself).
public func missingRequirements(path: RecoveryPath, kind: CaseKind, facts: CaseFacts, have: Set<EvidenceKind>) -> [Requirement] {
    CustomerGuidance.requirements(state: .new, path: path, kind: kind, facts: facts).filter { have.isDisjoint(with: $0.satisfiedBy) }
}

/// The words of the `missing` list for agents and customers alike (see `CustomerGuidance`).
public func missingEvidence(state: CaseState, path: RecoveryPath, kind: CaseKind, facts: CaseFacts, evidence: [FiledEvidence]) -> [String] {
    CustomerGuidance(state: state, path: path, kind: kind, facts: facts, evidence: evidence).missing.map(\.rawValue)
}
