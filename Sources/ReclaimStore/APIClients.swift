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
}

/// The `api_clients` table.
public enum APIClientStore {
    /// Inserts a new client.
    public static func insert(id: UUID, name: String, keyHash: [UInt8], sealedSigningSecret: [UInt8], signingKeyID: String, now: Date,
                              on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO api_clients (id, name, key_hash, signing_secret, signing_key_id, created_at)
            VALUES (\(id), \(name), \(keyHash), \(sealedSigningSecret), \(signingKeyID), \(now))
            """)
    }

    /// The client whose API key hashes to `keyHash` (revoked ones too: the caller refuses them).
    public static func find(keyHash: [UInt8], on connection: PostgresConnection) throws -> APIClientRecord? {
        let rows = try connection.query("""
            SELECT id, name, signing_secret, signing_key_id, revoked_at IS NOT NULL AS revoked FROM api_clients WHERE key_hash = \(keyHash)
            """)
        guard let row = rows.first else { return nil }
        return APIClientRecord(id: try row.decode("id"), name: try row.decode("name"), sealedSigningSecret: try row.decode("signing_secret"),
                               signingKeyID: try row.decode("signing_key_id"), revoked: try row.decode("revoked"))
    }

    /// Revokes a client: its key is refused from now on. False when there is no such (unrevoked) client.
    @discardableResult
    public static func revoke(id: UUID, now: Date, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("UPDATE api_clients SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL") == 1
    }
}
