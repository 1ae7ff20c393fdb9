import Foundation
import Postgres

/// Whose key space an idempotency key lives in.
public enum IdempotencyOwner: Sendable, Hashable {
    case apiClient(UUID)
    case agent(UUID)

    var kind: String {
        switch self {
        case .apiClient: "api_client"
        case .agent: "agent"
        }
    }

    var id: UUID {
        switch self {
        case .apiClient(let id), .agent(let id): id
        }
    }
}

/// A committed, unexpired key: the first request's hash and, once done, its sealed response.
public struct IdempotencyRecord: Sendable, Equatable {
    public let requestHash: [UInt8]
    /// Nil for a `running` row, which only a process that died before this build's scheme leaves behind.
    public let sealedResponse: [UInt8]?
    public let keyID: String?
}

/// What locking a key inside the caller's transaction found.
public enum IdempotencyLock: Sendable, Equatable {
    /// The key is this transaction's: do the work, then `complete` (2xx) or `release` it before COMMIT.
    case acquired
    /// A request with this key committed first: its hash and sealed response (replay, or refuse a mismatch).
    case completed(requestHash: [UInt8], sealedResponse: [UInt8], keyID: String)
}

/// The `idempotency_keys` table: one row per (owner, key).
///
/// A key is locked, used and completed in the transaction of the change it guards (`lock` … `complete`, then
/// COMMIT): a crash at any instant rolls back the row with the change, so a retry either finds the stored
/// answer or runs the work once. A concurrent retry waits on the row lock until the first commits or rolls back.
public enum IdempotencyKeyStore {
    /// The committed row for a key, if unexpired (no lock: a cheap look before doing any work).
    public static func lookup(_ owner: IdempotencyOwner, key: String, now: Date, on connection: PostgresConnection) throws -> IdempotencyRecord? {
        let rows = try connection.query(
            """
            SELECT request_hash, response, response_key_id FROM idempotency_keys
            WHERE owner_kind = \(owner.kind) AND owner_id = \(owner.id) AND key = \(key) AND expires_at > \(now)
            """)
        guard let row = rows.first else { return nil }
        return IdempotencyRecord(
            requestHash: try row.decode("request_hash", as: [UInt8].self),
            sealedResponse: try row.decode("response", as: [UInt8]?.self),
            keyID: try row.decode("response_key_id", as: String?.self))
    }

    /// Takes the key's row lock inside the caller's transaction (INSERT … ON CONFLICT waits for an uncommitted
    /// holder). Expired rows and committed `running` rows (left by a dead process) are taken over. Waits at most
    /// `wait` for a concurrent holder, then throws SQLSTATE 55P03 (`lock_not_available`); the transaction is then aborted.
    public static func lock(
        _ owner: IdempotencyOwner, key: String, requestHash: [UInt8], now: Date, lifetime: TimeInterval, wait: TimeInterval,
        on connection: PostgresConnection
    ) throws -> IdempotencyLock {
        precondition(connection.inTransaction, "an idempotency key is locked inside the transaction of the change it guards")
        let expiresAt = now.addingTimeInterval(lifetime)
        let waitSetting = "\(max(1, Int(wait * 1000)))ms"
        let previous = try connection.query("SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', \(waitSetting), true)")
        let restore = try previous[0].decode("previous", as: String.self)
        defer { _ = try? connection.query("SELECT set_config('lock_timeout', \(restore), true)") }
        for _ in 0..<3 {
            let inserted = try connection.query(
                """
                INSERT INTO idempotency_keys (owner_kind, owner_id, key, request_hash, state, created_at, expires_at)
                VALUES (\(owner.kind), \(owner.id), \(key), \(requestHash), 'running', \(now), \(expiresAt))
                ON CONFLICT (owner_kind, owner_id, key) DO NOTHING
                RETURNING 1
                """)
            if inserted.count == 1 { return .acquired }
            let rows = try connection.query(
                """
                SELECT request_hash, state, response, response_key_id, expires_at <= \(now) AS expired
                FROM idempotency_keys WHERE owner_kind = \(owner.kind) AND owner_id = \(owner.id) AND key = \(key)
                FOR UPDATE
                """)
            guard let row = rows.first else { continue }  // rolled back or deleted meanwhile: insert again
            let expired = try row.decode("expired", as: Bool.self)
            if !expired, try row.decode("state", as: String.self) == "done", let sealed = try row.decode("response", as: [UInt8]?.self),
                let keyID = try row.decode("response_key_id", as: String?.self)
            {
                return .completed(requestHash: try row.decode("request_hash", as: [UInt8].self), sealedResponse: sealed, keyID: keyID)
            }
            // Expired, or a committed claim whose process died: we hold its row lock, so take it over.
            try connection.execute("DELETE FROM idempotency_keys WHERE owner_kind = \(owner.kind) AND owner_id = \(owner.id) AND key = \(key)")
        }
        throw PostgresError(.misuse, message: "idempotency key kept changing under its row lock")
    }

    /// Stores the sealed 2xx response of the transaction that holds the key (the row becomes `done` at COMMIT).
    public static func complete(_ owner: IdempotencyOwner, key: String, sealedResponse: [UInt8], keyID: String, on connection: PostgresConnection)
        throws
    {
        try connection.execute(
            """
            UPDATE idempotency_keys SET state = 'done', response = \(sealedResponse), response_key_id = \(keyID)
            WHERE owner_kind = \(owner.kind) AND owner_id = \(owner.id) AND key = \(key)
            """)
    }

    /// Stores a response for a key outside any claim (handlers that open no transaction): the first stored wins.
    public static func storeCompleted(
        _ owner: IdempotencyOwner, key: String, requestHash: [UInt8], sealedResponse: [UInt8], keyID: String,
        now: Date, lifetime: TimeInterval, on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO idempotency_keys (owner_kind, owner_id, key, request_hash, state, response, response_key_id, created_at, expires_at)
            VALUES (\(owner.kind), \(owner.id), \(key), \(requestHash), 'done', \(sealedResponse), \(keyID), \(now), \(now.addingTimeInterval(lifetime)))
            ON CONFLICT (owner_kind, owner_id, key) DO NOTHING
            """)
    }

    /// Gives the key up inside the transaction that holds it (its answer is not a 2xx: a retry runs again).
    public static func release(_ owner: IdempotencyOwner, key: String, on connection: PostgresConnection) throws {
        try connection.execute(
            "DELETE FROM idempotency_keys WHERE owner_kind = \(owner.kind) AND owner_id = \(owner.id) AND key = \(key) AND state = 'running'")
    }

    /// Forgets keys older than their lifetime.
    @discardableResult
    public static func purgeExpired(now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM idempotency_keys WHERE expires_at <= \(now)")
    }
}
