import Crypto
import Curl
import Foundation
import HTTPServer
import Logging
import Postgres
import ReclaimCore
import ReclaimOperations
import ReclaimStore
import Synchronization

/// How messages leave: SMTP or .eml files, retry schedules, the webhook rules, the worker's pace.
public struct NotificationSettings: Sendable {
    /// `smtp://host:port` or `smtps://user:pass@host` (`RECLAIM_SMTP_URL`); nil writes .eml files to `mailDirectory`.
    public var smtpURL: String?
    /// The sender (`RECLAIM_MAIL_FROM`).
    public var mailFrom: String
    /// The address replies go to, with the case's `+token` (`RECLAIM_REPLY_ADDRESS`, default the sender).
    public var replyAddress: String?
    /// How a customer reaches support (`RECLAIM_SUPPORT_CONTACT`): the page's sentences that mails repeat, and the mail
    /// that says "call us if this was not you".
    public var supportContact = NotificationSettings.defaultSupportContact
    /// The placeholder contact used when `RECLAIM_SUPPORT_CONTACT` is not set (set it in production).
    public static let defaultSupportContact = "support@reclaim.example"
    /// The service's public base URL, for the status link (`RECLAIM_PUBLIC_URL`).
    public var publicURL: String
    /// Where .eml files go without SMTP (`<data directory>/mail`).
    public var mailDirectory: String
    /// Waits between mail attempts (`RECLAIM_MAIL_RETRY_SCHEDULE`).
    public var mailSchedule: RetrySchedule
    /// Waits between webhook attempts (`RECLAIM_WEBHOOK_RETRY_SCHEDULE`; Standard Webhooks' by default).
    public var webhookSchedule: RetrySchedule
    /// Destinations exempt from the SSRF rules (`RECLAIM_WEBHOOK_ALLOW`).
    public var webhookAllow: WebhookAllowList
    /// A receiver that has not answered in this long has failed (the contract's 15 s).
    public var webhookTimeout: TimeInterval = 15
    /// SMTP's limits on connecting and on the whole exchange.
    public var smtpTimeouts = CurlTimeouts(connectSeconds: 10, totalSeconds: 60)
    /// Threads of this instance that deliver mail and only mail (`RECLAIM_MAIL_THREADS`, default 1; 0: none).
    public var mailThreads: Int = 1
    /// Threads of this instance that deliver webhooks and only webhooks (`RECLAIM_WEBHOOK_THREADS`, default 2; 0: none).
    public var webhookThreads: Int = 2
    /// Most claims in flight to one endpoint across all instances (`RECLAIM_WEBHOOK_PER_ENDPOINT`, default 1, which
    /// also keeps each partner's messages in order); a failing endpoint gets one.
    public var webhookPerEndpoint: Int = 1
    /// How long an endpoint rests after its n-th failure in a row, the last wait repeating (`RECLAIM_WEBHOOK_BACKOFF`);
    /// none of its messages is claimed meanwhile. A delivery ends the rest.
    public var endpointBackoff = RetrySchedule(delays: [5, 30, 60, 300, 900, 1800, 3600])
    /// How long an idle worker waits before looking again: the floor of a mail's latency (an idle claim is one cheap
    /// indexed query, so four a second per thread cost the database nothing noticeable).
    public var pollInterval: TimeInterval = 0.25
    /// How long a claim keeps other workers off the batch's messages while they wait their turn; each message's
    /// lease is renewed to its transfer's timeout plus `leaseMargin` just before it is sent.
    public var lease: TimeInterval = 60
    /// Seconds a renewed lease outlasts the transfer's timeout (recording the result fits in it).
    public var leaseMargin: TimeInterval = 5
    /// Messages claimed at once.
    public var batchSize: Int = 10

    public init(
        smtpURL: String?, mailFrom: String, publicURL: String, mailDirectory: String, mailSchedule: RetrySchedule,
        webhookSchedule: RetrySchedule, webhookAllow: WebhookAllowList
    ) {
        self.smtpURL = smtpURL
        self.mailFrom = mailFrom
        self.publicURL = publicURL
        self.mailDirectory = mailDirectory
        self.mailSchedule = mailSchedule
        self.webhookSchedule = webhookSchedule
        self.webhookAllow = webhookAllow
    }
}

/// What one attempt came to.
enum AttemptOutcome {
    case delivered(status: Int?)
    /// Try again (after at least `retryAfter` seconds when the receiver said so); `receiverAtFault` is false when the
    /// failure was ours (the database), which does not count against a webhook endpoint.
    case failed(status: Int?, error: String, retryAfter: TimeInterval?, receiverAtFault: Bool = true)
    /// Never again (410 Gone, a deleted endpoint, a message that cannot be rendered).
    case abandoned(status: Int?, error: String, disableEndpoint: Bool)
}

/// The outbox's delivery worker: threads of its own (never the HTTP workers) that claim due messages with
/// `FOR UPDATE SKIP LOCKED` under a lease, deliver them, and record each attempt. Every instance runs one; together
/// they deliver each message at least once, with its stable id, and a crash only delays a claimed message. Mail and
/// webhooks go in separate lanes (threads of their own), and a webhook thread's batch is one endpoint's, so neither a
/// customer's mail nor another partner waits behind a partner that hangs.
public final class DeliveryWorker: Sendable {
    public let settings: NotificationSettings
    let pool: PostgresPool
    let keys: KeyFile?
    let logger: Logger
    let now: @Sendable () -> Date
    private let state = Mutex(RunState())
    private let finished = DispatchGroup()

    private struct RunState {
        var running = false
        var stopping = false
    }

    public init(settings: NotificationSettings, pool: PostgresPool, keys: KeyFile?, logger: Logger, now: @escaping @Sendable () -> Date = { Date() })
    {
        self.settings = settings
        self.pool = pool
        self.keys = keys
        self.logger = logger
        self.now = now
    }

    /// Starts the delivery threads; returns at once.
    public func start() {
        let start = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.stopping = false
            return true
        }
        guard start else { return }
        if settings.smtpURL == nil {
            logger.info("mail_to_files", ["directory": .string(settings.mailDirectory)])
        }
        for (lane, count) in [(OutboxChannel.mail, settings.mailThreads), (.webhook, settings.webhookThreads)] {
            for index in 0..<max(0, count) {
                finished.enter()
                let thread = Thread { [self] in
                    loop(lane)
                    finished.leave()
                }
                thread.name = "reclaim-\(lane.rawValue)-\(index)"
                thread.start()
            }
        }
    }

    /// Asks the threads to stop and waits for each to finish its current message (a transfer ends within its timeout).
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            let was = state.running
            state.stopping = true
            state.running = false
            return was
        }
        if wasRunning { finished.wait() }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func loop(_ lane: OutboxChannel) {
        while !stopping {
            var delivered = 0
            do {
                delivered = try runOnce(lane)
            } catch {
                logger.warning("delivery_claim_failed", ["lane": .string(lane.rawValue), "error": .string(String(describing: error))])
            }
            if delivered == 0 { sleepUnlessStopping(settings.pollInterval) }
        }
    }

    private func sleepUnlessStopping(_ seconds: TimeInterval) {
        let end = Date().addingTimeInterval(seconds)
        while !stopping && Date() < end { Thread.sleep(forTimeInterval: min(0.05, seconds)) }
    }

    /// Claims one batch of each lane (or of `lane` only) and delivers it; the number of messages claimed.
    @discardableResult
    public func runOnce(_ lane: OutboxChannel? = nil) throws -> Int {
        var claimed = 0
        if lane != .webhook {
            claimed += deliver(
                try pool.withTransaction { try OutboxStore.claimMail(limit: settings.batchSize, now: now(), lease: settings.lease, on: $0) })
        }
        if lane != .mail {
            claimed += deliver(
                try pool.withTransaction {
                    try OutboxStore.claimWebhooks(
                        limit: settings.batchSize, perEndpoint: max(1, settings.webhookPerEndpoint), now: now(),
                        lease: settings.lease, on: $0)
                })
        }
        return claimed
    }

    /// Delivers a claimed batch in order. A webhook batch is one endpoint's: after a failure the rest goes back
    /// unattempted (the endpoint rests now), as it does when the worker is stopping.
    private func deliver(_ claimed: [OutboxMessage]) -> Int {
        for (index, message) in claimed.enumerated() {
            if stopping {
                release(claimed[index...])
                break
            }
            // The claim's lease covers waiting in the batch; this one covers the transfer, which curl cuts at its timeout.
            // A message another worker claimed meanwhile (our lease ran out) has a new attempt number: skip it.
            let transfer = message.channel == .mail ? settings.smtpTimeouts.totalSeconds : settings.webhookTimeout
            do {
                guard
                    try pool.withConnection({ connection in
                        try OutboxStore.renew(
                            id: message.id, attempt: message.attempt, until: now().addingTimeInterval(transfer + settings.leaseMargin), on: connection
                        )
                    })
                else { continue }
            } catch {
                // Not sent: its lease runs out and it is claimed again.
                logger.warning(
                    "delivery_renew_failed", ["message_id": .string(message.id.uuidString.lowercased()), "error": .string(String(describing: error))])
                continue
            }
            let started = DispatchTime.now().uptimeNanoseconds
            let outcome = attempt(message)
            let milliseconds = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
            do {
                try record(outcome, of: message, milliseconds: milliseconds)
            } catch {
                // The lease will run out and another attempt follow: at least once, never lost.
                logger.warning(
                    "delivery_record_failed",
                    ["message_id": .string(message.id.uuidString.lowercased()), "error": .string(String(describing: error))])
            }
            if message.channel == .webhook, case .failed = outcome {
                release(claimed[(index + 1)...])
                break
            }
        }
        return claimed.count
    }

    /// Gives claimed messages back unattempted (a failure there would only delay them until their lease runs out).
    private func release(_ messages: ArraySlice<OutboxMessage>) {
        guard !messages.isEmpty else { return }
        do {
            try pool.withTransaction { connection in
                for message in messages { try OutboxStore.release(message, on: connection) }
            }
        } catch {
            logger.warning("delivery_release_failed", ["messages": .int(messages.count), "error": .string(String(describing: error))])
        }
    }

    private func record(_ outcome: AttemptOutcome, of message: OutboxMessage, milliseconds: Int) throws {
        let at = now()
        let id = message.id.uuidString.lowercased()
        let schedule = message.channel == .mail ? settings.mailSchedule : settings.webhookSchedule
        try pool.withTransaction { connection in
            switch outcome {
            case .delivered(let status):
                try OutboxStore.recordAttempt(
                    messageID: message.id, at: at, status: status, durationMilliseconds: milliseconds, error: nil, on: connection)
                try OutboxStore.markSent(id: message.id, attempt: message.attempt, now: at, on: connection)
                if let endpoint = message.endpointID { try WebhookEndpointStore.recordSuccess(id: endpoint, on: connection) }
                logger.info(
                    "message_sent",
                    [
                        "message_id": .string(id), "channel": .string(message.channel.rawValue), "kind": .string(message.kind),
                        "attempt": .int(message.attempt),
                    ])
            case .failed(let status, let error, let retryAfter, let receiverAtFault):
                try OutboxStore.recordAttempt(
                    messageID: message.id, at: at, status: status, durationMilliseconds: milliseconds, error: error, on: connection)
                if receiverAtFault, let endpoint = message.endpointID {
                    try backOff(endpoint, at: at, retryAfter: retryAfter, on: connection)
                }
                if let delay = schedule.delay(after: message.attempt, retryAfter: retryAfter) {
                    try OutboxStore.reschedule(
                        id: message.id, attempt: message.attempt, at: at.addingTimeInterval(delay), error: error, on: connection)
                    logger.warning(
                        "message_retry",
                        [
                            "message_id": .string(id), "attempt": .int(message.attempt), "error": .string(error),
                            "retry_in_seconds": .double(delay),
                        ])
                } else {
                    try OutboxStore.markFailed(id: message.id, attempt: message.attempt, error: error, on: connection)
                    logger.error("message_dead_lettered", ["message_id": .string(id), "attempts": .int(message.attempt), "error": .string(error)])
                }
            case .abandoned(let status, let error, let disableEndpoint):
                try OutboxStore.recordAttempt(
                    messageID: message.id, at: at, status: status, durationMilliseconds: milliseconds, error: error, on: connection)
                try OutboxStore.markFailed(id: message.id, attempt: message.attempt, error: error, on: connection)
                if disableEndpoint, let endpoint = message.endpointID {
                    try WebhookEndpointStore.disable(id: endpoint, now: at, on: connection)
                    logger.warning("webhook_endpoint_disabled", ["endpoint_id": .string(endpoint.uuidString.lowercased())])
                }
                logger.error("message_abandoned", ["message_id": .string(id), "error": .string(error)])
            }
        }
    }

    /// Counts the endpoint's failure and rests it for its backoff (at least what its `Retry-After` asked).
    private func backOff(_ endpoint: UUID, at: Date, retryAfter: TimeInterval?, on connection: PostgresConnection) throws {
        let failures = try WebhookEndpointStore.recordFailure(id: endpoint, on: connection)
        let schedule = settings.endpointBackoff
        guard let delay = schedule.delay(after: min(failures, schedule.delays.count), retryAfter: retryAfter), delay > 0 else { return }
        try WebhookEndpointStore.backOff(id: endpoint, until: at.addingTimeInterval(delay), on: connection)
        logger.warning(
            "webhook_endpoint_backoff",
            [
                "endpoint_id": .string(endpoint.uuidString.lowercased()), "failures": .int(failures),
                "rest_seconds": .double(delay),
            ])
    }

    func attempt(_ message: OutboxMessage) -> AttemptOutcome {
        switch message.channel {
        case .mail: deliverMail(message)
        case .webhook: deliverWebhook(message)
        }
    }

    // MARK: Mail

    /// The rendered mail, its secret opened only here (never logged, never stored in clear).
    func renderMail(_ message: OutboxMessage) throws -> MIMEMessage {
        guard case .object(let payload) = try JSONValue.parse(message.payload), case .string(let number)? = payload["case_number"],
            let status = CustomerMailStatus(payload: payload), let kind = CustomerMailKind(rawValue: message.kind), let recipient = message.recipient
        else {
            throw DeliveryError("the message cannot be rendered")
        }
        var language = CustomerLanguage.english
        if case .string(let name)? = payload["language"], let parsed = CustomerLanguage(rawValue: name) { language = parsed }
        var customerReason: CustomerReason?
        if case .string(let word)? = payload["customer_reason"] { customerReason = CustomerReason(rawValue: word) }
        var code: String?
        var stopToken: String?
        if let sealed = message.sealedSecret, let keyID = message.secretKeyID {
            guard let key = keys?.key(id: keyID, purpose: .documents) else {
                throw DeliveryError("the key that sealed the message is not in the key file")
            }
            let symbols = try SecretBox.open(sealed, key: key, associatedData: CaseMessages.secretAssociatedData(message.id))
            if kind.carriesStopLink || kind.carriesCallerCode {
                stopToken = String(decoding: symbols, as: UTF8.self)
            } else {
                code = AccessCode(normalizing: String(decoding: symbols, as: UTF8.self))?.display
            }
        }
        let display = (try? CaseNumber(parsing: number).description) ?? number
        let base = settings.publicURL.hasSuffix("/") ? String(settings.publicURL.dropLast()) : settings.publicURL
        if kind.carriesStopLink {
            guard let stopToken else { throw DeliveryError("the notice has no stop link") }
            var step: UnlockKind?
            if case .string(let word)? = payload["step"] { step = UnlockKind(rawValue: word) }
            var when = ""
            if case .string(let text)? = payload["effective_at"] { when = Self.readableTime(text) }
            return MIMEMessage(
                from: settings.mailFrom, to: recipient, subject: MailText.subject(kind, caseNumber: display, language: language),
                body: MailText.unlockNotice(
                    caseNumber: display, step: step, effectiveAt: when, stopURL: "\(base)/status/stop#\(stopToken)", language: language,
                    contact: settings.supportContact, notices: status.notices),
                messageID: message.id, date: message.createdAt)
        }
        if kind.carriesCallerCode {
            guard let callerCode = stopToken else { throw DeliveryError("the mail has no caller code") }
            var until = ""
            if case .string(let text)? = payload["expires_at"] { until = Self.readableTime(text) }
            return MIMEMessage(
                from: settings.mailFrom, to: recipient, subject: MailText.subject(kind, caseNumber: display, language: language),
                body: MailText.callerCodeBody(
                    caseNumber: display, code: callerCode, expiresAt: until, language: language, contact: settings.supportContact),
                messageID: message.id, date: message.createdAt)
        }
        let link = "\(base)/status?case=\(number)"
        var newAddress = ""
        if case .string(let masked)? = payload["new_address"] { newAddress = masked }
        var mail = MIMEMessage(
            from: settings.mailFrom, to: recipient, subject: MailText.subject(kind, caseNumber: display, language: language),
            body: MailText.body(
                kind, caseNumber: display, status: status, accessCode: code, statusURL: link, language: language,
                contact: settings.supportContact, newAddress: newAddress, customerReason: customerReason),
            messageID: message.id, date: message.createdAt)
        // The reply reaches the case: the token names it and cannot be forged (ReplyToken).
        if let keys, let parsed = try? CaseNumber(parsing: number) {
            mail.replyTo = ReplyToken.address(settings.replyAddress ?? settings.mailFrom, for: parsed, keys: keys)
        }
        return mail
    }

    /// `2026-12-03T07:15:00.000Z` as `2026-12-03 07:15`.
    static func readableTime(_ text: String) -> String {
        guard text.count >= 16 else { return text }
        return String(text.prefix(16)).replacingOccurrences(of: "T", with: " ")
    }

    func deliverMail(_ message: OutboxMessage) -> AttemptOutcome {
        // Before every send, not only when queued: the rescue address may have been recorded since.
        do {
            if try pool.withTransaction({ try CaseMessages.refusesDelivery(message, at: now(), on: $0) }) {
                return .abandoned(status: nil, error: "refused: the address reaches the case's rescue address", disableEndpoint: false)
            }
        } catch {
            return .failed(status: nil, error: "database: \(error)", retryAfter: nil, receiverAtFault: false)
        }
        let mail: MIMEMessage
        do {
            mail = try renderMail(message)
        } catch {
            return .abandoned(status: nil, error: String(describing: error), disableEndpoint: false)
        }
        guard let smtpURL = settings.smtpURL else { return writeFile(mail) }
        do {
            try Curl.sendMail(url: smtpURL, from: settings.mailFrom, to: [mail.to], message: mail.rendered(), timeouts: settings.smtpTimeouts)
            return .delivered(status: nil)
        } catch {
            return .failed(status: nil, error: error.description, retryAfter: nil)
        }
    }

    /// The embedded default: one .eml file per message id (a retry rewrites the same file), written then renamed.
    func writeFile(_ mail: MIMEMessage) -> AttemptOutcome {
        let directory = URL(fileURLWithPath: settings.mailDirectory)
        let name = mail.messageID.uuidString.lowercased() + ".eml"
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temporary = directory.appendingPathComponent("." + name + ".tmp")
            try Data(mail.rendered()).write(to: temporary)
            // rename(2) replaces atomically: a reader never sees half a message, a retry overwrites the same file.
            guard rename(temporary.path, directory.appendingPathComponent(name).path) == 0 else {
                throw DeliveryError("rename failed: errno \(errno)")
            }
            // The file, not the address: a customer's address is personal data the log does not need (the file has it).
            logger.info("mail_written", ["file": .string(directory.appendingPathComponent(name).path)])
            return .delivered(status: nil)
        } catch {
            return .failed(status: nil, error: "cannot write \(name): \(error.localizedDescription)", retryAfter: nil)
        }
    }

    // MARK: Webhooks

    func deliverWebhook(_ message: OutboxMessage) -> AttemptOutcome {
        guard let endpointID = message.endpointID else { return .abandoned(status: nil, error: "no endpoint", disableEndpoint: false) }
        let endpoint: WebhookEndpointRecord
        do {
            guard let found = try pool.withConnection({ try WebhookEndpointStore.find(id: endpointID, on: $0) }) else {
                return .abandoned(status: nil, error: "endpoint not found", disableEndpoint: false)
            }
            endpoint = found
        } catch {
            return .failed(status: nil, error: "database: \(error)", retryAfter: nil, receiverAtFault: false)
        }
        if endpoint.deleted { return .abandoned(status: nil, error: "endpoint deleted", disableEndpoint: false) }
        if endpoint.disabledAt != nil { return .abandoned(status: nil, error: "endpoint disabled (410 Gone)", disableEndpoint: false) }
        let secret: [UInt8]
        do {
            guard let key = keys?.key(id: endpoint.secretKeyID, purpose: .signing) else {
                throw DeliveryError("the key that sealed the secret is not in the key file")
            }
            secret = try SecretBox.open(endpoint.sealedSecret, key: key, associatedData: WebhookSecrets.associatedData(endpoint.id))
        } catch {
            return .abandoned(status: nil, error: String(describing: error), disableEndpoint: false)
        }
        let checked: WebhookDestination.Checked
        do {
            checked = try WebhookDestination.check(endpoint.url, allow: settings.webhookAllow)
        } catch {
            return .failed(status: nil, error: "destination refused: \(error)", retryAfter: nil)
        }
        let body = Array(message.payload.utf8)
        let id = message.id.uuidString.lowercased()
        let timestamp = Int(now().timeIntervalSince1970)
        let headers = [
            ("Content-Type", "application/json"), ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", WebhookSignature.sign(id: id, timestamp: timestamp, body: body, secret: secret)),
        ]
        do {
            let response = try Curl.post(
                url: endpoint.url, headers: headers, body: body,
                timeouts: CurlTimeouts(connectSeconds: min(5, settings.webhookTimeout), totalSeconds: settings.webhookTimeout),
                pin: checked.pin)
            switch response.status {
            case 200..<300: return .delivered(status: response.status)
            case 410: return .abandoned(status: 410, error: "410 Gone: endpoint disabled", disableEndpoint: true)
            default:
                return .failed(
                    status: response.status, error: "HTTP \(response.status)", retryAfter: response.header("retry-after").flatMap(Self.retryAfter))
            }
        } catch {
            return .failed(
                status: nil, error: error.timedOut ? "no answer within \(Int(settings.webhookTimeout)) s" : error.description, retryAfter: nil)
        }
    }

    /// `Retry-After` as seconds (delta-seconds or an HTTP date).
    static func retryAfter(_ value: String) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        return HTTPDate.parse(trimmed).map {
            max(0, Date(timeIntervalSince1970: TimeInterval($0)).timeIntervalSinceNow)
        }
    }
}

/// A delivery that cannot proceed, in words for the attempt log (never a secret).
struct DeliveryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Webhook secrets at rest: sealed with the `signing` key, bound to the endpoint id.
public enum WebhookSecrets {
    /// The associated data of an endpoint's sealed secret.
    public static func associatedData(_ endpointID: UUID) -> [UInt8] { Array("webhook:\(endpointID.uuidString.lowercased())".utf8) }

    /// A new secret, shown once, and its sealed form for the database.
    public static func make(endpointID: UUID, keys: KeyFile) -> (text: String, sealed: [UInt8], keyID: String) {
        let secret = WebhookSignature.newSecret()
        let key = keys.activeKey(for: .signing)
        return (secret.text, SecretBox.seal(secret.bytes, key: key.key, associatedData: associatedData(endpointID)), key.id)
    }
}
