import Foundation
import Postgres

/// Limits on failed customer status look-ups, kept in PostgreSQL so every instance agrees.
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
}

/// The `status_throttle` table: keys `case:<number>`, `addr:<address>` and `account:<email>`.
public enum StatusThrottle {
    /// The key of a case number.
    public static func caseKey(_ number: String) -> String { "case:" + number }
    /// The key of a client address.
    public static func addressKey(_ address: String) -> String { "addr:" + address }

    /// The key of an account's answer budget, shared by answers filed as evidence and answers given with `send_reset`.
    public static func accountKey(_ email: String) -> String { "account:" + email.lowercased() }

    /// Records `count` wrong security answers for the account on file, under the case-number budget
    /// (9 in 8 hours lock its answers for 8 hours, even right ones).
    public static func recordAnswerFailures(email: String, count: Int, policy: StatusThrottlePolicy = .default, now: Date,
                                            on connection: PostgresConnection) throws {
        for _ in 0..<count {
            try recordFailure(key: accountKey(email), limit: policy.caseLimit, window: policy.caseWindow, lockout: policy.caseLockout,
                              now: now, on: connection)
        }
    }

    /// The latest lock among `keys` still in force at `now`, or nil.
    public static func lockedUntil(keys: [String], now: Date, on connection: PostgresConnection) throws -> Date? {
        try connection.query("""
            SELECT max(locked_until) FROM status_throttle WHERE key = ANY(string_to_array(\(keys.joined(separator: "\u{1F}"))::text, chr(31))) AND locked_until > \(now)
            """).first?.decode(0, as: Date?.self)
    }

    /// Counts one failure for `key`: a failure outside the window (or after an expired lock) starts a new count;
    /// reaching `limit` locks the key for `lockout`. Failures while locked do not extend the lock.
    public static func recordFailure(key: String, limit: Int, window: TimeInterval, lockout: TimeInterval, now: Date,
                                     on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO status_throttle AS t (key, failures, window_started_at, locked_until)
            VALUES (\(key), 1, \(now), CASE WHEN 1 >= \(limit) THEN \(now) + \(lockout) * interval '1 second' END)
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE WHEN t.locked_until > \(now) THEN t.failures
                                WHEN t.window_started_at + \(window) * interval '1 second' <= \(now) OR t.locked_until <= \(now) THEN 1
                                ELSE t.failures + 1 END,
                window_started_at = CASE WHEN t.locked_until > \(now) THEN t.window_started_at
                                WHEN t.window_started_at + \(window) * interval '1 second' <= \(now) OR t.locked_until <= \(now) THEN \(now)
                                ELSE t.window_started_at END,
                locked_until = CASE WHEN t.locked_until > \(now) THEN t.locked_until
                                WHEN (CASE WHEN t.window_started_at + \(window) * interval '1 second' <= \(now) OR t.locked_until <= \(now) THEN 1
                                           ELSE t.failures + 1 END) >= \(limit) THEN \(now) + \(lockout) * interval '1 second'
                                ELSE NULL END
            """)
    }

    /// Counts one failure against a case number and an address (either may be nil).
    public static func recordFailure(caseNumber: String?, address: String?, policy: StatusThrottlePolicy, now: Date,
                                     on connection: PostgresConnection) throws {
        if let caseNumber {
            try recordFailure(key: caseKey(caseNumber), limit: policy.caseLimit, window: policy.caseWindow, lockout: policy.caseLockout, now: now, on: connection)
        }
        if let address {
            try recordFailure(key: addressKey(address), limit: policy.addressLimit, window: policy.addressWindow, lockout: policy.addressLockout, now: now, on: connection)
        }
    }
}
