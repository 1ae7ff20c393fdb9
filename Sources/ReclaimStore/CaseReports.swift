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
        // Grouped by the date and formatted per day, not per row: to_char on each of ~330,000 rows of a 30-day window at
        // 5 M cases was most of the statement (473 → 134 ms on 500,000 seeded cases, 2026-12-02).
        let opened = try perDay(
            connection.query(
                """
                SELECT to_char(day, 'YYYY-MM-DD') AS day, n FROM (
                    SELECT (opened_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM cases
                    WHERE opened_at >= \(since) AND opened_at <= \(now) GROUP BY 1) d
                """))
        let resolvedPerDay = try perDay(
            connection.query(
                """
                SELECT to_char(day, 'YYYY-MM-DD') AS day, n FROM (
                    SELECT (state_entered_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM cases
                    WHERE state = 'resolved' AND state_entered_at >= \(since) AND state_entered_at <= \(now) GROUP BY 1) d
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

/// Supervision per agent and by age (`GET /api/v1/reports/summary`'s `agents`, `first_response`, `backlog_by_age`): each
/// an index-only scan of an index of migration 0019, or bounded by `firstResponseSample`.
public struct SupervisionFigures: Sendable, Equatable {
    /// One agent's open cases now, how many of them are overdue, and how many cases they held when resolved in the window.
    public struct Agent: Sendable, Equatable {
        public let id: UUID
        public let name: String
        public let tier: String
        public let open: Int
        public let overdue: Int
        public let resolved: Int
    }

    /// Cases opened in the window (the newest `firstResponseSample` at most) and the time to the first agent's event after
    /// the opening: how many had one, median and 90th percentile.
    public struct FirstResponse: Sendable, Equatable {
        public let cases: Int
        public let answered: Int
        public let p50Seconds: Double?
        public let p90Seconds: Double?
        /// True when the window held more cases than the sample.
        public let sampled: Bool
    }

    public let agents: [Agent]
    public let firstResponse: FirstResponse
    /// Open cases per age bucket: one per `ageEdges` edge, then everything older.
    public let openByAge: [Int]
}

extension CaseReportStore {
    /// The open predicate of 0019's partial indexes (CaseState.isOpen: the states with a tier).
    static let openPredicate: PostgresQuery = "state NOT IN ('resolved', 'rejected', 'closed', 'merged')"

    /// At most this many of the window's newest cases are followed to their first response: one primary-key probe each.
    public static let firstResponseSample = 2_000

    /// Per-agent workload and throughput, time to first response and open cases by age. `ageEdges` are the buckets'
    /// lower bounds in opening time, newest first (`now - 1 day`, `now - 3 days`, …): bucket i holds cases opened in
    /// [edge i, edge i-1), and one more bucket everything older than the last edge.
    public static func supervision(since: Date, now: Date, ageEdges: [Date], on connection: PostgresConnection) throws -> SupervisionFigures {
        // Workload: an index-only scan of cases_open_assignee; throughput: of cases_resolved_by_assignee (the window only).
        let rows = try connection.query(
            """
            WITH held AS (
                SELECT assignee_id, count(*) AS open, count(*) FILTER (WHERE due_at < \(now)) AS overdue FROM cases
                WHERE assignee_id IS NOT NULL AND \(openPredicate) GROUP BY assignee_id
            ), done AS (
                SELECT assignee_id, count(*) AS resolved FROM cases
                WHERE state = 'resolved' AND state_entered_at >= \(since) AND state_entered_at <= \(now) AND assignee_id IS NOT NULL
                GROUP BY assignee_id
            )
            SELECT a.id, a.name, a.tier, coalesce(h.open, 0) AS open, coalesce(h.overdue, 0) AS overdue, coalesce(d.resolved, 0) AS resolved
            FROM held h FULL JOIN done d ON d.assignee_id = h.assignee_id JOIN agents a ON a.id = coalesce(h.assignee_id, d.assignee_id)
            ORDER BY open DESC, resolved DESC, a.name, a.id
            """)
        let agents = try rows.map { row in
            SupervisionFigures.Agent(
                id: try row.decode("id"), name: try row.decode("name"), tier: try row.decode("tier"), open: try row.decode("open", as: Int.self),
                overdue: try row.decode("overdue", as: Int.self), resolved: try row.decode("resolved", as: Int.self))
        }

        // The first event after the opening by an agent (a refusal is not a response): the primary key, in seq order.
        let first = try connection.query(
            """
            WITH recent AS (
                SELECT id, opened_at FROM cases WHERE opened_at >= \(since) AND opened_at <= \(now)
                ORDER BY opened_at DESC LIMIT \(firstResponseSample + 1)
            ), sample AS (SELECT id, opened_at FROM recent ORDER BY opened_at DESC LIMIT \(firstResponseSample))
            SELECT (SELECT count(*) FROM recent) AS found, count(*) AS cases, count(f.at) AS answered,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM f.at - s.opened_at))::float8 AS p50,
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM f.at - s.opened_at))::float8 AS p90
            FROM sample s LEFT JOIN LATERAL (
                SELECT e.at FROM case_events e
                WHERE e.case_id = s.id AND e.seq > 1 AND e.actor LIKE 'agent:%' AND e.type <> 'denied'
                ORDER BY e.seq LIMIT 1
            ) f ON true
            """
        ).first
        let found = try first?.decode("found", as: Int.self) ?? 0
        let firstResponse = SupervisionFigures.FirstResponse(
            cases: try first?.decode("cases", as: Int.self) ?? 0, answered: try first?.decode("answered", as: Int.self) ?? 0,
            p50Seconds: try first?.decode("p50", as: Double?.self), p90Seconds: try first?.decode("p90", as: Double?.self),
            sampled: found > firstResponseSample)

        // Open cases by age: one index-only scan of cases_open_opened_at, a count per bucket.
        var openByAge: [Int] = []
        if let oldest = ageEdges.last {
            var buckets: [PostgresQuery] = []
            for (index, edge) in ageEdges.enumerated() {
                if index == 0 {
                    buckets.append("count(*) FILTER (WHERE opened_at >= \(edge))")
                } else {
                    buckets.append("count(*) FILTER (WHERE opened_at >= \(edge) AND opened_at < \(ageEdges[index - 1]))")
                }
            }
            buckets.append("count(*) FILTER (WHERE opened_at < \(oldest))")
            let row = try connection.query("SELECT \(buckets, separator: ", ") FROM cases WHERE \(openPredicate)").first
            openByAge = try (0..<buckets.count).map { try row?.decode($0, as: Int.self) ?? 0 }
        }
        return SupervisionFigures(agents: agents, firstResponse: firstResponse, openByAge: openByAge)
    }
}

private typealias Backlog = CaseSummaryFigures.Backlog
private typealias PathFigures = CaseSummaryFigures.PathFigures
private typealias Day = CaseSummaryFigures.Day
