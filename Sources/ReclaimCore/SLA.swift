import Foundation

/// The persisted SLA clock of a case: enough to recompute its due date at any time.
public struct SLAClock: Sendable, Hashable, Codable {
    /// When the case was opened (the 90-day limit counts from here).
    public var openedAt: Date
    /// When the case entered its current state (new, identity_check and verified engineering count from here).
    public var stateEnteredAt: Date
    /// When the documents or activation-lock path's clock started (the last `request_documents`).
    public var pathClockStartedAt: Date?
    /// Seconds spent in awaiting_documents since the path clock started, not counted against us.
    public var pausedSeconds: TimeInterval
    /// When the current pause began (set while in awaiting_documents).
    public var pausedSince: Date?

    /// A clock with every field given (as loaded from storage).
    public init(openedAt: Date, stateEnteredAt: Date, pathClockStartedAt: Date? = nil, pausedSeconds: TimeInterval = 0, pausedSince: Date? = nil) {
        self.openedAt = openedAt
        self.stateEnteredAt = stateEnteredAt
        self.pathClockStartedAt = pathClockStartedAt
        self.pausedSeconds = pausedSeconds
        self.pausedSince = pausedSince
    }

    /// The clock of a case opened at `now`.
    public static func opened(at now: Date) -> SLAClock {
        SLAClock(openedAt: now, stateEnteredAt: now)
    }

    // JSON field names.
    private enum CodingKeys: String, CodingKey {
        case openedAt = "opened_at"
        case stateEnteredAt = "state_entered_at"
        case pathClockStartedAt = "path_clock_started_at"
        case pausedSeconds = "paused_seconds"
        case pausedSince = "paused_since"
    }
}

/// The one table of due-date durations (seconds; a day is 86 400 s, everything in UTC).
///
/// Due dates, by state:
/// - new: entered + `newCase`; identity_check: entered + `identityCheck`.
/// - awaiting_documents: none (the customer's turn; the path clock is paused).
/// - document_review, and engineering on the documents or activation_lock path: the path's clock keeps
///   running through review and engineering, so due = path start + path duration + paused time.
///   Engineering is not given a fresh budget after `approve`: the customer was promised 15 (or 20) days in all.
/// - engineering on the verified_identity path: entered (the `verify`) + `engineeringAfterVerify`.
/// - resolved, rejected, closed: none.
/// Every due date is capped at opening + `hardLimit`, also after a `reopen`
/// (a case reopened past the limit is overdue at once: the promise was broken).
public struct SLAPolicy: Sendable, Hashable, Codable {
    /// Triage of a new case.
    public var newCase: TimeInterval
    /// Identity check at tier 2.
    public var identityCheck: TimeInterval
    /// Engineering after `verify`.
    public var engineeringAfterVerify: TimeInterval
    /// The documents path, from `request_documents`, pauses excluded.
    public var documentsPath: TimeInterval
    /// The activation-lock path, from `request_documents`, pauses excluded.
    public var activationLockPath: TimeInterval
    /// No due date later than this after opening.
    public var hardLimit: TimeInterval

    /// Seconds in a day.
    public static let day: TimeInterval = 86_400

    /// A policy; defaults are api.md's (1, 2, 10, 15, 20 and 90 days).
    public init(
        newCase: TimeInterval = 1 * day, identityCheck: TimeInterval = 2 * day, engineeringAfterVerify: TimeInterval = 10 * day,
        documentsPath: TimeInterval = 15 * day, activationLockPath: TimeInterval = 20 * day, hardLimit: TimeInterval = 90 * day
    ) {
        self.newCase = newCase
        self.identityCheck = identityCheck
        self.engineeringAfterVerify = engineeringAfterVerify
        self.documentsPath = documentsPath
        self.activationLockPath = activationLockPath
        self.hardLimit = hardLimit
    }

    /// api.md's defaults.
    public static let `default` = SLAPolicy()

    // JSON field names (seconds).
    private enum CodingKeys: String, CodingKey {
        case newCase = "new_case"
        case identityCheck = "identity_check"
        case engineeringAfterVerify = "engineering_after_verify"
        case documentsPath = "documents_path"
        case activationLockPath = "activation_lock_path"
        case hardLimit = "hard_limit"
    }

    /// The path duration for documents-based paths; nil for the others.
    public func pathDuration(_ path: RecoveryPath) -> TimeInterval? {
        switch path {
        case .documents: documentsPath
        case .activationLock: activationLockPath
        case .undetermined, .reset, .verifiedIdentity: nil
        }
    }

    /// The clock after `action` moved a case from `from` to `to` at `now`.
    /// `request_documents` (re)starts the path clock, paused at once; leaving awaiting_documents banks the pause;
    /// `reopen` clears the path clock so the next `request_documents` starts afresh.
    public func clock(_ clock: SLAClock, after action: CaseAction, from: CaseState, to: CaseState, at now: Date) -> SLAClock {
        var next = clock
        next.stateEnteredAt = now
        if from == .awaitingDocuments, to != .awaitingDocuments, let since = next.pausedSince {
            next.pausedSeconds += max(0, now.timeIntervalSince(since))
            next.pausedSince = nil
        }
        switch action {
        // Asked again from review: the path's clock keeps its start and pauses, it does not begin anew.
        case .requestDocuments where from != .documentReview:
            next.pathClockStartedAt = now
            next.pausedSeconds = 0
            next.pausedSince = now
        case .reopen:
            next.pathClockStartedAt = nil
            next.pausedSeconds = 0
            next.pausedSince = nil
        default:
            if to == .awaitingDocuments, next.pausedSince == nil { next.pausedSince = now }
        }
        return next
    }

    /// The clock after an accepted transition.
    public func clock(after decision: TransitionDecision) -> SLAClock {
        clock(decision.before.clock, after: decision.action, from: decision.before.state, to: decision.after.state, at: decision.at)
    }

    /// When a case in `state` on `path` is due; nil in awaiting_documents, resolved, rejected and closed.
    public func dueAt(state: CaseState, path: RecoveryPath, clock: SLAClock) -> Date? {
        let due: Date
        switch state {
        case .awaitingDocuments, .resolved, .rejected, .closed, .merged:
            return nil
        case .new:
            due = clock.stateEnteredAt.addingTimeInterval(newCase)
        case .identityCheck:
            due = clock.stateEnteredAt.addingTimeInterval(identityCheck)
        case .documentReview, .engineering:
            if let duration = pathDuration(path) {
                // Path start is always set on these paths; the state entry is a safe stand-in for old rows.
                let start = clock.pathClockStartedAt ?? clock.stateEnteredAt
                due = start.addingTimeInterval(duration + clock.pausedSeconds)
            } else {
                due = clock.stateEnteredAt.addingTimeInterval(state == .engineering ? engineeringAfterVerify : identityCheck)
            }
        }
        return min(due, clock.openedAt.addingTimeInterval(hardLimit))
    }

    /// True when `dueAt` has passed (strictly) in a state that has a due date (open, and not the customer's turn).
    public func isOverdue(dueAt: Date?, state: CaseState, now: Date) -> Bool {
        guard state.isOpen, state != .awaitingDocuments, let dueAt else { return false }
        return now > dueAt
    }
}
