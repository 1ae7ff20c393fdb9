import Crypto
import Foundation
import Logging
import Postgres
import ReclaimAPI
import ReclaimCore
import ReclaimStore
import ReclaimTestSupport
import Testing

/// `reclaim demo seed`: every tier, every state and path, intact chains, and printed access codes that work.
@Suite(.serialized) struct DemoSeedTests {
    @Test func seedCoversEveryStateAndPathAndItsCodesOpenTheStatusPage() throws {
        let service = try TestService()
        defer { service.stop() }
        let configuration = try ServiceConfiguration.fromEnvironment([
            "DATABASE_URL": service.database.connectionString, "RECLAIM_ADDRESS": "127.0.0.1:0",
            "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations", "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
        ])
        let pool = service.database.makePool(maximumConnections: 2)
        defer { pool.close() }
        let seed = DemoSeed(pool: pool, keys: service.keys, configuration: configuration, logger: Logger(sink: MemorySink(), minimumLevel: .info))
        let result = try seed.run(force: false)

        #expect(Set(result.agents.map(\.tier)) == Set(Tier.allCases))
        #expect(result.agents.contains { $0.isAdmin })
        #expect(result.cases.count >= 40)
        #expect(Set(result.cases.map(\.state)) == Set(CaseState.allCases))
        #expect(Set(result.cases.map(\.path)) == Set(RecoveryPath.allCases))

        let connection = try service.database.connect()
        defer { connection.close() }
        let stored = try connection.query("SELECT state, path, count(*)::int FROM cases GROUP BY state, path")
        #expect(Set(try stored.map { try $0.decode(0, as: String.self) }) == Set(CaseState.allCases.map(\.rawValue)))
        let tiers = try connection.query("SELECT DISTINCT tier FROM agents").map { try $0.decode(0, as: String.self) }
        #expect(Set(tiers) == Set(Tier.allCases.map(\.rawValue)))
        let kinds = try connection.query("SELECT DISTINCT kind FROM evidence").map { try $0.decode(0, as: String.self) }
        #expect(Set(kinds).isSuperset(of: ["security_answers", "card", "device", "transcript", "invoice"]))
        let visibilities = try connection.query("SELECT DISTINCT visibility FROM case_notes").map { try $0.decode(0, as: String.self) }
        #expect(Set(visibilities) == ["internal", "customer"])
        // Each risk signal, and the conversation: a customer's reply awaiting the desk, and one from a rescue address.
        let signals = try connection.query("SELECT DISTINCT signal FROM case_risk_signals").map { try $0.decode(0, as: String.self) }
        #expect(Set(signals) == Set(RiskSignal.allCases.map(\.rawValue)))
        let replies = try connection.query(
            "SELECT from_rescue_address, case_id IS NOT NULL AS matched FROM inbound_messages ORDER BY from_rescue_address"
        ).map { [try $0.decode(0, as: Bool.self), try $0.decode(1, as: Bool.self)] }
        #expect(replies == [[false, true], [true, true]])
        #expect(try connection.query("SELECT 1 FROM cases WHERE awaiting_reply").count == 1)
        let audit = try CaseEventStore.verify(on: connection)
        #expect(audit.breaks.isEmpty)
        #expect(audit.cases == result.cases.count)
        // Every timeline reads in time order from its case's opening: a merge lands on two cases, each seeded on a clock
        // of its own, and must come after both openings.
        let beforeOpening = try connection.query(
            "SELECT count(*)::int FROM case_events e JOIN cases c ON c.id = e.case_id WHERE e.at < c.created_at"
        ).map { try $0.decode(0, as: Int.self) }
        #expect(beforeOpening == [0], "events dated before their case was opened")
        let outOfOrder = try connection.query(
            """
            SELECT count(*)::int FROM case_events e JOIN case_events p ON p.case_id = e.case_id AND p.seq = e.seq - 1 WHERE e.at < p.at
            """
        ).map { try $0.decode(0, as: Int.self) }
        let backwards = try connection.query(
            """
            SELECT c.case_number || ' ' || p.type || ' → ' || e.type AS pair FROM case_events e
            JOIN case_events p ON p.case_id = e.case_id AND p.seq = e.seq - 1 JOIN cases c ON c.id = e.case_id WHERE e.at < p.at
            """
        ).map { try $0.decode(0, as: String.self) }
        #expect(outOfOrder == [0], "a timeline whose events go back in time: \(backwards)")

        // A printed code opens the customer status page, as a person trying the demo would use it.
        let client = service.client()
        for state in [CaseState.new, .awaitingDocuments, .resolved] {
            let item = try #require(result.cases.first { $0.state == state })
            let response = try client.request("POST", "/api/v1/status", json: ["case_number": item.number, "access_code": item.accessCode])
            #expect(response.status == 200, "\(state): \(response.text)")
        }

        // A database with agents is refused unless forced; forced, the demo is added beside it and chains still hold.
        #expect(throws: DemoSeedError.self) { try seed.run(force: false) }
        let again = try seed.run(force: true)
        #expect(Set(again.agents.map(\.email)).isDisjoint(with: result.agents.map(\.email)))
        #expect(Set(again.cases.map(\.state)) == Set(CaseState.allCases))
        #expect(try CaseEventStore.verify(on: connection).breaks.isEmpty)
    }

    @Test func commandPrintsSecretsOnceAndRefusesASeededDatabase() throws {
        let database = try TestDatabase.createEmpty()
        defer { database.drop() }
        let directory = NSTemporaryDirectory() + "reclaim-demo-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try KeyFile.generate().write(to: directory + "/keys")
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": database.connectionString, "RECLAIM_KEY_FILE": directory + "/keys",
            "RECLAIM_MIGRATION_DATABASE_URL": database.ownerConnectionString, "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public",
        ]
        let reclaim = RepositoryPaths.executable

        let seeded = try Shell.capture([reclaim, "demo", "seed", "--json"], environment: environment)
        #expect(seeded.status == 0, "\(seeded.error)")
        let printed = try JSONDecoder().decode(PrintedSeed.self, from: Data(seeded.output.utf8))
        #expect(Set(printed.agents.map(\.tier)) == Set(Tier.allCases.map(\.rawValue)))
        #expect(printed.agents.allSatisfy { $0.totpURI.hasPrefix("otpauth://totp/") && !$0.password.isEmpty })
        #expect(printed.cases.count >= 40)
        #expect(printed.cases.allSatisfy { $0.accessCode.count == 19 })

        let audit = try Shell.capture([reclaim, "audit", "verify"], environment: environment)
        #expect(audit.status == 0 && audit.output.contains("every chain holds"), "\(audit.output)")

        let refused = try Shell.capture([reclaim, "demo", "seed"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.error.contains("--force"))
    }
}

/// What `reclaim demo seed --json` prints (the parts the test reads).
private struct PrintedSeed: Decodable {
    struct Agent: Decodable {
        let tier: String
        let totpURI: String
        let password: String
        enum CodingKeys: String, CodingKey {
            case tier
            case totpURI = "totp_uri"
            case password
        }
    }
    struct Case: Decodable {
        let accessCode: String
        enum CodingKeys: String, CodingKey { case accessCode = "access_code" }
    }
    let agents: [Agent]
    let cases: [Case]
}
