import Crypto
import Foundation
import Postgres
import ReclaimCore

/// Queue filters (all optional) for `CaseStore.queue`.
public struct CaseQueueFilter: Sendable {
    /// Only cases in this state.
    public var state: CaseState?
    /// Only cases held by this tier.
    public var tier: Tier?
    /// Only overdue (true) or not overdue (false) cases.
    public var overdue: Bool?
    /// A normalised search term (see `CaseSearch.term`).
    public var term: String?
    /// Only cases with (true) or without (false) an unreviewed document.
    public var unreviewed: Bool?

    /// A filter; nil fields do not filter.
    public init(state: CaseState? = nil, tier: Tier? = nil, overdue: Bool? = nil, term: String? = nil, unreviewed: Bool? = nil) {
        self.unreviewed = unreviewed
        self.state = state
        self.tier = tier
        self.overdue = overdue
        self.term = term
    }
}

/// Where the previous queue page ended: the last case's due date (nil: in the null section) and id.
public struct CaseQueueCursor: Sendable, Equatable {
    /// The last case's due date (nil: the undated section).
    public var dueAt: Date?
    /// The last case's id.
    public var id: UUID

    /// A cursor after this case.
    public init(dueAt: Date?, id: UUID) {
        self.dueAt = dueAt
        self.id = id
    }

    /// Opaque text: `d<microseconds>.<uuid>` or `n.<uuid>`, base64url-encoded.
    public var encoded: String {
        let micros = dueAt.map { "d" + String(Int64(($0.timeIntervalSince1970 * 1_000_000).rounded())) } ?? "n"
        return Base64URL.encode((micros + "." + id.uuidString.lowercased()).utf8)
    }

    /// Parses `encoded`; nil for anything else.
    public init?(encoded text: String) {
        guard text.utf8.count <= 128 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let raw = String(data: data, encoding: .utf8),
              let dot = raw.firstIndex(of: ".") else { return nil }
        let head = raw[..<dot]
        guard let id = UUID(uuidString: String(raw[raw.index(after: dot)...])) else { return nil }
        if head == "n" {
            self.init(dueAt: nil, id: id)
        } else if head.hasPrefix("d"), let micros = Int64(head.dropFirst()) {
            self.init(dueAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000), id: id)
        } else {
            return nil
        }
    }
}

extension CaseStore {
    /// One queue page: oldest due first, null due dates last, then by id; cases strictly after `cursor`.
    /// Two index range scans (dated, then undated) so a deep page costs what the first does.
    public static func queue(filter: CaseQueueFilter, after cursor: CaseQueueCursor?, limit: Int, now: Date,
                             on connection: PostgresConnection) throws -> [CaseRecord] {
        var records: [CaseRecord] = []
        if cursor == nil || cursor?.dueAt != nil {
            records = try queueSection(dated: true, filter: filter, cursor: cursor, limit: limit, now: now, on: connection)
        }
        if records.count < limit, filter.overdue != true {
            let nullCursor = cursor?.dueAt == nil ? cursor : nil
            records += try queueSection(dated: false, filter: filter, cursor: nullCursor, limit: limit - records.count, now: now, on: connection)
        }
        return records
    }

    private static func queueSection(dated: Bool, filter: CaseQueueFilter, cursor: CaseQueueCursor?, limit: Int, now: Date,
                                     on connection: PostgresConnection) throws -> [CaseRecord] {
        var sql = ""
        var binds: [PostgresBind] = []
        func bind(_ value: some PostgresEncodable) -> String {
            binds.append(value.postgresBind)
            return "$\(binds.count)"
        }
        if let term = filter.term {
            // A search drives from its few matching terms; otherwise the planner may walk the whole queue index looking for them.
            sql += "WITH hits AS MATERIALIZED (SELECT s.case_id FROM case_search s WHERE s.term = \(bind(term))) "
            sql += "SELECT \(columns) FROM hits JOIN cases c ON c.id = hits.case_id LEFT JOIN agents a ON a.id = c.assignee_id WHERE "
        } else {
            sql += "SELECT \(columns) FROM \(from) WHERE "
        }
        sql += dated ? "c.due_at IS NOT NULL" : "c.due_at IS NULL"
        if dated, let cursor, let due = cursor.dueAt {
            sql += " AND (c.due_at, c.id) > (\(bind(due)), \(bind(cursor.id)))"
        } else if !dated, let cursor {
            sql += " AND c.id > \(bind(cursor.id))"
        }
        if let state = filter.state { sql += " AND c.state = \(bind(state.rawValue))" }
        if let tier = filter.tier { sql += " AND c.tier = \(bind(tier.rawValue))" }
        if let unreviewed = filter.unreviewed {
            sql += unreviewed ? " AND EXISTS" : " AND NOT EXISTS"
            sql += " (SELECT 1 FROM evidence d WHERE d.case_id = c.id AND \(documentKinds) AND NOT EXISTS (SELECT 1 FROM evidence_reviews r WHERE r.evidence_id = d.id))"
        }
        if let overdue = filter.overdue, dated {
            // Only open states other than awaiting_documents have a due date, so the date alone decides.
            sql += overdue ? " AND c.due_at < \(bind(now))" : " AND c.due_at >= \(bind(now))"
        }
        sql += dated ? " ORDER BY c.due_at ASC, c.id ASC" : " ORDER BY c.id ASC"
        sql += " LIMIT \(bind(limit))"
        return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds)).decodeCases()
    }
}
