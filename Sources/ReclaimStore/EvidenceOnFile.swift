import Crypto
import Foundation
import Postgres
import ReclaimCore

/// What typed evidence is compared with: the cards and devices on file for a case's account.
public enum EvidenceOnFile {
    /// Whether `number` is a card on file for the account (fingerprints recomputed under each key id the account's cards use).
    public static func cardMatches(_ number: CardNumber, accountEmail: String, keys: KeyFile, on connection: PostgresConnection) throws -> Bool {
        let rows = try connection.query(
            """
            SELECT k.fingerprint, k.fingerprint_key_id FROM account_cards k JOIN accounts a ON a.id = k.account_id
            WHERE a.email_key = lower(\(accountEmail))
            """)
        var columns = rows.columns()
        let fingerprint = try columns("fingerprint")
        let fingerprintKeyID = try columns("fingerprint_key_id")
        for row in rows {
            let stored = try row.decode(fingerprint, as: [UInt8].self)
            guard let key = keys.key(id: try row.decode(fingerprintKeyID, as: String.self), purpose: .cardFingerprint) else { continue }
            if ConstantTime.equals(CardFingerprint.compute(number, key: key), stored) { return true }
        }
        return false
    }

    /// Whether a device registered to the account has this serial or this IMEI (compared by the 14 digits an IMEI and its IMEISV share).
    public static func deviceMatches(serial: SerialNumber?, imei: IMEI?, accountEmail: String, on connection: PostgresConnection) throws -> Bool {
        let rows = try connection.query(
            """
            SELECT d.serial, d.imei FROM account_devices d JOIN accounts a ON a.id = d.account_id WHERE a.email_key = lower(\(accountEmail))
            """)
        var columns = rows.columns()
        let serialColumn = try columns("serial")
        let imeiColumn = try columns("imei")
        for row in rows {
            if let serial, let stored = try row.decode(serialColumn, as: String?.self), stored.uppercased() == serial.value { return true }
            if let imei, let stored = try row.decode(imeiColumn, as: String?.self), String(stored.prefix(14)) == imei.identity { return true }
        }
        return false
    }
}
