import Crypto
import Foundation
import InboundMail
import Postgres
import ReclaimCore
import ReclaimStore

/// What the inbound rules need beyond the keys: the reply address the tokens are on, and the per-sender limit.
public struct InboundRules: Sendable {
    /// `RECLAIM_REPLY_ADDRESS` (default `RECLAIM_MAIL_FROM`): the local part the `+token` follows.
    public var replyAddress: String
    /// Most messages an hour from one sender before the rest are kept unmatched (`RECLAIM_INBOUND_SENDER_LIMIT`).
    public var senderLimit: Int
    /// The parser's limits (25 MB, depth, parts).
    public var limits: MailLimits

    public init(replyAddress: String, senderLimit: Int = 30, limits: MailLimits = MailLimits()) {
        self.replyAddress = replyAddress
        self.senderLimit = senderLimit
        self.limits = limits
    }
}

/// What storing one received message came to.
public enum InboundOutcome: Sendable, Equatable {
    /// Stored: on a case (its number and how it matched) or unmatched (`reason`).
    case stored(id: UUID, caseNumber: String?, matchedBy: InboundMatch?, reason: String?)
    /// The same bytes are already stored: nothing written; the mailbox's copy may go.
    case duplicate
}

/// Why an unmatched message is unmatched (`unmatched_reason`): the parser's refusals (`MailParseError.reason`) and these.
public enum InboundUnmatchedReason {
    /// No rule of the matching order found a case.
    public static let noMatch = "no_match"
    /// More than the hourly limit from this sender.
    public static let senderLimit = "sender_limit"
    /// Larger than the limit (read only up to it).
    public static let tooLarge = "too_large"
    /// It would match a case whose customer's data was erased: kept here, never recorded on that case (api.md v1.3).
    public static let caseErased = "case_erased"
}

extension CaseOperations {
    /// Associated data of a sealed raw message: its id, so sealed bytes cannot be moved to another row.
    public static func inboundAssociatedData(_ id: UUID) -> [UInt8] { Array("inbound:\(id.lowercased)".utf8) }

    /// Stores one message read from the mailbox, in the caller's transaction (the mailbox's copy is removed only after
    /// it commits): parsed (a refusal kept unmatched with its reason), matched in the contract's order, sealed, recorded
    /// on its case. `truncated`: the mailbox's copy is larger than `raw` (read up to the limit). Never throws for the
    /// message's content; only the database's or the keys' failures throw.
    public func receive(
        raw: [UInt8], truncated: Bool, rules: InboundRules, at now: Date, on connection: PostgresConnection
    ) throws -> InboundOutcome {
        let keys = try requireKeys()
        let parser = MailParser(limits: rules.limits)
        let digest = SHA256.hash(raw)
        var reason: String?
        var parsed: InboundMessage?
        if truncated {
            reason = InboundUnmatchedReason.tooLarge
            parsed = try? parser.parseHeader(raw)
        } else {
            do {
                parsed = try parser.parse(raw)
            } catch {
                reason = error.reason
                parsed = try? parser.parseHeader(raw)
            }
        }
        let messageID = parsed?.messageID
        // The same bytes are the same message; another message under its Message-ID is not (anyone can write any id).
        if try InboundMessageStore.exists(digest: digest, on: connection) { return .duplicate }
        let from = parsed?.from?.address
        if reason == nil, let from,
            try InboundMessageStore.count(from: from, since: now.addingTimeInterval(-3600), on: connection) >= rules.senderLimit
        {
            reason = InboundUnmatchedReason.senderLimit
        }
        var match: (record: CaseRecord, by: InboundMatch)?
        if reason == nil, let parsed {
            match = try Self.match(parsed, rules: rules, keys: keys, on: connection)
            if match == nil { reason = InboundUnmatchedReason.noMatch }
            if match?.record.erasedAt != nil {
                match = nil
                reason = InboundUnmatchedReason.caseErased
            }
        }
        if let record = match?.record { try CaseStore.lock(id: record.id, on: connection) }
        var fromRescue = false
        if let record = match?.record, let from { fromRescue = try CaseMessages.isRescueAddress(from, of: record, on: connection) }
        let id = UUID()
        let key = keys.activeKey(for: .documents)
        let inserted = try InboundMessageStore.insert(
            NewInboundMessage(
                id: id, caseID: match?.record.id, matchedBy: match?.by, messageID: messageID, digest: digest, from: from,
                subject: parsed?.subject.map { String($0.prefix(998)) }, text: parsed?.text ?? "", receivedAt: now,
                auto: parsed?.isAutomatic ?? false, fromRescueAddress: fromRescue, unmatchedReason: reason,
                sealedRaw: SecretBox.seal(raw, key: key.key, associatedData: Self.inboundAssociatedData(id)), rawKeyID: key.id,
                rawSize: raw.count), on: connection)
        guard inserted else { return .duplicate }
        if let match, let parsed {
            try received(
                id, on: match.record, by: match.by, auto: parsed.isAutomatic, fromRescueAddress: fromRescue, attachments: parsed.attachments,
                at: now, on: connection)
        }
        return .stored(id: id, caseNumber: match?.record.number, matchedBy: match?.by, reason: reason)
    }

    /// What a message on a case causes (the caller holds the case's lock): the `message_received` event; from the rescue
    /// address, the risk signal and nothing else; automatic, nothing else; otherwise its attachments filed, the case marked `awaiting_reply`, and `message.received` for the partners.
    func received(
        _ id: UUID, on record: CaseRecord, by matchedBy: InboundMatch, auto: Bool, fromRescueAddress: Bool, attachments: [MailAttachment],
        actor: String = CaseOperations.systemActor, at now: Date, on connection: PostgresConnection
    ) throws {
        try CaseTimeline.append(
            .messageReceived(messageID: id, matchedBy: matchedBy, auto: auto, fromRescueAddress: fromRescueAddress), caseID: record.id,
            actor: actor, at: now, on: connection)
        if fromRescueAddress {
            try RiskSignals.raise(
                .mailFromRescueAddress, on: record, detail: "A mail from the case's rescue address arrived (message \(id.lowercased)).", by: actor,
                at: now, on: connection)
            return
        }
        if auto { return }
        try fileAttachments(attachments, message: id, on: record, at: now, on: connection)
        try InboundMessageStore.setAwaitingReply(true, caseID: record.id, on: connection)
        try CaseMessages.messageReceived(record, at: now, on: connection)
    }

    /// Files each attachment of an accepted media type (sniffed as uploads are: PDF, JPEG, PNG, HEIC, at most 10 MiB) as
    /// an unreviewed `mail_attachment` document naming the message (`details.inbound_message_id`); the rest stay in the
    /// sealed raw message. A finished case files none (`case_not_open` would refuse it), and a case holding
    /// `documentLimit` documents none beyond them (a mail cannot be answered 409: it is kept, its attachments in it).
    func fileAttachments(_ attachments: [MailAttachment], message id: UUID, on record: CaseRecord, at now: Date, on connection: PostgresConnection)
        throws
    {
        guard !attachments.isEmpty, record.snapshot.state.isOpen, record.snapshot.state != .merged else { return }
        let keys = try requireKeys()
        var room = try documentLimit - EvidenceStore.documentCount(caseID: record.id, on: connection)
        for attachment in attachments where !attachment.bytes.isEmpty && attachment.bytes.count <= DocumentUpload.maximumBytes {
            guard let type = sniffMediaType(Array(attachment.bytes.prefix(TranscriptTextCheck.headLength))) else { continue }
            guard room > 0 else { return }
            room -= 1
            let evidenceID = UUID()
            let name = attachment.fileName.map { " " + String($0.prefix(100)) } ?? ""
            _ = try insert(
                NewEvidence(
                    id: evidenceID, caseID: record.id, kind: .mailAttachment, matched: nil,
                    summary: "Mail attachment\(name), \(type.label), \(Self.size(attachment.bytes.count))",
                    details: ["inbound_message_id": .string(id.lowercased)],
                    sealedContent: EvidenceSealing.seal(attachment.bytes, id: evidenceID, keys: keys), sha256: SHA256.hash(attachment.bytes),
                    size: attachment.bytes.count, mediaType: type.rawValue, filedBy: Self.systemActor, filedAt: now), on: connection)
        }
    }

    /// An agent attaches an unmatched mail to a case (`matched_by: agent`): it becomes that case's message with what
    /// a matched one causes (the event, the rescue-address rule, `awaiting_reply`, `message.received`).
    public func attachInbound(_ id: UUID, to number: CaseNumber, by actor: String, at now: Date, on connection: PostgresConnection) throws
        -> InboundMessageRecord
    {
        guard let message = try InboundMessageStore.find(id: id, lock: true, on: connection) else { throw OperationError.inboundNotFound }
        guard message.caseID == nil, message.discardedAt == nil else { throw OperationError.inboundHandled }
        let record = try load(number, on: connection)
        guard record.erasedAt == nil else { throw OperationError.caseErased }
        try CaseStore.lock(id: record.id, on: connection)
        let fromRescue = try message.from.map { try CaseMessages.isRescueAddress($0, of: record, on: connection) } ?? false
        guard try InboundMessageStore.attach(id: id, caseID: record.id, fromRescueAddress: fromRescue, on: connection) else {
            throw OperationError.inboundHandled
        }
        // Its attachments: from the sealed raw message, parsed again (what was stored is its text).
        var attachments: [MailAttachment] = []
        if let raw = try InboundMessageStore.raw(id: id, on: connection), let key = try requireKeys().key(id: raw.keyID, purpose: .documents),
            let bytes = try? SecretBox.open(raw.sealed, key: key, associatedData: Self.inboundAssociatedData(id))
        {
            attachments = (try? MailParser().parse(bytes))?.attachments ?? []
        }
        try received(
            id, on: record, by: .agent, auto: message.auto, fromRescueAddress: fromRescue, attachments: attachments, actor: actor, at: now,
            on: connection)
        guard let attached = try InboundMessageStore.find(id: id, on: connection) else { throw OperationError.inboundNotFound }
        return attached
    }

    /// An agent discards an unmatched mail from the list (kept, with who and why; never deleted).
    public func discardInbound(_ id: UUID, reason: String, by actor: String, at now: Date, on connection: PostgresConnection) throws {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        if reason.isEmpty || reason.count > 2000 { throw OperationError.invalid(field: "reason", "A reason has 1 to 2000 characters.") }
        guard let message = try InboundMessageStore.find(id: id, lock: true, on: connection) else { throw OperationError.inboundNotFound }
        guard message.caseID == nil, message.discardedAt == nil,
            try InboundMessageStore.discard(id: id, by: actor, reason: reason, at: now, on: connection)
        else { throw OperationError.inboundHandled }
    }

    /// The case a message belongs to, in the contract's order: a valid reply token in any recipient header; then
    /// `In-Reply-To` or `References` naming a mail the service sent (the newest reference first); then a case number
    /// (check digit valid) in the subject from the case's contact address. A merged case's messages go to the case it
    /// went into, whose conversation it is now.
    static func match(_ message: InboundMessage, rules: InboundRules, keys: KeyFile, on connection: PostgresConnection) throws -> (
        record: CaseRecord, by: InboundMatch
    )? {
        func followingMerge(_ record: CaseRecord?) throws -> CaseRecord? {
            guard let record, record.snapshot.state == .merged, let into = record.mergedInto else { return record }
            return try CaseStore.find(number: into, on: connection) ?? record
        }
        for address in message.recipientAddresses {
            if let number = ReplyToken.caseNumber(in: address, base: rules.replyAddress, keys: keys),
                let record = try followingMerge(CaseStore.find(number: number.digits, on: connection))
            {
                return (record, .replyToken)
            }
        }
        for reference in message.inReplyTo + message.references.reversed() {
            guard let at = reference.firstIndex(of: "@"), let outboxID = UUID(uuidString: String(reference[..<at])) else { continue }
            if let caseID = try InboundMessageStore.caseOfSentMail(outboxID: outboxID, on: connection),
                let record = try followingMerge(CaseStore.find(id: caseID, on: connection))
            {
                return (record, .references)
            }
        }
        guard let sender = message.from?.address, let subject = message.subject else { return nil }
        for number in caseNumbers(in: subject) {
            guard let record = try CaseStore.find(number: number.digits, on: connection),
                EmailAddress.sameMailbox(sender, record.customerContactEmail)
            else { continue }
            return (try followingMerge(record) ?? record, .subject)
        }
        return nil
    }

    /// The case numbers a subject holds: 12 digits, written together or in groups (`4821 0937 5512`, `4821-0937-5512`),
    /// check digit valid; each once, in order.
    public static func caseNumbers(in subject: String) -> [CaseNumber] {
        let folded = subject.utf8.allSatisfy { $0 < 0x80 } ? subject : subject.precomposedStringWithCompatibilityMapping
        var found: [CaseNumber] = []
        var run = ""
        var digits = 0
        func flush() {
            if digits == 12, let number = try? CaseNumber(parsing: run), !found.contains(number) { found.append(number) }
            run = ""
            digits = 0
        }
        for character in folded {
            if character.isASCII && character.isNumber {
                run.append(character)
                digits += 1
            } else if (character == " " || character == "-") && digits > 0 && digits < 12 {
                run.append(character)
            } else {
                flush()
            }
        }
        flush()
        return found
    }
}
