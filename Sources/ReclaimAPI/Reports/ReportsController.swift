import Foundation
import HTTPServer
import Postgres
import ReclaimCore
import ReclaimStore

/// `GET /api/v1/reports/summary?days=&format=` (tier2+ and admins): the backlog, overdue cases, each path's share
/// resolved within its target, time to resolve and the daily trend, as JSON or as CSV for a spreadsheet.
final class ReportsController: Sendable {
    let context: ServiceContext
    let policy: SLAPolicy

    init(context: ServiceContext, policy: SLAPolicy = .default) {
        self.context = context
        self.policy = policy
    }

    /// The window's length when `days` is not given, and the longest allowed.
    static let defaultDays = 30
    static let maximumDays = 366

    /// The states with work left, each with the tiers a case in it can have (its holder's, or any after reassignment).
    static var openStates: [CaseState] { CaseState.allCases.filter(\.isOpen) }

    @Sendable func summary(_ request: HTTPRequest) throws -> HTTPResponse {
        try context.authorize(.readReports, request)
        var errors: [FieldError] = []
        var days = Self.defaultDays
        if let text = request.query("days") {
            if let value = Int(text), (1...Self.maximumDays).contains(value) {
                days = value
            } else {
                errors.append(FieldError(field: "days", message: "days is 1 to \(Self.maximumDays)"))
            }
        }
        let format = request.query("format") ?? "json"
        if format != "json" && format != "csv" { errors.append(FieldError(field: "format", message: "format is json or csv")) }
        if !errors.isEmpty { throw Problem.unprocessable(errors: errors) }

        let now = context.now
        // The window is whole UTC days, today included: `days` points on the trend.
        let today = (now.timeIntervalSince1970 / SLAPolicy.day).rounded(.down) * SLAPolicy.day
        let since = Date(timeIntervalSince1970: today - Double(days - 1) * SLAPolicy.day)
        let dates = (0..<days).map { Timestamp.format(since.addingTimeInterval(Double($0) * SLAPolicy.day)).prefix(10) }.map(String.init)
        let targets = RecoveryPath.allCases.map { (path: $0.rawValue, seconds: Int64(policy.resolutionTarget($0))) }
        let ageEdges = Self.ageBuckets.map { now.addingTimeInterval(-Double($0) * SLAPolicy.day) }
        let (figures, supervision) = try context.pool.withConnection { connection in
            (
                try CaseReportStore.summary(
                    since: since, now: now, openStates: Self.openStates.map(\.rawValue), targets: targets, days: dates, on: connection),
                try CaseReportStore.supervision(since: since, now: now, ageEdges: ageEdges, on: connection)
            )
        }
        if format == "csv" {
            var response = HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "text/csv; charset=utf-8"),
                    ("Content-Disposition", "attachment; filename=\"reclaim-summary-\(dates.last ?? "")-\(days)d.csv\""),
                ],
                body: Array(Self.csv(figures, days: days, targets: targets).utf8))
            response.addHeader("Cache-Control", "no-store")
            return response
        }
        guard case .object(var members) = Self.json(figures, days: days, since: since, now: now, targets: targets) else { throw Problem.internal }
        for (key, value) in Self.json(supervision, ageEdges: ageEdges) { members[key] = value }
        return CaseHTTP.json(.object(members))
    }

    /// The backlog's age buckets, in whole days since opening: under 1, 1 to 3, 3 to 7, 7 to 30, over 30.
    static let ageBuckets = [1, 3, 7, 30]

    /// `agents`, `first_response` and `backlog_by_age`; each age bucket carries the `opened_after`/`opened_before` times
    /// of its queue (`GET /api/v1/cases?opened_after=&opened_before=`).
    static func json(_ figures: SupervisionFigures, ageEdges: [Date]) -> [String: JSONValue] {
        let seconds: (Double?) -> JSONValue = { $0.map { .int(Int64($0.rounded())) } ?? .null }
        let buckets: [JSONValue] = figures.openByAge.enumerated().map { index, count in
            [
                "from_days": .int(Int64(index == 0 ? 0 : ageBuckets[index - 1])),
                "to_days": index < ageBuckets.count ? .int(Int64(ageBuckets[index])) : .null,
                "opened_after": index < ageEdges.count ? Timestamp.json(ageEdges[index]) : .null,
                "opened_before": index == 0 ? .null : Timestamp.json(ageEdges[index - 1]),
                "count": .int(Int64(count)),
            ]
        }
        return [
            "agents": .array(
                figures.agents.map {
                    [
                        "agent_id": .string($0.id.uuidString.lowercased()), "name": .string($0.name), "tier": .string($0.tier),
                        "open": .int(Int64($0.open)), "overdue": .int(Int64($0.overdue)), "resolved": .int(Int64($0.resolved)),
                    ]
                }),
            "first_response": [
                "cases": .int(Int64(figures.firstResponse.cases)), "answered": .int(Int64(figures.firstResponse.answered)),
                "p50_seconds": seconds(figures.firstResponse.p50Seconds), "p90_seconds": seconds(figures.firstResponse.p90Seconds),
                "sampled": .bool(figures.firstResponse.sampled),
            ],
            "backlog_by_age": .array(buckets),
        ]
    }

    /// Percent of `part` in `whole`, rounded down (so 99.9 % never shows as 100); nil when `whole` is 0.
    static func percent(_ part: Int, of whole: Int) -> JSONValue {
        whole == 0 ? .null : .int(Int64(part * 100 / whole))
    }

    static func json(_ figures: CaseSummaryFigures, days: Int, since: Date, now: Date, targets: [(path: String, seconds: Int64)]) -> JSONValue {
        let target = Dictionary(uniqueKeysWithValues: targets.map { ($0.path, $0.seconds) })
        let seconds: (Double?) -> JSONValue = { $0.map { .int(Int64($0.rounded())) } ?? .null }
        return [
            "days": .int(Int64(days)), "from": Timestamp.json(since), "to": Timestamp.json(now),
            "open": [
                "total": .int(Int64(figures.backlog.reduce(0) { $0 + $1.count })),
                "by_state_and_tier": .array(
                    figures.backlog.map { ["state": .string($0.state), "tier": .string($0.tier), "count": .int(Int64($0.count))] }),
            ],
            "overdue": .int(Int64(figures.overdue)),
            "paths": .array(
                figures.paths.map { path in
                    [
                        "path": .string(path.path), "target_seconds": .int(target[path.path] ?? 0), "resolved": .int(Int64(path.resolved)),
                        "within_target": .int(Int64(path.withinTarget)), "within_target_percent": percent(path.withinTarget, of: path.resolved),
                    ]
                }),
            "time_to_resolve": [
                "resolved": .int(Int64(figures.resolved)), "p50_seconds": seconds(figures.p50Seconds), "p90_seconds": seconds(figures.p90Seconds),
            ],
            "trend": .array(
                figures.trend.map { ["date": .string($0.date), "opened": .int(Int64($0.opened)), "resolved": .int(Int64($0.resolved))] }),
        ]
    }

    /// One figure a line (`figure,state,tier,path,date,value`): long form, which every spreadsheet pivots.
    static func csv(_ figures: CaseSummaryFigures, days: Int, targets: [(path: String, seconds: Int64)]) -> String {
        var lines = ["figure,state,tier,path,date,value"]
        for item in figures.backlog { lines.append("open,\(item.state),\(item.tier),,,\(item.count)") }
        lines.append("overdue,,,,,\(figures.overdue)")
        for path in figures.paths {
            lines.append("target_seconds,,,\(path.path),,\(targets.first { $0.path == path.path }?.seconds ?? 0)")
            lines.append("resolved,,,\(path.path),,\(path.resolved)")
            lines.append("resolved_within_target,,,\(path.path),,\(path.withinTarget)")
        }
        lines.append("time_to_resolve_p50_seconds,,,,,\(figures.p50Seconds.map { String(Int64($0.rounded())) } ?? "")")
        lines.append("time_to_resolve_p90_seconds,,,,,\(figures.p90Seconds.map { String(Int64($0.rounded())) } ?? "")")
        for day in figures.trend {
            lines.append("opened_on,,,,\(day.date),\(day.opened)")
            lines.append("resolved_on,,,,\(day.date),\(day.resolved)")
        }
        // Every field is a machine word, a date or a number: nothing needs quoting, nothing can start a formula.
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
