import Foundation
import Postgres

/// The `login_throttles` table: failed sign-ins counted per key ("account:…", "address:…").
public enum LoginThrottleStore {
    /// When `key` is refused until, if it is locked now.
    public static func lockedUntil(key: String, now: Date, on connection: PostgresConnection) throws -> Date? {
        let rows = try connection.query("SELECT locked_until FROM login_throttles WHERE key = \(key) AND locked_until > \(now)")
        return try rows.first.map { try $0.decode(0, as: Date.self) }
    }

    /// The earliest time all of `keys` are free again, nil when none is locked (one primary-key probe per key).
    public static func lockedUntil(keys: [String], now: Date, on connection: PostgresConnection) throws -> Date? {
        var latest: Date?
        for key in keys {
            if let until = try lockedUntil(key: key, now: now, on: connection) {
                latest = max(latest ?? until, until)
            }
        }
        return latest
    }

    /// Counts one failure for `key`. Failures older than `window` are forgotten (nil: never, i.e. consecutive
    /// failures until a success); reaching `limit` locks the key for `lockout` and starts the count afresh.
    /// Returns when the key is locked until, if this failure locked it.
    @discardableResult
    public static func recordFailure(key: String, limit: Int, lockout: TimeInterval, window: TimeInterval?, now: Date,
                                     on connection: PostgresConnection) throws -> Date? {
        // Far past: a "window" that never expires for consecutive counting.
        let windowStart = window.map { now.addingTimeInterval(-$0) } ?? Date(timeIntervalSince1970: 0)
        let lockUntil = now.addingTimeInterval(lockout)
        let rows = try connection.query("""
            INSERT INTO login_throttles AS t (key, failures, window_started_at, locked_until)
            VALUES (\(key), 1, \(now), CASE WHEN 1 >= \(limit) THEN \(lockUntil) END)
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE
                    WHEN t.window_started_at < \(windowStart) OR t.failures + 1 >= \(limit) THEN
                        CASE WHEN t.window_started_at >= \(windowStart) AND t.failures + 1 >= \(limit) THEN 0 ELSE 1 END
                    ELSE t.failures + 1 END,
                window_started_at = CASE WHEN t.window_started_at < \(windowStart) OR t.failures + 1 >= \(limit) THEN \(now) ELSE t.window_started_at END,
                locked_until = CASE WHEN t.window_started_at >= \(windowStart) AND t.failures + 1 >= \(limit) THEN \(lockUntil) ELSE t.locked_until END
            RETURNING locked_until
            """)
        guard let row = rows.first, let until = try row.decode(0, as: Date?.self), until > now else { return nil }
        return until
    }

    /// Forgets the failures of `key` (a successful sign-in resets its account's count).
    public static func reset(key: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM login_throttles WHERE key = \(key)")
    }

    /// Drops rows whose lock has passed and whose window started before `cutoff`.
    @discardableResult
    public static func purge(before cutoff: Date, now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM login_throttles WHERE window_started_at < \(cutoff) AND (locked_until IS NULL OR locked_until <= \(now))")
    }
}
