/// Work on a case besides its workflow transitions (`CaseAction`): each a word of `allowed_actions`, after the
/// transitions, so the dashboard draws a panel or a button only when the case takes that work now (api.md v1.2).
public enum CaseWork: String, Sendable, Codable, CaseIterable {
    /// File evidence: typed (answers, card, device, transcript) or a document.
    case fileEvidence = "file_evidence"
    /// Review evidence that counts on the case (typed tier2+, documents and transcripts tier3+).
    case review
    /// Take the case, or hand it to a colleague whose tier can hold it.
    case assign
    /// A note only agents read.
    case noteInternal = "note_internal"
    /// A note the customer reads on the status page, and is mailed about.
    case noteCustomer = "note_customer"
    /// Freeze the account's purchases and cloud operations.
    case freeze
    /// Lift the freeze.
    case unfreeze
    /// Record a step of the unlock checklist (engineering, on a case in engineering).
    case recordUnlock = "record_unlock"
    /// Merge this duplicate into another open case.
    case merge
    /// Undo the merge, while the case it went into is open.
    case unmerge
    /// Issue a new access code, mailed to the customer's contact address.
    case reissueAccessCode = "reissue_access_code"
    /// Issue a new access code and be answered it, to read out to a caller verified as the `caller_check` says (tier2+).
    case giveAccessCode = "give_access_code"

    /// Whether a case in `state` takes this work at all (each work's own rule, tier or checklist, comes after).
    /// An open case takes any. A finished one (resolved, rejected, closed, merged) takes no work: only an internal
    /// note, lifting a freeze, a new access code (its customer may still read how it ended), a customer note unless
    /// it is merged (that customer reads the case it went into, where the note belongs), and a merged case its unmerge.
    public func isTaken(in state: CaseState) -> Bool {
        if state.isOpen { return true }
        switch self {
        case .noteInternal, .unfreeze, .reissueAccessCode, .giveAccessCode: return true
        case .noteCustomer: return state != .merged
        case .unmerge: return state == .merged
        case .fileEvidence, .review, .assign, .freeze, .recordUnlock, .merge: return false
        }
    }

    /// `caseNotOpen` unless a case in `state` takes this work.
    public func check(in state: CaseState) throws(WorkflowRefusal) {
        guard isTaken(in: state) else { throw .caseNotOpen }
    }
}

/// What the case row holds beyond the workflow columns that decides which work and actions it offers now, loaded with
/// the case, so `allowed_actions` never offers what would be refused.
public struct CaseStanding: Sendable, Hashable {
    /// The account is frozen.
    public var frozen: Bool
    /// The unlock steps recorded.
    public var unlocksDone: Set<UnlockKind>
    /// The security answers on file and how many of them an answer filed on the case (not rejected) matched.
    public var answers: AnswerProgress
    /// The state of the case this one was merged into (nil unless merged).
    public var mergedIntoState: CaseState?

    /// A standing; what is not given reads as nothing done, nothing on file.
    public init(
        frozen: Bool = false, unlocksDone: Set<UnlockKind> = [], answers: AnswerProgress = AnswerProgress(onFile: 0, matched: 0),
        mergedIntoState: CaseState? = nil
    ) {
        self.frozen = frozen
        self.unlocksDone = unlocksDone
        self.answers = answers
        self.mergedIntoState = mergedIntoState
    }
}

/// How far the security answers on file have been matched by answers filed on a case.
public struct AnswerProgress: Sendable, Hashable {
    /// Questions on file for the case's account (0 when the account is not on file).
    public var onFile: Int
    /// How many of them an answer filed on the case (and not rejected) matched.
    public var matched: Int

    /// A progress from its counts.
    public init(onFile: Int, matched: Int) {
        self.onFile = onFile
        self.matched = matched
    }

    /// The `send_reset` rule (`VerificationPolicy.allOnFileAnswersMatched`).
    public var allMatched: Bool { VerificationPolicy.allOnFileAnswersMatched(onFile: onFile, matched: matched) }
}

extension Workflow {
    /// The work the caller may do on the case now, in `CaseWork`'s order; nil tier (an API client) gets none.
    /// A finished case takes only what `CaseWork.isTaken` allows; then each work's own rule, as its operation checks it.
    public func allowedWork(for snapshot: CaseSnapshot, standing: CaseStanding, actorTier: Tier?) -> [CaseWork] {
        guard let actorTier else { return [] }
        let leastReviewer = EvidenceKind.allCases.map(\.reviewMinimumTier).min() ?? .tier2
        return CaseWork.allCases.filter { work in
            guard work.isTaken(in: snapshot.state) else { return false }
            switch work {
            case .fileEvidence, .noteInternal, .noteCustomer, .reissueAccessCode: return true
            case .review: return actorTier.isAtLeast(leastReviewer)
            case .assign: return actorTier.isAtLeast(snapshot.tier)
            case .freeze: return actorTier.isAtLeast(Self.freezeMinimumTier) && !standing.frozen
            case .unfreeze: return actorTier.isAtLeast(Self.freezeMinimumTier) && standing.frozen
            case .recordUnlock:
                let required = UnlockChecklist.required(kind: snapshot.kind, facts: snapshot.facts)
                return actorTier.isAtLeast(.engineering) && snapshot.state == .engineering
                    && !UnlockChecklist.outstanding(required: required, done: standing.unlocksDone).isEmpty
            case .merge: return actorTier.isAtLeast(CaseMerge.minimumTier)
            case .unmerge: return actorTier.isAtLeast(CaseMerge.minimumTier) && snapshot.state == .merged && standing.mergedIntoState?.isOpen == true
            case .giveAccessCode: return actorTier.isAtLeast(AccessCode.callerCheckMinimumTier)
            }
        }
    }
}
