import Foundation
import Postgres
import ReclaimTestSupport
import Testing

/// Plans that cannot collapse (issue 24): every statement the hot paths send, with its real binds, is `EXPLAIN`ed on
/// a database the planner believes holds five million cases (the bench's seed at 20,000, its statistics scaled by
/// 250), and no plan may scan a large table sequentially or be JIT-compiled. The queue collapsed once to five pages a
/// second on a JIT-compiled plan nobody had measured; this fails the suite instead.
@Suite struct PlanTests {
    static let seeded = 20_000
    static let believed = 5_000_000

    @Test func noHotPathStatementScansALargeTableOrIsJITCompiledAtFiveMillionCases() throws {
        let world = try CaseWorld {
            $0.mailThreads = 0
            $0.webhookThreads = 0
        }
        world.service.service.stopPollingThreads()  // their polls are not a request's statements
        let database = world.service.database
        try Self.seed(database)
        let tier1 = try world.agent(.tier1)
        let engineer = try world.agent(.engineering)
        let opened = try world.openCase(as: tier1)
        let number = opened.caseNumber
        let code = try #require(opened.accessCode)
        let firstPage = try world.get("/api/v1/cases?tier=tier1&limit=50", as: tier1).json()
        let cursor = try #require(firstPage["next_cursor"] as? String)
        let seededNumber = try #require(
            try database.connect().query("SELECT case_number FROM cases WHERE created_by = 'agent:seed' ORDER BY case_number OFFSET 777 LIMIT 1")
                .first?.decode("case_number", as: String.self))

        let requests: [(name: String, send: () throws -> TestHTTPResponse)] = [
            ("status look-up", { try world.status(number, code) }),
            ("case read", { try world.get("/api/v1/cases/\(number)", as: tier1) }),
            ("transition", { try world.act(number, "escalate", as: tier1, version: 1) }),
            ("note", { try world.post("/api/v1/cases/\(number)/notes", as: tier1, json: ["body": "Called back.", "visibility": "internal"]) }),
            ("queue, first page", { try world.get("/api/v1/cases?tier=tier1&limit=50", as: tier1) }),
            ("queue, next page", { try world.get("/api/v1/cases?tier=tier1&limit=50&cursor=\(cursor)", as: tier1) }),
            ("queue, any state", { try world.get("/api/v1/cases?state=any", as: tier1) }),
            ("queue, a state", { try world.get("/api/v1/cases?state=identity_check", as: tier1) }),
            ("queue, overdue", { try world.get("/api/v1/cases?overdue=true", as: tier1) }),
            ("queue, unreviewed", { try world.get("/api/v1/cases?unreviewed=true&tier=tier3", as: tier1) }),
            ("queue, awaiting reply", { try world.get("/api/v1/cases?awaiting_reply=true", as: tier1) }),
            ("queue, at risk", { try world.get("/api/v1/cases?risk=true", as: tier1) }),
            ("queue, mine", { try world.get("/api/v1/cases?assignee=me", as: engineer) }),
            ("search, case number", { try world.get("/api/v1/cases?q=\(seededNumber)", as: tier1) }),
            ("search, address", { try world.get("/api/v1/cases?q=user4242@example.com", as: tier1) }),
            ("search, serial", { try world.get("/api/v1/cases?q=SN00004242", as: tier1) }),
            ("search, Chinese name", { try world.get("/api/v1/cases?q=%E5%B0%8F%E6%98%8E", as: tier1) }),
            ("reports summary", { try world.get("/api/v1/reports/summary", as: engineer) }),
            ("search, Latin name", { try world.get("/api/v1/cases?q=Seeded%20Customer", as: tier1) }),
        ]
        let pool = world.service.service.pool
        var recorded: [(name: String, query: PostgresQuery)] = []
        for (name, send) in requests {
            var status = 0
            let sent = try pool.recordingQueries { status = try send().status }
            #expect(status == 200 || status == 201, "\(name): \(status)")
            recorded += sent.filter(Self.isPlannable).map { (name, $0) }
        }

        let superuser = try database.connect(as: .superuser)
        defer { superuser.close() }
        let large = try Self.believeFiveMillion(superuser)
        #expect(large.contains("cases") && large.contains("case_events") && large.contains("case_search"), "\(large)")
        try superuser.execute("SET jit = on")  // as a production server has it, whatever the test cluster says
        try superuser.execute("SET jit_above_cost = 100000")
        // The detector itself: an unindexed filter over every case is a sequential scan, and a join of every case with
        // its terms, believed at five million rows, is costly enough for JIT. (The planner reads the pages on disk, not
        // believed ones, so a sequential scan's cost is understated: it is refused by name, whatever its cost.)
        func explain(_ sql: String) throws -> String {
            try superuser.query(PostgresQuery(unsafeSQL: "EXPLAIN " + sql, binds: [.text("x")])).map { try $0.decode(0, as: String.self) }
                .joined(separator: "\n")
        }
        let scan = try explain("SELECT count(*) FROM cases WHERE summary = $1")
        #expect(scan.contains("Seq Scan on cases"), "\(scan)")
        let jit = try explain("SELECT count(*) FROM cases c JOIN case_search s ON s.case_id = c.id WHERE c.summary <> $1")
        #expect(jit.contains("JIT:"), "\(jit)")
        for (name, query) in recorded {
            let plan = try superuser.query(PostgresQuery(unsafeSQL: "EXPLAIN " + query.sql, binds: query.binds)).map {
                try $0.decode(0, as: String.self)
            }.joined(separator: "\n")
            let scanned = plan.matches(of: /Seq Scan on (\w+)/).map { String($0.1) }.filter(large.contains)
            let check = {
                #expect(scanned.isEmpty, "\(name): a sequential scan of \(scanned) at five million cases:\n\(query.sql)\n\(plan)")
                #expect(!plan.contains("JIT:"), "\(name): a JIT-compiled plan:\n\(query.sql)\n\(plan)")
            }
            if Self.knownToScan.contains(name) {
                // Not met yet (issue 24.5: counts kept as cases change): recorded, not failed; off the list once it is met.
                withKnownIssue("the reports summary counts every case per request", isIntermittent: true, check)
            } else {
                check()
            }
        }
        #expect(recorded.count > requests.count, "every request sent statements worth planning")
    }

    /// Requests whose plans still scan: each a known issue, listed so that the rest stay guarded.
    static let knownToScan: Set<String> = ["reports summary"]

    /// Statements with a plan (not BEGIN, COMMIT, SET or a lock call).
    static func isPlannable(_ query: PostgresQuery) -> Bool {
        let head = query.sql.drop { $0.isWhitespace }.prefix(7).uppercased()
        return ["SELECT ", "WITH ", "INSERT ", "UPDATE ", "DELETE "].contains { head.hasPrefix($0) } && !query.sql.contains("pg_advisory")
    }

    /// The cases benchmark's seed (deploy/bench/cases.d/seed.sql, through psql as the bench runs it: as a superuser), analysed.
    static func seed(_ database: TestDatabase) throws {
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        psql.arguments = [
            database.connectionString(as: .superuser), "-q", "-v", "ON_ERROR_STOP=1", "-v", "total=\(seeded)", "-f",
            RepositoryPaths.root + "/deploy/bench/cases.d/seed.sql",
        ]
        try psql.run()
        psql.waitUntilExit()
        #expect(psql.terminationStatus == 0, "seed.sql")
    }

    /// Scales what the planner knows of every analysed table and index holding more than the seed's tenth by
    /// believed/seeded (it reads reltuples per page, times the pages on disk); returns the tables that are then large.
    static func believeFiveMillion(_ superuser: PostgresConnection) throws -> Set<String> {
        let factor = Double(believed) / Double(seeded)
        try superuser.execute("ANALYZE")
        try superuser.execute(
            """
            UPDATE pg_class SET reltuples = reltuples * \(factor)
            WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i') AND reltuples > \(Double(seeded / 10))
            """)
        return Set(
            try superuser.query(
                "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND reltuples > \(Double(seeded))"
            ).map { try $0.decode("relname", as: String.self) })
    }
}
