import Foundation
import Postgres

/// What a supervisor sees (`GET /api/v1/reports/summary`): figures over the `cases` table, each from one index
/// (see migration 0009 and BENCHMARKS.md), so they stay fast at a million cases.
public struct CaseSummaryFigures: Sendable, Equatable {
    /// Open cases of one state and tier.
    public struct Backlog: Sendable, Equatable {
        public let state: String
        public let tier: String
        public let count: Int
    }

    /// Cases of one path resolved in the window, and how many of them within the path's target.
    public struct PathFigures: Sendable, Equatable {
        public let path: String
        public let resolved: Int
        public let withinTarget: Int
    }

    /// One UTC day of the window.
    public struct Day: Sendable, Equatable {
        /// `YYYY-MM-DD`.
        public let date: String
        public let opened: Int
        public let resolved: Int
    }

    public let backlog: [Backlog]
    public let overdue: Int
    public let paths: [PathFigures]
    /// Cases resolved in the window.
    public let resolved: Int
    /// Seconds from opening to resolution (wall clock), median and 90th percentile; nil when none was resolved.
    public let p50Seconds: Double?
    public let p90Seconds: Double?
    /// Every day of the window, oldest first, days without cases included.
    public let trend: [Day]
}

/// Read-only figures over `cases` for reports and metrics.
public enum CaseReportStore {
    /// The figures for cases resolved or opened since `since` (up to `now`); `openStates` are the states with work
    /// left, `targets` each path's resolution target in seconds (from `SLAPolicy.resolutionTarget`, the one rule),
    /// `days` the UTC dates of the window in order.
    public static func summary(
        since: Date, now: Date, openStates: [String], targets: [(path: String, seconds: Int64)], days: [String],
        on connection: PostgresConnection
    ) throws -> CaseSummaryFigures {
        let backlog = try self.backlog(openStates: openStates, on: connection)
        let overdue = try self.overdue(now: now, on: connection)

        // A case's pause (the customer's turn) is not counted against its target; SLAPolicy.resolvedWithinTarget says the same.
        let pathRows = try connection.query(
            """
            SELECT c.path, count(*) AS resolved,
                   count(*) FILTER (WHERE extract(epoch FROM c.state_entered_at - c.opened_at) - greatest(c.paused_seconds, 0) <= t.target) AS within
            FROM cases c JOIN unnest(\(targets.map(\.path)), \(targets.map(\.seconds))) AS t(path, target) ON t.path = c.path
            WHERE c.state = 'resolved' AND c.state_entered_at >= \(since) AND c.state_entered_at <= \(now)
            GROUP BY c.path
            """)
        var found: [String: (Int, Int)] = [:]
        for row in pathRows {
            found[try row.decode("path")] = (try row.decode("resolved", as: Int.self), try row.decode("within", as: Int.self))
        }
        let paths = targets.map { target in
            PathFigures(path: target.path, resolved: found[target.path]?.0 ?? 0, withinTarget: found[target.path]?.1 ?? 0)
        }

        let times = try connection.query(
            """
            SELECT count(*) AS resolved,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM state_entered_at - opened_at))::float8 AS p50,
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM state_entered_at - opened_at))::float8 AS p90
            FROM cases WHERE state = 'resolved' AND state_entered_at >= \(since) AND state_entered_at <= \(now)
            """
        ).first
        let opened = try perDay(
            connection.query(
                """
                SELECT to_char(opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n FROM cases
                WHERE opened_at >= \(since) AND opened_at <= \(now) GROUP BY 1
                """))
        let resolvedPerDay = try perDay(
            connection.query(
                """
                SELECT to_char(state_entered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n FROM cases
                WHERE state = 'resolved' AND state_entered_at >= \(since) AND state_entered_at <= \(now) GROUP BY 1
                """))
        return CaseSummaryFigures(
            backlog: backlog, overdue: overdue, paths: paths, resolved: try times?.decode("resolved", as: Int.self) ?? 0,
            p50Seconds: try times?.decode("p50", as: Double?.self), p90Seconds: try times?.decode("p90", as: Double?.self),
            trend: days.map { Day(date: $0, opened: opened[$0] ?? 0, resolved: resolvedPerDay[$0] ?? 0) })
    }

    /// Open cases by state and tier (an index-only scan of `cases_open_state_tier`).
    public static func backlog(openStates: [String], on connection: PostgresConnection) throws -> [CaseSummaryFigures.Backlog] {
        let rows = try connection.query(
            """
            SELECT state, tier, count(*) AS n FROM cases
            WHERE state = ANY(\(openStates)) AND state NOT IN ('resolved', 'rejected', 'closed')
            GROUP BY state, tier ORDER BY state, tier
            """)
        return try rows.map { Backlog(state: try $0.decode("state"), tier: try $0.decode("tier"), count: try $0.decode("n", as: Int.self)) }
    }

    /// Cases past their due date (only open cases have one; a range scan of the queue index).
    public static func overdue(now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) FROM cases WHERE due_at < \(now)").first?.decode(0, as: Int.self) ?? 0
    }

    private static func perDay(_ rows: PostgresRows) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in rows { counts[try row.decode("day")] = try row.decode("n", as: Int.self) }
        return counts
    }
}

private typealias Backlog = CaseSummaryFigures.Backlog
private typealias PathFigures = CaseSummaryFigures.PathFigures
private typealias Day = CaseSummaryFigures.Day
