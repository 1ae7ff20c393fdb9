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

/// Lanes, per-endpoint caps and rests (issue 25, item 1), from the victim's side: a partner whose receiver answers
/// after the sender gave up (`/hang` holds each request until the test lets it go) or fails must delay neither a
/// customer's mail nor another partner's webhooks, and must not spend its own messages' retries while it rests.
extension WebhookDeliveryTests {
    /// Another API client, for a second partner.
    func addClient() throws -> UUID {
        let id = UUID()
        try pool.withTransaction { connection in
            try APIClientStore.insert(
                id: id, name: "Other partner", keyHash: SecureRandom.bytes(32), sealedSigningSecret: [1], signingKeyID: "signing-1",
                now: Date(), on: connection)
        }
        return id
    }

    /// Lets every held `/hang` request answer (and every later one at once).
    func releaseHangingRequests() {
        _ = FileManager.default.createFile(atPath: logFile + ".release", contents: nil)
    }

    /// When each attempt to the endpoint ended, oldest first.
    func attemptTimes(endpoint: UUID) throws -> [Date] {
        try pool.withConnection { connection in
            try connection.query(
                """
                SELECT a.attempted_at FROM outbox_attempts a JOIN outbox o ON o.id = a.message_id
                WHERE o.endpoint_id = \(endpoint) ORDER BY a.attempted_at
                """
            ).map { try $0.decode("attempted_at") }
        }
    }

    func claimWebhooks(perEndpoint: Int, at: Date, limit: Int = 10) throws -> [OutboxMessage] {
        try pool.withTransaction { try OutboxStore.claimWebhooks(limit: limit, perEndpoint: perEndpoint, now: at, lease: 30, on: $0) }
    }

    @Test func aPartnerThatHangsDoesNotDelayAnUnrelatedCustomersMail() throws {
        let hanging = try register("/hang", events: [.caseOpened])
        for _ in 0..<6 { _ = try open(by: client) }  // six cases: each a customer's mail and a webhook to the partner
        let inbox = directory + "/inbox"
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let smtp = try PythonHelper("smtp_sink.py", [inbox])
        defer { smtp.stop() }
        let delivery = worker {
            $0.smtpURL = "smtp://127.0.0.1:\(smtp.port)"
            $0.webhookTimeout = 5
        }
        delivery.start()
        defer {
            releaseHangingRequests()
            delivery.stop()
        }
        // A transfer to the partner is under way, and the partner does not answer;
        #expect(eventually { self.received().contains { $0.path == "/hang" } })
        // an unrelated customer's case is opened now: its access-code mail is accepted by the SMTP server
        _ = try pool.withTransaction {
            try operations.open(opening(contact: "victim@example.org"), by: "agent:00000000-0000-0000-0000-000000000001", at: Date(), on: $0)
        }
        #expect(eventually { receivedMails(in: inbox).contains { $0.recipients == ["victim@example.org"] } })
        #expect(receivedMails(in: inbox).count == 7)
        // before that transfer has ended: one line would have sent it only after the partner's timeout.
        #expect(try attemptTimes(endpoint: hanging.endpoint.id).isEmpty)
    }

    @Test func aPartnerThatHangsDoesNotDelayAnotherPartnersWebhooks() throws {
        let hanging = try register("/hang", events: [.caseOpened])
        let other = try addClient()
        try register("/ok", events: [.caseOpened], client: other)
        for _ in 0..<6 { _ = try open(by: client) }  // the hanging partner's messages are the oldest
        for _ in 0..<3 { _ = try open(by: "client:\(other.uuidString.lowercased())") }
        // Two webhook threads, two messages a claim: without a cap per endpoint both would take the partner's.
        let delivery = worker {
            $0.webhookTimeout = 5
            $0.webhookThreads = 2
            $0.batchSize = 2
        }
        delivery.start()
        defer {
            releaseHangingRequests()
            delivery.stop()
        }
        #expect(eventually { self.received().contains { $0.path == "/hang" } })
        #expect(eventually { self.received().filter { $0.path == "/ok" && $0.verified }.count == 3 })
        #expect(try attemptTimes(endpoint: hanging.endpoint.id).isEmpty)
        // Only one of the partner's messages was ever in flight: the rest wait their turn, unattempted.
        #expect(received().filter { $0.path == "/hang" }.count == 1)
    }

    @Test func aFailingPartnerRestsWithoutSpendingItsMessagesRetriesOrAnotherPartnersTurn() throws {
        let failing = try register("/fail", events: [.caseOpened])
        let other = try addClient()
        let healthy = try register("/ok", events: [.caseOpened], client: other)
        for _ in 0..<2 { _ = try open(by: client) }
        for _ in 0..<3 { _ = try open(by: "client:\(other.uuidString.lowercased())") }
        let rest = 1.5
        // Each message may be tried five times, 0.1 s apart: without rests both would be dead within a second.
        let delivery = worker {
            $0.webhookSchedule = RetrySchedule(delays: [0.1, 0.1, 0.1, 0.1])
            $0.endpointBackoff = RetrySchedule(delays: [rest])
        }
        delivery.start()
        #expect(eventually { self.received().filter { $0.path == "/fail" }.count >= 3 })
        delivery.stop()
        let failures = try attemptTimes(endpoint: failing.endpoint.id)
        #expect(failures.count >= 3)
        // One try at a time, each after the endpoint's rest (±10 % jitter) had passed.
        for (earlier, later) in zip(failures, failures.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= rest * 0.9 - 0.01, "\(failures)")
        }
        #expect(received().filter { $0.path == "/fail" }.allSatisfy { $0.inFlight == 1 })
        // Every attempt counted on the failing partner's messages was a request it received, none dead-lettered.
        let spent = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT coalesce(sum(attempts), 0)::int AS spent, count(*) FILTER (WHERE state = 'failed')::int AS dead
                FROM outbox WHERE endpoint_id = \(failing.endpoint.id)
                """
            ).first.map { (try $0.decode("spent", as: Int.self), try $0.decode("dead", as: Int.self)) }
        }
        #expect(spent?.0 == received().filter { $0.path == "/fail" }.count)
        // The other partner was served while this one rested: all of it sent before the failing one's second try.
        let served = try attemptTimes(endpoint: healthy.endpoint.id)
        #expect(served.count == 3)
        #expect(served.allSatisfy { $0 < failures[1] })
        #expect(received().filter { $0.path == "/ok" }.count == 3)
    }

    @Test func twoInstancesKeepOneDeliveryInFlightPerEndpointInOrderAndSendEachOnce() throws {
        try register("/busy", events: [.caseOpened])
        let opened = try (0..<8).map { _ in try open(by: client) }
        var settings = testSettings(directory: directory)
        settings.webhookThreads = 2
        settings.batchSize = 2
        settings.webhookPerEndpoint = 1
        let otherPool = database.makePool()
        defer { otherPool.close() }
        let first = DeliveryWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
        let second = DeliveryWorker(settings: settings, pool: otherPool, keys: keys, logger: .discard)
        first.start()
        second.start()
        defer {
            first.stop()
            second.stop()
        }
        #expect(try eventually { try self.webhookStates() == Array(repeating: "sent", count: 8) })
        let got = received().filter { $0.path == "/busy" }
        #expect(got.count == 8 && Set(got.compactMap(\.id)).count == 8)
        // Four threads in two instances, each claiming two at a time, yet never two requests at the receiver at once,
        #expect(got.allSatisfy { $0.inFlight == 1 }, "\(got.map(\.inFlight))")
        // so the partner hears of the cases in the order they were opened.
        #expect(zip(got, opened).allSatisfy { $0.body.contains($1.record.number) })
    }

    @Test func anEndpointsLiveClaimsAreCappedAndAClaimWhoseWorkerDiedFreesItsSlotWhenItsLeaseRunsOut() throws {
        try register("/ok", events: [.caseOpened])
        for _ in 0..<3 { _ = try open(by: client) }
        let now = Date()
        let first = try claimWebhooks(perEndpoint: 1, at: now, limit: 1)
        #expect(first.count == 1 && first.allSatisfy { $0.channel == .webhook })
        #expect(try claimWebhooks(perEndpoint: 1, at: now).isEmpty)  // the endpoint's one slot is taken
        let second = try claimWebhooks(perEndpoint: 2, at: now, limit: 1)  // a second slot when two are allowed
        #expect(second.count == 1 && second[0].id != first[0].id)
        #expect(try claimWebhooks(perEndpoint: 2, at: now).isEmpty)
        // Both workers die (kill -9) and record nothing: once their leases have run out the slots are free again, and
        // their messages are claimed again with the next attempt number.
        let after = try claimWebhooks(perEndpoint: 1, at: now.addingTimeInterval(31))
        #expect(after.count == 3)
        #expect(after.first { $0.id == first[0].id }?.attempt == 2 && after.first { $0.id == second[0].id }?.attempt == 2)
        // Mail is another lane: the webhook claims never took it, and its own claim does not wait for them.
        let mails = try pool.withTransaction { try OutboxStore.claimMail(limit: 10, now: now, lease: 30, on: $0) }
        #expect(mails.count == 3 && mails.allSatisfy { $0.channel == .mail && $0.attempt == 1 })
    }

    @Test func aRestingEndpointIsNotClaimedAFailingOneGetsOneProbeAndAReleasedClaimCostsNoAttempt() throws {
        let registered = try register("/ok", events: [.caseOpened])
        let endpoint = registered.endpoint.id
        for _ in 0..<2 { _ = try open(by: client) }
        let now = Date()
        let failures = try pool.withTransaction { connection in
            let failures = try WebhookEndpointStore.recordFailure(id: endpoint, on: connection)
            try WebhookEndpointStore.backOff(id: endpoint, until: now.addingTimeInterval(60), on: connection)
            try WebhookEndpointStore.backOff(id: endpoint, until: now.addingTimeInterval(10), on: connection)  // the later rest stands
            return failures
        }
        #expect(failures == 1)
        #expect(try claimWebhooks(perEndpoint: 2, at: now.addingTimeInterval(59)).isEmpty)
        let end = now.addingTimeInterval(61)
        let probe = try claimWebhooks(perEndpoint: 2, at: end)
        #expect(probe.count == 2)
        #expect(try claimWebhooks(perEndpoint: 2, at: end).isEmpty)  // failing: one claim in flight, though two are allowed
        // Given back unattempted, the batch is as it was: the same attempt numbers and due times on the next claim.
        let released = try pool.withTransaction { connection in try probe.map { try OutboxStore.release($0, on: connection) } }
        #expect(released == [true, true])
        let again = try claimWebhooks(perEndpoint: 2, at: end, limit: 1)
        #expect(again.count == 1 && again[0].id == probe[0].id && again[0].attempt == 1 && again[0].due == probe[0].due)
        // A delivery ends the failures: two claims in flight again.
        try pool.withConnection { try WebhookEndpointStore.recordSuccess(id: endpoint, on: $0) }
        #expect(try claimWebhooks(perEndpoint: 2, at: end, limit: 1).count == 1)
    }
}
