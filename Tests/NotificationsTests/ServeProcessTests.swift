import Crypto
import Curl
import Foundation
import InboundMail
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The outbox and the inbound mailbox with real `reclaim serve` processes: two on one database deliver each message
/// once and store each received mail once, and one killed with SIGKILL in the middle of a delivery or of a fetch loses
/// nothing and doubles nothing when another comes up. Each run is bounded (≤ 60 s).
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
            // Each of its own account and device: two customers on one account is `parallel_case`, and one recovery of an
            // account at a time (api.md v1.3).
            var one = opening(contact: "owner-\(index)@example.net")
            one.accountEmail = "victim-\(index)@example.com"
            one.devices = [.init(serial: "C02XK1ZJH3Q\(index % 10)", imei: nil, model: "Phone")]
            return try pool.withTransaction { try operations.open(one, by: actor, at: Date(), on: $0) }
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

    // MARK: - The inbound mailbox (issue 22), over the Maildir

    /// The Maildir tests and the IMAP one: `reclaim serve` verifies an IMAP server's certificate against the system's
    /// CAs only, which TestDovecot's throwaway CA is not among, so the IMAP test's Dovecot serves plain `imap://` on
    /// loopback (`TestDovecot(tls: false)`); TLS verification is `InboundTests.overIMAPAgainstDovecotWithTLSVerified`'s.
    func inboundSettings(_ source: String) -> [String: String] {
        [
            "RECLAIM_INBOUND": source, "RECLAIM_INBOUND_POLL_SECONDS": "1", "RECLAIM_REPLY_ADDRESS": "cases@reclaim.test",
            "RECLAIM_INBOUND_SENDER_LIMIT": "100000",
        ]
    }

    /// `count` replies from the case's contact to its reply address, each with its own Message-ID, as a client writes them.
    func replies(to opened: CaseOperations.Opened, _ count: Int, tag: String) throws -> [[UInt8]] {
        let address = ReplyToken.address("cases@reclaim.test", for: try CaseNumber(parsing: opened.record.number), keys: keys)
        return (0..<count).map { index in
            let lines = [
                "From: Owner <\(opened.record.customerContactEmail)>", "To: \(address)", "Subject: Re: case \(opened.record.number) (\(index))",
                "Date: Wed, 02 Dec 2026 10:00:00 +0000", "Message-ID: <\(tag)-\(index)@example.net>", "MIME-Version: 1.0",
                "Content-Type: text/plain; charset=UTF-8",
            ]
            return Array((lines.joined(separator: "\r\n") + "\r\n\r\nReply number \(index), with the photos.\r\n").utf8)
        }
    }

    /// What the mailbox left on the case: all rows, distinct Message-IDs, rows on `caseID`, its `message_received` events.
    func inboundCounts(_ caseID: UUID) throws -> (rows: Int, distinct: Int, onCase: Int, events: Int) {
        try pool.withConnection { connection in
            let row = try #require(
                try connection.query(
                    """
                    SELECT count(*)::int AS rows, count(DISTINCT message_id)::int AS distinct_ids,
                        count(*) FILTER (WHERE case_id = \(caseID))::int AS on_case,
                        (SELECT count(*)::int FROM case_events WHERE case_id = \(caseID) AND type = 'message_received') AS events
                    FROM inbound_messages
                    """
                ).first)
            return (
                try row.decode("rows", as: Int.self), try row.decode("distinct_ids", as: Int.self), try row.decode("on_case", as: Int.self),
                try row.decode("events", as: Int.self)
            )
        }
    }

    @Test func twoServeProcessesReadingOneMaildirStoreEachMailOnce() throws {
        let opened = try open(1)[0]
        let maildir = Maildir(path: directory + "/inbound")
        try maildir.create()
        let settings = inboundSettings("maildir:" + maildir.path)
        let instances = [try serve(settings), try serve(settings)]
        // Both are polling (a pass a second each) while the mail arrives in batches, so they compete for the mailbox.
        let mails = try replies(to: opened, 200, tag: "two")
        for batch in stride(from: 0, to: mails.count, by: 25) {
            for mail in mails[batch..<batch + 25] { _ = try maildir.deliver(mail) }
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(try eventually(40) { try self.inboundCounts(opened.record.id).rows == 200 && (try maildir.entries().isEmpty) })
        for instance in instances {
            instance.terminate()
            instance.waitUntilExit()
        }
        let counts = try inboundCounts(opened.record.id)
        #expect(counts.rows == 200 && counts.distinct == 200, "each mail once: \(counts)")
        #expect(counts.onCase == 200 && counts.events == 200, "each on its case, one event each: \(counts)")
        #expect(try maildir.entries().isEmpty)
    }

    @Test func killNineInTheMiddleOfAFetchStoresEveryMailOnce() throws {
        let opened = try open(1)[0]
        let maildir = Maildir(path: directory + "/inbound")
        try maildir.create()
        let total = 300
        for mail in try replies(to: opened, total, tag: "kill") { _ = try maildir.deliver(mail) }
        let settings = inboundSettings("maildir:" + maildir.path)
        let first = try serve(settings)
        // Killed once some are stored, long before all are.
        #expect(try eventually(30) { try self.inboundCounts(opened.record.id).rows >= 10 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let atKill = try inboundCounts(opened.record.id).rows
        let left = try maildir.entries().count
        #expect(atKill < total, "killed in the middle of the fetch: \(atKill) of \(total) stored")
        // Nothing lost: each mail is stored or still in the Maildir (one stored but not yet removed is in both).
        #expect(atKill + left >= total && left <= total - atKill + 1, "\(atKill) stored, \(left) left")
        _ = try serve(settings)
        #expect(try eventually(40) { try self.inboundCounts(opened.record.id).rows == total && (try maildir.entries().isEmpty) })
        Thread.sleep(forTimeInterval: 1.5)  // another pass of the new process: it finds nothing more to store
        let counts = try inboundCounts(opened.record.id)
        #expect(counts.rows == total && counts.distinct == total, "each mail once by Message-ID: \(counts)")
        #expect(counts.onCase == total && counts.events == total, "each on its case, one event each: \(counts)")
        #expect(try maildir.entries().isEmpty)
    }

    @Test func killNineInTheMiddleOfAnIMAPFetchFromDovecotStoresEveryMailOnce() throws {
        let dovecot = try TestDovecot(tls: false)
        defer { dovecot.stop() }
        let opened = try open(1)[0]
        let total = 300
        try dovecot.deliverToMaildir(try replies(to: opened, total, tag: "imap"))
        // Counted on a fresh connection each time: a session kept open beside the worker's sees the mailbox as it was
        // when it selected it.
        func inMailbox() throws -> Int {
            try IMAPSession(mailbox: try IMAPMailbox(url: dovecot.url(tls: false)), timeouts: CurlTimeouts(connectSeconds: 5, totalSeconds: 30))
                .listing().messages
        }
        #expect(try inMailbox() == total)
        let settings = inboundSettings(dovecot.url(tls: false))
        let first = try serve(settings)
        #expect(try eventually(30) { try self.inboundCounts(opened.record.id).rows >= 10 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let atKill = try inboundCounts(opened.record.id).rows
        let left = try inMailbox()
        #expect(atKill < total, "killed in the middle of the fetch: \(atKill) of \(total) stored")
        #expect(atKill + left >= total && left <= total - atKill + 1, "\(atKill) stored, \(left) left in the mailbox")
        _ = try serve(settings)
        #expect(try eventually(40) { try self.inboundCounts(opened.record.id).rows == total && (try inMailbox()) == 0 })
        Thread.sleep(forTimeInterval: 1.5)  // another pass of the new process: it finds nothing more to store
        let counts = try inboundCounts(opened.record.id)
        #expect(counts.rows == total && counts.distinct == total, "each mail once by Message-ID: \(counts)")
        #expect(counts.onCase == total && counts.events == total, "each on its case, one event each: \(counts)")
        #expect(try inMailbox() == 0)
    }

    @Test func twoServeProcessesReadingOneIMAPMailboxStoreEachMailOnce() throws {
        let dovecot = try TestDovecot(tls: false)
        defer { dovecot.stop() }
        let opened = try open(1)[0]
        func inMailbox() throws -> Int {
            try IMAPSession(mailbox: try IMAPMailbox(url: dovecot.url(tls: false)), timeouts: CurlTimeouts(connectSeconds: 5, totalSeconds: 30))
                .listing().messages
        }
        let settings = inboundSettings(dovecot.url(tls: false))
        let instances = [try serve(settings), try serve(settings)]
        // Both are polling while the mail arrives in batches: each pass, whichever holds the mailbox's lock reads it.
        let mails = try replies(to: opened, 200, tag: "imap-two")
        for batch in stride(from: 0, to: mails.count, by: 25) {
            try dovecot.deliverToMaildir(Array(mails[batch..<batch + 25]))
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(try eventually(40) { try self.inboundCounts(opened.record.id).rows == 200 && (try inMailbox()) == 0 })
        for instance in instances {
            instance.terminate()
            instance.waitUntilExit()
        }
        let counts = try inboundCounts(opened.record.id)
        #expect(counts.rows == 200 && counts.distinct == 200, "each mail once: \(counts)")
        #expect(counts.onCase == 200 && counts.events == 200, "each on its case, one event each: \(counts)")
        #expect(try inMailbox() == 0)
    }
}
