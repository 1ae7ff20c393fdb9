import Foundation

/// One row of the transition table: the action, the states it leaves, the state it enters and the least tier allowed.
public struct TransitionRule: Sendable, Hashable {
    /// The action.
    public let action: CaseAction
    /// States the action may be taken from.
    public let from: [CaseState]
    /// The state the case enters.
    public let to: CaseState
    /// The lowest tier allowed to take the action.
    public let minimumTier: Tier
}

/// What the workflow needs to know about a case: the persisted workflow columns.
public struct CaseSnapshot: Sendable, Hashable, Codable {
    /// What was taken.
    public var kind: CaseKind
    /// Where the case stands.
    public var state: CaseState
    /// The tier holding the case (in resolved/rejected/closed, the last one that did).
    public var tier: Tier
    /// How the case is being recovered.
    public var path: RecoveryPath
    /// What the thief changed.
    public var facts: CaseFacts
    /// The SLA clock.
    public var clock: SLAClock

    /// A snapshot with every field given (as loaded from storage).
    public init(kind: CaseKind, state: CaseState, tier: Tier, path: RecoveryPath, facts: CaseFacts, clock: SLAClock) {
        self.kind = kind
        self.state = state
        self.tier = tier
        self.path = path
        self.facts = facts
        self.clock = clock
    }
}

/// What a handler loads before asking for a decision.
public struct TransitionContext: Sendable, Hashable {
    /// For `send_reset`: every security answer on file matched a filed answer.
    public var allOnFileAnswersMatched: Bool
    /// For `verify`: the factor outcomes of the evidence on the case (nil reads as nothing filed).
    public var verification: VerificationOutcome?
    /// For `complete`: a step engineering names as undone (it must be among `unlocksDone`).
    public var unlock: UnlockKind?
    /// Why the agent acts; required by actions whose `requiresReason` is true.
    public var reason: String?
    /// For `approve`: the documents on the case (kind and review status), for the documents gate.
    public var documents: [DocumentStatus]
    /// For `complete`: the unlock steps already recorded on the case.
    public var unlocksDone: Set<UnlockKind>

    /// A document's kind and review status, as the documents gate reads it.
    public struct DocumentStatus: Sendable, Hashable {
        public var kind: EvidenceKind
        public var status: EvidenceStatus
        public init(kind: EvidenceKind, status: EvidenceStatus) {
            self.kind = kind
            self.status = status
        }
    }

    /// A context; fields not relevant to the action may be left out.
    public init(
        allOnFileAnswersMatched: Bool = false, verification: VerificationOutcome? = nil, unlock: UnlockKind? = nil, reason: String? = nil,
        documents: [DocumentStatus] = [], unlocksDone: Set<UnlockKind> = []
    ) {
        self.allOnFileAnswersMatched = allOnFileAnswersMatched
        self.verification = verification
        self.unlock = unlock
        self.reason = reason
        self.documents = documents
        self.unlocksDone = unlocksDone
    }
}

/// An accepted transition: the case before and after, ready to store with an event.
public struct TransitionDecision: Sendable, Hashable {
    /// The action taken.
    public let action: CaseAction
    /// The case before.
    public let before: CaseSnapshot
    /// The case after (state, tier, path and clock updated).
    public let after: CaseSnapshot
    /// The new due date (nil when none applies).
    public let dueAt: Date?
    /// When the decision was taken.
    public let at: Date
    /// The agent's reason, trimmed; nil when none was given.
    public let reason: String?
    /// The unlock step named (for `complete`): one already done through the cooling-off.
    public let unlock: UnlockKind?
    /// The factor outcomes that justified `verify`.
    public let verification: VerificationOutcome?
}

/// Why the workflow refused a transition, in the domain's words; how each is answered (code, status, message) is
/// declared once, in the API's refusal catalogue (`ReclaimAPI/ErrorCatalogue.swift`).
public enum WorkflowRefusal: Error, Sendable, Hashable {
    /// The action cannot be taken from this state.
    case invalidTransition(from: CaseState, action: CaseAction)
    /// The actor's tier is below the action's or the case's tier.
    case insufficientTier(required: Tier)
    /// `verify` reached fewer than two matched factors.
    case verificationFailed(VerificationOutcome)
    /// Two-step verification is on or the case is about a device: the account cannot be reset or verified, only the device unlocked with proof of ownership.
    case notRecoverable
    /// The case is finished (resolved, rejected, closed or merged): it takes no more work (`CaseWork.isTaken`).
    case caseNotOpen
    /// `complete` needs an unlock step done (none is required, and none was done through the cooling-off).
    case unlockRequired
    /// `complete` named an unlock step that was not done: steps are scheduled (`POST /unlocks`) and done after the
    /// cooling-off, never by `complete`.
    case unlockNotScheduled
    /// This unlock is not allowed for this case (activation-lock cases accept only `remove_activation_lock`, others not it).
    case unlockNotAllowed
    /// `send_reset` needs every on-file security answer matched.
    case answersNotMatched
    /// The action needs a non-empty reason.
    case reasonRequired
    /// `approve`: these requirements of the path have no accepted document.
    case documentsMissing([Requirement])
    /// `approve`: a document on the case is still pending review.
    case documentsPending
    /// `complete`: these required unlock steps are not done.
    case unlocksOutstanding([UnlockKind])
    /// The unlock step was already recorded.
    case alreadyDone
    /// Merge: the two cases are not about the same account e-mail.
    case notSameAccount
    /// A correction would make the case device-only (or no longer so) after it reached engineering on the other facts.
    case pathDecided
    /// Merge: the two cases' customers differ in these fields (`customer.name`, `customer.contact_email`) and the agent
    /// has not confirmed that they are one person (`same_customer_confirmed`).
    case differentCustomer([String])
}

/// The case workflow: which actions are allowed and what each does. Pure: callers pass the time.
///
/// Authority: an agent may take an action when their tier is at least the action's minimum tier
/// and, while the case is open (new … engineering), at least the tier holding the case: a tier-1
/// agent cannot send a reset on a case tier 2 holds. Resolved, rejected and closed cases are held
/// by no one, so only the action's minimum tier applies there (any agent may close a resolved case).
/// Checks run in this order: action tier, state, case tier, reason, then the action's own rule.
public struct Workflow: Sendable {
    /// Due-date durations.
    public var sla: SLAPolicy

    /// A workflow with the given SLA durations.
    public init(sla: SLAPolicy = .default) {
        self.sla = sla
    }

    /// The transition table of api.md, in its order: the one source for code, OpenAPI and dashboard.
    public static let rules: [TransitionRule] = [
        TransitionRule(action: .sendReset, from: [.new, .identityCheck], to: .resolved, minimumTier: .tier1),
        TransitionRule(action: .escalate, from: [.new], to: .identityCheck, minimumTier: .tier1),
        TransitionRule(action: .verify, from: [.identityCheck], to: .engineering, minimumTier: .tier2),
        // From review too (api.md v1.2): tier 3, who holds a case under review, may ask the customer again.
        TransitionRule(action: .requestDocuments, from: [.new, .identityCheck, .documentReview], to: .awaitingDocuments, minimumTier: .tier2),
        TransitionRule(action: .beginReview, from: [.awaitingDocuments], to: .documentReview, minimumTier: .tier3),
        TransitionRule(action: .approve, from: [.documentReview], to: .engineering, minimumTier: .tier3),
        TransitionRule(action: .reject, from: [.documentReview], to: .rejected, minimumTier: .tier3),
        TransitionRule(action: .complete, from: [.engineering], to: .resolved, minimumTier: .engineering),
        TransitionRule(action: .reopen, from: [.resolved, .rejected], to: .identityCheck, minimumTier: .tier2),
        TransitionRule(action: .close, from: [.resolved, .rejected], to: .closed, minimumTier: .tier1),
    ]

    /// True when only the device can be recovered: kind `activation_lock`, or two-step turned on by the thief.
    public static func isDeviceOnly(kind: CaseKind, facts: CaseFacts) -> Bool {
        kind == .activationLock || facts.twoStepEnabled
    }

    /// The path a case starts on (and returns to on `reopen`): `activation_lock` when only the device can be recovered, else undetermined.
    public static func initialPath(kind: CaseKind, facts: CaseFacts) -> RecoveryPath {
        isDeviceOnly(kind: kind, facts: facts) ? .activationLock : .undetermined
    }

    /// The unlocks `complete` accepts: `remove_activation_lock` alone for device-only cases, the account unlocks otherwise.
    public static func allowedUnlocks(kind: CaseKind, facts: CaseFacts) -> [UnlockKind] {
        isDeviceOnly(kind: kind, facts: facts) ? [.removeActivationLock] : [.removeRescueEmail, .resetSecurityQuestions]
    }

    /// A newly opened case: state new, tier 1, its initial path, clocks started at `now`.
    public func opening(kind: CaseKind, facts: CaseFacts, at now: Date) -> CaseSnapshot {
        CaseSnapshot(kind: kind, state: .new, tier: .tier1, path: Self.initialPath(kind: kind, facts: facts), facts: facts, clock: .opened(at: now))
    }

    /// The due date of a case now (nil when paused or finished).
    public func dueAt(_ snapshot: CaseSnapshot) -> Date? {
        sla.dueAt(state: snapshot.state, path: snapshot.path, clock: snapshot.clock)
    }

    /// True when the case's due date has passed while it is open.
    public func isOverdue(_ snapshot: CaseSnapshot, now: Date) -> Bool {
        sla.isOverdue(dueAt: dueAt(snapshot), state: snapshot.state, now: now)
    }

    /// True when an agent of `actorTier` has the authority for `action` on this case (tiers only, not state).
    public static func hasAuthority(_ actorTier: Tier, for action: CaseAction, on snapshot: CaseSnapshot) -> Bool {
        actorTier.isAtLeast(action.rule.minimumTier) && actorTier.isAtLeast(snapshot.state.tier ?? .tier1)
    }

    /// The actions the caller may take now, in table order; nil tier (an API client) gets none.
    /// Actions the facts rule out (reset or verify on a device-only case) are left out, and a reset until every answer
    /// on file matched (`standing.answers`); checks that need the factors, an unlock or a reason are left to `decide`.
    public func allowedActions(for snapshot: CaseSnapshot, standing: CaseStanding, actorTier: Tier?) -> [CaseAction] {
        guard let actorTier else { return [] }
        return Self.rules.compactMap { rule in
            guard rule.from.contains(snapshot.state),
                Self.hasAuthority(actorTier, for: rule.action, on: snapshot),
                !Self.ruledOutByFacts(rule.action, on: snapshot),
                rule.action != .sendReset || standing.answers.allMatched
            else { return nil }
            return rule.action
        }
    }

    /// Decides whether `action` may be taken and, if so, what the case becomes.
    public func decide(_ action: CaseAction, on snapshot: CaseSnapshot, actorTier: Tier, context: TransitionContext, now: Date) -> Result<
        TransitionDecision, WorkflowRefusal
    > {
        let rule = action.rule
        guard actorTier.isAtLeast(rule.minimumTier) else { return .failure(.insufficientTier(required: rule.minimumTier)) }
        guard rule.from.contains(snapshot.state) else { return .failure(.invalidTransition(from: snapshot.state, action: action)) }
        // The state, not the stored tier column, says who holds an open case.
        if let holder = snapshot.state.tier, !actorTier.isAtLeast(holder) { return .failure(.insufficientTier(required: holder)) }

        let reason = context.reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        let givenReason = (reason?.isEmpty ?? true) ? nil : reason
        if action.requiresReason, givenReason == nil { return .failure(.reasonRequired) }

        let deviceOnly = Self.isDeviceOnly(kind: snapshot.kind, facts: snapshot.facts)
        var path = snapshot.path
        var verification: VerificationOutcome?
        var unlock: UnlockKind?
        switch action {
        case .sendReset:
            if deviceOnly { return .failure(.notRecoverable) }
            if !context.allOnFileAnswersMatched { return .failure(.answersNotMatched) }
            path = .reset
        case .verify:
            if deviceOnly { return .failure(.notRecoverable) }
            let outcome = context.verification ?? VerificationOutcome(factors: [:])
            if !outcome.verified { return .failure(.verificationFailed(outcome)) }
            verification = outcome
            path = .verifiedIdentity
        case .requestDocuments:
            path = deviceOnly ? .activationLock : .documents
        case .approve:
            if let refusal = DocumentsGate.refusal(
                path: snapshot.path, kind: snapshot.kind, facts: snapshot.facts,
                documents: context.documents.map { ($0.kind, $0.status) })
            {
                return .failure(refusal)
            }
        case .complete:
            // `complete` never performs a step (api.md v1.3 "Every change to the account waits"): every step it counts was
            // done by the scheduler after the cooling-off. A step named here must be among them.
            let required = UnlockChecklist.required(kind: snapshot.kind, facts: snapshot.facts)
            if let given = context.unlock {
                guard Self.allowedUnlocks(kind: snapshot.kind, facts: snapshot.facts).contains(given) else { return .failure(.unlockNotAllowed) }
                guard context.unlocksDone.contains(given) else { return .failure(.unlockNotScheduled) }
            }
            if required.isEmpty {
                // Nothing the thief changed is known: the case still ends with a step undone through the cooling-off.
                let allowed = Set(Self.allowedUnlocks(kind: snapshot.kind, facts: snapshot.facts))
                if context.unlocksDone.isDisjoint(with: allowed) { return .failure(.unlockRequired) }
            } else {
                let outstanding = UnlockChecklist.outstanding(required: required, done: context.unlocksDone)
                if !outstanding.isEmpty { return .failure(.unlocksOutstanding(outstanding)) }
            }
            unlock = context.unlock
        case .reopen:
            path = Self.initialPath(kind: snapshot.kind, facts: snapshot.facts)
        case .escalate, .beginReview, .reject, .close:
            break
        }

        var after = snapshot
        after.state = rule.to
        after.tier = rule.to.tier ?? snapshot.tier
        after.path = path
        after.clock = sla.clock(snapshot.clock, after: action, from: snapshot.state, to: rule.to, at: now)
        return .success(
            TransitionDecision(
                action: action, before: snapshot, after: after, dueAt: dueAt(after), at: now,
                reason: givenReason, unlock: unlock, verification: verification))
    }

    /// Least tier that may freeze an account's purchases and cloud operations.
    public static let freezeMinimumTier = Tier.tier2

    /// Whether `actorTier` may freeze the case's account: tier2+ on any open case, whoever holds it,
    /// because stopping a thief's spending must not wait for the case to reach the right desk.
    public static func checkFreeze(actorTier: Tier, on snapshot: CaseSnapshot) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(freezeMinimumTier) else { throw .insufficientTier(required: freezeMinimumTier) }
        try CaseWork.freeze.check(in: snapshot.state)
    }

    /// Whether `actorTier` may assign the case to an agent of `assigneeTier`: an open case only (a finished one is in
    /// nobody's queue, whoever asks), then both at least the case's tier.
    public static func checkAssignment(actorTier: Tier, assigneeTier: Tier, on snapshot: CaseSnapshot) throws(WorkflowRefusal) {
        try CaseWork.assign.check(in: snapshot.state)
        guard actorTier.isAtLeast(snapshot.tier), assigneeTier.isAtLeast(snapshot.tier) else { throw .insufficientTier(required: snapshot.tier) }
    }

    /// Least tier that may read a document's or transcript's decrypted content.
    public static let contentReadMinimumTier = Tier.tier3

    // Refusals that depend only on the case, so allowed_actions never offers a doomed action.
    private static func ruledOutByFacts(_ action: CaseAction, on snapshot: CaseSnapshot) -> Bool {
        switch action {
        case .sendReset, .verify: isDeviceOnly(kind: snapshot.kind, facts: snapshot.facts)
        default: false
        }
    }
}
