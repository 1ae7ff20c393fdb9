import Curl
import Foundation
import InboundMail
import ReclaimTestSupport
import Testing

@Suite("IMAP mailbox URLs")
struct IMAPURLTests {
    @Test func theFormsAnOperatorWrites() throws {
        let plain = try IMAPMailbox(url: "imap://cases%40reclaim.example:p%40ss%2Fw%3Ard@mail.example.com:1143/Replies")
        #expect(!plain.tls && plain.host == "mail.example.com" && plain.port == 1143 && plain.mailbox == "Replies")
        #expect(plain.user == "cases@reclaim.example")
        let secure = try IMAPMailbox(url: "IMAPS://u:p@[2001:db8::1]")
        #expect(secure.tls && secure.host == "[2001:db8::1]" && secure.port == 993 && secure.mailbox == "INBOX")
        #expect(try IMAPMailbox(url: "imap://u:p@host/").port == 143)
        #expect(try IMAPMailbox(url: "imap://u:p@host/Support%20Inbox").mailbox == "Support Inbox")
        #expect(try IMAPMailbox(url: "imaps://u:p@h:993/INBOX/").mailbox == "INBOX")
    }

    @Test func refusals() {
        let bad = [
            "pop3://u:p@h/INBOX", "imap://h/INBOX", "imap://u@h/INBOX", "imap://:p@h/", "imap://u:p@/INBOX", "imap://u:p@h:0/",
            "imap://u:p@h:99999/", "imap://u:p@h:x/", "imap://u:p@h/INBOX;UID=1", "imap://u:p@h/INBOX?ALL", "imap://u:p@h/a%22b",
            "imap://u:%ZZ@h/", "imap://u:p@h/Caf%C3%A9",
        ]
        for url in bad {
            #expect(throws: IMAPURLError.self, "\(url)") { try IMAPMailbox(url: url) }
        }
        // The refusal never repeats the URL, which may carry the password.
        do {
            _ = try IMAPMailbox(url: "imap://u:hunter2@h:x/")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func theDescriptionHidesThePassword() throws {
        let mailbox = try IMAPMailbox(url: "imaps://cases%40reclaim.example:hunter2@mail.example.com/INBOX")
        #expect(mailbox.description == "imaps://cases%40reclaim.example:***@mail.example.com:993/INBOX")
        var dumped = ""
        dump(mailbox, to: &dumped)
        #expect(!String(reflecting: mailbox).contains("hunter2") && !dumped.contains("hunter2"))
    }
}

@Suite("IMAP against a real Dovecot")
struct IMAPTests {
    let timeouts = CurlTimeouts(connectSeconds: 5, totalSeconds: 30)

    func session(_ dovecot: TestDovecot, tls: Bool, caFile: String? = nil, mailbox: String = "INBOX") throws -> IMAPSession {
        try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: tls, mailbox: mailbox)), timeouts: timeouts, caFile: caFile ?? dovecot.caFile)
    }

    @Test(arguments: [false, true])
    func listFetchAndDeleteTheFixtures(tls: Bool) throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        let fixtures = Fixture.names.map(Fixture.bytes)
        for fixture in fixtures { try dovecot.deliver(fixture) }

        let imap = try session(dovecot, tls: tls)
        let listing = try imap.listing()
        #expect(listing.uids == Array(1...UInt32(fixtures.count)))
        #expect(listing.uidValidity > 0)
        for (uid, fixture) in zip(listing.uids, fixtures) {
            let message = try imap.fetch(uid: uid, uidValidity: listing.uidValidity, maximumBytes: MailLimits().maximumBytes)
            #expect(!message.truncated)
            // Byte for byte as delivered (a server sends CRLF: the bare-LF file comes back with CRLF, the same message).
            if fixture.contains(0x0D) { #expect(message.bytes == fixture) }
            #expect(try MailParser().parse(message.bytes) == MailParser().parse(fixture))
        }

        // Delete two by marking and expunging; the others keep their UIDs.
        try imap.markDeleted(uid: 1, uidValidity: listing.uidValidity)
        try imap.markDeleted(uid: 3, uidValidity: listing.uidValidity)
        #expect(try imap.listing().uids == listing.uids, "marked, not yet expunged")
        try imap.expunge(uidValidity: listing.uidValidity)
        let after = try session(dovecot, tls: tls).listing()
        #expect(after.uidValidity == listing.uidValidity)
        #expect(after.uids == listing.uids.filter { $0 != 1 && $0 != 3 })
        // `delete` removes one message and leaves another client's \Deleted mark to that client.
        let other = try session(dovecot, tls: tls)
        try other.markDeleted(uid: 5, uidValidity: listing.uidValidity)
        try imap.delete(uid: 4, uidValidity: listing.uidValidity)
        #expect(try imap.listing().uids == after.uids.filter { $0 != 4 })
    }

    @Test func anEmptyMailbox() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        #expect(try session(dovecot, tls: true).listing().uids == [])
    }

    @Test(arguments: [false, true])
    func aCertificateFromAnotherCAIsRefused(tls: Bool) throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        try dovecot.deliver(Fixture.bytes("auto-reply.eml"))
        // imaps:// from the first byte; imap:// through STARTTLS, which Dovecot offers: both verified.
        let wrong = try session(dovecot, tls: tls, caFile: dovecot.otherCAFile)
        #expect(throws: CurlError.self) { try wrong.listing() }
        do {
            _ = try wrong.listing()
        } catch {
            #expect(error.certificateRefused, "\(error)")
        }
        // The system's CAs do not know the throwaway CA either.
        let system = try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: tls)), timeouts: timeouts)
        #expect(throws: CurlError.self) { try system.listing() }
        #expect(try session(dovecot, tls: tls).listing().uids == [1])
    }

    @Test func aWrongPasswordIsRefusedAndNeverShown() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        let password = "wrong-Secret-4711"
        let imap = try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: true, password: password)), timeouts: timeouts, caFile: dovecot.caFile)
        do {
            _ = try imap.listing()
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.loginDenied, "\(error)")
            #expect(!error.description.contains(password) && !error.message.contains(password))
        }
        #expect(!imap.mailbox.description.contains(password))
    }

    @Test func aFetchCutOffMidwayLosesNothing() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        // A 4 MiB photo, then a small reply.
        let photo = Data((0..<(4 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).base64EncodedString(options: .lineLength76Characters)
        let big = message(
            ["From: ada@example.com", "Message-ID: <big@example.com>", "Content-Type: multipart/mixed; boundary=b"],
            body: "--b\r\nContent-Type: text/plain\r\n\r\nThe photo.\r\n--b\r\nContent-Type: image/jpeg\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + photo + "\r\n--b--\r\n")
        try dovecot.deliver(big)
        try dovecot.deliver(Fixture.bytes("gmail-reply.eml"))

        let imap = try session(dovecot, tls: true)
        let listing = try imap.listing()
        // The client stops reading 64 KiB into the 5.6 MB literal and drops the connection, as a killed process does.
        let cut = try imap.fetch(uid: listing.uids[0], uidValidity: listing.uidValidity, maximumBytes: 64 * 1024)
        #expect(cut.truncated && cut.bytes.count == 64 * 1024)
        #expect(Array(big.prefix(64 * 1024)) == cut.bytes)
        // The same session goes on (curl opens a new connection), and a new one sees everything still there.
        let whole = try imap.fetch(uid: listing.uids[0], uidValidity: listing.uidValidity, maximumBytes: MailLimits().maximumBytes)
        #expect(!whole.truncated && whole.bytes == big)
        let restarted = try session(dovecot, tls: true)
        #expect(try restarted.listing() == listing)
        // Fetched but never deleted (the client died before storing): still there on the next poll.
        _ = try restarted.fetch(uid: listing.uids[1], uidValidity: listing.uidValidity, maximumBytes: MailLimits().maximumBytes)
        #expect(try session(dovecot, tls: false).listing() == listing)
    }

    @Test func aRecreatedMailboxIsNeverDeletedFromByOldUIDs() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        let user = TestDovecot.defaultUsers.keys.first!
        try dovecot.deliver(Fixture.bytes("auto-reply.eml"), mailbox: "Replies")
        let old = try session(dovecot, tls: true, mailbox: "Replies").listing()
        #expect(old.uids == [1])
        // Someone deletes and recreates the mailbox: a new message now has UID 1 too, under another UIDVALIDITY.
        try dovecot.doveadm(["mailbox", "delete", "-u", user, "Replies"])
        try dovecot.deliver(Fixture.bytes("gmail-reply.eml"), mailbox: "Replies")
        let stale = try session(dovecot, tls: true, mailbox: "Replies")
        #expect(throws: CurlError.self) { try stale.markDeleted(uid: 1, uidValidity: old.uidValidity) }
        #expect(throws: CurlError.self) { try stale.fetch(uid: 1, uidValidity: old.uidValidity, maximumBytes: 1_000_000) }
        let fresh = try session(dovecot, tls: true, mailbox: "Replies")
        let now = try fresh.listing()
        #expect(now.uidValidity != old.uidValidity && now.uids == [1])
        let kept = try fresh.fetch(uid: 1, uidValidity: now.uidValidity, maximumBytes: 1_000_000)
        #expect(try MailParser().parse(kept.bytes).messageID == "CAF=k3Yx7Rq2vA+9Lw0pDx4hN_Jm1sTq8eZ2bUo5cWf3gH6iK@mail.gmail.com")
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
        // A listener that accepts the connection (the kernel does) but never sends the IMAP greeting.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listen(fd, 4)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let imap = try IMAPSession(
            mailbox: IMAPMailbox(url: "imap://u:p@127.0.0.1:\(port)/INBOX"), timeouts: CurlTimeouts(connectSeconds: 1, totalSeconds: 1))
        do {
            _ = try imap.listing()
            Issue.record("no answer was taken for a listing")
        } catch {
            #expect(error.timedOut, "\(error)")
        }
    }
}

@Suite("IMAP: many messages at once")
struct IMAPBurstTests {
    let timeouts = CurlTimeouts(connectSeconds: 5, totalSeconds: 120)

    @Test func aLargeMailboxIsListedOldestFirstInBoundedBatches() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        try dovecot.deliverToMaildir(Array(repeating: Fixture.bytes("auto-reply.eml"), count: 4_000))
        let imap = try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: true)), timeouts: timeouts, caFile: dovecot.caFile)
        // Every UID: a SEARCH line of 19 KB, which curl's default 16 KB buffer garbled.
        let listing = try imap.listing()
        #expect(listing.messages == 4_000 && listing.uids == Array(1...4_000))
        // The oldest, when the mailbox holds more than asked for.
        let first = try imap.listing(limit: 3_000)
        #expect(first.messages == 4_000 && first.uids == Array(1...3_000))
        #expect(IMAPSession.maximumListing == 10_000)
        #expect(try imap.listing(limit: 50_000) == listing)
        // Stored ones deleted one by one, as the worker does.
        for uid in listing.uids.prefix(100) { try imap.delete(uid: uid, uidValidity: listing.uidValidity) }
        let after = try imap.listing(limit: 10)
        #expect(after.messages == 3_900 && after.uids == Array(101...110))
    }

    @Test func anotherClientsMassExpungeDoesNotWedgeTheSession() throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        try dovecot.deliverToMaildir(Array(repeating: Fixture.bytes("auto-reply.eml"), count: 400))
        let reader = try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: true)), timeouts: timeouts, caFile: dovecot.caFile)
        let listing = try reader.listing()
        #expect(listing.uids.count == 400)
        // Another client (a person in a mail program) deletes 399 at once; libcurl may report its long answer as an
        // error, but the server has done it.
        let other = try IMAPSession(mailbox: IMAPMailbox(url: dovecot.url(tls: true)), timeouts: timeouts, caFile: dovecot.caFile)
        for uid in listing.uids.dropFirst() { try other.markDeleted(uid: uid, uidValidity: listing.uidValidity) }
        _ = try? other.expunge(uidValidity: listing.uidValidity)
        #expect(try other.listing().uids == [listing.uids[0]])
        // The reader's kept connection gets the 399 EXPUNGE lines with its next answer: that call may fail, the next
        // one (on a fresh connection) works.
        let first = Result { () throws(CurlError) in try reader.fetch(uid: listing.uids[0], uidValidity: listing.uidValidity, maximumBytes: 1 << 20) }
        let kept = try (try? first.get()) ?? reader.fetch(uid: listing.uids[0], uidValidity: listing.uidValidity, maximumBytes: 1 << 20)
        #expect(kept.bytes == Fixture.bytes("auto-reply.eml"))
        #expect(try reader.listing().uids == [listing.uids[0]])
    }
}
