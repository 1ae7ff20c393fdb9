import Foundation
import Postgres

/// What a claim on an idempotency key found.
public enum IdempotencyClaim: Sendable, Equatable {
    /// The key is new (or expired, or abandoned): this request runs and must `complete` or `release` it.
    case claimed
    /// Another request with this key is still running.
    case inProgress(requestHash: [UInt8])
    /// The first request finished: its sealed response.
    case completed(requestHash: [UInt8], sealedResponse: [UInt8], keyID: String)
}

/// The `idempotency_keys` table: one row per (client, key).
public enum IdempotencyKeyStore {
    /// Claims the key for a request (INSERT … ON CONFLICT DO NOTHING, so two concurrent claims cannot both win).
    /// Rows past `expiresAt`, or `running` rows older than `abandonAfter` (their request died), are taken over.
    public static func claim(clientID: UUID, key: String, requestHash: [UInt8], now: Date, lifetime: TimeInterval, abandonAfter: TimeInterval,
                             on connection: PostgresConnection) throws -> IdempotencyClaim {
        let expiresAt = now.addingTimeInterval(lifetime)
        let abandonedBefore = now.addingTimeInterval(-abandonAfter)
        for _ in 0..<2 {
            let inserted = try connection.query("""
                INSERT INTO idempotency_keys (client_id, key, request_hash, state, created_at, expires_at)
                VALUES (\(clientID), \(key), \(requestHash), 'running', \(now), \(expiresAt))
                ON CONFLICT (client_id, key) DO NOTHING
                RETURNING 1
                """)
            if inserted.count == 1 { return .claimed }
            let rows = try connection.query("""
                SELECT request_hash, state, response, response_key_id, expires_at <= \(now) AS expired,
                    state = 'running' AND created_at < \(abandonedBefore) AS abandoned
                FROM idempotency_keys WHERE client_id = \(clientID) AND key = \(key)
                """)
            guard let row = rows.first else { continue }  // released meanwhile: try the insert again
            let storedHash = try row.decode("request_hash", as: [UInt8].self)
            let expired = try row.decode("expired", as: Bool.self)
            let abandoned = try row.decode("abandoned", as: Bool.self)
            if expired || abandoned {
                // Delete exactly the row we looked at, then compete for the key again.
                try connection.execute("""
                    DELETE FROM idempotency_keys WHERE client_id = \(clientID) AND key = \(key)
                    AND (expires_at <= \(now) OR (state = 'running' AND created_at < \(abandonedBefore)))
                    """)
                continue
            }
            if try row.decode("state", as: String.self) == "done", let sealed = try row.decode("response", as: [UInt8]?.self),
               let keyID = try row.decode("response_key_id", as: String?.self) {
                return .completed(requestHash: storedHash, sealedResponse: sealed, keyID: keyID)
            }
            return .inProgress(requestHash: storedHash)
        }
        // Lost the race twice to requests with the same key: report it as running.
        return .inProgress(requestHash: requestHash)
    }

    /// Stores the sealed 2xx response of the request that holds the claim.
    public static func complete(clientID: UUID, key: String, sealedResponse: [UInt8], keyID: String, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE idempotency_keys SET state = 'done', response = \(sealedResponse), response_key_id = \(keyID)
            WHERE client_id = \(clientID) AND key = \(key) AND state = 'running'
            """)
    }

    /// Gives the key up (the request failed: a retry runs again).
    public static func release(clientID: UUID, key: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM idempotency_keys WHERE client_id = \(clientID) AND key = \(key) AND state = 'running'")
    }

    /// Forgets keys older than their lifetime.
    @discardableResult
    public static func purgeExpired(now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM idempotency_keys WHERE expires_at <= \(now)")
    }
}
