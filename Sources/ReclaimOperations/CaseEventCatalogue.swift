import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Every type of timeline event, by the name stored in `case_events.type` (the dashboard reads these names).
public enum CaseEventType: String, Sendable, CaseIterable {
    case caseOpened = "case_opened"
    case transition
    case resetSent = "reset_sent"
    case noteAdded = "note_added"
    case assigned
    case frozen
    case evidenceFiled = "evidence_filed"
    case evidenceReviewed = "evidence_reviewed"
    case evidenceContentRead = "evidence_content_read"
    case denied
    case unlockDone = "unlock_done"
    case unfrozen
    case unassigned
    case documentArrived = "document_arrived"
    case accessCodeReissued = "access_code_reissued"
    case merged
    case mergeReceived = "merge_received"
    case unmerged
    case unmergeLeft = "unmerge_left"
    case mailRefused = "mail_refused"
    case caseCorrected = "case_corrected"
    case caseErased = "case_erased"
    case riskRaised = "risk_raised"
    case riskCleared = "risk_cleared"
    case unlockScheduled = "unlock_scheduled"
    case unlockCancelled = "unlock_cancelled"
    case handedBack = "handed_back"
    case messageReceived = "message_received"
    case callerVerified = "caller_verified"
    case callerCodeMailed = "caller_code_mailed"
    case callerCodeLocked = "caller_code_locked"

    /// The members of this event's data that identify the customer or may (an address, an agent's free-text reason, how
    /// a caller was verified): the hash chain covers them only as salted commitments, so erasure can delete the values
    /// and the timeline still verifies (api.md v1.2, "Personal data has an end").
    public var personalFields: Set<String> {
        switch self {
        case .resetSent: ["to"]
        case .frozen, .unfrozen: ["account_email"]
        case .transition, .evidenceReviewed, .unlockDone, .merged, .mergeReceived, .unmerged, .unmergeLeft, .riskCleared,
            .unlockScheduled, .unlockCancelled:
            ["reason"]
        case .accessCodeReissued: ["caller_check"]
        // A flag's detail is the agent's own words.
        case .riskRaised: ["detail"]
        case .caseOpened, .noteAdded, .assigned, .evidenceFiled, .evidenceContentRead, .denied, .unassigned, .documentArrived,
            .mailRefused, .caseCorrected, .caseErased,
            // How and until when a caller was verified, or a code mailed: never a code, never an address.
            .callerVerified, .callerCodeMailed, .callerCodeLocked,
            // The service's own words: why it handed the case back.
            .handedBack,
            // Its id and how it matched: the sender and the text are the stored message's, which erasure clears.
            .messageReceived:
            []
        }
    }
}

/// One timeline event with its data: the only way operations write to a case's timeline, so each event's
/// shape is declared once. The data is what the hash chain covers; it never holds a secret.
public enum CaseEventEntry: Sendable {
    case caseOpened(kind: CaseKind, state: CaseState, path: RecoveryPath, dueAt: Date?)
    case transition(TransitionDecision)
    /// The reset went to the verified primary address on file: never the customer's contact or a rescue address.
    case resetSent(to: String)
    case noteAdded(noteID: UUID, visibility: NoteVisibility)
    case assigned(agentID: UUID, previous: UUID?)
    case frozen(accountEmail: String)
    case evidenceFiled(evidenceID: UUID, kind: EvidenceKind)
    /// A review; a rejected document's carries the reason the customer reads (`customer_reason`).
    case evidenceReviewed(evidenceID: UUID, kind: EvidenceKind, decision: EvidenceStatus, reason: String, customerReason: CustomerReason? = nil)
    case evidenceContentRead(evidenceID: UUID, kind: EvidenceKind)
    /// An attempt refused for want of permission: what was tried, never the request's body.
    case denied(attempted: String, code: String, evidenceID: UUID?)
    /// Engineering undid one thing the thief changed (one checklist step).
    case unlockDone(step: UnlockKind, reason: String?)
    /// The freeze was lifted: by an agent (`cause` "lifted") or by the case finishing (`cause` the state it entered).
    case unfrozen(accountEmail: String, cause: String)
    /// The case moved to a desk above its assignee's, so nobody holds it until someone there takes it.
    case unassigned(previous: UUID, state: CaseState)
    /// A document arrived while the case waited for documents; `unreviewed` counts the pending documents with it.
    case documentArrived(evidenceID: UUID, kind: EvidenceKind, unreviewed: Int)
    /// A new access code replaced a lost one (the actor is who did it; never the code) and the status lock was cleared;
    /// `callerCheck` says how the caller it was read out to was verified (v1.2's free text, kept for old events);
    /// `readOutAfter`, how the caller it was read out to was verified (v1.3); both nil: only mailed to the contact address.
    case accessCodeReissued(callerCheck: String?, readOutAfter: CallCodes.Method? = nil)
    /// An agent checked a caller's proof (the customer code, or a mailed one-time code): verified until `until`, for them.
    case callerVerified(method: CallCodes.Method, until: Date)
    /// A one-time code was mailed to the contact address to verify a caller; it works until `until`.
    case callerCodeMailed(until: Date)
    /// Wrong call codes spent the case's look-up budget: proofs and the status page are refused until `until`.
    case callerCodeLocked(method: CallCodes.Method, until: Date)
    /// This case was merged into `into` (it left `from`); its evidence and notes count there now. `confirmedDifferences`:
    /// the customer fields that differed and that the agent confirmed as one person (empty when none differed).
    case merged(into: String, from: CaseState, reason: String?, confirmedDifferences: [String] = [])
    /// Case `from` was merged into this one.
    case mergeReceived(from: String, reason: String?)
    /// The merge was undone: back to `to`, its items left `from`.
    case unmerged(from: String, to: CaseState, reason: String?)
    /// Case `caseNumber`, merged into this one, was unmerged; its items left.
    case unmergeLeft(caseNumber: String, reason: String?)
    /// A mail not sent because its address is the rescue address the thief added (never the address itself).
    case mailRefused(kind: String, reason: String)
    /// An agent corrected the case's details (`PATCH`): see `CaseCorrectionEvent`.
    case caseCorrected(CaseCorrectionEvent)
    /// What identified the customer was erased (by an admin, or by the retention worker as `system`); never a value.
    case caseErased(byRetention: Bool)
    /// A risk signal was raised (`RiskSignals.raise`); `detail` and `otherCases` are for agents (the timeline is theirs).
    case riskRaised(signal: RiskSignal, detail: String, otherCases: [String])
    /// A tier-3 or engineering agent cleared these signals, with a reason.
    case riskCleared(signals: [RiskSignal], reason: String)
    /// Engineering recorded an unlock step: the service does it at `effectiveAt` (the cooling-off), and every address
    /// on file was told (`notified`: how many mails were queued).
    case unlockScheduled(step: UnlockKind, effectiveAt: Date, reason: String?, notified: Int)
    /// A scheduled step will not be done: cancelled by an engineer, by the customer's stop link (actor `customer`), or by
    /// the service when the case left engineering before its time.
    case unlockCancelled(step: UnlockKind, reason: String)
    /// The service handed the case back to an earlier desk (`from` → `to`) for a reason no agent gave: a repudiation.
    case handedBack(from: CaseState, to: CaseState, reason: String)
    /// A mail from the customer (or anyone) reached the case: the stored message's id and how it matched, never its
    /// sender or text (the timeline cannot be erased; the message can).
    case messageReceived(messageID: UUID, matchedBy: InboundMatch, auto: Bool, fromRescueAddress: Bool)

    /// The stored type name.
    public var type: CaseEventType {
        switch self {
        case .caseOpened: .caseOpened
        case .transition: .transition
        case .resetSent: .resetSent
        case .noteAdded: .noteAdded
        case .assigned: .assigned
        case .frozen: .frozen
        case .evidenceFiled: .evidenceFiled
        case .evidenceReviewed: .evidenceReviewed
        case .evidenceContentRead: .evidenceContentRead
        case .denied: .denied
        case .unlockDone: .unlockDone
        case .unfrozen: .unfrozen
        case .unassigned: .unassigned
        case .documentArrived: .documentArrived
        case .accessCodeReissued: .accessCodeReissued
        case .callerVerified: .callerVerified
        case .callerCodeMailed: .callerCodeMailed
        case .callerCodeLocked: .callerCodeLocked
        case .merged: .merged
        case .mergeReceived: .mergeReceived
        case .unmerged: .unmerged
        case .unmergeLeft: .unmergeLeft
        case .mailRefused: .mailRefused
        case .caseCorrected: .caseCorrected
        case .caseErased: .caseErased
        case .riskRaised: .riskRaised
        case .riskCleared: .riskCleared
        case .unlockScheduled: .unlockScheduled
        case .unlockCancelled: .unlockCancelled
        case .handedBack: .handedBack
        case .messageReceived: .messageReceived
        }
    }

    /// The event's data object.
    public var data: JSONValue {
        switch self {
        case .caseOpened(let kind, let state, let path, let dueAt):
            return [
                "kind": .string(kind.rawValue), "state": .string(state.rawValue), "path": .string(path.rawValue), "due_at": Timestamp.json(dueAt),
            ]
        case .transition(let decision):
            var data: [String: JSONValue] = [
                "action": .string(decision.action.rawValue), "from": .string(decision.before.state.rawValue),
                "to": .string(decision.after.state.rawValue), "path": .string(decision.after.path.rawValue),
                "due_at": Timestamp.json(decision.dueAt), "reason": .optional(decision.reason),
            ]
            if let unlock = decision.unlock { data["unlock"] = .string(unlock.rawValue) }
            if let verification = decision.verification {
                data["factors"] = .object(
                    Dictionary(uniqueKeysWithValues: verification.factors.map { ($0.key.rawValue, JSONValue.string($0.value.rawValue)) }))
            }
            return .object(data)
        case .resetSent(let to):
            return ["to": .string(to), "destination": "verified_primary_address"]
        case .noteAdded(let noteID, let visibility):
            return ["note_id": .string(noteID.lowercased), "visibility": .string(visibility.rawValue)]
        case .assigned(let agentID, let previous):
            return ["agent_id": .string(agentID.lowercased), "previous": .optional(previous?.lowercased)]
        case .frozen(let accountEmail):
            return ["account_email": .string(accountEmail)]
        case .evidenceFiled(let evidenceID, let kind):
            return ["evidence_id": .string(evidenceID.lowercased), "type": .string(kind.rawValue)]
        case .evidenceReviewed(let evidenceID, let kind, let decision, let reason, let customerReason):
            var data: [String: JSONValue] = [
                "evidence_id": .string(evidenceID.lowercased), "type": .string(kind.rawValue),
                "decision": .string(decision.rawValue), "reason": .string(reason),
            ]
            if let customerReason { data["customer_reason"] = .string(customerReason.rawValue) }
            return .object(data)
        case .evidenceContentRead(let evidenceID, let kind):
            return ["evidence_id": .string(evidenceID.lowercased), "type": .string(kind.rawValue)]
        case .denied(let attempted, let code, let evidenceID):
            var data: [String: JSONValue] = ["attempted": .string(attempted), "code": .string(code)]
            if let evidenceID { data["evidence_id"] = .string(evidenceID.lowercased) }
            return .object(data)
        case .unlockDone(let step, let reason):
            return ["step": .string(step.rawValue), "reason": .optional(reason)]
        case .unlockScheduled(let step, let effectiveAt, let reason, let notified):
            return [
                "step": .string(step.rawValue), "effective_at": Timestamp.json(effectiveAt), "reason": .optional(reason),
                "notified": .int(Int64(notified)),
            ]
        case .unlockCancelled(let step, let reason):
            return ["step": .string(step.rawValue), "reason": .string(reason)]
        case .handedBack(let from, let to, let reason):
            return ["from": .string(from.rawValue), "to": .string(to.rawValue), "reason": .string(reason)]
        case .unfrozen(let accountEmail, let cause):
            return ["account_email": .string(accountEmail), "cause": .string(cause)]
        case .unassigned(let previous, let state):
            return ["previous": .string(previous.lowercased), "state": .string(state.rawValue)]
        case .documentArrived(let evidenceID, let kind, let unreviewed):
            return ["evidence_id": .string(evidenceID.lowercased), "type": .string(kind.rawValue), "unreviewed_documents": .int(Int64(unreviewed))]
        case .accessCodeReissued(let callerCheck, let readOutAfter):
            var data: [String: JSONValue] = ["status_lock_cleared": .bool(true), "caller_check": .optional(callerCheck)]
            if let readOutAfter { data["read_out_after"] = .string(readOutAfter.rawValue) }
            return .object(data)
        case .callerVerified(let method, let until):
            return ["method": .string(method.rawValue), "verified_until": Timestamp.json(until)]
        case .callerCodeMailed(let until):
            return ["expires_at": Timestamp.json(until)]
        case .callerCodeLocked(let method, let until):
            return ["method": .string(method.rawValue), "locked_until": Timestamp.json(until)]
        case .merged(let into, let from, let reason, let confirmed):
            var data: [String: JSONValue] = ["into": .string(into), "from_state": .string(from.rawValue), "reason": .optional(reason)]
            if !confirmed.isEmpty {
                data["same_customer_confirmed"] = .bool(true)
                data["differing"] = .array(confirmed.map { .string($0) })
            }
            return .object(data)
        case .mergeReceived(let from, let reason):
            return ["from_case": .string(from), "reason": .optional(reason)]
        case .unmerged(let from, let to, let reason):
            return ["from": .string(from), "to_state": .string(to.rawValue), "reason": .optional(reason)]
        case .unmergeLeft(let caseNumber, let reason):
            return ["case_number": .string(caseNumber), "reason": .optional(reason)]
        case .mailRefused(let kind, let reason):
            return ["mail": .string(kind), "reason": .string(reason)]
        case .caseCorrected(let correction):
            return correction.data
        case .caseErased(let byRetention):
            return ["cause": byRetention ? "retention" : "request"]
        case .riskRaised(let signal, let detail, let otherCases):
            return ["signal": .string(signal.rawValue), "detail": .string(detail), "other_cases": .array(otherCases.map(JSONValue.string))]
        case .riskCleared(let signals, let reason):
            return ["signals": .array(signals.map { .string($0.rawValue) }), "reason": .string(reason)]
        case .messageReceived(let messageID, let matchedBy, let auto, let fromRescueAddress):
            return [
                "message_id": .string(messageID.lowercased), "matched_by": .string(matchedBy.rawValue), "auto": .bool(auto),
                "from_rescue_address": .bool(fromRescueAddress),
            ]
        }
    }
}

/// What a correction changed, as its `case_corrected` event records it: the fields by their API names, each fact's new
/// value, what happened to the rescue address (`added`, `changed`, `removed`) and to the devices (how many added and
/// removed), the new language (null: not known), the path and unlock checklist when they followed. Never a personal
/// value (a name, an address, a serial, the summary): the timeline cannot be rewritten, while the case's own fields
/// can be erased, and the case shows what they are now.
public struct CaseCorrectionEvent: Sendable {
    /// The fields changed, by their API names (`customer.name`, `facts.two_step_enabled`, `devices`…).
    public var fields: [String]
    /// Each fact that changed, with its new value.
    public var facts: [(fact: CaseFact, value: Bool)] = []
    /// What happened to the rescue address: `added`, `changed` or `removed` (never the address).
    public var rescueEmail: String?
    /// How many devices were added and removed.
    public var devices: (added: Int, removed: Int)?
    /// The new language, when it changed (`.some(nil)`: now not known).
    public var language: CustomerLanguage??
    /// The path before and after, when the facts moved it.
    public var path: (from: RecoveryPath, to: RecoveryPath)?
    /// The unlock checklist after, when the facts changed it.
    public var unlocksRequired: [UnlockKind]?

    /// An event naming `fields`; the rest is set for what changed.
    public init(fields: [String]) { self.fields = fields }

    /// The event's data object; members other than `fields` only for what changed.
    var data: JSONValue {
        var data: [String: JSONValue] = ["fields": .array(fields.map(JSONValue.string))]
        if !facts.isEmpty { data["facts"] = .object(Dictionary(uniqueKeysWithValues: facts.map { ($0.fact.rawValue, JSONValue.bool($0.value)) })) }
        if let rescueEmail { data["rescue_email"] = .string(rescueEmail) }
        if let devices { data["devices"] = ["added": .int(Int64(devices.added)), "removed": .int(Int64(devices.removed))] }
        if let language { data["language"] = .optional(language?.rawValue) }
        if let path { data["path"] = ["from": .string(path.from.rawValue), "to": .string(path.to.rawValue)] }
        if let unlocksRequired { data["unlocks_required"] = .array(unlocksRequired.map { .string($0.rawValue) }) }
        return .object(data)
    }
}

/// Appending catalogue entries; the caller holds the case's row lock in the same transaction.
public enum CaseTimeline {
    /// Appends `entry` to the case's hash chain.
    @discardableResult
    public static func append(_ entry: CaseEventEntry, caseID: UUID, actor: String, at now: Date, on connection: PostgresConnection) throws
        -> CaseEvent
    {
        try CaseEventStore.append(
            caseID: caseID, at: now, actor: actor, type: entry.type.rawValue, data: entry.data, personal: entry.type.personalFields, on: connection)
    }

    /// The agent a case was handed to by an `assigned` event, as an actor (`agent:<uuid>`), for naming on the timeline.
    public static func assignee(of event: CaseEvent) -> String? {
        guard event.type == CaseEventType.assigned.rawValue, case .object(let data) = event.data, case .string(let id)? = data["agent_id"] else {
            return nil
        }
        return "agent:" + id
    }
}

extension UUID {
    /// The lower-case text form every event and representation uses.
    var lowercased: String { uuidString.lowercased() }
}
