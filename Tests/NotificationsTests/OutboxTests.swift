import Crypto
import Foundation
import Logging
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The outbox on a real database with a real SMTP server (aiosmtpd): what each operation queues, that no secret
/// sits in clear, that nothing reaches the rescue address, and that delivery is once per message id.
@Suite(.serialized) final class OutboxTests {
    let database: TestDatabase
    let pool: PostgresPool
    let keys = KeyFile.generate()
    let operations: CaseOperations
    let agent = "agent:00000000-0000-0000-0000-000000000001"
    let directory: String

    init() throws {
        database = try TestDatabase.create()
        pool = database.makePool()
        operations = CaseOperations(keys: keys)
        directory = try temporaryDirectory()
    }

    deinit {
        pool.close()
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func open(_ opening: CaseOperations.Opening = opening(), by actor: String? = nil) throws -> CaseOperations.Opened {
        try pool.withTransaction { try operations.open(opening, by: actor ?? agent, at: Date(), on: $0) }
    }

    func messages(_ record: CaseRecord) throws -> [OutboxEntry] {
        try pool.withConnection { try OutboxStore.list(caseID: record.id, on: $0) }
    }

    func worker(_ settings: NotificationSettings, pool: PostgresPool? = nil) -> DeliveryWorker {
        DeliveryWorker(settings: settings, pool: pool ?? self.pool, keys: keys, logger: .discard)
    }

    func statistics() throws -> OutboxStatistics { try pool.withConnection { try OutboxStore.statistics(now: Date(), on: $0) } }

    @Test func openingQueuesTheCodeSealedAndARefusedRescueAddressIsRecorded() throws {
        let opened = try open()
        let queued = try messages(opened.record)
        #expect(queued.map(\.kind) == ["case_opened"])
        #expect(queued.first?.recipient == "ada@example.net")
        // Nowhere in the row, in any form the customer sees it.
        let raw = try pool.withConnection { connection in
            try connection.query("SELECT payload, encode(coalesce(secret_sealed, ''), 'escape') AS sealed, recipient FROM outbox").map { row in
                (try row.decode("payload", as: String.self)) + (try row.decode("sealed", as: String.self))
            }.joined()
        }
        #expect(!raw.contains(opened.accessCode.symbols))
        #expect(!raw.contains(opened.accessCode.display))

        // The thief's address as the contact is refused at the door now; a case from before that rule (the address
        // written straight into the row) still gets no mail: the refusal is recorded instead.
        #expect(
            throws: OperationError.invalid(
                field: "customer.contact_email",
                "This reaches the same mailbox as the rescue address the thief added: mail to it would go to the thief. Give the customer's own address."
            )
        ) {
            try self.open(opening(contact: "Thief@Evil.test", rescue: "thief@evil.test"))
        }
        let thief = try open(opening(contact: "ada@example.net", rescue: "thief@evil.test"))
        try pool.withConnection { try $0.execute("UPDATE cases SET customer_contact_email = 'Thief@Evil.test' WHERE id = \(thief.record.id)") }
        let number = try CaseNumber(parsing: thief.record.number)
        _ = try pool.withTransaction { try operations.addNote(number, body: "Please call us", visibility: .customer, by: agent, at: Date(), on: $0) }
        #expect(try messages(thief.record).map(\.kind) == ["case_opened"])
        let events = try pool.withConnection { try CaseEventStore.list(caseID: thief.record.id, on: $0) }
        #expect(events.contains { $0.type == "mail_refused" })
        #expect(!events.contains { $0.data.canonical.contains("evil.test") && $0.type == "mail_refused" })
    }

    /// Before every send, not only when queued: a rescue address recorded after the mail was queued (the coming case
    /// edit, or a mail queued under the old literal comparison) still stops it.
    @Test func aMailToAnAddressThatReachesTheRescueAddressIsRefusedAtDelivery() throws {
        let opened = try open(opening(contact: "evil+x@example.com"))
        let innocent = try open(opening(contact: "ada@example.net"))
        #expect(try messages(opened.record).map(\.state) == [.queued])
        try pool.withConnection { try $0.execute("UPDATE cases SET rescue_email = 'EVIL@example.com' WHERE id = \(opened.record.id)") }
        let delivery = worker(testSettings(directory: directory))
        try delivery.runOnce()
        // Nothing written for the thief; the innocent case's mail went.
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/mail")) ?? []
        #expect(files.filter { $0.hasSuffix(".eml") }.count == 1)
        #expect(try messages(opened.record).map(\.state) == [.failed])
        #expect(try messages(innocent.record).map(\.state) == [.sent])
        let events = try pool.withConnection { try CaseEventStore.list(caseID: opened.record.id, type: "mail_refused", on: $0) }
        #expect(events.count == 1 && !events[0].data.canonical.contains("example.com"))
    }

    @Test func transitionsAndCustomerNotesQueueMailInternalNotesDoNot() throws {
        let opened = try open()
        let number = try CaseNumber(parsing: opened.record.number)
        _ = try pool.withTransaction { try operations.addNote(number, body: "internal only", visibility: .internal, by: agent, at: Date(), on: $0) }
        #expect(try messages(opened.record).count == 1)
        _ = try pool.withTransaction { try operations.addNote(number, body: "Please call us", visibility: .customer, by: agent, at: Date(), on: $0) }
        _ = try pool.withTransaction {
            try operations.transition(number, expectedVersion: nil, .init(action: .escalate), actorTier: .tier1, by: agent, at: Date(), on: $0)
        }
        #expect(try messages(opened.record).map(\.kind) == ["case_opened", "customer_note", "state_changed"])
        // Later messages carry nothing but the number, the state and the language.
        let payloads = try pool.withConnection { connection in
            try connection.query("SELECT payload, secret_sealed IS NULL AS clear FROM outbox WHERE kind <> 'case_opened'").map {
                (try $0.decode("payload", as: String.self), try $0.decode("clear", as: Bool.self))
            }
        }
        for (payload, clear) in payloads {
            #expect(clear)
            #expect(!payload.contains("Please call us"))
            #expect(!payload.contains("victim@example.com"))
        }
    }

    @Test func everyMailArrivesOverSMTPInItsLanguageWithNoSecretWhereNoneBelongs() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        var opened: [CaseOperations.Opened] = []
        for language in CustomerLanguage.allCases {
            let one = try open(opening(contact: "ada-\(language.rawValue.lowercased())@example.net", language: language))
            let number = try CaseNumber(parsing: one.record.number)
            _ = try pool.withTransaction {
                try operations.transition(number, expectedVersion: nil, .init(action: .escalate), actorTier: .tier1, by: agent, at: Date(), on: $0)
            }
            opened.append(one)
        }
        let delivery = worker(testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(smtp.port)"))
        delivery.start()
        defer { delivery.stop() }
        #expect(eventually { receivedMails(in: inbox).count == 6 })
        let mails = receivedMails(in: inbox)
        #expect(Set(mails.compactMap { $0.header("Message-ID") }).count == 6)
        for (one, language) in zip(opened, CustomerLanguage.allCases) {
            let address = "ada-\(language.rawValue.lowercased())@example.net"
            let theirs = mails.filter { $0.recipients == [address] }
            #expect(theirs.count == 2)
            let first = try #require(theirs.first { $0.body.contains(one.accessCode.display) })
            #expect(first.body.contains("https://reclaim.test/status?case=\(one.record.number)"))
            #expect(first.header("Date") != nil && first.header("MIME-Version") == "1.0")
            let later = try #require(theirs.first { !$0.body.contains(one.accessCode.display) })
            #expect(!later.body.contains(one.accessCode.symbols))
            // The news says where the case stands in the status page's own words, in the case's language.
            #expect(later.body.contains(try #require(CustomerCatalogue.catalogue(language)[.stageIdentityCheck])))
            switch language {
            case .english: #expect(first.subject.contains("is open"))
            case .simplifiedChinese, .traditionalChinese: #expect(first.subject.contains("已受理"))
            }
        }
        #expect(!mails.contains { $0.recipients.contains("thief@evil.test") })
        // The sink has a mail before the worker records it sent: wait for the record, not for the mail.
        #expect(
            try eventually {
                let stats = try statistics()
                return stats.sent == 6 && stats.queued == 0
            })
    }

    /// A rejected document (api.md v1.2): one mail in the case's language, with the customer's reason in the status
    /// page's words and the state as it now stands (back with the customer, by itself): no documents-requested mail too.
    @Test func aRejectedDocumentIsMailedWithItsReasonInTheCasesLanguage() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("a photo".utf8)
        var opened: [CaseOperations.Opened] = []
        for language in CustomerLanguage.allCases {
            let one = try open(opening(contact: "r-\(language.rawValue.lowercased())@example.net", language: language))
            let number = try CaseNumber(parsing: one.record.number)
            let (invoice, photo) = try pool.withTransaction { connection -> (UUID, UUID) in
                _ = try operations.transition(
                    number, expectedVersion: nil, .init(action: .escalate), actorTier: .tier1, by: agent, at: Date(), on: connection)
                _ = try operations.transition(
                    number, expectedVersion: nil, .init(action: .requestDocuments, reason: "No factor matched."), actorTier: .tier2,
                    by: agent, at: Date(), on: connection)
                let invoice = try operations.fileDocument(
                    type: EvidenceKind.invoice.documentType!, bytes: png, declaredType: nil, number: number, by: "customer", at: Date(),
                    on: connection)
                let photo = try operations.fileDocument(
                    type: EvidenceKind.imeiPhoto.documentType!, bytes: png, declaredType: nil, number: number, by: "customer", at: Date(),
                    on: connection)
                return (invoice.id, photo.id)
            }
            _ = try pool.withTransaction {
                try operations.review(
                    evidence: photo, decision: .accepted, reason: "Serial matches.", actorTier: .tier3, by: agent, at: Date(), on: $0)
            }
            _ = try pool.withTransaction {
                try operations.review(
                    evidence: invoice, decision: .rejected, reason: "Blurred, the date cannot be read.", customerReason: .unreadable,
                    actorTier: .tier3, by: agent, at: Date(), on: $0)
            }
            #expect(
                try messages(one.record).map(\.kind) == ["case_opened", "state_changed", "documents_requested", "state_changed", "document_rejected"])
            opened.append(one)
        }
        let delivery = worker(testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(smtp.port)"))
        delivery.start()
        defer { delivery.stop() }
        #expect(eventually { receivedMails(in: inbox).count == 15 })
        for (one, language) in zip(opened, CustomerLanguage.allCases) {
            let theirs = receivedMails(in: inbox).filter { $0.recipients == ["r-\(language.rawValue.lowercased())@example.net"] }
            let subject = MailText.subject(.documentRejected, caseNumber: try CaseNumber(parsing: one.record.number).description, language: language)
            let rejected = try #require(theirs.first { $0.subject == subject })
            let catalogue = CustomerCatalogue.catalogue(language)
            // The reason in the page's words, the state line as the page's heading now reads, the agents' reason never.
            #expect(rejected.body.contains(try #require(catalogue[.reasonUnreadable])))
            #expect(rejected.body.contains(try #require(catalogue[.stageDocumentRejected])))
            #expect(!rejected.body.contains("Blurred") && !rejected.body.contains(one.accessCode.display))
        }
        #expect(
            try eventually {
                let stats = try statistics()
                return stats.sent == 15 && stats.queued == 0
            })
    }

    @Test func anSMTPServerDownThenUpDeliversEachMessageOnce() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let port = freePort()
        for index in 0..<5 { _ = try open(opening(contact: "c\(index)@example.net")) }
        let delivery = worker(
            testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(port)", schedule: [0.2, 0.2, 0.5, 0.5, 1, 1, 1, 1, 1, 1]))
        delivery.start()
        defer { delivery.stop() }
        // Down: attempts fail and are rescheduled, nothing is lost or dead yet.
        #expect(try eventually { try self.pool.withConnection { try $0.query("SELECT 1 FROM outbox_attempts").count } >= 5 })
        #expect(try statistics().queued == 5)
        #expect(try statistics().oldestQueuedSeconds > 0)
        let smtp = try PythonHelper("smtp_sink.py", [inbox, String(port)])
        defer { smtp.stop() }
        #expect(try eventually { try self.statistics().sent == 5 })
        delivery.stop()  // its threads have ended: no mail is still on its way
        let ids = receivedMails(in: inbox).compactMap { $0.header("Message-ID") }
        #expect(ids.count == 5 && Set(ids).count == 5)
    }

    @Test func twoInstancesDeliverEachMessageExactlyOnce() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        for index in 0..<30 { _ = try open(opening(contact: "c\(index)@example.net")) }
        var settings = testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(smtp.port)")
        settings.mailThreads = 2
        settings.batchSize = 2
        let otherPool = database.makePool()
        defer { otherPool.close() }
        let first = worker(settings)
        let second = worker(settings, pool: otherPool)
        first.start()
        second.start()
        defer {
            first.stop()
            second.stop()
        }
        #expect(try eventually { try self.statistics().sent == 30 })
        first.stop()  // their threads have ended: no mail is still on its way
        second.stop()
        let ids = receivedMails(in: inbox).compactMap { $0.header("Message-ID") }
        #expect(ids.count == 30)
        #expect(Set(ids).count == 30)
        #expect(try pool.withConnection { try $0.query("SELECT 1 FROM outbox_attempts").count } == 30)
    }

    @Test func aWorkerThatDiesMidDeliveryLosesNothing() throws {
        let opened = try open()
        // A worker claims the message and dies before delivering (kill -9 between claim and send).
        let claimed = try pool.withTransaction { try OutboxStore.claimMail(limit: 10, now: Date(), lease: 1, on: $0) }
        #expect(claimed.count == 1)
        // A restarted instance (a new pool, a new worker) writes it once the lease has run out.
        let restartedPool = database.makePool()
        defer { restartedPool.close() }
        let delivery = worker(testSettings(directory: directory), pool: restartedPool)
        delivery.start()
        defer { delivery.stop() }
        let file = directory + "/mail/\(claimed[0].id.uuidString.lowercased()).eml"
        #expect(eventually(10) { FileManager.default.fileExists(atPath: file) })
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(ReceivedMail(raw: text, recipients: []).body.contains(opened.accessCode.display))
        // The file is written before the row says so.
        #expect(eventually(10) { (try? self.messages(opened.record).first?.state) == .sent })
    }

    @Test func everyMailOfTheContractArrivesInEachLanguage() throws {
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        struct Expected {
            let address: String
            let one: CaseOperations.Opened
            let other: CaseOperations.Opened
            let newCode: AccessCode
        }
        var expected: [CustomerLanguage: Expected] = [:]
        for language in CustomerLanguage.allCases {
            let address = "owner-\(language.rawValue.lowercased())@example.net"
            let one = try open(opening(contact: address, language: language))
            let other = try open(opening(contact: address, language: language))
            let number = try CaseNumber(parsing: one.record.number)
            let newCode = try pool.withTransaction { connection in
                _ = try operations.addNote(number, body: "Please call us", visibility: .customer, by: agent, at: Date(), on: connection)
                _ = try operations.transition(
                    number, expectedVersion: nil, .init(action: .requestDocuments, reason: "Answers do not match"), actorTier: .tier2, by: agent,
                    at: Date(), on: connection)
                // Read out to a verified caller, the code is also answered, so the test can find it in the mail.
                let record = try #require(try CaseStore.find(number: number.digits, on: connection))
                let customerCode = CallCodeDerivation.code(.customer, for: record, step: CallCodes.step(at: Date()), keys: keys)
                _ = try operations.verifyCaller(number, proof: .customerCode(customerCode), actorTier: .tier2, by: agent, at: Date(), on: connection)
                let code = try #require(
                    try operations.reissueAccessCode(number, readOut: true, actorTier: .tier2, by: agent, at: Date(), on: connection).code)
                _ = try operations.merge(
                    number, expectedVersion: nil, into: try CaseNumber(parsing: other.record.number), reason: "Same owner",
                    actorTier: .tier2, by: agent, at: Date(), on: connection)
                return code
            }
            expected[language] = Expected(address: address, one: one, other: other, newCode: newCode)
        }
        let delivery = worker(testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(smtp.port)"))
        delivery.start()
        defer { delivery.stop() }
        // Per language: two openings, a customer note, documents requested, a new code, a merge.
        #expect(eventually { receivedMails(in: inbox).count == 18 })
        let mails = receivedMails(in: inbox)
        for (language, case_) in expected {
            let theirs = mails.filter { $0.recipients == [case_.address] }
            let one = try CaseNumber(parsing: case_.one.record.number).description
            let other = try CaseNumber(parsing: case_.other.record.number).description
            let kinds: [CustomerMailKind] = [.caseOpened, .customerNote, .documentsRequested, .accessCodeReissued, .merged]
            let subjects = Set(
                kinds.map { MailText.subject($0, caseNumber: one, language: language) } + [
                    MailText.subject(.caseOpened, caseNumber: other, language: language)
                ])
            #expect(Set(theirs.map(\.subject)) == subjects, "\(language)")
            #expect(theirs.count == 6)
            // Only the opening mails and the new code's carry a code, each its own.
            for mail in theirs {
                let carries =
                    mail.subject == MailText.subject(.caseOpened, caseNumber: one, language: language)
                    ? case_.one.accessCode
                    : mail.subject == MailText.subject(.caseOpened, caseNumber: other, language: language)
                        ? case_.other.accessCode
                        : mail.subject == MailText.subject(.accessCodeReissued, caseNumber: one, language: language) ? case_.newCode : nil
                for code in [case_.one.accessCode, case_.other.accessCode, case_.newCode] {
                    #expect(mail.body.contains(code.display) == (code == carries), "\(language) \(mail.subject)")
                }
            }
        }
    }

    @Test func aClaimLostWhileTheBatchWaitedIsNotSentAgain() throws {
        _ = try open()
        // Worker A claims; its lease runs out before it reaches the message; worker B claims it (attempt 2).
        let a = try pool.withTransaction { try OutboxStore.claimMail(limit: 10, now: Date(), lease: 0.05, on: $0) }
        Thread.sleep(forTimeInterval: 0.1)
        let b = try pool.withTransaction { try OutboxStore.claimMail(limit: 10, now: Date(), lease: 60, on: $0) }
        #expect(a.count == 1 && b.count == 1 && b[0].attempt == a[0].attempt + 1)
        // A's renewal before its transfer matches nothing, so A skips it; B's holds.
        #expect(
            try pool.withConnection { try OutboxStore.renew(id: a[0].id, attempt: a[0].attempt, until: Date().addingTimeInterval(20), on: $0) }
                == false)
        #expect(try pool.withConnection { try OutboxStore.renew(id: b[0].id, attempt: b[0].attempt, until: Date().addingTimeInterval(20), on: $0) })
    }

    @Test func aMessageThatCannotBeDeliveredIsDeadLettered() throws {
        _ = try open()
        let delivery = worker(testSettings(directory: directory, smtpURL: "smtp://127.0.0.1:\(freePort())", schedule: [0.05, 0.05]))
        delivery.start()
        defer { delivery.stop() }
        #expect(try eventually { try self.statistics().failed == 1 })
        #expect(try pool.withConnection { try $0.query("SELECT 1 FROM outbox_attempts").count } == 3)
    }
}
