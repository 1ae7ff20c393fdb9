import Crypto
import Curl
import Foundation
import InboundMail
import Logging
import Notifications
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import ReclaimTestSupport
import Testing

/// The conversation (api.md v1.2): every customer mail carries the case's reply address, and the inbound worker reads
/// the replies from a Maildir or a real Dovecot over IMAP, matches them in the contract's order, stores each once and
/// removes it from the mailbox only after the commit. The peers' threading bugs are cases here.
@Suite(.serialized) final class InboundTests {
    let database: TestDatabase
    let pool: PostgresPool
    let keys = KeyFile.generate()
    let operations: CaseOperations
    let agent = "agent:00000000-0000-0000-0000-000000000001"
    let directory: String
    let replyAddress = "cases@reclaim.test"

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

    func open(contact: String = "ada@example.net", rescue: String? = nil) throws -> CaseOperations.Opened {
        try pool.withTransaction { try operations.open(opening(contact: contact, rescue: rescue), by: agent, at: Date(), on: $0) }
    }

    /// The case's opening mail as the delivery worker writes it (an .eml file): its Reply-To and Message-ID.
    func sentMail(_ opened: CaseOperations.Opened) throws -> (replyTo: String, messageID: String, subject: String) {
        var settings = testSettings(directory: directory)
        settings.replyAddress = replyAddress
        let delivery = DeliveryWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
        try delivery.runOnce(.mail)
        let id = try #require(try pool.withConnection { try OutboxStore.list(caseID: opened.record.id, on: $0) }.first { $0.channel == .mail }?.id)
        let file = directory + "/mail/" + id.uuidString.lowercased() + ".eml"
        let parsed = try MailParser().parse(Array(try #require(FileManager.default.contents(atPath: file))))
        return (try #require(parsed.replyTo.first?.address), try #require(parsed.messageID), try #require(parsed.subject))
    }

    var maildir: Maildir { Maildir(path: directory + "/inbound") }

    func worker(_ source: InboundSource? = nil, senderLimit: Int = 30, caFile: String? = nil) -> InboundWorker {
        var settings = InboundSettings(
            source: source ?? .maildir(maildir.path), rules: InboundRules(replyAddress: replyAddress, senderLimit: senderLimit))
        settings.caFile = caFile
        settings.timeouts = CurlTimeouts(connectSeconds: 5, totalSeconds: 30)
        return InboundWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
    }

    /// A message as a mail client writes it: header lines then a body, CRLF line ends.
    func mail(from: String, to: String, subject: String, id: String?, _ extra: [String] = [], body: String = "Thank you, here it is.") -> [UInt8] {
        var lines = ["From: \(from)", "To: \(to)", "Subject: \(subject)", "Date: Wed, 02 Dec 2026 10:00:00 +0000"]
        if let id { lines.append("Message-ID: <\(id)>") }
        lines += extra + ["MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8"]
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body + "\r\n").utf8)
    }

    func deliver(_ message: [UInt8]) throws {
        try maildir.create()
        try maildir.deliver(message)
    }

    struct Stored {
        let id: UUID
        let messageID: String?
        let caseID: UUID?
        let matchedBy: String?
        let reason: String?
        let auto: Bool
        let rescue: Bool
        let text: String
    }

    /// Every stored message, oldest first (a Maildir's names order messages of one second at random: look up by id).
    func stored() throws -> [Stored] {
        try pool.withConnection { connection in
            try connection.query(
                """
                SELECT id, message_id, case_id, matched_by, unmatched_reason, auto, from_rescue_address, text FROM inbound_messages
                ORDER BY received_at, id
                """
            ).map { row in
                Stored(
                    id: try row.decode("id"), messageID: try row.decode("message_id"), caseID: try row.decode("case_id"),
                    matchedBy: try row.decode("matched_by"), reason: try row.decode("unmatched_reason"), auto: try row.decode("auto"),
                    rescue: try row.decode("from_rescue_address"), text: try row.decode("text"))
            }
        }
    }

    func stored(_ messageID: String) throws -> Stored { try #require(try stored().first { $0.messageID == messageID }) }

    func awaitingReply(_ opened: CaseOperations.Opened) throws -> Bool {
        try #require(try pool.withConnection { try CaseStore.find(id: opened.record.id, on: $0) }).awaitingReply
    }

    @Test func everyCustomerMailCarriesTheCasesReplyAddressAndItsNumber() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        #expect(sent.replyTo.hasPrefix("cases+\(opened.record.number)-") && sent.replyTo.hasSuffix("@reclaim.test"))
        #expect(sent.replyTo.count <= 40, "short enough for a phone: \(sent.replyTo)")
        #expect(sent.subject.contains(opened.record.number))
        let number = try CaseNumber(parsing: opened.record.number)
        #expect(ReplyToken.caseNumber(in: sent.replyTo, base: replyAddress, keys: keys) == number)
        #expect(ReplyToken.caseNumber(in: sent.replyTo.uppercased(), base: replyAddress, keys: keys) == number)
        // Unforgeable: another key file, another case's number with this MAC, a changed MAC are all nothing.
        #expect(ReplyToken.caseNumber(in: sent.replyTo, base: replyAddress, keys: KeyFile.generate()) == nil)
        let other = try open(contact: "bob@example.net")
        let forged = sent.replyTo.replacingOccurrences(of: opened.record.number, with: other.record.number)
        #expect(ReplyToken.caseNumber(in: forged, base: replyAddress, keys: keys) == nil)
        let mac = sent.replyTo.split(separator: "-").last!.prefix(8)
        let flipped = sent.replyTo.replacingOccurrences(of: mac, with: String(mac.reversed()))
        #expect(ReplyToken.caseNumber(in: flipped, base: replyAddress, keys: keys) == nil || mac == String(mac.reversed()))
    }

    @Test func aReplyToTheTokenReachesTheCaseOnceAndLeavesTheMaildirAfterTheCommit() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        let reply = mail(from: "Ada <ada@example.net>", to: sent.replyTo, subject: "Re: \(sent.subject)", id: "r1@example.net")
        try deliver(reply)
        #expect(try worker().runOnce() == 1)
        let rows = try stored()
        #expect(rows.count == 1 && rows[0].caseID == opened.record.id && rows[0].matchedBy == "reply_token")
        #expect(rows[0].text.contains("Thank you, here it is."))
        #expect(try maildir.entries().isEmpty)
        #expect(try awaitingReply(opened))
        let events = try pool.withConnection { try CaseEventStore.list(caseID: opened.record.id, type: "message_received", on: $0) }
        #expect(events.count == 1)
        // The same message again (a second copy of the same bytes): stored once, the copy removed.
        try deliver(reply)
        #expect(try worker().runOnce() == 0)
        #expect(try stored().count == 1)
        #expect(try maildir.entries().isEmpty)
        // The raw message is sealed like a document: nothing of it in clear in the row.
        let raw = try pool.withConnection { try InboundMessageStore.raw(id: rows[0].id, on: $0) }
        let sealed = try #require(raw)
        #expect(!String(decoding: sealed.sealed, as: UTF8.self).contains("Thank you"))
        let key = try #require(keys.key(id: sealed.keyID, purpose: .documents))
        let opened2 = try SecretBox.open(sealed.sealed, key: key, associatedData: CaseOperations.inboundAssociatedData(rows[0].id))
        #expect(opened2 == reply)
        // A customer mail queued after it answers the customer: the case no longer waits.
        _ = try pool.withTransaction {
            try operations.addNote(
                try CaseNumber(parsing: opened.record.number), body: "Thanks, we have it.", visibility: .customer, by: agent, at: Date(), on: $0)
        }
        #expect(try !awaitingReply(opened))
    }

    @Test func aStrangersMailUnderTheRepliesMessageIDNeverHidesTheReply() throws {
        // api.md v1.3 "Smaller doors". The attack: a stranger (or the thief, who can read the victim's drafts) sends first
        // a mail under the Message-ID of the customer's coming reply; the real reply was then a "duplicate", removed unread.
        let opened = try open()
        let sent = try sentMail(opened)
        try deliver(mail(from: "stranger@evil.example", to: replyAddress, subject: "hello", id: "reply-1@example.net", body: "Nothing here."))
        #expect(try worker().runOnce() == 1)
        let reply = mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: \(sent.subject)", id: "reply-1@example.net")
        try deliver(reply)
        #expect(try worker().runOnce() == 1)
        let rows = try stored().filter { $0.messageID == "reply-1@example.net" }
        #expect(rows.count == 2, "both messages under the one Message-ID are kept")
        let real = try #require(rows.first { $0.caseID == opened.record.id })
        #expect(real.matchedBy == "reply_token" && real.text.contains("Thank you, here it is."))
        #expect(rows.contains { $0.caseID == nil && $0.reason == "no_match" })
        #expect(try awaitingReply(opened))
        // The real reply's second copy is still the same message: stored once.
        try deliver(reply)
        #expect(try worker().runOnce() == 0)
        #expect(try stored().count == 2)
        #expect(try maildir.entries().isEmpty)
    }

    @Test func aMessageWithoutMessageIDIsKeptOnceByItsDigest() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        let reply = mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: hello", id: nil)
        try deliver(reply)
        try deliver(reply)
        #expect(try worker().runOnce() == 1)
        #expect(try stored().count == 1)
        #expect(try maildir.entries().isEmpty)
    }

    @Test func aReplyThatDroppedInReplyToButKeptReferencesIsThreaded() throws {
        // FreeScout #4020, Chatwoot #10028: another client, the plain address, only References naming our mail.
        let opened = try open()
        let sent = try sentMail(opened)
        try deliver(
            mail(
                from: "ada@example.net", to: replyAddress, subject: "Fwd: photos", id: "r2@example.net",
                ["References: <older@example.org> <\(sent.messageID)>"]))
        // Outlook: In-Reply-To only, a Thread-Index, "AW:" and a rewritten subject, from another address of hers.
        try deliver(
            mail(
                from: "Ada Victim <ada.work@contoso.example>", to: "Reclaim <\(replyAddress)>", subject: "AW: documents", id: "r3@contoso.example",
                ["In-Reply-To: <\(sent.messageID)>", "Thread-Index: AQHa9Yk3xWq8bZ2kS0eJb3y7h0X1+7K2cQ=="]))
        #expect(try worker().runOnce() == 2)
        let rows = try stored()
        #expect(rows.map(\.matchedBy) == ["references", "references"])
        #expect(rows.allSatisfy { $0.caseID == opened.record.id })
    }

    @Test func aCopiedPersonsReplyAllJoinsTheConversationInsteadOfOpeningAnother() throws {
        // FreeScout #2086: the CC'd person answers all; their mail names the token, so it is this case's message.
        let opened = try open()
        let sent = try sentMail(opened)
        try deliver(
            mail(
                from: "Anna <anna@example.org>", to: "ada@example.net", subject: "Re: \(sent.subject)", id: "r4@example.org",
                ["Cc: \(sent.replyTo)"]))
        #expect(try worker().runOnce() == 1)
        let rows = try stored()
        #expect(rows.count == 1 && rows[0].caseID == opened.record.id && rows[0].matchedBy == "reply_token")
        let cases = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM cases").first?.decode("n", as: Int.self) }
        #expect(cases == 1)
    }

    @Test func theSubjectsNumberCountsOnlyFromTheContactAddress() throws {
        let opened = try open()
        let number = opened.record.number
        let grouped = try CaseNumber(parsing: number).grouped
        // Anyone can type a case number: a stranger's is unmatched.
        try deliver(mail(from: "thief@evil.example", to: replyAddress, subject: "About case \(number)", id: "s1@evil.example"))
        // The customer, writing a new mail with the number grouped as the page shows it, any case of the address.
        try deliver(mail(from: "ADA@example.net", to: replyAddress, subject: "Case \(grouped) photos", id: "s2@example.net"))
        // A mistyped number (check digit wrong) is no number.
        var digits = Array(number)
        digits[11] = digits[11] == "0" ? "1" : "0"
        try deliver(mail(from: "ada@example.net", to: replyAddress, subject: "Case \(String(digits))", id: "s3@example.net"))
        // A forged token is not a token.
        try deliver(
            mail(from: "thief@evil.example", to: "cases+\(number)-aaaaaaaa@reclaim.test", subject: "hi", id: "s4@evil.example"))
        #expect(try worker().runOnce() == 4)
        for id in ["s1@evil.example", "s3@example.net", "s4@evil.example"] {
            let row = try stored(id)
            #expect(row.caseID == nil && row.matchedBy == nil && row.reason == "no_match", "\(id)")
        }
        let row = try stored("s2@example.net")
        #expect(row.caseID == opened.record.id && row.matchedBy == "subject" && row.reason == nil)
    }

    @Test func theRescueAddressIsRecordedAndAutoRepliesTriggerNothing() throws {
        let opened = try open(rescue: "thief@evil.example")
        let sent = try sentMail(opened)
        try deliver(mail(from: "thief@evil.example", to: sent.replyTo, subject: "Re: case", id: "t1@evil.example"))
        #expect(try worker().runOnce() == 1)
        var rows = try stored()
        #expect(rows.count == 1 && rows[0].rescue && rows[0].caseID == opened.record.id)
        #expect(try !awaitingReply(opened))
        // It raises the mail_from_rescue_address risk signal, and files nothing.
        let record = try #require(try pool.withConnection { try CaseStore.find(id: opened.record.id, on: $0) })
        #expect(record.risk)
        let raised = try pool.withConnection { try CaseEventStore.list(caseID: opened.record.id, type: "risk_raised", on: $0) }
        #expect(raised.contains { $0.data.canonical.contains("\"signal\":\"mail_from_rescue_address\"") })
        // RFC 3834: an out-of-office answer, and a list's bulk mail: recorded, nothing else.
        try deliver(
            mail(from: "ada@example.net", to: sent.replyTo, subject: "Out of office", id: "t2@example.net", ["Auto-Submitted: auto-replied"]))
        try deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Digest", id: "t3@example.net", ["Precedence: bulk"]))
        #expect(try worker().runOnce() == 2)
        rows = try stored()
        #expect(rows.count == 3)
        #expect(try stored("t2@example.net").auto && stored("t3@example.net").auto && !stored("t2@example.net").rescue)
        #expect(try !stored("t1@evil.example").auto)
        #expect(try !awaitingReply(opened))
        let webhooks = try pool.withConnection { try OutboxStore.list(caseID: opened.record.id, on: $0) }.filter { $0.kind == "message.received" }
        #expect(webhooks.isEmpty)
    }

    @Test func aSenderOverTheHourlyLimitIsKeptUnmatchedAndBadMailNeverStopsTheWorker() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        for index in 0..<3 {
            try deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: \(index)", id: "l\(index)@example.net"))
        }
        // Not a message at all, and one over the size limit.
        try deliver(Array("\r\n\r\njust a body".utf8))
        var limits = MailLimits()
        limits.maximumBytes = 64 * 1024
        try deliver(
            mail(from: "big@example.org", to: sent.replyTo, subject: "big", id: "big@example.org", body: String(repeating: "x", count: 70_000)))
        var settings = InboundSettings(
            source: .maildir(maildir.path), rules: InboundRules(replyAddress: replyAddress, senderLimit: 2, limits: limits))
        settings.pollSeconds = 1
        #expect(try InboundWorker(settings: settings, pool: pool, keys: keys, logger: .discard).runOnce() == 5)
        let reasons = try stored().map(\.reason)
        #expect(reasons.filter { $0 == nil }.count == 2)
        #expect(Set(reasons.compactMap { $0 }) == ["sender_limit", "not_a_message", "too_large"])
        #expect(try maildir.entries().isEmpty)
    }

    @Test func aThiefsTaggedAndRecasedAddressesShareOneSenderBudget() throws {
        // api.md v1.3 "Smaller doors": `From` compared as a mailbox, so a `+tag`, a capital or a comment is no fresh budget.
        let opened = try open(rescue: "rescue@evil.example")
        let sent = try sentMail(opened)
        let froms = ["thief+1@evil.example", "thief+2@evil.example", "THIEF@Evil.Example", "Thief <thief(hi)@evil.example>", "thief(x)@evil.example"]
        for (index, from) in froms.enumerated() {
            try deliver(mail(from: from, to: sent.replyTo, subject: "Re: \(index)", id: "s\(index)@evil.example"))
        }
        #expect(try worker(senderLimit: 2).runOnce() == froms.count)
        let reasons = try stored().map(\.reason)
        #expect(reasons.filter { $0 == nil }.count == 2, "\(reasons)")
        #expect(reasons.filter { $0 == "sender_limit" }.count == froms.count - 2, "\(reasons)")
        // Another mailbox keeps its own budget.
        try deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: mine", id: "own@example.net"))
        #expect(try worker(senderLimit: 2).runOnce() == 1)
        #expect(try stored("own@example.net").reason == nil)
    }

    @Test func aMailFromATaggedRescueAddressIsFromTheRescueAddress() throws {
        // api.md v1.3 "Smaller doors": `rescue+x@` (or in capitals, or with a comment) is the rescue address.
        let opened = try open(rescue: "rescue@evil.example")
        let sent = try sentMail(opened)
        try deliver(mail(from: "Support <Rescue+x@Evil.Example>", to: sent.replyTo, subject: "Re: case", id: "r1@evil.example"))
        try deliver(mail(from: "rescue(desk)@evil.example", to: sent.replyTo, subject: "Re: case", id: "r2@evil.example"))
        #expect(try worker().runOnce() == 2)
        #expect(try stored("r1@evil.example").rescue && stored("r2@evil.example").rescue)
        #expect(try stored("r1@evil.example").caseID == opened.record.id)
        #expect(try !awaitingReply(opened))
        let raised = try pool.withConnection { try CaseEventStore.list(caseID: opened.record.id, type: "risk_raised", on: $0) }
        #expect(raised.contains { $0.data.canonical.contains("\"signal\":\"mail_from_rescue_address\"") })
    }

    /// api.md v1.3 "Smaller doors": a mail cannot be answered 409, so at the case's document limit it is still stored on
    /// its case, and its attachments beyond the limit are not filed (they stay in the sealed raw mail).
    @Test func attachmentsBeyondTheCaseDocumentLimitStayInTheMail() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        func withAttachments(_ id: String, _ markers: [String]) -> [UInt8] {
            var lines = [
                "From: ada@example.net", "To: \(sent.replyTo)", "Subject: the documents", "Date: Wed, 02 Dec 2026 10:00:00 +0000",
                "Message-ID: <\(id)>", "MIME-Version: 1.0", "Content-Type: multipart/mixed; boundary=\"part\"", "", "--part",
                "Content-Type: text/plain; charset=UTF-8", "", "Here they are.", "",
            ]
            for marker in markers {
                let pdf = Data(Array("%PDF-1.4\n% \(marker)\n".utf8) + [UInt8](repeating: 0x20, count: 200)).base64EncodedString()
                lines += [
                    "--part", "Content-Type: application/pdf", "Content-Disposition: attachment; filename=\"\(marker).pdf\"",
                    "Content-Transfer-Encoding: base64", "", pdf, "",
                ]
            }
            lines.append("--part--")
            return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
        }
        var settings = InboundSettings(source: .maildir(maildir.path), rules: InboundRules(replyAddress: replyAddress, senderLimit: 30))
        settings.documentLimit = 1
        let worker = InboundWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
        try deliver(withAttachments("two@example.net", ["first", "second"]))
        #expect(try worker.runOnce() == 1)
        try deliver(withAttachments("three@example.net", ["third"]))
        #expect(try worker.runOnce() == 1)
        // Both mails are the case's messages; one attachment was filed, the others were not.
        #expect(try stored("two@example.net").caseID == opened.record.id)
        #expect(try stored("three@example.net").caseID == opened.record.id)
        let evidence = try pool.withConnection { try EvidenceStore.list(caseID: opened.record.id, on: $0) }
        #expect(evidence.filter { $0.kind == .mailAttachment }.count == 1)
        #expect(try maildir.entries().isEmpty)
    }

    @Test func aChineseFoxmailReplyInGB18030() throws {
        let opened = try open(contact: "wang.xiaoming@qq.com")
        let sent = try sentMail(opened)
        let fixture = RepositoryPaths.root + "/Tests/InboundMailTests/Fixtures/foxmail-gb18030.eml"
        var raw = String(decoding: try #require(FileManager.default.contents(atPath: fixture)), as: UTF8.self)
        raw = raw.replacingOccurrences(of: "cases+r4n8t2kp6w@reclaim.example", with: sent.replyTo)
        try deliver(Array(raw.utf8))
        #expect(try worker().runOnce() == 1)
        let rows = try stored()
        #expect(rows.count == 1 && rows[0].caseID == opened.record.id && rows[0].matchedBy == "reply_token")
        #expect(rows[0].text.contains("附件是购买手机的发票扫描件，请查收。"))
        // Its PDF is a document of its own kind: sniffed, sealed, unreviewed, naming the message.
        let evidence = try pool.withConnection { try EvidenceStore.list(caseID: opened.record.id, on: $0) }
        let attachment = try #require(evidence.first { $0.kind == .mailAttachment })
        #expect(attachment.status == .pending && attachment.mediaType == "application/pdf" && attachment.countsAs == .mailAttachment)
        #expect(try pool.withConnection { try InboundMessageStore.list(caseID: opened.record.id, on: $0) }.first?.attachments == [attachment.id])
        #expect(try pool.withConnection { try CaseStore.find(id: opened.record.id, on: $0) }?.unreviewedDocuments == 1)
        // Accepting it names what it proves, and then it counts as that.
        let reviewer = "agent:00000000-0000-0000-0000-000000000003"
        #expect(throws: OperationError.self) {
            try self.pool.withTransaction {
                _ = try self.operations.review(
                    evidence: attachment.id, decision: .accepted, reason: "Invoice", actorTier: .tier3, by: reviewer, at: Date(), on: $0)
            }
        }
        let reviewed = try pool.withTransaction {
            try operations.review(
                evidence: attachment.id, decision: .accepted, reason: "The invoice for the phone", acceptedAs: .invoice, actorTier: .tier3,
                by: reviewer, at: Date(), on: $0)
        }
        #expect(reviewed.acceptedAs == .invoice && reviewed.countsAs == .invoice && reviewed.json.canonical.contains("\"accepted_as\":\"invoice\""))
        // accepted_as only for an accepted mail attachment.
        #expect(throws: OperationError.self) {
            try self.pool.withTransaction {
                _ = try self.operations.review(
                    evidence: attachment.id, decision: .rejected, reason: "No", customerReason: .unreadable, acceptedAs: .invoice,
                    actorTier: .tier3, by: reviewer, at: Date(), on: $0)
            }
        }
    }

    @Test func twoWorkersOnOneMailboxStoreEachMessageOnce() throws {
        let opened = try open()
        let sent = try sentMail(opened)
        for index in 0..<40 {
            try deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: \(index)", id: "w\(index)@example.net"))
        }
        let pools = [database.makePool(), database.makePool()]
        defer { for pool in pools { pool.close() } }
        let workers = pools.map { pool -> InboundWorker in
            InboundWorker(
                settings: InboundSettings(source: .maildir(maildir.path), rules: InboundRules(replyAddress: replyAddress, senderLimit: 1000)),
                pool: pool, keys: keys, logger: .discard)
        }
        let group = DispatchGroup()
        for worker in workers {
            DispatchQueue.global().async(group: group) { _ = try? worker.runOnce() }
        }
        group.wait()
        // Whichever got the mailbox's lock first read all; a pass the other missed reads what is left.
        _ = try workers[0].runOnce()
        #expect(try stored().count == 40)
        #expect(try maildir.entries().isEmpty)
    }

    @Test func overIMAPAgainstDovecotWithTLSVerified() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        let opened = try open()
        let sent = try sentMail(opened)
        try dovecot.deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: over IMAP", id: "i1@example.net"))
        try dovecot.deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: over IMAP", id: "i1@example.net"))
        try dovecot.deliver(mail(from: "stranger@example.org", to: replyAddress, subject: "hello", id: "i2@example.org"))
        // A CA that did not sign the server's certificate: nothing is read, nothing removed.
        let wrongCA = worker(.imap(try IMAPMailbox(url: dovecot.url(tls: true))), caFile: dovecot.otherCAFile)
        #expect(throws: (any Error).self) { try wrongCA.runOnce() }
        #expect(try stored().isEmpty)
        let imaps = worker(.imap(try IMAPMailbox(url: dovecot.url(tls: true))), caFile: dovecot.caFile)
        #expect(try imaps.runOnce() == 2)
        #expect(try stored("i1@example.net").matchedBy == "reply_token")
        #expect(try stored("i2@example.org").reason == "no_match")
        let session = try IMAPSession(
            mailbox: try IMAPMailbox(url: dovecot.url(tls: true)), timeouts: CurlTimeouts(connectSeconds: 5, totalSeconds: 30),
            caFile: dovecot.caFile)
        #expect(try session.listing().messages == 0)
        // imap:// with STARTTLS, verified the same way.
        try dovecot.deliver(mail(from: "ada@example.net", to: sent.replyTo, subject: "Re: again", id: "i3@example.net"))
        #expect(try worker(.imap(try IMAPMailbox(url: dovecot.url(tls: false))), caFile: dovecot.caFile).runOnce() == 1)
        #expect(try stored().count == 3)
    }
}
