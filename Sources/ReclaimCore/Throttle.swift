import Foundation

/// How many failures lock a key, counted within what window, and for how long (sign-in, status look-up, answers).
public struct ThrottleRule: Sendable, Hashable {
    /// Failures that lock the key (the failure that reaches it locks).
    public var limit: Int
    /// Failures this long after the first of a count no longer share its count; nil: they count until a success resets them.
    public var window: TimeInterval?
    /// How long a reached limit locks the key, even to a right answer.
    public var lockout: TimeInterval

    /// A rule from its parts.
    public init(limit: Int, window: TimeInterval?, lockout: TimeInterval) {
        self.limit = limit
        self.window = window
        self.lockout = lockout
    }
}

/// One key's failures: how many in the current count, when that count began, and the lock it reached (if any).
///
/// The rule, in one place:
/// - while locked, failures neither count nor extend the lock;
/// - a failure starts a fresh count of 1 when there is none, when the window since the count began has passed
///   (`now - windowStartedAt >= window`), or when a lock has expired;
/// - otherwise it adds one; reaching `limit` locks the key for `lockout` from that failure.
public struct ThrottleState: Sendable, Hashable {
    /// Failures in the current count.
    public var failures: Int
    /// When the current count began (meaningless while `failures` is 0).
    public var windowStartedAt: Date
    /// When the lock reached by the current count ends; an expired value stays until the next failure replaces it.
    public var lockedUntil: Date?

    /// A state from its parts (as stored).
    public init(failures: Int, windowStartedAt: Date, lockedUntil: Date?) {
        self.failures = failures
        self.windowStartedAt = windowStartedAt
        self.lockedUntil = lockedUntil
    }

    /// No failures: a key never seen, or reset by a success.
    public static let clear = ThrottleState(failures: 0, windowStartedAt: .distantPast, lockedUntil: nil)

    /// When the key is refused until, if it is locked at `now`.
    public func lockedUntil(at now: Date) -> Date? {
        guard let lockedUntil, lockedUntil > now else { return nil }
        return lockedUntil
    }

    /// The state after one more failure at `now` under `rule`.
    public func recordingFailure(at now: Date, rule: ThrottleRule) -> ThrottleState {
        if lockedUntil(at: now) != nil { return self }
        let windowPassed = rule.window.map { now.timeIntervalSince(windowStartedAt) >= $0 } ?? false
        let fresh = failures <= 0 || windowPassed || lockedUntil != nil
        var next =
            fresh
            ? ThrottleState(failures: 1, windowStartedAt: now, lockedUntil: nil)
            : ThrottleState(failures: failures + 1, windowStartedAt: windowStartedAt, lockedUntil: nil)
        if next.failures >= rule.limit { next.lockedUntil = now.addingTimeInterval(rule.lockout) }
        return next
    }

    /// The state after `count` failures at `now` (answers checked together count one each).
    public func recordingFailures(_ count: Int, at now: Date, rule: ThrottleRule) -> ThrottleState {
        var state = self
        for _ in 0..<max(count, 0) { state = state.recordingFailure(at: now, rule: rule) }
        return state
    }

    /// Counts `count` failures in advance, before they are known to be failures, unless the key is locked at `now`
    /// (nil then): what a check that is slow to decide (argon2id) claims before it starts, so that concurrent checks
    /// cannot all start under the limit. `settling` gives back those that were not failures.
    public func claiming(_ count: Int, at now: Date, rule: ThrottleRule) -> ThrottleClaim? {
        if lockedUntil(at: now) != nil { return nil }
        return ThrottleClaim(before: self, after: recordingFailures(count, at: now, rule: rule), count: max(count, 0), at: now)
    }

    /// The state once `claim` is settled with only `failures` of its count failures: the surplus leaves the count it
    /// joined, and a lock in force that the count no longer reaches is lifted (no failure counts while locked, so the
    /// count is what reached the lock). A count begun since (window passed, lock expired) is not the claim's: unchanged.
    public func settling(_ claim: ThrottleClaim, failures: Int, now: Date, rule: ThrottleRule) -> ThrottleState {
        let actual = claim.before.recordingFailures(min(max(failures, 0), claim.count), at: claim.at, rule: rule)
        let actualInCount = actual.windowStartedAt == claim.after.windowStartedAt ? actual.failures : 0
        let surplus = claim.after.failures - actualInCount
        guard surplus > 0, windowStartedAt == claim.after.windowStartedAt else { return self }
        var next = self
        next.failures = max(self.failures - surplus, 0)
        if next.failures < rule.limit, lockedUntil(at: now) != nil { next.lockedUntil = nil }
        return next
    }
}

/// Failures counted in advance by `ThrottleState.claiming`: the state before and after, how many, and when.
public struct ThrottleClaim: Sendable, Hashable {
    /// The key's state the claim was made on.
    public let before: ThrottleState
    /// The state it left (stored).
    public let after: ThrottleState
    /// The failures claimed.
    public let count: Int
    /// When.
    public let at: Date

    /// A claim from its parts (as `claiming` makes it).
    public init(before: ThrottleState, after: ThrottleState, count: Int, at: Date) {
        self.before = before
        self.after = after
        self.count = count
        self.at = at
    }
}
