import Foundation
import Postgres

/// The `signature_replays` table: each accepted request signature, until it could no longer pass the time window.
public enum SignatureReplayStore {
    /// Records the signature; false when it was already recorded (a replay). Atomic across service instances.
    public static func record(clientID: UUID, signatureHash: [UInt8], expiresAt: Date, now: Date, on connection: PostgresConnection) throws -> Bool {
        // A row past its expiry may still be there (purged lazily): it no longer counts, so take it over.
        let rows = try connection.query(
            """
            INSERT INTO signature_replays AS r (client_id, signature_hash, expires_at)
            VALUES (\(clientID), \(signatureHash), \(expiresAt))
            ON CONFLICT (client_id, signature_hash) DO UPDATE SET expires_at = excluded.expires_at WHERE r.expires_at <= \(now)
            RETURNING 1
            """)
        return rows.count == 1
    }

    /// Forgets signatures whose window has passed.
    @discardableResult
    public static func purgeExpired(now: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM signature_replays WHERE expires_at <= \(now)")
    }
}
