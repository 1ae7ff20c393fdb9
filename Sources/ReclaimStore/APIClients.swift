import Foundation
import Postgres

/// An API client row: the key only as its SHA-256, the signing secret sealed.
public struct APIClientRecord: Sendable {
    public let id: UUID
    public let name: String
    /// The signing secret sealed with the `signing` key (associated data: the client id).
    public let sealedSigningSecret: [UInt8]
    /// Key-file id of the key that sealed the signing secret.
    public let signingKeyID: String
    public let revoked: Bool
    /// After a rotation: the previous signing secret, sealed like the current one, accepted until `previousExpiresAt`.
    public var previous: (sealed: [UInt8], keyID: String, expiresAt: Date)? = nil
}

/// A client as the admin list shows it: no secret, sealed or not.
public struct APIClientSummary: Sendable {
    public let id: UUID
    public let name: String
    public let createdAt: Date
    public let revokedAt: Date?
    public let rotatedAt: Date?
    /// Until when the secret before the last rotation is still accepted (nil: none is).
    public let previousSecretExpiresAt: Date?

    public init(id: UUID, name: String, createdAt: Date, revokedAt: Date?, rotatedAt: Date?, previousSecretExpiresAt: Date?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.rotatedAt = rotatedAt
        self.previousSecretExpiresAt = previousSecretExpiresAt
    }
}

/// The `api_clients` table.
public enum APIClientStore {
    /// Inserts a new client.
    public static func insert(
        id: UUID, name: String, keyHash: [UInt8], sealedSigningSecret: [UInt8], signingKeyID: String, now: Date,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO api_clients (id, name, key_hash, signing_secret, signing_key_id, created_at)
            VALUES (\(id), \(name), \(keyHash), \(sealedSigningSecret), \(signingKeyID), \(now))
            """)
    }

    /// The client whose API key hashes to `keyHash` (revoked ones too: the caller refuses them).
    public static func find(keyHash: [UInt8], on connection: PostgresConnection) throws -> APIClientRecord? {
        let rows = try connection.query(
            """
            SELECT id, name, signing_secret, signing_key_id, revoked_at IS NOT NULL AS revoked,
                   previous_signing_secret, previous_signing_key_id, previous_signing_expires_at
            FROM api_clients WHERE key_hash = \(keyHash)
            """)
        guard let row = rows.first else { return nil }
        var record = APIClientRecord(
            id: try row.decode("id"), name: try row.decode("name"), sealedSigningSecret: try row.decode("signing_secret"),
            signingKeyID: try row.decode("signing_key_id"), revoked: try row.decode("revoked"))
        if let sealed = try row.decode("previous_signing_secret", as: [UInt8]?.self),
            let keyID = try row.decode("previous_signing_key_id", as: String?.self),
            let expiresAt = try row.decode("previous_signing_expires_at", as: Date?.self)
        {
            record.previous = (sealed, keyID, expiresAt)
        }
        return record
    }

    /// Clients by creation time then id, at most `limit`, those created after the cursor's (`createdAt`, `id`).
    public static func list(after cursor: (createdAt: Date, id: UUID)?, limit: Int, on connection: PostgresConnection) throws -> [APIClientSummary] {
        let rows = try connection.query(
            """
            SELECT id, name, created_at, revoked_at, rotated_at, previous_signing_expires_at FROM api_clients
            WHERE \(cursor?.createdAt)::timestamptz IS NULL OR (created_at, id) > (\(cursor?.createdAt), \(cursor?.id))
            ORDER BY created_at, id LIMIT \(Int64(limit))
            """)
        var columns = rows.columns()
        let id = try columns("id")
        let name = try columns("name")
        let createdAt = try columns("created_at")
        let revokedAt = try columns("revoked_at")
        let rotatedAt = try columns("rotated_at")
        let previous = try columns("previous_signing_expires_at")
        return try rows.map { row in
            APIClientSummary(
                id: try row.decode(id), name: try row.decode(name), createdAt: try row.decode(createdAt), revokedAt: try row.decode(revokedAt),
                rotatedAt: try row.decode(rotatedAt), previousSecretExpiresAt: try row.decode(previous))
        }
    }

    /// Whether a client with `id` exists, revoked or not (no lock: for read-only views).
    public static func exists(id: UUID, on connection: PostgresConnection) throws -> Bool {
        try !connection.query("SELECT 1 AS one FROM api_clients WHERE id = \(id)").isEmpty
    }

    /// One client for the admin view, locked for the rest of the transaction.
    public static func summary(id: UUID, on connection: PostgresConnection) throws -> APIClientSummary? {
        try connection.query(
            """
            SELECT id, name, created_at, revoked_at, rotated_at, previous_signing_expires_at FROM api_clients WHERE id = \(id) FOR UPDATE
            """
        ).first.map { row in
            APIClientSummary(
                id: try row.decode("id"), name: try row.decode("name"), createdAt: try row.decode("created_at"),
                revokedAt: try row.decode("revoked_at"), rotatedAt: try row.decode("rotated_at"),
                previousSecretExpiresAt: try row.decode("previous_signing_expires_at"))
        }
    }

    /// Installs a new sealed signing secret and keeps the current one as the previous until `overlapUntil`.
    /// False when there is no such unrevoked client.
    @discardableResult
    public static func rotate(
        id: UUID, sealedSigningSecret: [UInt8], signingKeyID: String, overlapUntil: Date, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE api_clients SET previous_signing_secret = signing_secret, previous_signing_key_id = signing_key_id,
                previous_signing_expires_at = \(overlapUntil), signing_secret = \(sealedSigningSecret), signing_key_id = \(signingKeyID),
                rotated_at = \(now)
            WHERE id = \(id) AND revoked_at IS NULL
            """) == 1
    }

    /// Installs a new API key (its hash): the previous key is refused from now on, at once (a key is rotated because it may
    /// have leaked). False when there is no such unrevoked client.
    @discardableResult
    public static func rotateKey(id: UUID, keyHash: [UInt8], on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE api_clients SET key_hash = \(keyHash) WHERE id = \(id) AND revoked_at IS NULL") == 1
    }

    /// Revokes a client: its key is refused from now on. False when there is no such (unrevoked) client.
    @discardableResult
    public static func revoke(id: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE api_clients SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL") == 1
    }
}
