import Foundation
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimTestSupport
import Synchronization
import Testing

/// api.md v1.3 "Smaller doors": a case holds at most `RECLAIM_CASE_DOCUMENTS` documents (then 409 `too_many_documents`,
/// counted under the case's row lock), and the export streams, one document at a time.
@Suite struct CaseDocumentsTests {
    /// A service whose cases hold at most `limit` documents, a case on it and its tier 1 agent.
    static func world(limit: Int) throws -> (world: CaseWorld, agent: AgentSession, opened: CaseView) {
        let world = try CaseWorld {
            $0.caseDocuments = limit
            // Room for two uploads to wait on one case's row lock at once.
            $0.handlerThreads = 4
            $0.databaseConnections = max($0.databaseConnections, 8)
        }
        let agent = try world.agent(.tier1)
        return (world, agent, try world.openCase(as: agent))
    }

    static func upload(_ world: CaseWorld, _ number: String, _ marker: String, as agent: AgentSession) throws -> TestHTTPResponse {
        try upload(world.client, number, marker, as: agent)
    }

    static func upload(_ client: TestHTTPClient, _ number: String, _ marker: String, as agent: AgentSession) throws -> TestHTTPResponse {
        try client.request(
            "POST", "/api/v1/cases/\(number)/evidence",
            headers: agent.headers + [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")],
            body: EvidenceWorld.form([("type", "invoice")], file: (EvidenceWorld.png(marker), "image/png")))
    }

    static func documentCount(_ world: CaseWorld, _ number: String) throws -> Int64 {
        let connection = try world.service.database.connect()
        defer { connection.close() }
        return try #require(
            try connection.query(
                "SELECT count(*) AS n FROM evidence e JOIN cases c ON c.id = e.case_id WHERE c.case_number = \(number) AND e.document"
            ).first?.decode("n", as: Int64.self))
    }

    @Test func theDocumentBeyondTheLimitIsRefusedByEveryDoor() throws {
        let (world, agent, opened) = try Self.world(limit: 3)
        let number = opened.caseNumber
        for index in 0..<3 { #expect(try Self.upload(world, number, "doc-\(index)", as: agent).status == 201) }
        // The agent's fourth: 409, naming the limit; nothing filed.
        let refused = try Self.upload(world, number, "doc-3", as: agent)
        #expect(refused.status == 409, "\(refused.text)")
        let problem = try refused.json()
        #expect(problem["code"] as? String == "too_many_documents" && problem["limit"] as? Int == 3)
        // The customer's own upload on the status page, raw bytes: the same refusal.
        let form = EvidenceWorld.form(
            [("case_number", number), ("access_code", try #require(opened.accessCode)), ("type", "invoice")],
            file: (EvidenceWorld.png("customer"), "image/png"))
        let customer = try world.client.request(
            "POST", "/api/v1/status/evidence", headers: [("Content-Type", "multipart/form-data; boundary=\(EvidenceWorld.boundary)")], body: form)
        #expect(customer.status == 409, "\(customer.text)")
        #expect(try customer.json()["code"] as? String == "too_many_documents")
        let raw = try world.client.request(
            "POST", "/api/v1/cases/\(number)/evidence?type=police_report",
            headers: agent.headers + [("Content-Type", "image/png")], body: EvidenceWorld.png("raw"))
        #expect(raw.status == 409, "\(raw.text)")
        #expect(try Self.documentCount(world, number) == 3)
        // What is not a document still files: the limit is on documents.
        let device = try world.post("/api/v1/cases/\(number)/evidence", as: agent, json: ["type": "device", "serial": "F9KDOCS12345"])
        #expect(device.status == 201, "\(device.text)")
        // Another case has its own room.
        let other = try world.openCase(as: agent, CaseWorld.caseBody(accountEmail: "other@example.com", contactEmail: "other.home@example.net"))
        #expect(try Self.upload(world, other.caseNumber, "other", as: agent).status == 201)
    }

    @Test func theLimitDefaultsToAHundred() throws {
        #expect(DocumentUpload.defaultCaseLimit == 100)
        let world = try CaseWorld()
        #expect(world.service.service.context.configuration.caseDocuments == 100)
    }

    /// Two uploads at the limit's last place, released together from behind the test's lock on the case row: each
    /// counts under the row lock, so exactly one is filed.
    @Test func twoUploadsForTheLastPlaceOneWins() throws {
        let (world, agent, opened) = try Self.world(limit: 3)
        let number = opened.caseNumber
        for index in 0..<2 { #expect(try Self.upload(world, number, "doc-\(index)", as: agent).status == 201) }
        let locker = try world.service.database.connect()
        defer { locker.close() }
        // Watched from a connection of its own: pg_stat_activity reads the same snapshot for a whole transaction.
        let watcher = try world.service.database.connect()
        defer { watcher.close() }
        let statuses = Mutex<[Int]>([])
        let port = world.service.service.port
        try locker.withTransaction { connection in
            _ = try connection.query("SELECT 1 FROM cases WHERE case_number = \(number) FOR UPDATE")
            for index in 0..<2 {
                Thread {
                    let status = (try? Self.upload(TestHTTPClient(port: port, timeout: 30), number, "race-\(index)", as: agent))?.status
                    statuses.withLock { $0.append(status ?? 0) }
                }.start()
            }
            // At least one waits for the case's row lock before either counts (both when the service's upload queue runs them
            // at once; on a loaded two-core host it may run them one after the other, and one must still lose).
            let bothWaiting = try eventually(20) {
                let waiting = try watcher.query(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM cases%FOR UPDATE%' AND pid <> pg_backend_pid()"
                ).first?.decode("n", as: Int64.self)
                return (waiting ?? 0) >= 1
            }
            #expect(bothWaiting)
        }
        #expect(eventually(20) { statuses.withLock { $0.count } == 2 })
        #expect(statuses.withLock { $0.sorted() } == [201, 409])
        #expect(try Self.documentCount(world, number) == 3)
    }

    /// The export is sent while it is made: with the last document's row locked by the test, the head, `case.json` and
    /// the first document have already arrived while the service waits to read the last one (the old export read every
    /// document before answering, so nothing arrived until all were read).
    @Test func theExportIsStreamedOneDocumentAtATime() throws {
        let (world, agent, opened) = try Self.world(limit: 10)
        let number = opened.caseNumber
        let markers = (0..<3).map { "EXPORTSTREAM-\($0)-\(UUID().uuidString)" }
        for marker in markers { #expect(try Self.upload(world, number, marker, as: agent).status == 201) }
        let admin = try world.agent(.tier1, admin: true)
        let locker = try world.service.database.connect()
        defer { locker.close() }
        // Watched from a connection of its own: pg_stat_activity reads the same snapshot for a whole transaction.
        let watcher = try world.service.database.connect()
        defer { watcher.close() }
        let client = try TestHTTPConnection(host: "127.0.0.1", port: world.service.service.port, timeout: 30)
        defer { client.close() }
        try locker.withTransaction { connection in
            _ = try connection.query(
                """
                SELECT 1 FROM evidence WHERE id = (SELECT e.id FROM evidence e JOIN cases c ON c.id = e.case_id
                WHERE c.case_number = \(number) AND e.document ORDER BY e.filed_at DESC, e.id DESC LIMIT 1) FOR UPDATE
                """)
            try client.send("GET /api/v1/cases/\(number)/export HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(admin.cookie)\r\n\r\n")
            let serviceWaits = try eventually(20) {
                let waiting = try watcher.query(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM evidence%FOR SHARE%' AND pid <> pg_backend_pid()"
                ).first?.decode("n", as: Int64.self)
                return waiting == 1
            }
            #expect(serviceWaits)
            // The service is stuck on the last document, yet the first two are already here.
            #expect(client.received(Array(markers[1].utf8), timeout: 20))
            #expect(client.received(Array("case.json".utf8), timeout: 1))
        }
        let response = try client.readResponse(timeout: 30)
        #expect(response.status == 200 && response.header("Content-Type") == "application/zip")
        #expect(response.header("Transfer-Encoding")?.lowercased() == "chunked")
        let body = response.body
        #expect(Array(body[0..<4]) == [0x50, 0x4B, 0x03, 0x04] && String(decoding: body[30..<39], as: UTF8.self) == "case.json")
        let text = String(decoding: body, as: UTF8.self)
        #expect(markers.allSatisfy { text.contains($0) })
        // The end record counts case.json and the three documents.
        let end = body.count - 22
        #expect(Array(body[end..<end + 4]) == [0x50, 0x4B, 0x05, 0x06] && Int(body[end + 10]) | Int(body[end + 11]) << 8 == 4)
    }
}
