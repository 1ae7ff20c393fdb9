import Foundation
import Postgres
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimAPI

/// `GET /api/v1/reports/summary` and the case gauges of `/metrics`: numbers equal to the rows made here, and who may see them.
@Suite struct ReportTests {
    static let day = 86_400.0

    /// Opens a case over HTTP and then sets its state, path, clock and due date as a history would have left them.
    func makeCase(
        _ service: TestService, _ agent: AgentSession, _ connection: PostgresConnection, state: String, tier: String, path: String,
        openedDaysAgo: Double, resolvedDaysAgo: Double? = nil, paused: Double = 0, dueInDays: Double? = nil, assignee: UUID? = nil
    ) throws -> String {
        let created = try service.client().request("POST", "/api/v1/cases", headers: agent.headers, encoded: CaseWorld.caseBody())
        try #require(created.status == 201, "\(created.text)")
        let number = try #require(try created.json()["case_number"] as? String)
        let now = service.clock.now()
        let opened = now.addingTimeInterval(-openedDaysAgo * Self.day)
        let entered = resolvedDaysAgo.map { now.addingTimeInterval(-$0 * Self.day) } ?? opened
        let due = dueInDays.map { now.addingTimeInterval($0 * Self.day) }
        try connection.execute(
            """
            UPDATE cases SET state = \(state), tier = \(tier), path = \(path), opened_at = \(opened), state_entered_at = \(entered),
                paused_seconds = \(paused * Self.day), due_at = \(due), assignee_id = \(assignee) WHERE case_number = \(number)
            """)
        return number
    }

    @Test func theSummaryCountsExactlyTheRowsAndOnlyTier2AndAdminsSeeIt() throws {
        let service = try TestService()
        defer { service.stop() }
        let tier1 = try service.signIn(tier: .tier1)
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        // Resolved on the reset path (target 3 days): one in 1 day, one in 4; on documents (target 18 days) in 25 with 10 paused.
        _ = try makeCase(service, tier1, connection, state: "resolved", tier: "tier2", path: "reset", openedDaysAgo: 2, resolvedDaysAgo: 1)
        _ = try makeCase(service, tier1, connection, state: "resolved", tier: "tier2", path: "reset", openedDaysAgo: 5, resolvedDaysAgo: 1)
        _ = try makeCase(
            service, tier1, connection, state: "resolved", tier: "tier3", path: "documents", openedDaysAgo: 27, resolvedDaysAgo: 2, paused: 10)
        // Resolved before the window: not counted.
        _ = try makeCase(service, tier1, connection, state: "resolved", tier: "tier2", path: "reset", openedDaysAgo: 60, resolvedDaysAgo: 59)
        // Open: one overdue at tier 2, one due tomorrow, one waiting for the customer (no due date); a rejected one is not open.
        _ = try makeCase(service, tier1, connection, state: "identity_check", tier: "tier2", path: "undetermined", openedDaysAgo: 3, dueInDays: -1)
        _ = try makeCase(service, tier1, connection, state: "new", tier: "tier1", path: "undetermined", openedDaysAgo: 0, dueInDays: 1)
        _ = try makeCase(service, tier1, connection, state: "awaiting_documents", tier: "tier3", path: "documents", openedDaysAgo: 0)
        _ = try makeCase(service, tier1, connection, state: "rejected", tier: "tier2", path: "undetermined", openedDaysAgo: 1, resolvedDaysAgo: 0.5)

        // Who may look.
        #expect(try service.client().request("GET", "/api/v1/reports/summary", headers: tier1.headers).status == 403)
        let client = try service.addClient()
        #expect(
            try service.client().request(
                "GET", "/api/v1/reports/summary",
                headers: service.clientHeaders(client, method: "GET", target: "/api/v1/reports/summary", body: [])
            ).status == 403)
        #expect(try service.client().request("GET", "/api/v1/reports/summary").status == 401)
        let admin = try service.signIn(tier: .tier1, admin: true)
        #expect(try service.client().request("GET", "/api/v1/reports/summary", headers: admin.headers).status == 200)
        let tier2 = try service.signIn(tier: .tier2)
        let answer = try service.client().request("GET", "/api/v1/reports/summary?days=30", headers: tier2.headers)
        try #require(answer.status == 200, "\(answer.text)")
        let report = try answer.json()

        let open = try #require(report["open"] as? [String: Any])
        #expect(open["total"] as? Int == 3)
        let backlog = try #require(open["by_state_and_tier"] as? [[String: Any]]).map { "\($0["state"]!)/\($0["tier"]!)=\($0["count"]!)" }
        #expect(Set(backlog) == ["identity_check/tier2=1", "new/tier1=1", "awaiting_documents/tier3=1"])
        #expect(report["overdue"] as? Int == 1)

        let paths = Dictionary(uniqueKeysWithValues: try #require(report["paths"] as? [[String: Any]]).map { ($0["path"] as! String, $0) })
        #expect(paths["reset"]?["resolved"] as? Int == 2)
        #expect(paths["reset"]?["within_target"] as? Int == 1)
        #expect(paths["reset"]?["within_target_percent"] as? Int == 50)
        #expect(paths["reset"]?["target_seconds"] as? Int == 3 * 86_400)
        #expect(paths["documents"]?["within_target"] as? Int == 1, "25 days with 10 paused is 15, within 18")
        #expect(paths["verified_identity"]?["resolved"] as? Int == 0)
        #expect(paths["verified_identity"]?["within_target_percent"] is NSNull)

        // Wall-clock days to resolve: 1, 4 and 25; percentile_cont gives the median 4 and the 90th 4 + 0.8 × 21.
        let times = try #require(report["time_to_resolve"] as? [String: Any])
        #expect(times["resolved"] as? Int == 3)
        #expect(times["p50_seconds"] as? Int == 4 * 86_400)
        #expect(times["p90_seconds"] as? Int == Int((4 + 0.8 * 21) * 86_400))

        let trend = try #require(report["trend"] as? [[String: Any]])
        #expect(trend.count == 30)
        #expect(trend.reduce(0) { $0 + ($1["resolved"] as? Int ?? 0) } == 3)
        #expect(trend.reduce(0) { $0 + ($1["opened"] as? Int ?? 0) } == 7, "every case but the one opened 60 days ago")
        #expect(trend.last?["date"] as? String == String(Timestamp.format(service.clock.now()).prefix(10)))

        // The same figures as CSV, and bad parameters named.
        let csv = try service.client().request("GET", "/api/v1/reports/summary?days=30&format=csv", headers: tier2.headers)
        #expect(csv.status == 200)
        #expect(csv.header("Content-Type")?.hasPrefix("text/csv") == true)
        #expect(csv.header("Content-Disposition")?.hasPrefix("attachment") == true)
        #expect(csv.text.contains("overdue,,,,,1\r\n"))
        #expect(csv.text.contains("resolved_within_target,,,reset,,1\r\n"))
        #expect(csv.text.contains("open,identity_check,tier2,,,1\r\n"))
        for bad in ["days=0", "days=367", "days=x", "format=xml"] {
            let refused = try service.client().request("GET", "/api/v1/reports/summary?\(bad)", headers: tier2.headers)
            #expect(refused.status == 422, "\(bad)")
        }

        // /metrics carries the same backlog and overdue count.
        let metrics = try service.client().request("GET", "/metrics")
        #expect(metrics.text.contains("reclaim_cases_open{state=\"identity_check\",tier=\"tier2\"} 1\n"))
        #expect(metrics.text.contains("reclaim_cases_open{state=\"engineering\",tier=\"engineering\"} 0\n"))
        #expect(metrics.text.contains("reclaim_cases_overdue 1\n"))
    }

    /// Workload and throughput per agent, time to first response and the backlog by age: numbers equal to the rows made
    /// here, and each figure's queue (the links of /reports) lists exactly those cases.
    @Test func perAgentFiguresFirstResponseAndBacklogByAgeMatchTheRowsAndTheirQueues() throws {
        let service = try TestService()
        defer { service.stop() }
        let tier1 = try service.signIn(tier: .tier1)
        let tier2 = try service.signIn(tier: .tier2, name: "Idris Holder")
        let other = try service.signIn(tier: .tier3, name: "Mireille Closer")
        let connection = try PostgresConnection(connectionString: service.database.connectionString)
        defer { connection.close() }
        // Idris holds two open cases (one overdue, opened 3 days ago; one new today); Mireille resolved one yesterday and
        // one 40 days ago (outside the window); an open case older than 30 days belongs to nobody.
        _ = try makeCase(
            service, tier1, connection, state: "identity_check", tier: "tier2", path: "undetermined", openedDaysAgo: 3, dueInDays: -1,
            assignee: tier2.agentID)
        let answered = try makeCase(
            service, tier1, connection, state: "new", tier: "tier2", path: "undetermined", openedDaysAgo: 2.0 / 24, dueInDays: 1,
            assignee: tier2.agentID)
        _ = try makeCase(
            service, tier1, connection, state: "resolved", tier: "tier3", path: "documents", openedDaysAgo: 9, resolvedDaysAgo: 1,
            assignee: other.agentID)
        _ = try makeCase(
            service, tier1, connection, state: "resolved", tier: "tier3", path: "documents", openedDaysAgo: 50, resolvedDaysAgo: 40,
            assignee: other.agentID)
        _ = try makeCase(service, tier1, connection, state: "new", tier: "tier1", path: "undetermined", openedDaysAgo: 45, dueInDays: 1)
        // The first response: an agent's note two hours after the opening (the opening itself, by an agent, is not one).
        let note = try service.client().request(
            "POST", "/api/v1/cases/\(answered)/notes", headers: tier2.headers, json: ["body": "Called back.", "visibility": "internal"])
        try #require(note.status == 201, "\(note.text)")

        let answer = try service.client().request("GET", "/api/v1/reports/summary?days=30", headers: tier2.headers)
        try #require(answer.status == 200, "\(answer.text)")
        let report = try answer.json()
        let agents = try #require(report["agents"] as? [[String: Any]])
        let holder = try #require(agents.first { $0["agent_id"] as? String == tier2.agentID.uuidString.lowercased() })
        #expect(holder["name"] as? String == "Idris Holder" && holder["tier"] as? String == "tier2")
        #expect(holder["open"] as? Int == 2 && holder["overdue"] as? Int == 1 && holder["resolved"] as? Int == 0)
        let closer = try #require(agents.first { $0["agent_id"] as? String == other.agentID.uuidString.lowercased() })
        #expect(closer["open"] as? Int == 0 && closer["resolved"] as? Int == 1, "the one resolved 40 days ago is outside the window")
        #expect(agents.count == 2, "nobody else holds or resolved a case")

        let first = try #require(report["first_response"] as? [String: Any])
        #expect(first["cases"] as? Int == 3, "the three cases opened in the window")
        #expect(first["answered"] as? Int == 1 && first["sampled"] as? Bool == false)
        let median = try #require(first["p50_seconds"] as? Int)
        #expect(abs(median - 2 * 3_600) < 120, "about two hours: \(median)")

        let ages = try #require(report["backlog_by_age"] as? [[String: Any]])
        #expect(ages.map { $0["from_days"] as? Int } == [0, 1, 3, 7, 30])
        #expect(ages.map { $0["count"] as? Int } == [1, 0, 1, 0, 1])
        #expect(ages.last?["to_days"] is NSNull && ages.first?["opened_before"] is NSNull && ages.last?["opened_after"] is NSNull)

        // Each figure's queue lists exactly its cases.
        func queueCount(_ query: String) throws -> Int {
            let listed = try service.client().request("GET", "/api/v1/cases?limit=200&\(query)", headers: tier2.headers)
            try #require(listed.status == 200, "\(query): \(listed.text)")
            return try #require(try listed.json()["items"] as? [Any]).count
        }
        let holderID = tier2.agentID.uuidString.lowercased()
        #expect(try queueCount("assignee=\(holderID)") == 2)
        #expect(try queueCount("assignee=\(holderID)&overdue=true") == 1)
        #expect(try queueCount("overdue=true") == report["overdue"] as? Int)
        for bucket in ages {
            var filters: [String] = []
            for key in ["opened_after", "opened_before"] {
                if let time = bucket[key] as? String { filters.append("\(key)=\(time)") }
            }
            #expect(try queueCount(filters.joined(separator: "&")) == bucket["count"] as? Int, "\(filters)")
        }
        for bad in ["assignee=someone", "opened_after=yesterday", "opened_before=2026-13-01T00:00:00Z"] {
            let refused = try service.client().request("GET", "/api/v1/cases?\(bad)", headers: tier2.headers)
            #expect(refused.status == 422, "\(bad): \(refused.text)")
        }
    }
}
