import Foundation
import Postgres

/// A one-time code mailed to a case's contact address to verify a caller, as stored: its keyed hash, never the code.
public struct CallerMailedCode: Sendable, Equatable {
    /// HMAC-SHA-256 of the code under the `access_code` key named by `keyID`.
    public let codeHash: [UInt8]
    /// The key that made `codeHash`.
    public let keyID: String
    /// When it stops working.
    public let expiresAt: Date
}

/// The `caller_mailed_codes` table (0032): at most one working code per case.
public enum CallerMailedCodeStore {
    /// Stores the case's new code, replacing any earlier one (only the newest mail's code works).
    public static func replace(caseID: UUID, codeHash: [UInt8], keyID: String, expiresAt: Date, now: Date, on connection: PostgresConnection) throws {
        _ = try connection.execute(
            """
            INSERT INTO caller_mailed_codes (case_id, code_hash, key_id, expires_at, created_at)
            VALUES (\(caseID), \(codeHash), \(keyID), \(expiresAt), \(now))
            ON CONFLICT (case_id) DO UPDATE SET code_hash = EXCLUDED.code_hash, key_id = EXCLUDED.key_id,
                expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
            """)
    }

    /// The case's code while it works at `now`, or nil.
    public static func current(caseID: UUID, now: Date, on connection: PostgresConnection) throws -> CallerMailedCode? {
        try connection.query("SELECT code_hash, key_id, expires_at FROM caller_mailed_codes WHERE case_id = \(caseID) AND expires_at > \(now)")
            .first.map {
                CallerMailedCode(
                    codeHash: try $0.decode("code_hash", as: [UInt8].self), keyID: try $0.decode("key_id", as: String.self),
                    expiresAt: try $0.decode("expires_at", as: Date.self))
            }
    }

    /// Forgets the case's code (used once, or the case was erased).
    public static func delete(caseID: UUID, on connection: PostgresConnection) throws {
        _ = try connection.execute("DELETE FROM caller_mailed_codes WHERE case_id = \(caseID)")
    }
}
