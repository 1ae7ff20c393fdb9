import Crypto
import Foundation
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The outbox with real `reclaim serve` processes: two on one database deliver each message once, and one killed
/// with SIGKILL in the middle of a delivery loses nothing when it comes back. Each run is bounded (≤ 60 s).
@Suite(.serialized) final class ServeProcessTests {
    let database: TestDatabase
    let pool: PostgresPool
    let directory: String
    let keys: KeyFile
    let operations: CaseOperations
    var processes: [Process] = []

    init() throws {
        database = try TestDatabase.create()
        pool = database.makePool()
        directory = try temporaryDirectory()
        keys = KeyFile.generate()
        try keys.write(to: directory + "/keys")
        operations = CaseOperations(keys: keys)
    }

    deinit {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        pool.close()
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts `reclaim serve` on a free port with `extra` settings; returns once it is ready.
    func serve(_ extra: [String: String]) throws -> Process {
        let environment = [
            "PATH": "/usr/bin:/bin", "DATABASE_URL": database.connectionString, "RECLAIM_KEY_FILE": directory + "/keys",
            "RECLAIM_PUBLIC_DIR": RepositoryPaths.root + "/Public", "RECLAIM_MIGRATIONS_DIR": RepositoryPaths.root + "/Migrations",
            "RECLAIM_DATA_DIR": directory + "/data", "RECLAIM_THREADS": "2", "RECLAIM_LOG_LEVEL": "warning",
        ].merging(extra) { $1 }
        let process = try ServeProcess(environment: environment, arguments: ["serve", "--no-migrate"], logDirectory: directory).process
        processes.append(process)
        return process
    }

    func open(_ count: Int, by actor: String = "agent:00000000-0000-0000-0000-000000000001") throws -> [CaseOperations.Opened] {
        try (0..<count).map { index in
            try pool.withTransaction { try operations.open(opening(contact: "owner-\(index)@example.net"), by: actor, at: Date(), on: $0) }
        }
    }

    func states() throws -> [String: Int] {
        try pool.withConnection { connection in
            var counts: [String: Int] = [:]
            for row in try connection.query("SELECT state, count(*)::int AS n FROM outbox GROUP BY state") {
                counts[try row.decode("state", as: String.self)] = try row.decode("n", as: Int.self)
            }
            return counts
        }
    }

    @Test func twoServeProcessesOnOneDatabaseDeliverEachMessageOnce() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        let settings = ["RECLAIM_SMTP_URL": "smtp://127.0.0.1:\(smtp.port)", "RECLAIM_DELIVERY_THREADS": "2"]
        let instances = [try serve(settings), try serve(settings)]
        // Both instances are polling before the messages exist, so they compete for every claim.
        let opened = try open(40)
        #expect(try eventually(30) { try self.states()["sent"] == 40 })
        // Stopped (SIGTERM lets their delivery threads finish): no mail is still on its way.
        for instance in instances {
            instance.terminate()
            instance.waitUntilExit()
        }
        let mails = receivedMails(in: inbox)
        let ids = mails.compactMap { $0.header("Message-ID") }
        #expect(ids.count == 40, "each message once: \(ids.count) mails for 40 messages")
        #expect(Set(ids).count == 40)
        #expect(try pool.withConnection { try $0.query("SELECT 1 FROM outbox_attempts").count } == 40)
        for one in opened {
            #expect(mails.contains { $0.body.contains(one.accessCode.display) })
        }
    }

    @Test func killNineInTheMiddleOfADeliveryLosesNothing() throws {
        // A partner whose receiver takes 3 s to answer: the delivery is in flight when the process dies.
        let secrets = directory + "/secrets"
        let log = directory + "/log"
        FileManager.default.createFile(atPath: secrets, contents: nil)
        let receiver = try PythonHelper("webhook_receiver.py", [secrets, log])
        defer { receiver.stop() }
        let clientID = UUID()
        let registered = try pool.withTransaction { connection in
            try APIClientStore.insert(
                id: clientID, name: "Partner", keyHash: SecureRandom.bytes(32), sealedSigningSecret: [1], signingKeyID: "signing-1",
                now: Date(), on: connection)
            return try WebhookRegistry.register(
                url: "http://127.0.0.1:\(receiver.port)/slow", events: [WebhookEvent.caseOpened.rawValue], clientID: clientID,
                keys: keys, allow: WebhookAllowList(parsing: "127.0.0.1"), at: Date(), on: connection)
        }
        try Data((registered.secret + "\n").utf8).write(to: URL(fileURLWithPath: secrets))
        let opened = try open(1, by: "client:\(clientID.uuidString.lowercased())")[0]
        func arrivals() -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
            }
        }
        let settings = ["RECLAIM_WEBHOOK_ALLOW": "127.0.0.1"]
        let first = try serve(settings)
        #expect(eventually(15) { arrivals().count == 1 })  // the receiver has the request and is still answering
        // The opening mail goes in its own lane, not after the webhook: written meanwhile (the kill is for the webhook).
        #expect(try eventually(15) { try self.states()["sent"] == 1 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(try states()["queued"] == 1)  // the webhook: claimed, never recorded
        _ = try serve(settings)
        // The in-flight message's lease (the 15 s transfer timeout + 5 s) runs out, then the new process sends it again.
        #expect(try eventually(45) { try self.states() == ["sent": 2] })
        let ids = arrivals()
        #expect(ids.count == 2 && Set(ids).count == 1, "the same webhook-id on the retry: \(ids)")
        #expect(
            ids.first
                == (try pool.withConnection {
                    try $0.query("SELECT id FROM outbox WHERE channel = 'webhook'").first?.decode("id", as: UUID.self).uuidString.lowercased()
                }))
        // The opening mail is there once.
        let files = (try FileManager.default.contentsOfDirectory(atPath: directory + "/data/mail")).filter { $0.hasSuffix(".eml") }
        #expect(files.count == 1)
        #expect(try String(contentsOfFile: directory + "/data/mail/" + (try #require(files.first)), encoding: .utf8).count > 0)
        _ = opened
    }

    /// The cooling-off across a SIGKILL: steps scheduled, the only `reclaim serve` killed before they are due, another
    /// started after: each step is done once (the state is in the database, not the process).
    @Test func killNineMidScheduleLosesNoScheduledStep() throws {
        let cases = try open(3)
        for opened in cases {
            try pool.withTransaction { connection in
                // Straight to engineering (how it got there is not this test's subject).
                try connection.execute("UPDATE cases SET state = 'engineering', tier = 'engineering' WHERE id = \(opened.record.id)")
                _ = try operations.recordUnlock(
                    try CaseNumber(parsing: opened.record.number), expectedVersion: nil, step: .removeRescueEmail, reason: nil,
                    actorTier: .engineering, by: "agent:00000000-0000-0000-0000-000000000002", delay: 6, at: Date(), on: connection)
            }
        }
        func count(_ sql: PostgresQuery) throws -> Int {
            try pool.withConnection { try $0.query(sql).first?.decode("n", as: Int.self) ?? -1 }
        }
        let first = try serve([:])
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(try count("SELECT count(*)::int AS n FROM scheduled_unlocks WHERE status = 'scheduled'") == 3)
        _ = try serve([:])
        #expect(try eventually(20) { try count("SELECT count(*)::int AS n FROM scheduled_unlocks WHERE status = 'done'") == 3 })
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try count("SELECT count(*)::int AS n FROM case_events WHERE type = 'unlock_done' AND actor = 'system'") == 3)
        #expect(try count("SELECT count(*)::int AS n FROM cases WHERE unlocks_done = '{remove_rescue_email}'") == 3)
    }
}
