import Crypto
import Foundation
import Postgres
import ReclaimCore

/// Limits on failed customer status look-ups and answer checks, kept in PostgreSQL so every instance agrees.
public struct StatusThrottlePolicy: Sendable {
    /// Failures on one case number (existing or not) before it locks.
    public var caseLimit = 9
    /// How long a case number stays locked, even to the right code.
    public var caseLockout: TimeInterval = 8 * 3600
    /// Failures older than this no longer count towards the case limit.
    public var caseWindow: TimeInterval = 8 * 3600
    /// Failures (wrong codes, unknown and mistyped numbers) from one client address before it locks.
    public var addressLimit = 50
    /// How long an address stays locked.
    public var addressLockout: TimeInterval = 3600
    /// Failures older than this no longer count towards the address limit.
    public var addressWindow: TimeInterval = 3600

    /// The defaults.
    public init() {}

    /// The defaults: 9 per case number per 8 h (the domain's account lockout), 50 per address per hour.
    public static let `default` = StatusThrottlePolicy()

    /// The rule for a case number, and for an account's security answers (the same budget).
    public var caseRule: ThrottleRule { ThrottleRule(limit: caseLimit, window: caseWindow, lockout: caseLockout) }
    /// The rule for a client address.
    public var addressRule: ThrottleRule { ThrottleRule(limit: addressLimit, window: addressWindow, lockout: addressLockout) }
}

/// What a claim came to: admitted (settle it once decided), or refused while the key is locked.
public enum ThrottleAdmission: Sendable, Equatable {
    case admitted(ThrottleClaim)
    case locked(until: Date)
}

/// The `throttles` table: one row of `ThrottleState` per key; `ThrottleState.recordingFailure` decides, this stores.
///
/// Keys (their prefixes never overlap): sign-in `account:<sha256>` and `address:<ip>`; status look-up `case:<number>`
/// and `addr:<ip>`; answer checks `account:<email>`; passkey sign-in challenges `passkey:<ip>`.
public enum ThrottleStore {
    // MARK: Keys

    /// The sign-in key of an account, known or not (hashed, so the table does not list who tried).
    public static func signInAccountKey(email: String) -> String { "account:" + SHA256.hexDigest(email.lowercased()) }
    /// The sign-in key of a client address.
    public static func signInAddressKey(_ address: String) -> String { "address:" + address }
    /// The status look-up key of a case number.
    public static func caseKey(_ number: String) -> String { "case:" + number }
    /// The status look-up key of a client address.
    public static func addressKey(_ address: String) -> String { "addr:" + address }
    /// The key of a client address's passkey sign-in challenges (each one counts, not only failures).
    public static func passkeyOptionsKey(_ address: String) -> String { "passkey:" + address }
    /// The key of an account's answer budget, shared by answers filed as evidence and answers given with `send_reset`.
    public static func accountKey(_ email: String) -> String { "account:" + email.lowercased() }

    // MARK: Reading

    /// The latest lock among `keys` still in force at `now`, or nil (one statement, one index probe per key).
    public static func lockedUntil(keys: [String], now: Date, on connection: PostgresConnection) throws -> Date? {
        try connection.query("SELECT max(locked_until) AS until FROM throttles WHERE key = ANY(\(keys)) AND locked_until > \(now)")
            .first?.decode("until", as: Date?.self)
    }

    /// The stored state of `key` (`.clear` when it has none).
    public static func state(key: String, on connection: PostgresConnection) throws -> ThrottleState {
        try load(key: key, forUpdate: false, on: connection) ?? .clear
    }

    // MARK: Writing

    /// Counts `count` failures for `key` under `rule` and returns the new state (`lockedUntil(at: now)` tells
    /// whether the key is locked now). The row is locked until the caller's transaction ends, so concurrent
    /// failures from other connections wait and count on top; outside a transaction it runs in one of its own.
    @discardableResult
    public static func recordFailure(
        key: String, rule: ThrottleRule, count: Int = 1, now: Date,
        on connection: PostgresConnection
    ) throws -> ThrottleState {
        guard count > 0 else { return try state(key: key, on: connection) }
        return try update(key: key, on: connection) { $0.recordingFailures(count, at: now, rule: rule) }
    }

    /// Counts `count` failures in advance unless `key` is locked at `now` (`ThrottleState.claiming`): the check and the
    /// count are one step under the row's lock, so of concurrent claims only those made before the limit is reached are
    /// admitted. Commit it before the slow work it admits; `settle` gives back what turned out not to be failures.
    public static func claim(
        key: String, rule: ThrottleRule, count: Int = 1, now: Date,
        on connection: PostgresConnection
    ) throws -> ThrottleAdmission {
        // As stored, so that the claim's dates compare equal to the row's when it is settled.
        let now = PostgresTime.stored(now)
        var admission = ThrottleAdmission.locked(until: now)
        try update(key: key, on: connection) { stored in
            guard let claim = stored.claiming(count, at: now, rule: rule) else {
                admission = .locked(until: stored.lockedUntil(at: now) ?? now)
                return stored
            }
            admission = .admitted(claim)
            return claim.after
        }
        return admission
    }

    /// Settles a claim on `key`: only `failures` of its count were failures (`ThrottleState.settling`).
    public static func settle(
        key: String, claim: ThrottleClaim, failures: Int, rule: ThrottleRule, now: Date,
        on connection: PostgresConnection
    ) throws {
        guard failures < claim.count else { return }
        try update(key: key, on: connection) { $0.settling(claim, failures: failures, now: now, rule: rule) }
    }

    /// Replaces the state of `key` by `change(stored)` under the row's lock (inserting a new key's row), in the caller's
    /// transaction or one of its own; returns the new state.
    @discardableResult
    private static func update(
        key: String, on connection: PostgresConnection,
        _ change: (ThrottleState) -> ThrottleState
    ) throws -> ThrottleState {
        guard connection.inTransaction else {
            return try connection.withTransaction { try update(key: key, on: $0, change) }
        }
        // Twice at most: when the key is new and another transaction inserts it first, the second pass finds its row.
        for _ in 0..<2 {
            if let stored = try load(key: key, forUpdate: true, on: connection) {
                let next = change(stored)
                if next != stored {
                    try connection.execute(
                        """
                        UPDATE throttles SET failures = \(next.failures), window_started_at = \(next.windowStartedAt),
                            locked_until = \(next.lockedUntil) WHERE key = \(key)
                        """)
                }
                return next
            }
            let next = change(.clear)
            if next == .clear { return next }
            let inserted = try connection.execute(
                """
                INSERT INTO throttles (key, failures, window_started_at, locked_until)
                VALUES (\(key), \(next.failures), \(next.windowStartedAt), \(next.lockedUntil)) ON CONFLICT (key) DO NOTHING
                """)
            if inserted == 1 { return next }
        }
        throw PostgresError(.misuse, message: "throttle row neither found nor inserted")
    }

    /// Counts one failed status look-up against a case number and an address (either may be nil), in that order.
    public static func recordFailure(
        caseNumber: String?, address: String?, policy: StatusThrottlePolicy, now: Date,
        on connection: PostgresConnection
    ) throws {
        if let caseNumber { try recordFailure(key: caseKey(caseNumber), rule: policy.caseRule, now: now, on: connection) }
        if let address { try recordFailure(key: addressKey(address), rule: policy.addressRule, now: now, on: connection) }
    }

    /// Claims `count` answers for the account on file as wrong until checked, under the case-number budget (9 wrong in
    /// 8 hours lock its answers for 8 hours, even right ones): refused while locked.
    public static func claimAnswers(
        email: String, count: Int, policy: StatusThrottlePolicy = .default, now: Date,
        on connection: PostgresConnection
    ) throws -> ThrottleAdmission {
        try claim(key: accountKey(email), rule: policy.caseRule, count: count, now: now, on: connection)
    }

    /// Settles claimed answers once checked: only `wrong` of them count.
    public static func settleAnswers(
        email: String, claim: ThrottleClaim, wrong: Int, policy: StatusThrottlePolicy = .default, now: Date,
        on connection: PostgresConnection
    ) throws {
        try settle(key: accountKey(email), claim: claim, failures: wrong, rule: policy.caseRule, now: now, on: connection)
    }

    /// Forgets the failures of `key` (a successful sign-in resets its account's count).
    public static func reset(key: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM throttles WHERE key = \(key)")
    }

    /// Drops rows whose lock has passed and whose count began before `cutoff` (which must lie further back
    /// than every rule's window).
    @discardableResult
    public static func purge(before cutoff: Date, now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM throttles WHERE window_started_at < \(cutoff) AND (locked_until IS NULL OR locked_until <= \(now))")
    }

    private static func load(key: String, forUpdate: Bool, on connection: PostgresConnection) throws -> ThrottleState? {
        let rows =
            forUpdate
            ? try connection.query("SELECT failures, window_started_at, locked_until FROM throttles WHERE key = \(key) FOR UPDATE")
            : try connection.query("SELECT failures, window_started_at, locked_until FROM throttles WHERE key = \(key)")
        guard let row = rows.first else { return nil }
        return ThrottleState(
            failures: try row.decode("failures"), windowStartedAt: try row.decode("window_started_at"),
            lockedUntil: try row.decode("locked_until"))
    }
}
