import Foundation
import Postgres

/// How a message leaves the service.
public enum OutboxChannel: String, Sendable, CaseIterable {
    case mail
    case webhook
}

/// Where a message stands: waiting (first try or a retry), delivered, or given up after the schedule (dead letter).
public enum OutboxState: String, Sendable, CaseIterable {
    case queued
    case sent
    case failed
}

/// A message to write in the caller's transaction.
public struct NewOutboxMessage: Sendable {
    public var id: UUID
    public var channel: OutboxChannel
    public var caseID: UUID?
    public var recipient: String?
    public var kind: String
    public var payload: JSONValue
    /// A secret the message carries, already sealed, with the id of the key that sealed it.
    public var sealedSecret: (bytes: [UInt8], keyID: String)?

    public init(
        id: UUID = UUID(), channel: OutboxChannel, caseID: UUID?, recipient: String?, kind: String, payload: JSONValue,
        sealedSecret: (bytes: [UInt8], keyID: String)? = nil
    ) {
        self.id = id
        self.channel = channel
        self.caseID = caseID
        self.recipient = recipient
        self.kind = kind
        self.payload = payload
        self.sealedSecret = sealedSecret
    }
}

/// A message the worker claimed: `attempt` is this try's number (1 for the first), the guard of every update.
public struct OutboxMessage: Sendable {
    public let id: UUID
    public let channel: OutboxChannel
    public let caseID: UUID?
    public let endpointID: UUID?
    public let recipient: String?
    public let kind: String
    /// The stored payload text (for a webhook, the exact body that is signed).
    public let payload: String
    public let sealedSecret: [UInt8]?
    public let secretKeyID: String?
    public let attempt: Int
    public let createdAt: Date
    /// When the message was due before this claim (a released claim restores it).
    public let due: Date
}

/// One delivery attempt, as the deliveries log shows it.
public struct OutboxAttempt: Sendable {
    public let attemptedAt: Date
    public let status: Int?
    public let durationMilliseconds: Int
    public let error: String?
}

/// A message as the dashboard and the deliveries log show it (never its body).
public struct OutboxEntry: Sendable {
    public let id: UUID
    public let channel: OutboxChannel
    public let recipient: String?
    public let endpointID: UUID?
    public let kind: String
    public let state: OutboxState
    public let attempts: Int
    public let createdAt: Date
    public let sentAt: Date?
    public let nextAttemptAt: Date
    public let lastError: String?
}

/// A case's message with where it went: for a webhook, the endpoint's URL and its API client's name.
public struct CaseMessageEntry: Sendable {
    public let entry: OutboxEntry
    public let endpointURL: String?
    public let clientName: String?
}

/// Counts for `/metrics`, across every instance (read from the table).
public struct OutboxStatistics: Sendable, Equatable {
    public let queued: Int
    public let sent: Int
    public let failed: Int
    /// Seconds since the oldest queued message was written, 0 when none waits.
    public let oldestQueuedSeconds: Double
}

/// The `outbox` and `outbox_attempts` tables: messages written with the change that caused them, claimed by the
/// delivery workers with `FOR UPDATE SKIP LOCKED`.
public enum OutboxStore {
    /// Writes one message, due at once.
    /// Sent with the transaction's next statement that needs an answer, or with its COMMIT (`executeLater`).
    public static func insert(_ message: NewOutboxMessage, now: Date, on connection: PostgresConnection) throws {
        try connection.executeLater(
            """
            INSERT INTO outbox (id, channel, case_id, recipient, kind, payload, secret_sealed, secret_key_id, next_attempt_at, created_at)
            VALUES (\(message.id), \(message.channel.rawValue), \(message.caseID), \(message.recipient), \(message.kind), \(message.payload.canonical),
                    \(message.sealedSecret?.bytes), \(message.sealedSecret?.keyID), \(now), \(now))
            """)
    }

    /// Writes one webhook message per live endpoint subscribed to `event` whose client opened the case or filed
    /// evidence into it; each gets its own message id. Sent with the transaction's next statement that needs an
    /// answer, or with its COMMIT (`executeLater`).
    public static func insertWebhooks(event: String, caseID: UUID, body: String, now: Date, on connection: PostgresConnection) throws {
        try connection.executeLater(
            """
            INSERT INTO outbox (id, channel, case_id, endpoint_id, kind, payload, next_attempt_at, created_at)
            SELECT gen_random_uuid(), 'webhook', \(caseID), e.id, \(event), \(body), \(now), \(now)
            FROM webhook_endpoints e
            WHERE e.deleted_at IS NULL AND e.disabled_at IS NULL AND \(event) = ANY (e.events)
              AND 'client:' || e.client_id::text IN (
                  SELECT created_by FROM cases WHERE id = \(caseID)
                  UNION SELECT filed_by FROM evidence WHERE case_id = \(caseID))
            """)
    }

    /// Writes one webhook message, about no case, per live endpoint of any client subscribed to `event` (the log's
    /// checkpoints: every partner may hold them). Returns how many were written.
    @discardableResult
    public static func insertWebhooks(event: String, body: String, now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute(
            """
            INSERT INTO outbox (id, channel, endpoint_id, kind, payload, next_attempt_at, created_at)
            SELECT gen_random_uuid(), 'webhook', e.id, \(event), \(body), \(now), \(now)
            FROM webhook_endpoints e
            WHERE e.deleted_at IS NULL AND e.disabled_at IS NULL AND \(event) = ANY (e.events)
            """)
    }

    static let claimedColumns: PostgresQuery = """
        o.id, o.channel, o.case_id, o.endpoint_id, o.recipient, o.kind, o.payload, o.secret_sealed, o.secret_key_id, o.attempts, o.created_at, c.due
        """

    /// Claims up to `limit` due mails for `lease` seconds: each claim counts an attempt and moves the message's next try
    /// past the lease, committed at once, so another worker skips it and a worker that dies mid-delivery only delays
    /// it. Webhooks are never claimed here: mail does not wait behind a partner. Run it in a transaction of its own.
    public static func claimMail(limit: Int, now: Date, lease: TimeInterval, on connection: PostgresConnection) throws -> [OutboxMessage] {
        let leaseEnd = now.addingTimeInterval(lease)
        return try decodeClaimed(
            connection.query(
                """
                UPDATE outbox o SET attempts = o.attempts + 1, next_attempt_at = \(leaseEnd), leased_until = \(leaseEnd), lease_holder = \(UUID())
                FROM (SELECT id, next_attempt_at AS due FROM outbox WHERE channel = 'mail' AND state = 'queued' AND next_attempt_at <= \(now)
                      ORDER BY next_attempt_at, created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED) c
                WHERE o.id = c.id
                RETURNING \(claimedColumns)
                """))
    }

    /// Claims up to `limit` due webhooks of one endpoint for `lease` seconds, as `claimMail` does, when that endpoint has
    /// fewer than `perEndpoint` live claims (one while it is failing: a single probe) and is not backing off. The endpoint
    /// is the one whose due message is oldest among those free; its row is locked for the claim, so claims of one
    /// endpoint are counted one after the other across instances. Empty when no endpoint is free. Run it in a
    /// transaction of its own.
    public static func claimWebhooks(
        limit: Int, perEndpoint: Int, now: Date, lease: TimeInterval,
        on connection: PostgresConnection
    ) throws -> [OutboxMessage] {
        // The candidates' live claims are counted with this statement's snapshot, taken before the lock: a hint that
        // skips full endpoints. The claim below counts again, in a snapshot taken after the lock, which is exact.
        guard
            let endpoint = try connection.query(
                """
                SELECT e.id, CASE WHEN e.delivery_failures > 0 THEN 1 ELSE \(perEndpoint) END AS cap
                FROM webhook_endpoints e
                WHERE (e.backoff_until IS NULL OR e.backoff_until <= \(now))
                  AND EXISTS (SELECT 1 FROM outbox o WHERE o.endpoint_id = e.id AND o.channel = 'webhook' AND o.state = 'queued'
                              AND o.next_attempt_at <= \(now))
                  AND (SELECT count(DISTINCT h.lease_holder) FROM outbox h WHERE h.endpoint_id = e.id AND h.state = 'queued'
                       AND h.leased_until > \(now)) < CASE WHEN e.delivery_failures > 0 THEN 1 ELSE \(perEndpoint) END
                ORDER BY (SELECT min(o.next_attempt_at) FROM outbox o WHERE o.endpoint_id = e.id AND o.channel = 'webhook'
                          AND o.state = 'queued' AND o.next_attempt_at <= \(now)), e.id
                LIMIT 1 FOR NO KEY UPDATE OF e SKIP LOCKED
                """
            ).first
        else { return [] }
        let endpointID: UUID = try endpoint.decode("id")
        let cap: Int = try endpoint.decode("cap")
        let leaseEnd = now.addingTimeInterval(lease)
        return try decodeClaimed(
            connection.query(
                """
                UPDATE outbox o SET attempts = o.attempts + 1, next_attempt_at = \(leaseEnd), leased_until = \(leaseEnd), lease_holder = \(UUID())
                FROM (SELECT id, next_attempt_at AS due FROM outbox WHERE endpoint_id = \(endpointID) AND channel = 'webhook' AND state = 'queued'
                      AND next_attempt_at <= \(now) ORDER BY next_attempt_at, created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED) c
                WHERE o.id = c.id
                  AND (SELECT count(DISTINCT h.lease_holder) FROM outbox h WHERE h.endpoint_id = \(endpointID) AND h.state = 'queued'
                       AND h.leased_until > \(now)) < \(cap)
                RETURNING \(claimedColumns)
                """))
    }

    /// Gives a claimed message back unattempted (its batch's endpoint failed before its turn): the claim's attempt is
    /// uncounted and its due time restored, so a resting endpoint does not spend its messages' retries.
    @discardableResult
    public static func release(_ message: OutboxMessage, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET attempts = attempts - 1, next_attempt_at = \(message.due), leased_until = NULL, lease_holder = NULL
            WHERE id = \(message.id) AND attempts = \(message.attempt) AND state = 'queued'
            """) == 1
    }

    /// RETURNING keeps no order: deliver in the order the changes were made (the opening mail before the news).
    static func decodeClaimed(_ rows: PostgresRows) throws -> [OutboxMessage] {
        try rows.map { row in
            OutboxMessage(
                id: try row.decode("id"), channel: OutboxChannel(rawValue: try row.decode("channel")) ?? .mail,
                caseID: try row.decode("case_id"), endpointID: try row.decode("endpoint_id"), recipient: try row.decode("recipient"),
                kind: try row.decode("kind"), payload: try row.decode("payload"), sealedSecret: try row.decode("secret_sealed"),
                secretKeyID: try row.decode("secret_key_id"), attempt: try row.decode("attempts"), createdAt: try row.decode("created_at"),
                due: try row.decode("due"))
        }.sorted { $0.createdAt < $1.createdAt }
    }

    /// Records one attempt in the log.
    public static func recordAttempt(
        messageID: UUID, at: Date, status: Int?, durationMilliseconds: Int, error: String?,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO outbox_attempts (message_id, attempted_at, status, duration_ms, error)
            VALUES (\(messageID), \(at), \(status), \(durationMilliseconds), \(error))
            """)
    }

    /// Renews a claimed message's lease to `until` just before its transfer; false when the claim was lost (the claim's
    /// lease ran out while earlier messages of the batch were delivered, and another worker claimed it): skip it then.
    public static func renew(id: UUID, attempt: Int, until: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET next_attempt_at = \(until), leased_until = \(until) WHERE id = \(id) AND attempts = \(attempt) AND state = 'queued'
            """) == 1
    }

    /// Marks a claimed message delivered; false when the claim was lost (the lease ran out and another worker took it).
    @discardableResult
    public static func markSent(id: UUID, attempt: Int, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET state = 'sent', sent_at = \(now), last_error = NULL, leased_until = NULL, lease_holder = NULL WHERE id = \(id) AND attempts = \(attempt) AND state = 'queued'
            """) == 1
    }

    /// Schedules the next try of a claimed message.
    @discardableResult
    public static func reschedule(id: UUID, attempt: Int, at next: Date, error: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET next_attempt_at = \(next), last_error = \(error), leased_until = NULL, lease_holder = NULL WHERE id = \(id) AND attempts = \(attempt) AND state = 'queued'
            """) == 1
    }

    /// Gives up on a claimed message (the schedule is spent, the endpoint is gone): the dead-letter state.
    @discardableResult
    public static func markFailed(id: UUID, attempt: Int, error: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET state = 'failed', last_error = \(error), leased_until = NULL, lease_holder = NULL WHERE id = \(id) AND attempts = \(attempt) AND state = 'queued'
            """) == 1
    }

    /// Queues a webhook message of `endpointID` again, due now (a manual retry); false when there is no such message.
    public static func requeue(id: UUID, endpointID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE outbox SET state = 'queued', next_attempt_at = \(now), attempts = 0, sent_at = NULL, leased_until = NULL, lease_holder = NULL
            WHERE id = \(id) AND endpoint_id = \(endpointID)
            """) == 1
    }

    /// Counts by state and the age of the oldest queued message.
    public static func statistics(now: Date, on connection: PostgresConnection) throws -> OutboxStatistics {
        let row = try connection.query(
            """
            SELECT count(*) FILTER (WHERE state = 'queued') AS queued, count(*) FILTER (WHERE state = 'sent') AS sent,
                   count(*) FILTER (WHERE state = 'failed') AS failed, min(created_at) FILTER (WHERE state = 'queued') AS oldest
            FROM outbox
            """
        ).first
        let oldest: Date? = try row?.decode("oldest")
        return OutboxStatistics(
            queued: try row?.decode("queued") ?? 0, sent: try row?.decode("sent") ?? 0, failed: try row?.decode("failed") ?? 0,
            oldestQueuedSeconds: oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }

    /// The columns `decodeEntries` reads, of the outbox aliased `o`.
    static let entryColumns: PostgresQuery =
        "o.id, o.channel, nullif(o.recipient, '') AS recipient, o.endpoint_id, o.kind, o.state, o.attempts, o.created_at, o.sent_at, o.next_attempt_at, o.last_error"

    /// The messages of a case, oldest first (what was sent to whom and when; no bodies).
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [OutboxEntry] {
        try decodeEntries(
            connection.query(
                """
                SELECT \(entryColumns) FROM outbox o WHERE o.case_id = \(caseID) ORDER BY o.created_at, o.id
                """))
    }

    /// The messages of a case, oldest first (mail before webhooks of the same moment), each webhook with its endpoint's
    /// URL and client's name, deleted endpoints too (what was sent stays on record). No bodies.
    public static func listWithDestinations(caseID: UUID, on connection: PostgresConnection) throws -> [CaseMessageEntry] {
        let rows = try connection.query(
            """
            SELECT \(entryColumns), e.url AS endpoint_url, c.name AS client_name
            FROM outbox o LEFT JOIN webhook_endpoints e ON e.id = o.endpoint_id LEFT JOIN api_clients c ON c.id = e.client_id
            WHERE o.case_id = \(caseID) ORDER BY o.created_at, o.channel, o.id
            """)
        let entries = try decodeEntries(rows)
        return try zip(entries, rows).map { entry, row in
            CaseMessageEntry(entry: entry, endpointURL: try row.decode("endpoint_url"), clientName: try row.decode("client_name"))
        }
    }

    /// The latest messages to an endpoint, newest first.
    public static func list(endpointID: UUID, limit: Int, on connection: PostgresConnection) throws -> [OutboxEntry] {
        try decodeEntries(
            connection.query(
                """
                SELECT \(entryColumns) FROM outbox o WHERE o.endpoint_id = \(endpointID) ORDER BY o.created_at DESC, o.id LIMIT \(limit)
                """))
    }

    /// The attempts of the given messages, oldest first, by message.
    public static func attempts(messageIDs: [UUID], on connection: PostgresConnection) throws -> [UUID: [OutboxAttempt]] {
        guard !messageIDs.isEmpty else { return [:] }
        var result: [UUID: [OutboxAttempt]] = [:]
        let rows = try connection.query(
            """
            SELECT message_id, attempted_at, status, duration_ms, error FROM outbox_attempts
            WHERE message_id = ANY (\(messageIDs)) ORDER BY attempted_at, id
            """)
        for row in rows {
            let id: UUID = try row.decode("message_id")
            result[id, default: []].append(
                OutboxAttempt(
                    attemptedAt: try row.decode("attempted_at"), status: try row.decode("status"),
                    durationMilliseconds: try row.decode("duration_ms"), error: try row.decode("error")))
        }
        return result
    }

    static func decodeEntries(_ rows: PostgresRows) throws -> [OutboxEntry] {
        try rows.map { row in
            OutboxEntry(
                id: try row.decode("id"), channel: OutboxChannel(rawValue: try row.decode("channel")) ?? .mail,
                recipient: try row.decode("recipient"), endpointID: try row.decode("endpoint_id"), kind: try row.decode("kind"),
                state: OutboxState(rawValue: try row.decode("state")) ?? .queued, attempts: try row.decode("attempts"),
                createdAt: try row.decode("created_at"), sentAt: try row.decode("sent_at"), nextAttemptAt: try row.decode("next_attempt_at"),
                lastError: try row.decode("last_error"))
        }
    }
}
