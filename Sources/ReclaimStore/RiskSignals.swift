import Foundation
import Postgres
import ReclaimCore

/// One raise of a risk signal on a case, cleared or not: what agents read (`risk_signals` of the case).
public struct RiskSignalRecord: Sendable, Equatable {
    /// Primary key.
    public let id: UUID
    /// The word.
    public let signal: RiskSignal
    /// What the service or the agent noticed, for agents (names the other cases, never a personal value).
    public let detail: String
    /// The other cases the detail names, by number.
    public let otherCases: [String]
    /// Who raised it (`system` for a fact the service noticed).
    public let raisedBy: String
    /// When it was raised (milliseconds).
    public let raisedAt: Date
    /// When it was cleared, nil while it stands.
    public let clearedAt: Date?
    /// Who cleared it.
    public let clearedBy: String?
    /// Why it was cleared.
    public let clearReason: String?

    /// The agents' representation: `{"signal", "detail", "other_cases", "raised_at", "raised_by", "cleared_at",
    /// "cleared_by", "clear_reason"}`.
    public var json: JSONValue {
        [
            "signal": .string(signal.rawValue), "detail": .string(detail), "other_cases": .array(otherCases.map(JSONValue.string)),
            "raised_by": .string(raisedBy), "raised_at": Timestamp.json(raisedAt), "cleared_at": Timestamp.json(clearedAt),
            "cleared_by": .optional(clearedBy), "clear_reason": .optional(clearReason),
        ]
    }
}

/// The `case_risk_signals` table, the `cases.risk` mark it maintains, and the look-ups that find a fact raising one.
public enum RiskSignalStore {
    /// Raises `signal` on the case unless it stands already (then the other cases are added to the standing one); sets
    /// `cases.risk`. True when a new signal was raised. The caller holds the case's row lock.
    public static func raise(
        _ signal: RiskSignal, caseID: UUID, detail: (_ otherCases: [String]) -> String, otherCases: [String], by actor: String,
        at now: Date, on connection: PostgresConnection
    ) throws -> Bool {
        let rows = try connection.query(
            """
            SELECT id, array_to_string(other_cases, ',') AS other_cases FROM case_risk_signals
            WHERE case_id = \(caseID) AND signal = \(signal.rawValue) AND cleared_at IS NULL
            """)
        if let row = rows.first {
            let id = try row.decode("id", as: UUID.self)
            let known = try row.decode("other_cases", as: String.self).split(separator: ",").map(String.init)
            let merged = Array(Set(known).union(otherCases)).sorted()
            if merged.count != known.count {
                try connection.execute(
                    "UPDATE case_risk_signals SET other_cases = \(merged), detail = \(detail(merged)) WHERE id = \(id)")
            }
            return false
        }
        let cases = Array(Set(otherCases)).sorted()
        try connection.execute(
            """
            INSERT INTO case_risk_signals (id, case_id, signal, detail, other_cases, raised_by, raised_at)
            VALUES (\(UUID()), \(caseID), \(signal.rawValue), \(detail(cases)), \(cases), \(actor), \(now))
            """)
        try connection.execute("UPDATE cases SET risk = true WHERE id = \(caseID) AND NOT risk")
        return true
    }

    /// Clears every uncleared signal of the case and lifts `cases.risk`; the signals cleared, in the order raised.
    public static func clearAll(caseID: UUID, reason: String, by actor: String, at now: Date, on connection: PostgresConnection) throws
        -> [RiskSignal]
    {
        let rows = try connection.query(
            """
            UPDATE case_risk_signals SET cleared_at = \(now), cleared_by = \(actor), clear_reason = \(reason)
            WHERE case_id = \(caseID) AND cleared_at IS NULL RETURNING signal, raised_at
            """)
        try connection.execute("UPDATE cases SET risk = false WHERE id = \(caseID) AND risk")
        var cleared: [(RiskSignal, Date)] = []
        for row in rows {
            guard let signal = RiskSignal(rawValue: try row.decode("signal", as: String.self)) else { continue }
            cleared.append((signal, try row.decode("raised_at", as: Date.self)))
        }
        return cleared.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// Every signal of the case, oldest first.
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [RiskSignalRecord] {
        let rows = try connection.query(
            """
            SELECT id, signal, detail, array_to_string(other_cases, ',') AS other_cases, raised_by, raised_at, cleared_at, cleared_by,
                clear_reason
            FROM case_risk_signals WHERE case_id = \(caseID) ORDER BY raised_at, id
            """)
        var records: [RiskSignalRecord] = []
        for row in rows {
            guard let signal = RiskSignal(rawValue: try row.decode("signal", as: String.self)) else { continue }
            records.append(
                RiskSignalRecord(
                    id: try row.decode("id", as: UUID.self), signal: signal, detail: try row.decode("detail", as: String.self),
                    otherCases: try row.decode("other_cases", as: String.self).split(separator: ",").map(String.init),
                    raisedBy: try row.decode("raised_by", as: String.self), raisedAt: try row.decode("raised_at", as: Date.self),
                    clearedAt: try row.decode("cleared_at", as: Date?.self), clearedBy: try row.decode("cleared_by", as: String?.self),
                    clearReason: try row.decode("clear_reason", as: String?.self)))
        }
        return records
    }

    /// The other cases (by number) holding one of these serials or IMEIs, whose account e-mail differs from
    /// `accountEmail`: as typed on the case (`case_search`'s key) or filed as device evidence (0019's indexes). A term
    /// equal to a case's own number is not a device of it.
    public static func casesClaiming(
        serials: [String], imeis: [String], otherThan accountEmail: String, except caseID: UUID, on connection: PostgresConnection
    ) throws -> [String] {
        let terms = Array(Set(serials + imeis)).sorted()
        guard !terms.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT DISTINCT c.case_number FROM (
                SELECT s.case_id FROM case_search s WHERE s.term = ANY(\(terms))
                UNION SELECT e.case_id FROM evidence e WHERE e.kind = 'device' AND e.details ->> 'serial' IS NOT NULL
                    AND e.details ->> 'serial' = ANY(\(serials))
                UNION SELECT e.case_id FROM evidence e WHERE e.kind = 'device' AND e.details ->> 'imei' IS NOT NULL
                    AND e.details ->> 'imei' = ANY(\(imeis))
            ) hits JOIN cases c ON c.id = hits.case_id
            WHERE c.id <> \(caseID) AND lower(c.account_email) <> lower(\(accountEmail)) AND NOT (c.case_number = ANY(\(terms)))
            ORDER BY c.case_number LIMIT 50
            """)
        return try rows.map { try $0.decode("case_number", as: String.self) }
    }

    /// Whether one of these serials or IMEIs is on file for an account other than `accountEmail`.
    public static func onFileElsewhere(serials: [String], imeis: [String], otherThan accountEmail: String, on connection: PostgresConnection)
        throws -> Bool
    {
        guard !serials.isEmpty || !imeis.isEmpty else { return false }
        let rows = try connection.query(
            """
            SELECT 1 FROM account_devices d JOIN accounts a ON a.id = d.account_id
            WHERE ((d.serial IS NOT NULL AND d.serial = ANY(\(serials))) OR (d.imei IS NOT NULL AND d.imei = ANY(\(imeis))))
                AND a.email_key <> lower(\(accountEmail))
            LIMIT 1
            """)
        return !rows.isEmpty
    }

    /// The open cases (id, number, account e-mail) holding a device with one of these serials or IMEIs, whose account
    /// e-mail is not `accountEmail`: what an account put on file now puts at risk.
    public static func openCasesHolding(serials: [String], imeis: [String], otherThan accountEmail: String, on connection: PostgresConnection)
        throws -> [(id: UUID, number: String)]
    {
        let terms = Array(Set(serials + imeis)).sorted()
        guard !terms.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT DISTINCT c.id, c.case_number FROM (
                SELECT s.case_id FROM case_search s WHERE s.term = ANY(\(terms))
                UNION SELECT e.case_id FROM evidence e WHERE e.kind = 'device' AND e.details ->> 'serial' IS NOT NULL
                    AND e.details ->> 'serial' = ANY(\(serials))
                UNION SELECT e.case_id FROM evidence e WHERE e.kind = 'device' AND e.details ->> 'imei' IS NOT NULL
                    AND e.details ->> 'imei' = ANY(\(imeis))
            ) hits JOIN cases c ON c.id = hits.case_id
            WHERE lower(c.account_email) <> lower(\(accountEmail)) AND NOT (c.case_number = ANY(\(terms)))
                AND c.state = ANY(\(CaseState.allCases.filter(\.isOpen).map(\.rawValue)))
            ORDER BY c.case_number LIMIT 200
            """)
        return try rows.map { (try $0.decode("id", as: UUID.self), try $0.decode("case_number", as: String.self)) }
    }

    /// The other cases (by number) holding a document with this SHA-256, whose account e-mail differs from `accountEmail`.
    public static func casesWithDocument(sha256: [UInt8], otherThan accountEmail: String, except caseID: UUID, on connection: PostgresConnection)
        throws -> [String]
    {
        let rows = try connection.query(
            """
            SELECT DISTINCT c.case_number FROM evidence e JOIN cases c ON c.id = e.case_id
            WHERE e.document AND e.sha256 IS NOT NULL AND e.sha256 = \(sha256) AND c.id <> \(caseID)
                AND lower(c.account_email) <> lower(\(accountEmail))
            ORDER BY c.case_number LIMIT 50
            """)
        return try rows.map { try $0.decode("case_number", as: String.self) }
    }

    /// The uncleared signals of the case and every actor who cleared one of its signals: what `FourEyes.check` needs.
    public static func standing(caseID: UUID, on connection: PostgresConnection) throws -> (uncleared: [RiskSignal], clearers: Set<String>) {
        let rows = try connection.query("SELECT signal, cleared_by FROM case_risk_signals WHERE case_id = \(caseID)")
        var uncleared: [RiskSignal] = []
        var clearers: Set<String> = []
        for row in rows {
            if let by = try row.decode("cleared_by", as: String?.self) {
                clearers.insert(by)
            } else if let signal = RiskSignal(rawValue: try row.decode("signal", as: String.self)) {
                uncleared.append(signal)
            }
        }
        return (uncleared, clearers)
    }
}
