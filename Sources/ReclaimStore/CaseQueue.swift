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
    /// What `q` asked for (see `CaseSearch.query`).
    public var search: CaseSearchQuery?
    /// Only cases with (true) or without (false) an unreviewed document of their own or of a case merged into them
    /// (`cases.documents_pending`; `cases_documents_pending` serves true).
    public var unreviewed: Bool?
    /// Only open cases (`CaseState.isOpen`): the API's default when no state is asked for.
    public var openOnly: Bool
    /// Only cases held by this agent.
    public var assignee: UUID?
    /// Only cases whose newest human message is (true) or is not (false) the customer's.
    public var awaitingReply: Bool?
    /// Only cases with (true) or without (false) an uncleared risk signal (`cases.risk`; `cases_queue_risk` serves true).
    public var risk: Bool?
    /// Only cases opened at or after this time (the reports' backlog by age).
    public var openedAfter: Date?
    /// Only cases opened before this time.
    public var openedBefore: Date?

    /// A filter; nil fields do not filter.
    public init(
        state: CaseState? = nil, tier: Tier? = nil, overdue: Bool? = nil, search: CaseSearchQuery? = nil, unreviewed: Bool? = nil,
        openOnly: Bool = false, assignee: UUID? = nil, risk: Bool? = nil
    ) {
        self.risk = risk
        self.unreviewed = unreviewed
        self.openOnly = openOnly
        self.assignee = assignee
        self.state = state
        self.tier = tier
        self.overdue = overdue
        self.search = search
    }
}

/// The queue's order, written once: oldest due first, undated cases (paused or finished) last, ties broken by id. It owns
/// the `ORDER BY`, the keyset comparison that starts a page after a cursor, and the cursor's text. The indexes
/// `cases_queue`, `cases_queue_by_state` and `cases_queue_by_tier` (0003: `(…, due_at ASC NULLS LAST, id)`) serve it;
/// `CaseQueueTests` checks each page is a range scan on one of them (or the primary key), priced far below JIT.
public enum CaseQueueOrder {
    /// Where a page ended: the last case's due date (nil: the undated section) and id. `encoded` is the API's opaque cursor.
    public struct Cursor: Sendable, Equatable {
        /// The last case's due date (nil: the undated section).
        public var dueAt: Date?
        /// The last case's id.
        public var id: UUID

        /// A cursor at this position.
        public init(dueAt: Date?, id: UUID) {
            self.dueAt = dueAt
            self.id = id
        }

        /// The cursor after `record`, the last case of a page.
        public init(after record: CaseRecord) {
            self.init(dueAt: record.dueAt, id: record.id)
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
                let dot = raw.firstIndex(of: ".")
            else { return nil }
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

    /// One stretch of the order, read by one index range scan, so a deep page costs what the first does. A page reads
    /// the dated section, then, if short, the undated one.
    enum Section: Sendable {
        /// Cases with a due date, by `(due_at, id)`.
        case dated
        /// Cases without one, by id, after every dated case.
        case undated

        /// The sections a page after `cursor` reads, in order: a cursor in the undated section is past every dated case.
        static func after(_ cursor: Cursor?) -> [Section] {
            if let cursor, cursor.dueAt == nil { return [.undated] }
            return [.dated, .undated]
        }

        /// Which cases (`c`) the section holds.
        var members: PostgresQuery {
            switch self {
            case .dated: "c.due_at IS NOT NULL"
            case .undated: "c.due_at IS NULL"
            }
        }

        /// The cases of this section strictly after `cursor`; nil when every case of the section is (no cursor, or one
        /// in the dated section seen from the undated one).
        func keyset(after cursor: Cursor?) -> PostgresQuery? {
            guard let cursor else { return nil }
            switch self {
            case .dated:
                guard let due = cursor.dueAt else { return nil }
                return "(c.due_at, c.id) > (\(due), \(cursor.id))"
            case .undated:
                guard cursor.dueAt == nil else { return nil }
                return "c.id > \(cursor.id)"
            }
        }

        /// The section's `ORDER BY`, the column order of its indexes.
        var orderBy: PostgresQuery {
            switch self {
            case .dated: "ORDER BY c.due_at ASC, c.id ASC"
            case .undated: "ORDER BY c.id ASC"
            }
        }
    }
}

extension CaseQueueFilter {
    /// The states that are not `isOpen`, as the partial indexes of 0021 and 0025 list them.
    static let finishedStates = CaseState.allCases.filter { !$0.isOpen }

    /// Whether every case the filter admits is open (`case_search.open` then narrows a search to open cases' terms).
    var admitsOnlyOpen: Bool { openOnly || state?.isOpen == true }

    /// The filter's conditions on `c` within one section (the search term is not one: it drives the statement); nil when
    /// the section holds nothing the filter admits.
    func conditions(in section: CaseQueueOrder.Section, now: Date) -> [PostgresQuery]? {
        var conditions: [PostgresQuery] = []
        // The state and tier are literals, not binds (as are the flags below and the page's LIMIT): a queue statement is
        // prepared once per connection, and once PostgreSQL caches a generic plan for it, only constants let that plan
        // use the partial indexes (`cases_queue_open_undated` for a paused state, `cases_queue_risk`...).
        if let state { conditions.append("c.state = \(literal: state)") }
        if let tier { conditions.append("c.tier = \(literal: tier)") }
        if let assignee { conditions.append("c.assignee_id = \(assignee)") }
        // A maintained column (0020): one comparison, `cases_awaiting_reply` serving the dated section when selective.
        if let awaitingReply { conditions.append(awaitingReply ? "c.awaiting_reply" : "NOT c.awaiting_reply") }
        if let risk { conditions.append(risk ? "c.risk" : "NOT c.risk") }
        if let openedAfter { conditions.append("c.opened_at >= \(openedAfter)") }
        if let openedBefore { conditions.append("c.opened_at < \(openedBefore)") }
        if openOnly, section == .undated {
            // Only open cases have a due date, so only the undated section holds finished ones. Written as the predicate
            // of `cases_queue_open_undated` (0025), which holds the paused cases apart from the history.
            conditions.append("c.state <> ALL(\(literal: CaseQueueFilter.finishedStates))")
        }
        if let unreviewed {
            // `documents_pending` (0024; kept by 0026's triggers): a case with a document without a review, its own or a
            // merged case's, as the row's `unreviewed_documents` counts them.
            conditions.append(unreviewed ? "c.documents_pending" : "NOT c.documents_pending")
        }
        if let overdue {
            // Only open states other than awaiting_documents have a due date, so the date alone decides.
            switch section {
            case .dated: conditions.append(overdue ? "c.due_at < \(now)" : "c.due_at >= \(now)")
            case .undated: if overdue { return nil }
            }
        }
        return conditions
    }
}

extension CaseStore {
    /// One queue page in `CaseQueueOrder`: the cases strictly after `cursor`, at most `limit`.
    public static func queue(
        filter: CaseQueueFilter, after cursor: CaseQueueOrder.Cursor?, limit: Int, now: Date,
        on connection: PostgresConnection
    ) throws -> [CaseRecord] {
        var records: [CaseRecord] = []
        for section in CaseQueueOrder.Section.after(cursor) where records.count < limit {
            guard let statement = queueStatement(section, filter: filter, after: cursor, limit: limit - records.count, now: now) else { continue }
            records += try connection.query(statement).decodeCases()
        }
        return records
    }

    /// The statement reading one section of a page, nil when the filter admits nothing there. Composed as miniflux's
    /// `EntryQueryBuilder` composes its query: the section, the keyset and each filter add a condition, their values binds.
    static func queueStatement(
        _ section: CaseQueueOrder.Section, filter: CaseQueueFilter, after cursor: CaseQueueOrder.Cursor?,
        limit: Int, now: Date
    ) -> PostgresQuery? {
        guard let filters = filter.conditions(in: section, now: now) else { return nil }
        var conditions = [section.members]
        if let keyset = section.keyset(after: cursor) { conditions.append(keyset) }
        conditions += filters
        let source: PostgresQuery
        if let search = filter.search {
            // A search drives from its matching terms: a stream for the exact term and one for the name's first token,
            // each in case_id order from an index (case_search_pkey, or case_search_open when only open cases can be
            // shown: the dated section holds nothing else). Each stream's own ORDER BY lets the planner merge them
            // (a Merge Append; without it PostgreSQL 15 appends and sorts), so the undated section's page stops after
            // its first matches however many cases of the history share a surname. The name's other tokens, and
            // whether the exact term already listed the case, are checked per case as it streams: a join there would
            // gather every match first.
            let open: PostgresQuery = section == .dated || filter.admitsOnlyOpen ? " AND s.open" : ""
            func stream(_ term: String) -> PostgresQuery {
                "(SELECT s.case_id, s.term FROM case_search s WHERE s.term = \(term)\(open) ORDER BY s.case_id)"
            }
            var streams = [stream(search.term)]
            if let first = search.nameTokens.first {
                streams.append(stream(first))
                var name: [PostgresQuery] = ["NOT EXISTS (SELECT 1 FROM case_search x WHERE x.term = \(search.term) AND x.case_id = c.id)"]
                name += search.nameTokens.dropFirst().map {
                    "EXISTS (SELECT 1 FROM case_search t WHERE t.term = \($0) AND t.case_id = c.id)"
                }
                conditions.append("(hits.term = \(search.term) OR (\(name, separator: " AND ")))")
            }
            source = """
                SELECT \(columns) FROM (\(streams, separator: " UNION ALL ")) hits JOIN cases c ON c.id = hits.case_id \
                LEFT JOIN agents a ON a.id = c.assignee_id
                """
        } else {
            source = "SELECT \(columns) FROM \(from)"
        }
        return "\(source) WHERE \(conditions, separator: " AND ") \(section.orderBy) LIMIT \(literal: limit)"
    }
}
