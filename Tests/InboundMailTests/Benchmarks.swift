import Curl
import Foundation
import InboundMail
import ReclaimTestSupport
import Testing

/// Figures, not checks: run with `RECLAIM_BENCH=1 swift test --filter InboundMailBenchmarks` (wall and this
/// thread's CPU time; on a debug build unless `-c release`). Loopback only, bounded loops.
@Suite("InboundMailBenchmarks", .enabled(if: ProcessInfo.processInfo.environment["RECLAIM_BENCH"] == "1"), .serialized)
struct InboundMailBenchmarks {
    func clock() -> (wall: Double, cpu: Double) {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return (Date().timeIntervalSince1970, Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    func report(_ label: String, count: Int, since start: (wall: Double, cpu: Double)) {
        let end = clock()
        let wall = end.wall - start.wall
        let cpu = end.cpu - start.cpu
        print(
            String(
                format: "BENCH %@: %d in %.3f s wall (%.0f/s), %.3f s CPU of this thread (%.0f/s)", label, count, wall, Double(count) / wall, cpu,
                Double(count) / cpu))
    }

    @Test func parser() throws {
        let fixtures = Fixture.names.map(Fixture.bytes)
        let parser = MailParser()
        let rounds = 200
        let start = clock()
        for _ in 0..<rounds { for fixture in fixtures { _ = try parser.parse(fixture) } }
        report("parse the \(fixtures.count) fixtures", count: rounds * fixtures.count, since: start)

        var random = SeededGenerator(state: 10)
        let block = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) }
        let payload = (0..<160).reduce(into: Data()) { data, _ in data.append(contentsOf: block) }
        let big = message(
            ["From: a@example.com", "Content-Type: multipart/mixed; boundary=b"],
            body: "--b\r\nContent-Type: text/plain\r\n\r\nInvoice.\r\n--b\r\nContent-Type: image/jpeg\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + payload.base64EncodedString(options: .lineLength76Characters) + "\r\n--b--\r\n")
        let bigStart = clock()
        for _ in 0..<5 { _ = try parser.parse(big) }
        report("parse a 10 MiB attachment (\(big.count) bytes of mail)", count: 5, since: bigStart)
    }

    @Test(arguments: [false, true])
    func imapFetch(tls: Bool) throws {
        let dovecot = try TestDovecot()
        defer { dovecot.stop() }
        let small = Fixture.bytes("gmail-reply.eml")
        try dovecot.deliverToMaildir(Array(repeating: small, count: 1_000))
        let session = try IMAPSession(
            mailbox: IMAPMailbox(url: dovecot.url(tls: tls)), timeouts: CurlTimeouts(connectSeconds: 5, totalSeconds: 60),
            caFile: dovecot.caFile)
        let listStart = clock()
        let listing = try session.listing()
        report("\(tls ? "imaps" : "imap") listing", count: listing.uids.count, since: listStart)
        #expect(listing.uids.count == 1_000)
        let start = clock()
        var bytes = 0
        for uid in listing.uids { bytes += try session.fetch(uid: uid, uidValidity: listing.uidValidity, maximumBytes: 1 << 20).bytes.count }
        report("\(tls ? "imaps" : "imap") fetch of \(small.count)-byte messages, one session", count: listing.uids.count, since: start)
        #expect(bytes == 1_000 * small.count)
        let fresh = clock()
        for uid in listing.uids.prefix(100) {
            let one = try IMAPSession(
                mailbox: IMAPMailbox(url: dovecot.url(tls: tls)), timeouts: CurlTimeouts(connectSeconds: 5, totalSeconds: 60),
                caFile: dovecot.caFile)
            _ = try one.fetch(uid: uid, uidValidity: listing.uidValidity, maximumBytes: 1 << 20)
        }
        report("\(tls ? "imaps" : "imap") fetch, a new session (login) per message", count: 100, since: fresh)
        let deleteStart = clock()
        for uid in listing.uids { try session.delete(uid: uid, uidValidity: listing.uidValidity) }
        report("\(tls ? "imaps" : "imap") delete (UID STORE \\Deleted + UID EXPUNGE) one by one", count: listing.uids.count, since: deleteStart)
        #expect(try session.listing().uids.isEmpty)
    }
}
