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
    /// To every address on file for the account (never the rescue address): an unlock step will be done, when, and the
    /// "this wasn't me" link. Its secret is the stop link's token.
    case unlockScheduled = "unlock_scheduled"
    /// A one-time six-digit code an agent on the phone asked for, to verify the caller (api.md v1.3): sealed like a code.
    case callerCode = "caller_code"

    /// Whether the mail carries the access code (sealed in the outbox, rendered only at delivery).
    public var carriesAccessCode: Bool { self == .caseOpened || self == .accessCodeReissued }
    /// Whether the mail carries a stop link's token (sealed in the outbox like a code, rendered only at delivery).
    public var carriesStopLink: Bool { self == .unlockScheduled }
    /// Whether the mail carries a one-time caller code (sealed in the outbox like a code, rendered only at delivery).
    public var carriesCallerCode: Bool { self == .callerCode }
}

/// What a customer mail says of the case, as keys of the status page's sentences (`CustomerText`): its heading, its next
/// step and its notices, taken from the page's own `CustomerGuidance` when the mail is queued and rendered in the
/// customer's language at delivery. A mail therefore never promises what the page denies (api.md v1.2).
public struct CustomerMailStatus: Sendable, Equatable {
    /// The heading: the mail's status line.
    public let stage: CustomerText
    /// What happens next (nil in a mail queued before it was carried).
    public let nextStep: CustomerText?
    /// What is still needed, the list the next step refers to ("listed below").
    public let missing: [Requirement]
    /// The notices, never pay first.
    public let notices: [CustomerText]

    /// The status line, next step, missing list and notices of `guidance`.
    public init(_ guidance: CustomerGuidance) {
        self.init(stage: guidance.stage, nextStep: guidance.nextStep, missing: guidance.missing, notices: guidance.notices)
    }

    /// A status from its parts (a mail queued before next steps were carried has only the stage).
    public init(stage: CustomerText, nextStep: CustomerText?, missing: [Requirement] = [], notices: [CustomerText]) {
        self.stage = stage
        self.nextStep = nextStep
        self.missing = missing
        self.notices = notices.contains(.noticeNeverPay) ? notices : [.noticeNeverPay] + notices
    }

    /// The members of the outbox payload that carry it.
    public var payload: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "stage": .string(stage.rawValue), "notices": .array(notices.map { .string($0.rawValue) }),
            "missing": .array(missing.map { .string($0.rawValue) }),
        ]
        if let nextStep { members["next_step"] = .string(nextStep.rawValue) }
        return members
    }

    /// Read back from an outbox payload; nil without a known stage.
    public init?(payload: [String: JSONValue]) {
        guard case .string(let name)? = payload["stage"], let stage = CustomerText(rawValue: name) else { return nil }
        var next: CustomerText?
        if case .string(let name)? = payload["next_step"] { next = CustomerText(rawValue: name) }
        func list<T: RawRepresentable<String>>(_ key: String) -> [T] {
            guard case .array(let items)? = payload[key] else { return [] }
            return items.compactMap { if case .string(let name) = $0 { T(rawValue: name) } else { nil } }
        }
        self.init(stage: stage, nextStep: next, missing: list("missing"), notices: list("notices"))
    }
}

/// The webhook events of Standard Webhooks deliveries (api.md v1.1 "Notifications").
public enum WebhookEvent: String, Sendable, CaseIterable {
    case caseOpened = "case.opened"
    case caseStateChanged = "case.state_changed"
    case caseMerged = "case.merged"
    case evidenceFiled = "evidence.filed"
    case evidenceReviewed = "evidence.reviewed"
    case noteAdded = "note.added"
    /// A risk signal was raised on the case: its name only (`data.signal`), never the detail.
    case caseRiskRaised = "case.risk_raised"
    /// An unlock step was scheduled (the cooling-off begins): `step`, `effective_at`.
    case caseUnlockScheduled = "case.unlock_scheduled"
    /// A scheduled unlock step was cancelled: `step`, `by` (`agent`, `customer` or `system`).
    case caseUnlockCancelled = "case.unlock_cancelled"
    /// The service did a scheduled unlock step when its time came: `step`.
    case caseUnlockDone = "case.unlock_done"
    /// A new signed checkpoint of the transparency log, sent to every subscribed endpoint of any client.
    case auditCheckpoint = "audit.checkpoint"
    /// A reply from the customer reached the case: the case number and the time only (no text, no address).
    case messageReceived = "message.received"
}

/// Writes the messages a change causes into the outbox, in the operation's transaction: commit and message are one.
/// Every operation with a customer-visible effect calls one of these once.
public enum CaseMessages {
    /// Associated data of a sealed outbox secret: the message id, so a sealed code cannot be moved to another message.
    public static func secretAssociatedData(_ messageID: UUID) -> [UInt8] { Array("outbox:\(messageID.lowercased)".utf8) }

    /// Whether `address` reaches the thief's mailbox, as mail providers read addresses (`EmailAddress.sameMailbox`:
    /// case, `+tag`, Gmail's dots): the case's rescue address, one it recorded before, or one any case of its account
    /// recorded (api.md v1.3 "What the thief added is never forgotten").
    public static func isRescueAddress(_ address: String, of record: CaseRecord, on connection: PostgresConnection) throws -> Bool {
        let own = record.rescueEmail.map { [$0] + record.formerRescueEmails } ?? record.formerRescueEmails
        if own.contains(where: { EmailAddress.sameMailbox(address, $0) }) { return true }
        guard record.erasedAt == nil else { return false }
        return try CaseStore.accountRescueAddresses(email: record.accountEmail, on: connection).contains { EmailAddress.sameMailbox(address, $0) }
    }

    /// Before a queued mail is sent: whether its recipient now reaches the case's rescue address (one recorded after it
    /// was queued, or a mail queued under an older rule); if so `mail_refused` is appended, and the mail must not go.
    public static func refusesDelivery(_ message: OutboxMessage, at now: Date, on connection: PostgresConnection) throws -> Bool {
        guard message.channel == .mail, let caseID = message.caseID, let recipient = message.recipient,
            let record = try CaseStore.find(id: caseID, on: connection), try isRescueAddress(recipient, of: record, on: connection)
        else { return false }
        try CaseStore.lock(id: caseID, on: connection)  // appends to one case's timeline are serial
        try CaseTimeline.append(.mailRefused(kind: message.kind, reason: "rescue_address"), caseID: caseID, actor: "system", at: now, on: connection)
        return true
    }

    /// Queues a mail to the customer's contact address (or to `recipient`), or records the refusal when that is the
    /// rescue address. A code-carrying mail seals the code with the `documents` key; the queued row never holds it in
    /// clear. What the mail says of the case is the status page's guidance (`CustomerMailStatus`) for `record` in
    /// `state`, or for `status` when given (the case a merged one went into, which its customer's page now shows).
    /// `extra` joins the payload (never a secret). False when the mail was refused (the rescue address).
    @discardableResult
    public static func mail(
        _ kind: CustomerMailKind, for record: CaseRecord, state: CaseState, showing status: CaseRecord? = nil,
        accessCode: AccessCode? = nil, keys: KeyFile?, at now: Date, on connection: PostgresConnection,
        to recipient: String? = nil, extra: [String: JSONValue] = [:], stopToken: String? = nil, callerCode: String? = nil
    ) throws -> Bool {
        let recipient = recipient ?? record.customerContactEmail
        if try isRescueAddress(recipient, of: record, on: connection) {
            try CaseTimeline.append(
                .mailRefused(kind: kind.rawValue, reason: "rescue_address"), caseID: record.id, actor: "system", at: now, on: connection)
            return false
        }
        let id = UUID()
        var sealed: (bytes: [UInt8], keyID: String)?
        if kind.carriesAccessCode {
            guard let accessCode, let keys else { throw OperationError.keysUnavailable }
            let key = keys.activeKey(for: .documents)
            sealed = (SecretBox.seal(Array(accessCode.symbols.utf8), key: key.key, associatedData: secretAssociatedData(id)), key.id)
        } else if kind.carriesStopLink {
            guard let stopToken, let keys else { throw OperationError.keysUnavailable }
            let key = keys.activeKey(for: .documents)
            sealed = (SecretBox.seal(Array(stopToken.utf8), key: key.key, associatedData: secretAssociatedData(id)), key.id)
        } else if kind.carriesCallerCode {
            guard let callerCode, let keys else { throw OperationError.keysUnavailable }
            let key = keys.activeKey(for: .documents)
            sealed = (SecretBox.seal(Array(callerCode.utf8), key: key.key, associatedData: secretAssociatedData(id)), key.id)
        }
        // The status page's guidance for the case as it now stands, with its evidence: the mail says what the page says.
        let shown = status ?? record
        var snapshot = shown.snapshot
        if status == nil { snapshot.state = state }
        let evidence = try EvidenceStore.list(caseID: shown.id, on: connection).map {
            FiledEvidence(kind: $0.countsAs, status: $0.status, customerReason: $0.customerReason)
        }
        let guidance = CustomerGuidance(state: snapshot.state, path: snapshot.path, kind: snapshot.kind, facts: snapshot.facts, evidence: evidence)
        var payload: [String: JSONValue] = [
            "case_number": .string(record.number), "state": .string(snapshot.state.rawValue),
            "language": .string(CustomerLanguage.ofMail(caseLanguage: record.language).rawValue),
        ]
        payload.merge(CustomerMailStatus(guidance).payload) { $1 }
        payload.merge(extra) { own, _ in own }
        try OutboxStore.insert(
            NewOutboxMessage(
                id: id, channel: .mail, caseID: record.id, recipient: recipient, kind: kind.rawValue,
                payload: .object(payload), sealedSecret: sealed), now: now, on: connection)
        // The newest human message on the case is now ours: it no longer waits for an answer.
        try InboundMessageStore.setAwaitingReply(false, caseID: record.id, on: connection)
        return true
    }

    /// `message.received` for the partners who opened the case or filed into it: the case number and the time, nothing
    /// of the message (no text, no address).
    static func messageReceived(_ record: CaseRecord, at now: Date, on connection: PostgresConnection) throws {
        let data: JSONValue = ["case_number": .string(record.number), "received_at": Timestamp.json(now)]
        let body: JSONValue = ["type": .string(WebhookEvent.messageReceived.rawValue), "timestamp": Timestamp.json(now), "data": data]
        try OutboxStore.insertWebhooks(
            event: WebhookEvent.messageReceived.rawValue, caseID: record.id, body: body.canonical, now: now, on: connection)
    }

    /// Queues `event` for every subscribed endpoint of the API clients that opened the case or filed into it.
    /// The body is fixed here (`{"type", "timestamp", "data"}`), so every attempt signs the same bytes.
    public static func webhook(
        _ event: WebhookEvent, for record: CaseRecord, state: CaseState, data extra: [String: JSONValue] = [:],
        at now: Date, on connection: PostgresConnection
    ) throws {
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
    static func transitioned(_ record: CaseRecord, _ decision: TransitionDecision, keys: KeyFile?, at now: Date, on connection: PostgresConnection)
        throws
    {
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
    static func documentRejected(
        _ record: CaseRecord, reason: CustomerReason, from before: CaseState, keys: KeyFile?,
        at now: Date, on connection: PostgresConnection
    ) throws {
        let after = record.snapshot.state
        try mail(
            .documentRejected, for: record, state: after, keys: keys, at: now, on: connection,
            extra: ["customer_reason": .string(reason.rawValue)])
        if after != before {
            try webhook(.caseStateChanged, for: record, state: after, data: ["previous_state": .string(before.rawValue)], at: now, on: connection)
        }
    }

    /// The messages of a re-issued access code: the mail carrying the new code (sealed); no webhook, the code is the customer's.
    /// False when the mail was refused (the contact address is the rescue address).
    static func reissued(_ record: CaseRecord, code: AccessCode, keys: KeyFile?, at now: Date, on connection: PostgresConnection) throws -> Bool {
        try mail(.accessCodeReissued, for: record, state: record.snapshot.state, accessCode: code, keys: keys, at: now, on: connection)
    }

    /// The one-time code to verify a caller, to the contact address (sealed; no webhook). False when refused (the rescue
    /// address).
    static func callerCode(_ record: CaseRecord, code: String, expiresAt: Date, keys: KeyFile?, at now: Date, on connection: PostgresConnection)
        throws -> Bool
    {
        try mail(
            .callerCode, for: record, state: record.snapshot.state, keys: keys, at: now, on: connection,
            extra: ["expires_at": Timestamp.json(expiresAt)], callerCode: code)
    }

    /// The messages of a merge: the merged mail, stating the status of the case it went into (which the customer's
    /// page now shows, api.md v1.2); `case.merged` naming it.
    static func merged(
        _ record: CaseRecord, into target: CaseRecord, from before: CaseState, keys: KeyFile?, at now: Date,
        on connection: PostgresConnection
    ) throws {
        try mail(.merged, for: record, state: target.snapshot.state, showing: target, keys: keys, at: now, on: connection)
        try webhook(
            .caseMerged, for: record, state: .merged,
            data: ["merged_into": .string(target.number), "previous_state": .string(before.rawValue)], at: now, on: connection)
    }

    /// The messages of a corrected contact address: the previous address is told, with the new one masked (it may be a
    /// typo that reaches a stranger, who learns nothing about the case from it), never when it reaches the rescue
    /// address the case had before the correction or has now (`mail_refused` records that). No webhook: nothing the
    /// partner follows changed.
    static func contactChanged(
        _ record: CaseRecord, previous: String, previousRescue: String?, keys: KeyFile?, at now: Date,
        on connection: PostgresConnection
    ) throws {
        if let previousRescue, EmailAddress.sameMailbox(previous, previousRescue) {
            try CaseTimeline.append(
                .mailRefused(kind: CustomerMailKind.contactChanged.rawValue, reason: "rescue_address"), caseID: record.id,
                actor: "system", at: now, on: connection)
            return
        }
        try mail(
            .contactChanged, for: record, state: record.snapshot.state, keys: keys, at: now, on: connection, to: previous,
            extra: ["new_address": .string(EmailAddress.masked(record.customerContactEmail))])
    }
}
