import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// The mails the customer receives, by template name (stored in `outbox.kind`).
public enum CustomerMailKind: String, Sendable, CaseIterable {
    /// The case number, the access code and the status link: the only mail with a secret.
    case caseOpened = "case_opened"
    /// A new access code (an agent re-issued it): a secret too.
    case accessCodeReissued = "access_code_reissued"
    case stateChanged = "state_changed"
    case documentsRequested = "documents_requested"
    case customerNote = "customer_note"
    case merged
    /// A document was not accepted: the customer's reason, and what the case now waits for.
    case documentRejected = "document_rejected"
    /// To the previous contact address, when an agent changed it: the new one masked, and whom to call if this was not them.
    case contactChanged = "contact_changed"

    /// Whether the mail carries the access code (sealed in the outbox, rendered only at delivery).
    public var carriesAccessCode: Bool { self == .caseOpened || self == .accessCodeReissued }
}

/// The webhook events of Standard Webhooks deliveries (api.md v1.1 "Notifications").
public enum WebhookEvent: String, Sendable, CaseIterable {
    case caseOpened = "case.opened"
    case caseStateChanged = "case.state_changed"
    case caseMerged = "case.merged"
    case evidenceFiled = "evidence.filed"
    case evidenceReviewed = "evidence.reviewed"
    case noteAdded = "note.added"
    /// A new signed checkpoint of the transparency log, sent to every subscribed endpoint of any client.
    case auditCheckpoint = "audit.checkpoint"
}

/// Writes the messages a change causes into the outbox, in the operation's transaction: commit and message are one.
/// Every operation with a customer-visible effect calls one of these once.
public enum CaseMessages {
    /// Associated data of a sealed outbox secret: the message id, so a sealed code cannot be moved to another message.
    public static func secretAssociatedData(_ messageID: UUID) -> [UInt8] { Array("outbox:\(messageID.lowercased)".utf8) }

    /// Whether `address` reaches the thief's mailbox (the rescue address on the case), as mail providers read
    /// addresses (`EmailAddress.sameMailbox`: case, `+tag`, Gmail's dots).
    public static func isRescueAddress(_ address: String, of record: CaseRecord) -> Bool {
        guard let rescue = record.rescueEmail else { return false }
        return EmailAddress.sameMailbox(address, rescue)
    }

    /// Before a queued mail is sent: whether its recipient now reaches the case's rescue address (one recorded after it
    /// was queued, or a mail queued under an older rule); if so `mail_refused` is appended, and the mail must not go.
    public static func refusesDelivery(_ message: OutboxMessage, at now: Date, on connection: PostgresConnection) throws -> Bool {
        guard message.channel == .mail, let caseID = message.caseID, let recipient = message.recipient,
              let record = try CaseStore.find(id: caseID, on: connection), isRescueAddress(recipient, of: record) else { return false }
        try CaseStore.lock(id: caseID, on: connection)  // appends to one case's timeline are serial
        try CaseTimeline.append(.mailRefused(kind: message.kind, reason: "rescue_address"), caseID: caseID, actor: "system", at: now, on: connection)
        return true
    }

    /// Queues a mail to the customer's contact address (or to `recipient`), or records the refusal when that is the
    /// rescue address. A code-carrying mail seals the code with the `documents` key; the queued row never holds it in
    /// clear. `extra` joins the payload (never a secret); the state line reads `evidence` as the page does when given.
    public static func mail(_ kind: CustomerMailKind, for record: CaseRecord, state: CaseState, accessCode: AccessCode? = nil, keys: KeyFile?,
                            evidence: [FiledEvidence] = [], at now: Date, on connection: PostgresConnection, to recipient: String? = nil,
                            extra: [String: JSONValue] = [:]) throws {
        let recipient = recipient ?? record.customerContactEmail
        if isRescueAddress(recipient, of: record) {
            try CaseTimeline.append(.mailRefused(kind: kind.rawValue, reason: "rescue_address"), caseID: record.id, actor: "system", at: now, on: connection)
            return
        }
        let id = UUID()
        var sealed: (bytes: [UInt8], keyID: String)?
        if kind.carriesAccessCode {
            guard let accessCode, let keys else { throw OperationError.keysUnavailable }
            let key = keys.activeKey(for: .documents)
            sealed = (SecretBox.seal(Array(accessCode.symbols.utf8), key: key.key, associatedData: secretAssociatedData(id)), key.id)
        }
        // The status page's heading for the case as it now stands (from the evidence when given): the mail says the same.
        let snapshot = record.snapshot
        let stage = CustomerGuidance(state: state, path: snapshot.path, kind: snapshot.kind, facts: snapshot.facts, evidence: evidence).stage
        var payload: [String: JSONValue] = ["case_number": .string(record.number), "state": .string(state.rawValue), "stage": .string(stage.rawValue),
                                            "language": .string(CustomerLanguage.ofMail(caseLanguage: record.language).rawValue)]
        payload.merge(extra) { own, _ in own }
        try OutboxStore.insert(NewOutboxMessage(id: id, channel: .mail, caseID: record.id, recipient: recipient, kind: kind.rawValue,
                                                payload: .object(payload), sealedSecret: sealed), now: now, on: connection)
    }

    /// Queues `event` for every subscribed endpoint of the API clients that opened the case or filed into it.
    /// The body is fixed here (`{"type", "timestamp", "data"}`), so every attempt signs the same bytes.
    public static func webhook(_ event: WebhookEvent, for record: CaseRecord, state: CaseState, data extra: [String: JSONValue] = [:],
                               at now: Date, on connection: PostgresConnection) throws {
        var data = extra
        data["case_number"] = .string(record.number)
        data["state"] = .string(state.rawValue)
        let body: JSONValue = ["type": .string(event.rawValue), "timestamp": Timestamp.json(now), "data": .object(data)]
        try OutboxStore.insertWebhooks(event: event.rawValue, caseID: record.id, body: body.canonical, now: now, on: connection)
    }

    /// The messages of an opened case: the mail with its number, access code and link; `case.opened`.
    static func opened(_ opened: CaseOperations.Opened, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws {
        let state = opened.record.snapshot.state
        try mail(.caseOpened, for: opened.record, state: state, accessCode: opened.accessCode, keys: keys, at: now, on: connection)
        try webhook(.caseOpened, for: opened.record, state: state, at: now, on: connection)
    }

    /// The messages of a transition: a mail when the state the customer sees changed (documents requested has its
    /// own); `case.state_changed` with the previous state.
    static func transitioned(_ record: CaseRecord, _ decision: TransitionDecision, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws {
        guard decision.before.state != decision.after.state else { return }
        try stateChanged(record, from: decision.before.state, keys: keys, at: now, on: connection)
    }

    /// The messages of a case now in a different state than `before` (a transition or an undone merge): a mail
    /// (documents requested has its own); `case.state_changed` with the previous state.
    static func stateChanged(_ record: CaseRecord, from before: CaseState, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws {
        let after = record.snapshot.state
        let kind: CustomerMailKind = after == .awaitingDocuments ? .documentsRequested : .stateChanged
        try mail(kind, for: record, state: after, keys: keys, at: now, on: connection)
        try webhook(.caseStateChanged, for: record, state: after, data: ["previous_state": .string(before.rawValue)], at: now, on: connection)
    }

    /// The messages of a rejected document: the mail with the customer's reason and the state as it now stands (the
    /// case may have returned to `awaiting_documents` by itself); `case.state_changed` when it did.
    static func documentRejected(_ record: CaseRecord, reason: CustomerReason, from before: CaseState, evidence: [FiledEvidence], keys: KeyFile?,
                                 at now: Date, on connection: PostgresConnection) throws {
        let after = record.snapshot.state
        try mail(.documentRejected, for: record, state: after, keys: keys, evidence: evidence, at: now, on: connection,
                 extra: ["customer_reason": .string(reason.rawValue)])
        if after != before {
            try webhook(.caseStateChanged, for: record, state: after, data: ["previous_state": .string(before.rawValue)], at: now, on: connection)
        }
    }

    /// The messages of a re-issued access code: the mail carrying the new code (sealed); no webhook, the code is the customer's.
    static func reissued(_ record: CaseRecord, code: AccessCode, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws {
        try mail(.accessCodeReissued, for: record, state: record.snapshot.state, accessCode: code, keys: keys, at: now, on: connection)
    }

    /// The messages of a merge: the merged mail (the customer follows the case it went into); `case.merged` naming it.
    static func merged(_ record: CaseRecord, into target: CaseRecord, from before: CaseState, keys: KeyFile?, at now: Date,
                       on connection: PostgresConnection) throws {
        try mail(.merged, for: record, state: .merged, keys: keys, at: now, on: connection)
        try webhook(.caseMerged, for: record, state: .merged,
                    data: ["merged_into": .string(target.number), "previous_state": .string(before.rawValue)], at: now, on: connection)
    }

    /// The messages of a corrected contact address: the previous address is told, with the new one masked (it may be a
    /// typo that reaches a stranger, who learns nothing about the case from it), never when it reaches the rescue
    /// address the case had before the correction or has now (`mail_refused` records that). No webhook: nothing the
    /// partner follows changed.
    static func contactChanged(_ record: CaseRecord, previous: String, previousRescue: String?, keys: KeyFile?, at now: Date,
                               on connection: PostgresConnection) throws {
        if let previousRescue, EmailAddress.sameMailbox(previous, previousRescue) {
            try CaseTimeline.append(.mailRefused(kind: CustomerMailKind.contactChanged.rawValue, reason: "rescue_address"), caseID: record.id,
                                    actor: "system", at: now, on: connection)
            return
        }
        try mail(.contactChanged, for: record, state: record.snapshot.state, keys: keys, at: now, on: connection, to: previous,
                 extra: ["new_address": .string(EmailAddress.masked(record.customerContactEmail))])
    }
}
