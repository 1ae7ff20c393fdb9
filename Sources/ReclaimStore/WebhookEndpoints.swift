import Foundation
import Postgres

/// A webhook endpoint row: the secret only sealed.
public struct WebhookEndpointRecord: Sendable {
    public let id: UUID
    public let clientID: UUID
    public let url: String
    public let events: [String]
    /// The secret's bytes sealed with the `signing` key (associated data: the endpoint id).
    public let sealedSecret: [UInt8]
    public let secretKeyID: String
    public let createdAt: Date
    public let disabledAt: Date?
    public let deleted: Bool
}

/// The `webhook_endpoints` table.
public enum WebhookEndpointStore {
    /// Inserts a new endpoint.
    public static func insert(
        id: UUID, clientID: UUID, url: String, events: [String], sealedSecret: [UInt8], secretKeyID: String, now: Date,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO webhook_endpoints (id, client_id, url, events, secret_sealed, secret_key_id, created_at)
            VALUES (\(id), \(clientID), \(url), \(events), \(sealedSecret), \(secretKeyID), \(now))
            """)
    }

    static let columns: PostgresQuery =
        "id, client_id, url, array_to_string(events, ',') AS events, secret_sealed, secret_key_id, created_at, disabled_at, deleted_at IS NOT NULL AS deleted"

    /// The client's endpoints (not deleted), oldest first.
    public static func list(clientID: UUID, on connection: PostgresConnection) throws -> [WebhookEndpointRecord] {
        try decode(
            connection.query(
                """
                SELECT \(columns) FROM webhook_endpoints WHERE client_id = \(clientID) AND deleted_at IS NULL ORDER BY created_at, id
                """))
    }

    /// The endpoint with `id`, deleted ones too (the worker refuses them); `clientID` limits it to one client's.
    public static func find(id: UUID, clientID: UUID? = nil, on connection: PostgresConnection) throws -> WebhookEndpointRecord? {
        let rows =
            if let clientID {
                try connection.query(
                    """
                    SELECT \(columns) FROM webhook_endpoints WHERE id = \(id) AND client_id = \(clientID) AND deleted_at IS NULL
                    """)
            } else {
                try connection.query("SELECT \(columns) FROM webhook_endpoints WHERE id = \(id)")
            }
        return try decode(rows).first
    }

    /// Deletes the client's endpoint (kept for the log, never sent to again); its queued messages fail. False when none.
    public static func delete(id: UUID, clientID: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        guard
            try connection.execute(
                """
                UPDATE webhook_endpoints SET deleted_at = \(now) WHERE id = \(id) AND client_id = \(clientID) AND deleted_at IS NULL
                """) == 1
        else { return false }
        try connection.execute(
            """
            UPDATE outbox SET state = 'failed', last_error = 'endpoint deleted' WHERE endpoint_id = \(id) AND state = 'queued'
            """)
        return true
    }

    /// Disables an endpoint whose receiver answered 410 Gone; its other queued messages fail.
    public static func disable(id: UUID, now: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE webhook_endpoints SET disabled_at = \(now) WHERE id = \(id) AND disabled_at IS NULL")
        try connection.execute(
            """
            UPDATE outbox SET state = 'failed', last_error = 'endpoint disabled (410 Gone)' WHERE endpoint_id = \(id) AND state = 'queued'
            """)
    }

    /// Counts a failed delivery to the endpoint (across instances); the failures in a row, this one included.
    public static func recordFailure(id: UUID, on connection: PostgresConnection) throws -> Int {
        try connection.query(
            """
            UPDATE webhook_endpoints SET delivery_failures = delivery_failures + 1 WHERE id = \(id) RETURNING delivery_failures
            """
        ).first?.decode("delivery_failures") ?? 0
    }

    /// Rests the endpoint until `until`: none of its messages is claimed before then (a later rest is kept).
    public static func backOff(id: UUID, until: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE webhook_endpoints SET backoff_until = greatest(backoff_until, \(until)) WHERE id = \(id)
            """)
    }

    /// Ends the endpoint's rest at once (its client asked for a retry: the receiver is said to be back); the failures
    /// stand, so one probe goes first.
    public static func endRest(id: UUID, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE webhook_endpoints SET backoff_until = NULL WHERE id = \(id) AND backoff_until IS NOT NULL")
    }

    /// Clears the endpoint's failures and rest after a delivery (writes nothing when it was healthy already).
    public static func recordSuccess(id: UUID, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE webhook_endpoints SET delivery_failures = 0, backoff_until = NULL
            WHERE id = \(id) AND (delivery_failures <> 0 OR backoff_until IS NOT NULL)
            """)
    }

    static func decode(_ rows: PostgresRows) throws -> [WebhookEndpointRecord] {
        try rows.map { row in
            WebhookEndpointRecord(
                id: try row.decode("id"), clientID: try row.decode("client_id"), url: try row.decode("url"),
                events: (try row.decode("events", as: String.self)).split(separator: ",").map(String.init),
                sealedSecret: try row.decode("secret_sealed"),
                secretKeyID: try row.decode("secret_key_id"), createdAt: try row.decode("created_at"),
                disabledAt: try row.decode("disabled_at"), deleted: try row.decode("deleted"))
        }
    }
}
