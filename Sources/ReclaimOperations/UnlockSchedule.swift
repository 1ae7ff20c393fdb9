import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// The cooling-off (api.md v1.2 "The thief on the phone"): an unlock step recorded by engineering is scheduled, every
/// address the account had is told with a "this wasn't me" link, and the service does the step when its time comes,
/// unless an engineer or that link cancels it first. The state is in the database (`scheduled_unlocks`), so any
/// instance's `UnlockScheduler` does a due step, exactly once, after any restart.
extension CaseOperations {
    /// The reason recorded on steps the stop link cancelled.
    public static let repudiatedReason = "The customer used the stop link: this wasn't me."

    /// Schedules one unlock step (engineering, case in `engineering`) to be done `delay` seconds from now, with
    /// `unlock_scheduled`; freezes the case if it was not; mails the notice to every address on file. 422
    /// `unlock_not_allowed` for a step the case does not require, 409 `already_done` for one done or scheduled.
    public func recordUnlock(
        _ number: CaseNumber, expectedVersion: Int?, step: UnlockKind, reason: String?, actorTier: Tier, by actor: String,
        delay: TimeInterval, at now: Date, on connection: PostgresConnection
    ) throws -> CaseRecord {
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let reason, reason.count > 2000 { throw OperationError.invalid(field: "reason", "A reason has at most 2000 characters.") }
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        return try checkAndSchedule(step, on: record, reason: reason, actorTier: actorTier, by: actor, delay: delay, at: now, on: connection)
    }

    /// The checks of recording a step, then `schedule`: `POST /unlocks`'s and `complete`'s with an `unlock` (so the
    /// workflow action cannot skip the cooling-off, the notice or the stop link).
    func checkAndSchedule(
        _ step: UnlockKind, on record: CaseRecord, reason: String?, actorTier: Tier, by actor: String, delay: TimeInterval, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        // Four eyes: no step while a risk signal stands, nor by the agent who cleared the case's signals.
        try RiskSignals.checkFourEyes(caseID: record.id, actor: actor, on: connection)
        let pending = try ScheduledUnlockStore.pending(caseID: record.id, on: connection)
        do {
            try Workflow.checkUnlock(step, actorTier: actorTier, on: record.snapshot, done: Set(record.unlocksDone + pending.map(\.step)))
        } catch {
            throw OperationError.refused(error, caseID: record.id)
        }
        // One recovery of an account at a time (api.md v1.3): the account's lock makes two schedules on two of its cases
        // serial, so the second sees the first.
        try ScheduledUnlockStore.lockAccount(email: record.accountEmail, on: connection)
        if let other = try ScheduledUnlockStore.pendingElsewhere(accountEmail: record.accountEmail, except: record.id, on: connection) {
            throw OperationError.accountBusy(other)
        }
        return try schedule(step, on: record, reason: reason?.isEmpty == true ? nil : reason, by: actor, delay: delay, at: now, on: connection)
    }

    func schedule(
        _ step: UnlockKind, on record: CaseRecord, reason: String?, by actor: String, delay: TimeInterval, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let keys = try requireKeys()
        let effectiveAt = now.addingTimeInterval(max(0, delay))
        // The case moves on (and is frozen, if it was not) before anything else, so a stale version fails first.
        let moved =
            record.frozen
            ? try CaseStore.touch(id: record.id, expectedVersion: record.version, now: now, on: connection)
            : try CaseStore.freeze(id: record.id, expectedVersion: record.version, now: now, on: connection)
        guard moved else { throw try staleNow(record.id, expected: record.version, on: connection) }
        try ScheduledUnlockStore.insert(
            id: UUID(), caseID: record.id, step: step, reason: reason, by: actor, at: now, effectiveAt: effectiveAt, on: connection)
        let waiting = (record.unlocksScheduled + [ScheduledStep(step: step, effectiveAt: effectiveAt)]).sorted { $0.effectiveAt < $1.effectiveAt }
        let updated = record.with(frozen: true, unlocksScheduled: waiting, updatedAt: now, version: record.version + 1)
        let recipients = try Self.noticeRecipients(for: record, on: connection)
        try CaseTimeline.append(
            .unlockScheduled(step: step, effectiveAt: effectiveAt, reason: reason, notified: recipients.count), caseID: record.id,
            actor: actor, at: now, on: connection)
        if !record.frozen {
            try CaseTimeline.append(.frozen(accountEmail: record.accountEmail), caseID: record.id, actor: actor, at: now, on: connection)
        }
        // One token per notice, held as its hash: the clear token is sealed in each outbox row and read only in the mail.
        let token = Base64URL.encode(SecureRandom.bytes(32))
        try ScheduledUnlockStore.insertStopToken(hash: SHA256.hash(token), caseID: record.id, at: now, on: connection)
        let state = record.snapshot.state
        let extra: [String: JSONValue] = ["step": .string(step.rawValue), "effective_at": Timestamp.json(effectiveAt)]
        for recipient in recipients {
            try CaseMessages.mail(
                .unlockScheduled, for: updated, state: state, keys: keys, at: now, on: connection, to: recipient, extra: extra, stopToken: token)
        }
        try CaseMessages.webhook(.caseUnlockScheduled, for: updated, state: state, data: extra, at: now, on: connection)
        return updated
    }

    /// Who is told of a scheduled unlock: the contact address, the account's `email` on file and its notice addresses,
    /// each mailbox once, never one that reaches the rescue address (api.md v1.2 "Notice to every address the victim had").
    static func noticeRecipients(for record: CaseRecord, on connection: PostgresConnection) throws -> [String] {
        var recipients: [String] = []
        for address in [record.customerContactEmail] + (try AccountStore.noticeRecipients(email: record.accountEmail, on: connection))
        where !recipients.contains(where: { EmailAddress.sameMailbox($0, address) }) {
            if try !CaseMessages.isRescueAddress(address, of: record, on: connection) { recipients.append(address) }
        }
        return recipients
    }

    /// Every unlock step recorded on a case, with where it stands.
    public func unlockSteps(caseID: UUID, on connection: PostgresConnection) throws -> [ScheduledUnlock] {
        try ScheduledUnlockStore.list(caseID: caseID, on: connection)
    }

    // MARK: The scheduler's work

    /// Does the soonest due scheduled step, in the caller's transaction (its row and its case's locked until commit):
    /// `unlock_done` (actor `system`), the checklist, `case.unlock_done`. A step whose case left engineering, or that
    /// is no longer required, is cancelled instead. Nil when no step is due or every due one is claimed elsewhere.
    public func doDueUnlock(at now: Date, on connection: PostgresConnection) throws -> ScheduledUnlock? {
        guard let due = try ScheduledUnlockStore.claimDue(now: now, on: connection) else { return nil }
        try CaseStore.lock(id: due.caseID, on: connection)
        guard let record = try CaseStore.find(id: due.caseID, on: connection) else { return due }
        let snapshot = record.snapshot
        let schedulable = UnlockChecklist.schedulable(kind: snapshot.kind, facts: snapshot.facts)
        // A risk signal raised while the step waited stops it too: after a clearance, a second person records it again.
        guard snapshot.state == .engineering, schedulable.contains(due.step), !record.unlocksDone.contains(due.step), !record.risk else {
            let reason =
                record.risk
                ? "A risk signal was raised before the step's time: it is recorded again once the signal is cleared."
                : "The case is no longer waiting for this step (\(snapshot.state.rawValue))."
            _ = try ScheduledUnlockStore.cancel(caseID: record.id, steps: [due.step], reason: reason, by: "system", at: now, on: connection)
            guard try CaseStore.touch(id: record.id, expectedVersion: record.version, now: now, on: connection) else { return due }
            try CaseTimeline.append(.unlockCancelled(step: due.step, reason: reason), caseID: record.id, actor: "system", at: now, on: connection)
            try CaseMessages.webhook(
                .caseUnlockCancelled, for: record, state: snapshot.state, data: ["step": .string(due.step.rawValue), "by": "system"], at: now,
                on: connection)
            return due
        }
        try ScheduledUnlockStore.markDone(id: due.id, by: "system", at: now, on: connection)
        let updated = try recordStep(due.step, on: record, reason: due.reason, by: "system", at: now, on: connection)
        try CaseMessages.webhook(
            .caseUnlockDone, for: updated, state: snapshot.state, data: ["step": .string(due.step.rawValue)], at: now, on: connection)
        return due
    }

    // MARK: Cancel

    /// Cancels a scheduled step (engineering, with a reason), with `unlock_cancelled`; the case stays frozen. 409
    /// `unlock_not_scheduled` when the step is not scheduled.
    public func cancelUnlock(
        _ number: CaseNumber, expectedVersion: Int?, step: UnlockKind, reason: String?, actorTier: Tier, by actor: String,
        at now: Date, on connection: PostgresConnection
    ) throws -> CaseRecord {
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if reason.isEmpty || reason.count > 2000 { throw OperationError.invalid(field: "reason", "A reason has 1 to 2000 characters.") }
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        guard actorTier.isAtLeast(.engineering) else { throw OperationError.refused(.insufficientTier(required: .engineering), caseID: record.id) }
        // The step's row first, then the case's: the scheduler's lock order.
        let cancelled = try ScheduledUnlockStore.cancel(caseID: record.id, steps: [step], reason: reason, by: actor, at: now, on: connection)
        guard !cancelled.isEmpty else { throw OperationError.unlockNotScheduled }
        guard try CaseStore.touch(id: record.id, expectedVersion: record.version, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(.unlockCancelled(step: step, reason: reason), caseID: record.id, actor: actor, at: now, on: connection)
        let updated = record.with(
            unlocksScheduled: record.unlocksScheduled.filter { $0.step != step }, updatedAt: now, version: record.version + 1)
        try CaseMessages.webhook(
            .caseUnlockCancelled, for: updated, state: record.snapshot.state, data: ["step": .string(step.rawValue), "by": "agent"], at: now,
            on: connection)
        return updated
    }

    // MARK: The stop link

    /// What a used stop link did.
    public struct Stopped: Sendable {
        /// The case the token is bound to, as it now stands.
        public let record: CaseRecord
        /// The steps this use cancelled (empty when the link was used before, or nothing was scheduled).
        public let cancelled: [UnlockKind]
        /// False when the link had been used before: nothing changed.
        public let firstUse: Bool
        /// The steps already done when a first use cancelled nothing: the change happened before the link was used.
        public var alreadyDone: [UnlockKind] = []
    }

    /// "This wasn't me" (`POST /api/v1/status/stop`, no sign-in): on the token's case and on every other open case of
    /// its account (api.md v1.3 "One recovery of an account at a time"), cancels every scheduled step (`unlock_cancelled`,
    /// actor `customer`), freezes it, raises `repudiated`, and hands a case in engineering back to tier 3
    /// (`document_review`, `handed_back`). The same token again changes nothing; an unknown one is `stopLinkUnknown`.
    public func stopUnlocks(token: String, at now: Date, on connection: PostgresConnection) throws -> Stopped {
        let hash = SHA256.hash(token)
        guard let found = try ScheduledUnlockStore.findStopToken(hash: hash, on: connection) else { throw OperationError.stopLinkUnknown }
        if found.usedAt != nil {
            guard let record = try CaseStore.find(id: found.caseID, on: connection) else { throw OperationError.stopLinkUnknown }
            return Stopped(record: record, cancelled: [], firstUse: false)
        }
        try ScheduledUnlockStore.useStopToken(hash: hash, at: now, on: connection)
        let doneBefore = try CaseStore.find(id: found.caseID, on: connection)?.unlocksDone ?? []
        let (record, cancelled) = try repudiate(
            caseID: found.caseID, detail: "Someone used the stop link of the unlock notice: this wasn't me.", at: now, on: connection)
        // Every other open case of the account: the thief's second case is stopped with the victim's.
        for other in try CaseStore.accountCases(email: record.accountEmail, on: connection)
        where other.id != record.id && other.state.isOpen {
            _ = try repudiate(
                caseID: other.id, detail: "The stop link of case \(record.number), of the same account, was used: this wasn't me.",
                otherCases: [record.number], at: now, on: connection)
        }
        var stopped = Stopped(record: record, cancelled: cancelled, firstUse: true)
        // Too late for the step the notice was about: it took effect; the desk is alerted all the same (`repudiated`).
        if cancelled.isEmpty { stopped.alreadyDone = doneBefore }
        return stopped
    }

    /// One case of a repudiation: its scheduled steps cancelled (the step rows first, then the case's: the scheduler's
    /// lock order), frozen if open, `repudiated` raised, handed back to tier 3 from engineering.
    func repudiate(caseID: UUID, detail: String, otherCases: [String] = [], at now: Date, on connection: PostgresConnection) throws -> (
        CaseRecord, [UnlockKind]
    ) {
        let actor = "customer"
        let cancelled = try ScheduledUnlockStore.cancel(caseID: caseID, steps: nil, reason: Self.repudiatedReason, by: actor, at: now, on: connection)
            .map(\.step)
        try CaseStore.lock(id: caseID, on: connection)
        guard var record = try CaseStore.find(id: caseID, on: connection) else { throw OperationError.stopLinkUnknown }
        for step in cancelled {
            try CaseTimeline.append(
                .unlockCancelled(step: step, reason: Self.repudiatedReason), caseID: record.id, actor: actor, at: now, on: connection)
        }
        let changed =
            record.frozen || !record.snapshot.state.isOpen
            ? try CaseStore.touch(id: record.id, expectedVersion: record.version, now: now, on: connection)
            : try CaseStore.freeze(id: record.id, expectedVersion: record.version, now: now, on: connection)
        guard changed else { throw try staleNow(record.id, expected: record.version, on: connection) }
        if !record.frozen, record.snapshot.state.isOpen {
            try CaseTimeline.append(.frozen(accountEmail: record.accountEmail), caseID: record.id, actor: actor, at: now, on: connection)
        }
        record = record.with(
            frozen: record.frozen || record.snapshot.state.isOpen, unlocksScheduled: [], updatedAt: now, version: record.version + 1)
        for step in cancelled {
            try CaseMessages.webhook(
                .caseUnlockCancelled, for: record, state: record.snapshot.state, data: ["step": .string(step.rawValue), "by": "customer"],
                at: now, on: connection)
        }
        _ = try RiskSignals.raise(.repudiated, on: record, detail: detail, otherCases: otherCases, by: actor, at: now, on: connection)
        if record.snapshot.state == .engineering { record = try handBack(record, by: actor, at: now, on: connection) }
        return (try CaseStore.find(id: caseID, on: connection) ?? record, cancelled)
    }

    /// Hands a case in engineering back to tier 3 (`document_review`) after a repudiation: not an agent's action (the
    /// transition table has none), so it is its own event, `handed_back`, and its assignee leaves it.
    func handBack(_ record: CaseRecord, by actor: String, at now: Date, on connection: PostgresConnection) throws -> CaseRecord {
        let before = record.snapshot
        var after = before
        after.state = .documentReview
        after.tier = .tier3
        after.clock.stateEnteredAt = now
        let dueAt = workflow.dueAt(after)
        guard try CaseStore.applyTransition(id: record.id, expectedVersion: record.version, after: after, dueAt: dueAt, now: now, on: connection)
        else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(
            .handedBack(from: before.state, to: after.state, reason: Self.repudiatedReason), caseID: record.id, actor: actor, at: now,
            on: connection)
        var updated = record.with(snapshot: after, dueAt: .some(dueAt), updatedAt: now, version: record.version + 1)
        if let previous = record.assigneeID {
            try CaseStore.clearAssignee(id: record.id, on: connection)
            try CaseTimeline.append(.unassigned(previous: previous, state: after.state), caseID: record.id, actor: actor, at: now, on: connection)
            updated = updated.unassigned()
        }
        try CaseMessages.stateChanged(updated, from: before.state, keys: keys, at: now, on: connection)
        return updated
    }
}
