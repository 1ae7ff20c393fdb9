import Crypto
import Foundation
import Postgres
import ReclaimCore

/// The sealed bytes of a transcript or document (nonce || ciphertext || tag) as the store writes them: their length and
/// key id up front, then the bytes in order, produced on demand, either from memory or sealed piece by piece while they
/// stream into the row (a spooled upload), so a 10 MiB document is never held whole.
public struct SealedContent: Sendable {
    /// The id of the `documents` key they are sealed under.
    public let keyID: String
    /// Their length.
    public let count: Int
    /// Calls its argument with each piece, in order; may run only once (a sealer's nonce is used once).
    let produce: @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Void

    /// Sealed bytes already in memory.
    public init(_ sealed: [UInt8], keyID: String) {
        self.keyID = keyID
        count = sealed.count
        produce = { write in try sealed.withUnsafeBytes { try write($0) } }
    }

    /// `count` sealed bytes that `produce` makes while they are written.
    public init(keyID: String, count: Int, produce: @escaping @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) {
        self.keyID = keyID
        self.count = count
        self.produce = produce
    }
}

/// A piece of evidence ready to insert: secrets already reduced (answers dropped, card fingerprinted, content sealed).
public struct NewEvidence: Sendable {
    /// The evidence id (also the associated data of the sealed content).
    public let id: UUID
    /// The case it is filed on.
    public let caseID: UUID
    /// What it is.
    public let kind: EvidenceKind
    /// For typed evidence: whether it matched what is on file (nil for transcripts and documents).
    public let matched: Bool?
    /// Never a secret.
    public let summary: String
    /// Non-secret details (question ids given, card first six / last four, device identifiers).
    public let details: JSONValue
    /// Card fingerprint and the id of the key it was made with.
    public let cardFingerprint: (fingerprint: [UInt8], keyID: String)?
    /// Sealed bytes and the id of the `documents` key, for transcripts and documents.
    public let sealedContent: SealedContent?
    /// SHA-256 of the clear bytes (transcripts and documents).
    public let sha256: [UInt8]?
    /// Size of the clear bytes.
    public let size: Int?
    /// The sniffed media type (documents) or `text/plain; charset=utf-8` (transcripts).
    public let mediaType: String?
    /// `agent:<uuid>`, `client:<uuid>` or `customer`.
    public let filedBy: String
    /// When it was filed (milliseconds).
    public let filedAt: Date

    /// A new piece of evidence.
    public init(
        id: UUID, caseID: UUID, kind: EvidenceKind, matched: Bool?, summary: String, details: JSONValue,
        cardFingerprint: (fingerprint: [UInt8], keyID: String)? = nil, sealedContent: SealedContent? = nil,
        sha256: [UInt8]? = nil, size: Int? = nil, mediaType: String? = nil, filedBy: String, filedAt: Date
    ) {
        self.id = id
        self.caseID = caseID
        self.kind = kind
        self.matched = matched
        self.summary = summary
        self.details = details
        self.cardFingerprint = cardFingerprint
        self.sealedContent = sealedContent
        self.sha256 = sha256
        self.size = size
        self.mediaType = mediaType
        self.filedBy = filedBy
        self.filedAt = Timestamp.truncated(filedAt)
    }

    /// The record as it reads right after filing (status pending).
    public var record: EvidenceRecord {
        EvidenceRecord(
            id: id, caseID: caseID, kind: kind, status: .pending, matched: matched, summary: summary, sha256: sha256, size: size,
            mediaType: mediaType, filedBy: filedBy, filedAt: filedAt)
    }
}

/// Evidence as listed: summaries only, status from its latest review.
public struct EvidenceRecord: Sendable, Equatable {
    /// The evidence id.
    public let id: UUID
    /// The case it is filed on.
    public let caseID: UUID
    /// What it is.
    public let kind: EvidenceKind
    /// Its latest review's decision, or pending.
    public let status: EvidenceStatus
    /// For typed evidence: whether it matched what is on file.
    public let matched: Bool?
    /// Never a secret; "" once erased (it then reads null).
    public let summary: String
    /// SHA-256 of the clear bytes (transcripts and documents).
    public let sha256: [UInt8]?
    /// Size of the clear bytes.
    public let size: Int?
    /// Media type of the clear bytes.
    public let mediaType: String?
    /// Who filed it.
    public let filedBy: String
    /// When.
    public let filedAt: Date
    /// The customer's reason of its latest review, when that rejected it and named one.
    public var customerReason: CustomerReason? = nil
    /// What its latest review accepted it as (a mail attachment accepted as an invoice, say).
    public var acceptedAs: EvidenceKind? = nil
    /// The kind it counts as for the documents gate: what it was accepted as, else its own.
    public var countsAs: EvidenceKind { acceptedAs ?? kind }

    /// `{"id", "type", "status", "customer_reason", "sha256", "size", "media_type", "summary", "filed_by", "filed_at"}` (api.md).
    public var json: JSONValue {
        [
            "id": .string(id.uuidString.lowercased()), "type": .string(kind.rawValue), "status": .string(status.rawValue),
            "customer_reason": .optional(customerReason?.rawValue), "accepted_as": .optional(acceptedAs?.rawValue),
            "sha256": .optional(sha256.map { Hex.encode($0) }), "size": size.map { .int(Int64($0)) } ?? .null,
            "media_type": .optional(mediaType), "summary": summary.isEmpty ? .null : .string(summary), "filed_by": .string(filedBy),
            "filed_at": Timestamp.json(filedAt),
        ]
    }

    /// What the verification rule reads, nil for transcripts and documents.
    public var factorEvidence: FactorEvidence? {
        guard let factor = kind.factor, let matched else { return nil }
        return FactorEvidence(factor: factor, matched: matched, status: status)
    }
}

/// A review of a piece of evidence: a separate record, never an edit of the evidence.
public struct EvidenceReview: Sendable, Equatable {
    /// The review id.
    public let id: UUID
    /// The evidence reviewed.
    public let evidenceID: UUID
    /// accepted or rejected.
    public let decision: EvidenceStatus
    /// Why (the agents' words).
    public let reason: String
    /// Why, in the customer's words (rejections of documents only).
    public let customerReason: CustomerReason?
    /// What an accepted mail attachment proves (the kind it then counts as).
    public var acceptedAs: EvidenceKind? = nil
    /// Who reviewed.
    public let reviewedBy: String
    /// When.
    public let reviewedAt: Date

    /// A review.
    public init(
        id: UUID = UUID(), evidenceID: UUID, decision: EvidenceStatus, reason: String, customerReason: CustomerReason? = nil,
        reviewedBy: String, reviewedAt: Date
    ) {
        self.id = id
        self.evidenceID = evidenceID
        self.decision = decision
        self.reason = reason
        self.customerReason = customerReason
        self.reviewedBy = reviewedBy
        self.reviewedAt = Timestamp.truncated(reviewedAt)
    }
}

/// The `evidence` and `evidence_reviews` tables.
public enum EvidenceStore {
    // The listed columns, with the status of the latest review; `e` is evidence. `Columns` reads them by these names.
    private static let columns: PostgresQuery = """
        e.id, e.case_id, e.kind, e.matched, e.summary, e.sha256, e.size, e.media_type, e.filed_by, e.filed_at, \(status(ofEvidence: "e.id")) AS status,
        (SELECT r.customer_reason FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS customer_reason,
        (SELECT r.accepted_as FROM evidence_reviews r WHERE r.evidence_id = e.id ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) AS accepted_as
        """

    /// The status of the evidence whose id is `id` (a column of the outer query): its latest review's decision,
    /// pending while it has none.
    private static func status(ofEvidence id: PostgresQuery) -> PostgresQuery {
        "COALESCE((SELECT r.decision FROM evidence_reviews r WHERE r.evidence_id = \(id) ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1), 'pending')"
    }

    /// Inserts the evidence (the caller appends the `evidence_filed` event in the same transaction, holding the case's lock);
    /// a document marks its case `documents_pending` (0024; 0026's trigger, so no writer can forget it).
    /// One row by binary COPY, the sealed content last and streamed as it is produced: as a bind parameter a 10 MiB
    /// document would sit whole in libpq's send buffer, which keeps that size for the connection's life.
    public static func insert(_ e: NewEvidence, on connection: PostgresConnection) throws {
        let content: PostgresCopyField = e.sealedContent.map { sealed in .streamed(length: sealed.count, produce: sealed.produce) } ?? .value(.null())
        try connection.copyRow(
            """
            COPY evidence (id, case_id, kind, document, factor, matched, summary, details, card_fingerprint, card_fingerprint_key_id,
                           content_key_id, sha256, size, media_type, filed_by, filed_at, content) FROM STDIN (FORMAT binary)
            """,
            [
                .value(e.id.postgresBind), .value(e.caseID.postgresBind), .value(e.kind.rawValue.postgresBind),
                .value(e.kind.isDocument.postgresBind), .value(e.kind.factor?.rawValue.postgresBind ?? .null()),
                .value(e.matched.postgresBind), .value(e.summary.postgresBind), .jsonb(e.details.canonical),
                .value(e.cardFingerprint?.fingerprint.postgresBind ?? .null()), .value(e.cardFingerprint?.keyID.postgresBind ?? .null()),
                .value(e.sealedContent?.keyID.postgresBind ?? .null()), .value(e.sha256.postgresBind),
                // `size` is an integer column: binary COPY takes exactly an int4.
                .value(e.size.map { Int32(clamping: $0) }.postgresBind), .value(e.mediaType.postgresBind), .value(e.filedBy.postgresBind),
                .value(e.filedAt.postgresBind), content,
            ])
    }

    /// Every piece of evidence on the case, oldest first.
    public static func list(caseID: UUID, on connection: PostgresConnection) throws -> [EvidenceRecord] {
        // The case's own evidence and that of the cases merged into it: it counts here while they stay merged. `IN (the
        // case UNION ALL its merged cases)`, not `= $1 OR IN (…)`, so both halves use an index (`evidence_case`, 0011's).
        try connection.query(
            """
            SELECT \(columns) FROM evidence e
            WHERE e.case_id IN (SELECT \(caseID)::uuid UNION ALL SELECT m.id FROM cases m WHERE m.merged_into = \(caseID)) ORDER BY e.filed_at, e.id
            """
        ).decodeEvidence()
    }

    /// One piece of evidence and its case's number, or nil.
    public static func find(id: UUID, on connection: PostgresConnection) throws -> (record: EvidenceRecord, caseNumber: String)? {
        let rows = try connection.query(
            """
            SELECT \(columns), c.case_number FROM evidence e JOIN cases c ON c.id = e.case_id WHERE e.id = \(id)
            """)
        guard let row = rows.first else { return nil }
        return (try Columns(rows).decode(row), try row.decode("case_number", as: String.self))
    }

    /// The sealed content and its key id, or nil for typed evidence without content.
    public static func sealedContent(id: UUID, on connection: PostgresConnection) throws -> (sealed: [UInt8], keyID: String)? {
        guard let row = try connection.query("SELECT content, content_key_id FROM evidence WHERE id = \(id) AND content IS NOT NULL").first else {
            return nil
        }
        return (try row.decode("content", as: [UInt8].self), try row.decode("content_key_id", as: String.self))
    }

    /// How many documents the case itself holds (not those of cases merged into it), for `RECLAIM_CASE_DOCUMENTS`; the
    /// caller holds the case's row lock, so two filings cannot both see room for one.
    public static func documentCount(caseID: UUID, on connection: PostgresConnection) throws -> Int {
        let count = try connection.query("SELECT count(*) AS n FROM evidence WHERE case_id = \(caseID) AND document").first?.decode(
            "n", as: Int64.self)
        return Int(count ?? 0)
    }

    /// The ids of the case's own evidence that has content (documents and transcripts), without the content.
    public static func contentIDs(caseID: UUID, on connection: PostgresConnection) throws -> Set<UUID> {
        Set(
            try connection.query("SELECT id FROM evidence WHERE case_id = \(caseID) AND content IS NOT NULL").map {
                try $0.decode("id", as: UUID.self)
            })
    }

    /// One piece's sealed content for an export, its row share-locked while it is read (an erasure waits for the
    /// read rather than emptying the row under it); nil when it has none or is no longer the case's.
    public static func exportedContent(id: UUID, caseID: UUID, on connection: PostgresConnection) throws -> (sealed: [UInt8], keyID: String)? {
        guard
            let row = try connection.query(
                "SELECT content, content_key_id FROM evidence WHERE id = \(id) AND case_id = \(caseID) AND content IS NOT NULL FOR SHARE"
            ).first
        else { return nil }
        return (try row.decode("content", as: [UInt8].self), try row.decode("content_key_id", as: String.self))
    }

    /// Records a review (the evidence's status becomes its decision); 0026's trigger recomputes `documents_pending` on its
    /// case and on the case it is merged into.
    public static func insertReview(_ review: EvidenceReview, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO evidence_reviews (id, evidence_id, decision, reason, customer_reason, accepted_as, reviewed_by, reviewed_at)
            VALUES (\(review.id), \(review.evidenceID), \(review.decision.rawValue), \(review.reason), \(review.customerReason?.rawValue),
                    \(review.acceptedAs?.rawValue), \(review.reviewedBy), \(review.reviewedAt))
            """)
    }

    /// The typed evidence on a case as the verification rule reads it.
    public static func factorEvidence(caseID: UUID, on connection: PostgresConnection) throws -> [FactorEvidence] {
        try list(caseID: caseID, on: connection).compactMap(\.factorEvidence)
    }

    /// The question ids matched by the case's filed answers that were not rejected (for `send_reset` to read instead of answers in its body).
    public static func matchedQuestionIDs(caseID: UUID, on connection: PostgresConnection) throws -> Set<String> {
        let rows = try connection.query(matchedQuestionIDs(ofCase: "\(caseID)::uuid"))
        var columns = rows.columns()
        let id = try columns("id")
        return Set(try rows.map { try $0.decode(id, as: String.self) })
    }

    /// A query (one column, `id`) of the question ids matched by answers filed on case `caseID` (a bind, or a column
    /// of an outer query) or on a case merged into it, and not rejected. One text for `matchedQuestionIDs` and the
    /// case's own select list (`CaseStore`'s columns, for `allowed_actions`).
    static func matchedQuestionIDs(ofCase caseID: PostgresQuery) -> PostgresQuery {
        """
        SELECT mq.id FROM evidence me CROSS JOIN LATERAL jsonb_array_elements_text(me.details -> 'matched_question_ids') AS mq(id)
        WHERE me.case_id IN (SELECT \(caseID) UNION ALL SELECT mm.id FROM cases mm WHERE mm.merged_into = \(caseID)) AND me.kind = 'security_answers'
          AND \(status(ofEvidence: "me.id")) <> 'rejected'
        """
    }

    /// The columns of `columns` in a result, found by name once.
    struct Columns {
        let id, caseID, kind, matched, summary, sha256, size, mediaType, filedBy, filedAt, status, customerReason, acceptedAs: PostgresColumn

        init(_ rows: PostgresRows) throws {
            var columns = rows.columns()
            id = try columns("id")
            caseID = try columns("case_id")
            kind = try columns("kind")
            matched = try columns("matched")
            summary = try columns("summary")
            sha256 = try columns("sha256")
            size = try columns("size")
            mediaType = try columns("media_type")
            filedBy = try columns("filed_by")
            filedAt = try columns("filed_at")
            status = try columns("status")
            customerReason = try columns("customer_reason")
            acceptedAs = try columns("accepted_as")
        }

        func decode(_ row: PostgresRow) throws -> EvidenceRecord {
            guard let kind = EvidenceKind(rawValue: try row.decode(kind, as: String.self)),
                let status = EvidenceStatus(rawValue: try row.decode(status, as: String.self))
            else {
                throw PostgresError(.decoding, message: "unknown evidence kind or status")
            }
            var record = EvidenceRecord(
                id: try row.decode(id, as: UUID.self), caseID: try row.decode(caseID, as: UUID.self), kind: kind, status: status,
                matched: try row.decode(matched, as: Bool?.self), summary: try row.decode(summary, as: String.self),
                sha256: try row.decode(sha256, as: [UInt8]?.self), size: try row.decode(size, as: Int?.self),
                mediaType: try row.decode(mediaType, as: String?.self), filedBy: try row.decode(filedBy, as: String.self),
                filedAt: try row.decode(filedAt, as: Date.self),
                customerReason: try row.decode(customerReason, as: String?.self).flatMap(CustomerReason.init(rawValue:)))
            record.acceptedAs = try row.decode(acceptedAs, as: String?.self).flatMap(EvidenceKind.init(rawValue:))
            return record
        }
    }
}

extension PostgresRows {
    /// Every row as an `EvidenceRecord`, read by column name.
    func decodeEvidence() throws -> [EvidenceRecord] {
        let columns = try EvidenceStore.Columns(self)
        return try map(columns.decode)
    }
}
