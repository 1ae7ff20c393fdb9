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

/// Webhooks end to end: the operations queue them for the client that opened (or filed into) the case, the worker
/// signs them, and a receiver verifies each with the Standard Webhooks reference library (PyPI `standardwebhooks`).
@Suite(.serialized) final class WebhookDeliveryTests {
    let database: TestDatabase
    let pool: PostgresPool
    let keys = KeyFile.generate()
    let operations: CaseOperations
    let directory: String
    let receiver: PythonHelper
    let secretsFile: String
    let logFile: String
    let clientID = UUID()
    var client: String { "client:\(clientID.uuidString.lowercased())" }

    init() throws {
        database = try TestDatabase.create()
        pool = database.makePool()
        operations = CaseOperations(keys: keys)
        directory = try temporaryDirectory()
        secretsFile = directory + "/secrets"
        logFile = directory + "/log"
        FileManager.default.createFile(atPath: secretsFile, contents: nil)
        receiver = try PythonHelper("webhook_receiver.py", [secretsFile, logFile])
        let id = clientID
        try pool.withTransaction { connection in
            try APIClientStore.insert(
                id: id, name: "Partner", keyHash: SecureRandom.bytes(32), sealedSigningSecret: [1], signingKeyID: "signing-1",
                now: Date(), on: connection)
        }
    }

    deinit {
        receiver.stop()
        pool.close()
        database.drop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Registers an endpoint on the receiver's `path` and tells the receiver its secret.
    @discardableResult
    func register(_ path: String, events: [WebhookEvent] = WebhookEvent.allCases, client: UUID? = nil) throws -> WebhookRegistry.Registered {
        let url = "http://127.0.0.1:\(receiver.port)\(path)"
        let registered = try pool.withTransaction { connection in
            try WebhookRegistry.register(
                url: url, events: events.map(\.rawValue), clientID: client ?? clientID, keys: keys,
                allow: WebhookAllowList(parsing: "127.0.0.1"), at: Date(), on: connection)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: secretsFile))
        handle.seekToEndOfFile()
        handle.write(Data((registered.secret + "\n").utf8))
        try handle.close()
        return registered
    }

    struct Received: Decodable {
        let path: String
        let id: String?
        let verified: Bool
        let body: String
        /// Requests to the same path the receiver was answering when this one arrived, this one included.
        let inFlight: Int

        enum CodingKeys: String, CodingKey {
            case path, id, verified, body
            case inFlight = "in_flight"
        }
    }

    func received() -> [Received] {
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Received.self, from: Data($0.utf8)) }
    }

    func worker(_ configure: (inout NotificationSettings) -> Void = { _ in }) -> DeliveryWorker {
        var settings = testSettings(directory: directory, schedule: [0.1, 0.1])
        configure(&settings)
        return DeliveryWorker(settings: settings, pool: pool, keys: keys, logger: .discard)
    }

    func open(by actor: String) throws -> CaseOperations.Opened {
        try pool.withTransaction { try operations.open(opening(), by: actor, at: Date(), on: $0) }
    }

    func webhookStates() throws -> [String] {
        try pool.withConnection {
            try $0.query("SELECT state FROM outbox WHERE channel = 'webhook' ORDER BY created_at").map { try $0.decode("state") }
        }
    }

    @Test func everyEventOfTheContractArrivesSignedAndVerified() throws {
        try register("/ok")
        let opened = try open(by: client)
        let number = try CaseNumber(parsing: opened.record.number)
        let agent = "agent:00000000-0000-0000-0000-000000000001"
        let evidence = try pool.withTransaction {
            try operations.fileTyped(.device(try SerialNumber.validate("C02XK1ZJH3QD").get(), nil), number: number, by: client, at: Date(), on: $0)
        }
        _ = try pool.withTransaction {
            try operations.review(evidence: evidence.id, decision: .accepted, reason: "Matches", actorTier: .tier2, by: agent, at: Date(), on: $0)
        }
        _ = try pool.withTransaction { try operations.addNote(number, body: "hidden", visibility: .internal, by: agent, at: Date(), on: $0) }
        _ = try pool.withTransaction { try operations.addNote(number, body: "Hello", visibility: .customer, by: agent, at: Date(), on: $0) }
        _ = try pool.withTransaction {
            try operations.transition(number, expectedVersion: nil, .init(action: .escalate), actorTier: .tier1, by: agent, at: Date(), on: $0)
        }
        // A case the client neither opened nor filed into sends it nothing.
        _ = try open(by: agent)
        let delivery = worker()
        delivery.start()
        defer { delivery.stop() }
        #expect(eventually { self.received().count == 5 })
        delivery.stop()  // its threads have ended: nothing more is on its way
        let got = received()
        #expect(got.count == 5)
        #expect(got.allSatisfy { $0.verified })
        let types = got.compactMap { try? JSONValue.parse($0.body) }.compactMap { value -> String? in
            guard case .object(let members) = value, case .string(let type)? = members["type"] else { return nil }
            return type
        }
        #expect(types == ["case.opened", "evidence.filed", "evidence.reviewed", "note.added", "case.state_changed"])
        #expect(
            got.allSatisfy { $0.body.contains(opened.record.number) && !$0.body.contains(opened.accessCode.symbols) && !$0.body.contains("Hello") })
        #expect(Set(got.compactMap(\.id)).count == 5)
        #expect(try webhookStates() == Array(repeating: "sent", count: 5))
    }

    @Test func aReceiverAnswering500IsRetriedThenDeadLettered() throws {
        try register("/fail", events: [.caseOpened])
        _ = try open(by: client)
        let delivery = worker()
        delivery.start()
        defer { delivery.stop() }
        #expect(try eventually { try self.webhookStates() == ["failed"] })
        let got = received()
        #expect(got.count == 3)  // the first attempt and the schedule's two retries
        #expect(Set(got.compactMap(\.id)).count == 1)  // the same webhook-id on every attempt
        #expect(got.allSatisfy { $0.verified })
    }

    @Test func aReceiverThatDoesNotAnswerTimesOutAndIsRetried() throws {
        try register("/slow", events: [.caseOpened])
        _ = try open(by: client)
        let delivery = worker {
            $0.webhookTimeout = 1
            $0.webhookSchedule = RetrySchedule(delays: [0.1])
        }
        delivery.start()
        defer { delivery.stop() }
        #expect(try eventually(15) { try self.webhookStates() == ["failed"] })
        let errors = try pool.withConnection {
            try $0.query("SELECT a.error FROM outbox_attempts a JOIN outbox o ON o.id = a.message_id WHERE o.channel = 'webhook'").map {
                try $0.decode("error", as: String?.self)
            }
        }
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0?.contains("no answer within 1 s") == true })
    }

    @Test func gone410DisablesTheEndpoint() throws {
        let registered = try register("/gone", events: [.caseOpened, .noteAdded])
        let opened = try open(by: client)
        let delivery = worker()
        delivery.start()
        defer { delivery.stop() }
        #expect(try eventually { try self.webhookStates() == ["failed"] })
        let endpoint = try pool.withConnection { try WebhookEndpointStore.find(id: registered.endpoint.id, on: $0) }
        #expect(endpoint?.disabledAt != nil)
        // Nothing more is queued for it.
        _ = try pool.withTransaction {
            try operations.addNote(try CaseNumber(parsing: opened.record.number), body: "x", visibility: .customer, by: "agent:x", at: Date(), on: $0)
        }
        delivery.stop()  // whatever it would have sent is sent
        #expect(received().count == 1)
        #expect(try webhookStates() == ["failed"])
    }

    @Test func retryAfterIsHonoured() throws {
        try register("/retry-after", events: [.caseOpened])
        _ = try open(by: client)
        let delivery = worker()
        let started = Date()
        try delivery.runOnce()
        let next = try pool.withConnection {
            try $0.query("SELECT next_attempt_at FROM outbox WHERE channel = 'webhook'").first!.decode("next_attempt_at", as: Date.self)
        }
        let log = try pool.withConnection {
            try $0.query("SELECT coalesce(error, '') || ' ' || coalesce(status::text, '') AS e FROM outbox_attempts").map {
                try $0.decode("e", as: String.self)
            }
        }
        #expect(next.timeIntervalSince(started) >= 1.9, "\(log)")  // the schedule says 0.1 s, the receiver 2 s
    }

    @Test func aDestinationThatTurnsPrivateIsRefusedAtDelivery() throws {
        try register("/ok", events: [.caseOpened])
        _ = try open(by: client)
        let delivery = worker { $0.webhookAllow = .none }  // the operator took 127.0.0.1 off the allow list
        try delivery.runOnce()
        #expect(received().isEmpty)
        let error = try pool.withConnection {
            try $0.query("SELECT a.error FROM outbox_attempts a JOIN outbox o ON o.id = a.message_id WHERE o.channel = 'webhook'").first?.decode(
                "error", as: String?.self)
        }
        #expect(error?.contains("destination refused") == true)
    }

    /// An IPv6 literal the operator allowed is delivered to (curl cannot pin one: the literal needs no pin).
    @Test func anAllowedIPv6LiteralIsDeliveredEndToEnd() throws {
        let v6 = try PythonHelper("webhook_receiver.py", [secretsFile, logFile, "::1"])
        defer { v6.stop() }
        let allow = WebhookAllowList(parsing: "::1")
        let registered = try pool.withTransaction { connection in
            try WebhookRegistry.register(
                url: "http://[::1]:\(v6.port)/ok", events: [WebhookEvent.caseOpened.rawValue], clientID: clientID, keys: keys,
                allow: allow, at: Date(), on: connection)
        }
        try Data((registered.secret + "\n").utf8).write(to: URL(fileURLWithPath: secretsFile))
        _ = try open(by: client)
        let delivery = worker { $0.webhookAllow = allow }
        try delivery.runOnce()
        #expect(received().map(\.path) == ["/ok"])
        #expect(received().allSatisfy { $0.verified })
        #expect(try webhookStates() == ["sent"])
    }

    @Test func theSecretIsSealedAtRest() throws {
        let registered = try register("/ok")
        #expect(registered.secret.hasPrefix("whsec_"))
        let secretBytes = try #require(Data(base64Encoded: String(registered.secret.dropFirst(6))))
        let stored = try pool.withConnection {
            try $0.query("SELECT secret_sealed FROM webhook_endpoints").first!.decode("secret_sealed", as: [UInt8].self)
        }
        #expect(stored.count == secretBytes.count + SecretBox.overhead)
        #expect(!Data(stored).range(of: secretBytes).map { _ in true }.isSome)
    }
}

extension Optional {
    var isSome: Bool { self != nil }
}
