import Crypto
import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// One function per case operation: each takes the caller's transaction, loads, decides with `ReclaimCore`, stores
/// and appends its events from `CaseEventEntry`. The API, the command line and the demo seed all call these, so a
/// write path exists once. Errors are `OperationError`s; permission checks (who the caller is) stay with the caller.
public struct CaseOperations: Sendable {
    /// The secret keys (access codes, card fingerprints, documents); nil only in transport tests.
    public let keys: KeyFile?
    public let workflow: Workflow
    /// How long a finished case still counts as related to another (`RECLAIM_RELATED_DAYS`).
    public let relatedWindow: TimeInterval
    /// How many documents a case holds at most (`RECLAIM_CASE_DOCUMENTS`): one more is `tooManyDocuments`.
    public let documentLimit: Int

    public init(
        keys: KeyFile?, workflow: Workflow = Workflow(), relatedWindow: TimeInterval = CaseOperations.defaultRelatedWindow,
        documentLimit: Int = DocumentUpload.defaultCaseLimit
    ) {
        self.keys = keys
        self.workflow = workflow
        self.relatedWindow = relatedWindow
        self.documentLimit = documentLimit
    }

    func requireKeys() throws(OperationError) -> KeyFile {
        guard let keys else { throw .keysUnavailable }
        return keys
    }

    // MARK: Loading

    /// The case with this number, or `caseNotFound`.
    public func load(_ number: CaseNumber, on connection: PostgresConnection) throws -> CaseRecord {
        guard let record = try CaseStore.find(number: number.digits, on: connection) else { throw OperationError.caseNotFound }
        return record
    }

    /// The case at `expectedVersion` (nil: any), or `caseNotFound` / `stale`.
    func load(_ number: CaseNumber, expectedVersion: Int?, on connection: PostgresConnection) throws -> CaseRecord {
        let record = try load(number, on: connection)
        if let expectedVersion, record.version != expectedVersion { throw OperationError.stale(current: record.version) }
        return record
    }

    /// The case at `expectedVersion`, to change it: `caseErased` once its customer's data was erased (api.md v1.3 "An
    /// erased case is finished for good": every change is refused, whoever asks).
    func loadForChange(_ number: CaseNumber, expectedVersion: Int?, on connection: PostgresConnection) throws -> CaseRecord {
        let record = try load(number, expectedVersion: expectedVersion, on: connection)
        guard record.erasedAt == nil else { throw OperationError.caseErased }
        return record
    }

    /// The case's id with its row locked for the rest of the transaction, to change it: `caseNotFound`, or
    /// `caseErased` once the case was erased.
    func lockID(_ number: CaseNumber, on connection: PostgresConnection) throws -> UUID {
        guard let (id, erased) = try CaseStore.lockForChange(number: number.digits, on: connection) else { throw OperationError.caseNotFound }
        guard !erased else { throw OperationError.caseErased }
        return id
    }

    /// `stale` with the version the case is at now, for an update whose version guard did not match.
    func staleNow(_ id: UUID, expected: Int, on connection: PostgresConnection) throws -> OperationError {
        .stale(current: try CaseStore.find(id: id, on: connection)?.version ?? expected)
    }

    // MARK: Open

    /// What an agent or API client gives to open a case, before validation.
    public struct Opening: Sendable {
        public struct Device: Sendable {
            public var serial: String?
            public var imei: String?
            public var model: String?
            public init(serial: String?, imei: String?, model: String?) {
                self.serial = serial
                self.imei = imei
                self.model = model
            }
        }
        public var kind: CaseKind
        public var accountEmail: String
        public var customerName: String
        public var customerContactEmail: String
        public var devices: [Device]
        public var facts: CaseFacts
        public var summary: String
        /// The address the thief added, when known (implies `facts.rescueEmailAdded`).
        public var rescueEmail: String?
        /// nil when nobody said: the case has no language of its own (api.md v1.2).
        public var language: CustomerLanguage?
        /// The customer's phone (E.164), when given.
        public var customerPhone: String? = nil

        public init(
            kind: CaseKind, accountEmail: String, customerName: String, customerContactEmail: String, devices: [Device] = [],
            facts: CaseFacts = CaseFacts(), summary: String = "", rescueEmail: String? = nil, language: CustomerLanguage? = nil
        ) {
            self.kind = kind
            self.accountEmail = accountEmail
            self.customerName = customerName
            self.customerContactEmail = customerContactEmail
            self.devices = devices
            self.facts = facts
            self.summary = summary
            self.rescueEmail = rescueEmail
            self.language = language
        }
    }

    /// A case just opened and its access code, which exists in clear only here.
    public struct Opened: Sendable {
        public let record: CaseRecord
        public let accessCode: AccessCode
        /// The other open cases with the same account e-mail, serial or IMEI (opening is never refused for them).
        public let possibleDuplicates: [(number: String, state: CaseState)]
        /// Every related case (api.md v1.3 `related`).
        public let related: [RelatedCase]
    }

    /// Opens a case: validates every field (all issues at once), draws a case number and an access code, stores
    /// the case with `case_opened`.
    public func open(_ opening: Opening, by actor: String, at now: Date, on connection: PostgresConnection) throws -> Opened {
        var issues = IssueCollector()
        let accountEmail = issues.take(EmailAddress.validate(opening.accountEmail, field: "account_email"))
        let contactEmail = issues.take(EmailAddress.validate(opening.customerContactEmail, field: Self.contactField))
        let name = Self.validatedName(opening.customerName, issues: &issues)
        let devices = Self.validatedDevices(opening.devices, issues: &issues)
        let summary = Self.validatedSummary(opening.summary, issues: &issues)
        let rescueEmail = opening.rescueEmail.flatMap { issues.take(EmailAddress.validate($0, field: Self.rescueField)) }
        let phone = opening.customerPhone.flatMap { issues.take(PhoneNumber.validate($0, field: Self.phoneField)) }
        if let contactEmail, let rescueEmail {
            Self.checkContact(contactEmail.value, rescue: rescueEmail.value, field: Self.contactField, issues: &issues)
        }
        // A rescue address any case of the account recorded is the thief's: no new case reaches the customer there.
        if let contactEmail, let accountEmail, !(rescueEmail.map { EmailAddress.sameMailbox(contactEmail.value, $0.value) } ?? false) {
            Self.checkContact(
                contactEmail.value, formerRescue: try CaseStore.accountRescueAddresses(email: accountEmail.value, on: connection), issues: &issues)
        }
        do { try issues.check() } catch { throw OperationError.invalid(error) }
        var facts = opening.facts
        if rescueEmail != nil { facts.rescueEmailAdded = true }

        let codeKey = try requireKeys().activeKey(for: .accessCode)
        let code = AccessCode(entropy: SecureRandom.bytes(10))
        let snapshot = workflow.opening(kind: opening.kind, facts: facts, at: now)
        let dueAt = workflow.dueAt(snapshot)
        var generator = SystemRandomNumberGenerator()  // getrandom(2): unpredictable numbers
        var attempt = 0
        while true {
            attempt += 1
            var new = NewCase(
                id: UUID(), number: CaseNumber.generate(using: &generator),
                accessCodeHash: AccessCodeHash.compute(code, key: codeKey.key), accessCodeKeyID: codeKey.id,
                snapshot: snapshot, dueAt: dueAt, accountEmail: accountEmail!.value, customerName: name,
                customerContactEmail: contactEmail!.value, devices: devices, summary: summary, createdBy: actor, now: now,
                rescueEmail: rescueEmail?.value, language: opening.language)
            new.customerPhone = phone?.value
            do {
                // A savepoint, so a taken number (1 in 10^11 per existing case) costs a new draw, not the transaction.
                try connection.withTransaction { connection in
                    try CaseStore.insert(new, on: connection)
                    try CaseTimeline.append(
                        .caseOpened(kind: opening.kind, state: snapshot.state, path: snapshot.path, dueAt: dueAt),
                        caseID: new.id, actor: actor, at: now, on: connection)
                }
            } catch let error as PostgresError where error.constraint == "cases_case_number_unique" && attempt < 5 {
                continue
            }
            var record = CaseRecord(
                id: new.id, number: new.number.digits, accessCodeHash: new.accessCodeHash, accessCodeKeyID: codeKey.id,
                snapshot: snapshot, dueAt: dueAt, accountEmail: new.accountEmail, customerName: name,
                customerContactEmail: new.customerContactEmail, devices: devices, summary: summary,
                assigneeID: nil, assigneeName: nil, assigneeTier: nil, frozen: false, createdAt: now, updatedAt: now, version: 1,
                rescueEmail: new.rescueEmail, language: new.language, createdBy: actor)
            record.customerPhone = new.customerPhone
            if try RiskSignals.checkDevices(devices, of: record, at: now, on: connection) {
                record = record.with(risk: true, updatedAt: now, version: 1)
            }
            // One account, one story: every related case, and `parallel_case` where another customer claims the account
            // or a device. The possible duplicates are the open ones sharing the account or a device.
            let related = try checkParallel(record, at: now, on: connection)
            if related.contains(where: \.isParallel) { record = record.with(risk: true, updatedAt: now, version: 1) }
            let duplicates = related.filter { $0.state.isOpen && ($0.why.contains(.account) || $0.why.contains(.device)) }.map {
                (number: $0.number, state: $0.state)
            }
            let opened = Opened(record: record, accessCode: code, possibleDuplicates: duplicates, related: related)
            try CaseMessages.opened(opened, keys: keys, at: now, on: connection)
            return opened
        }
    }

    // MARK: Transition

    /// A workflow action as the caller asked for it.
    public struct Transition: Sendable {
        public var action: CaseAction
        public var reason: String?
        public var unlock: UnlockKind?
        /// For `send_reset`: the answers given with it, already checked by `AnswerChecks.check` (off the transaction).
        public var givenAnswers: AnswerCheck?
        /// For `complete` with an `unlock` not done yet: the cooling-off the step is scheduled with (the API passes
        /// `RECLAIM_UNLOCK_DELAY`, as for `POST /unlocks`).
        public var unlockDelay: TimeInterval

        public init(
            action: CaseAction, reason: String? = nil, unlock: UnlockKind? = nil, givenAnswers: AnswerCheck? = nil,
            unlockDelay: TimeInterval = CaseOperations.defaultUnlockDelay
        ) {
            self.action = action
            self.reason = reason
            self.unlock = unlock
            self.givenAnswers = givenAnswers
            self.unlockDelay = unlockDelay
        }
    }

    /// The cooling-off when nobody set one: a day (`RECLAIM_UNLOCK_DELAY`'s default).
    public static let defaultUnlockDelay: TimeInterval = 86_400

    /// What a transition did: the case after it and, when `complete` scheduled the unlock given, the refusal to answer
    /// once that step is committed (api.md: "records its optional unlock first"; v1.2: recording schedules it).
    public struct TransitionOutcome: Sendable {
        public let record: CaseRecord
        /// `refusedAfterRecording(.unlocksOutstanding(…), version:)`; nil when the transition was taken.
        public let refusal: OperationError?

        /// The case after a transition that was taken; throws the refusal otherwise (rolling the recorded unlock back
        /// with the caller's transaction), for callers that keep nothing of a refused transition.
        public func taken() throws(OperationError) -> CaseRecord {
            if let refusal { throw refusal }
            return record
        }
    }

    /// Applies a workflow action to the case at `expectedVersion`: `transition` (and `reset_sent` for a reset) on its
    /// timeline. `complete` never performs an unlock step (api.md v1.3): it is refused while one is scheduled, and an
    /// `unlock` it names must be done already (`unlock_not_scheduled`); `POST /unlocks` schedules steps.
    public func transition(
        _ number: CaseNumber, expectedVersion: Int?, _ transition: Transition, actorTier: Tier, by actor: String,
        at now: Date, on connection: PostgresConnection
    ) throws -> TransitionOutcome {
        if let reason = transition.reason, reason.count > 2000 {
            throw OperationError.invalid(field: "reason", "A reason has at most 2000 characters.")
        }
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        // No completion while a step waits for its time, whatever unlock is named (api.md v1.3: `complete` never
        // performs a step; the scheduler does, after the cooling-off).
        if transition.action == .complete, !record.unlocksScheduled.isEmpty {
            let required = UnlockChecklist.required(kind: record.snapshot.kind, facts: record.snapshot.facts)
            let waiting = record.unlocksScheduled.map(\.step)
            let outstanding = UnlockChecklist.outstanding(required: required, done: Set(record.unlocksDone))
            throw OperationError.refused(.unlocksOutstanding(outstanding.isEmpty ? waiting : outstanding), caseID: nil)
        }
        var context = TransitionContext(unlock: transition.unlock, reason: transition.reason, unlocksDone: Set(record.unlocksDone))
        var resetDestination: String?
        if transition.action == .sendReset {
            // Every answer on file must have matched: given now, or filed as evidence on the case and not rejected.
            if let onFile = try AccountStore.securityAnswers(email: record.accountEmail, on: connection) {
                let filed = try EvidenceStore.matchedQuestionIDs(caseID: record.id, on: connection)
                let matched = filed.union(transition.givenAnswers?.matchedQuestionIDs ?? []).intersection(onFile.answers.keys)
                context.allOnFileAnswersMatched = VerificationPolicy.allOnFileAnswersMatched(onFile: Set(onFile.answers.keys), matched: matched)
                resetDestination = onFile.email
            }
        }
        if transition.action == .verify {
            context.verification = VerificationPolicy.evaluate(try EvidenceStore.factorEvidence(caseID: record.id, on: connection))
        }
        if transition.action == .approve {
            context.documents = try EvidenceStore.list(caseID: record.id, on: connection).filter(\.kind.isDocument)
                .map { TransitionContext.DocumentStatus(kind: $0.countsAs, status: $0.status) }
        }
        let decision: TransitionDecision
        switch workflow.decide(transition.action, on: record.snapshot, actorTier: actorTier, context: context, now: now) {
        case .success(let accepted): decision = accepted
        case .failure(let refusal): throw OperationError.refused(refusal, caseID: record.id)
        }
        if decision.action == .approve { try RiskSignals.checkFourEyes(caseID: record.id, actor: actor, on: connection) }
        return TransitionOutcome(
            record: try apply(decision, to: record, by: actor, at: now, on: connection, resetDestination: resetDestination),
            refusal: nil)
    }

    /// Stores a decided transition with its event, then what follows from it: the assignee leaves a case that went to a
    /// desk above theirs, and a finished case lifts its freeze, each as its own event.
    func apply(
        _ decision: TransitionDecision, to record: CaseRecord, by actor: String, at now: Date, on connection: PostgresConnection,
        resetDestination: String? = nil, messages: Bool = true
    ) throws -> CaseRecord {
        guard
            try CaseStore.applyTransition(
                id: record.id, expectedVersion: record.version, after: decision.after, dueAt: decision.dueAt,
                now: now, on: connection)
        else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(.transition(decision), caseID: record.id, actor: actor, at: now, on: connection)
        if decision.action == .sendReset, let resetDestination {
            try CaseTimeline.append(.resetSent(to: resetDestination), caseID: record.id, actor: actor, at: now, on: connection)
        }
        var updated = record.with(snapshot: decision.after, dueAt: .some(decision.dueAt), updatedAt: now, version: record.version + 1)
        if let previous = record.assigneeID, !Workflow.keepsAssignee(assigneeTier: record.assigneeTier, after: decision.after.state) {
            try CaseStore.clearAssignee(id: record.id, on: connection)
            try CaseTimeline.append(
                .unassigned(previous: previous, state: decision.after.state), caseID: record.id, actor: actor, at: now, on: connection)
            updated = updated.unassigned()
        }
        if record.frozen, Workflow.liftsFreeze(entering: decision.after.state) {
            try CaseStore.liftFreeze(id: record.id, on: connection)
            try CaseTimeline.append(
                .unfrozen(accountEmail: record.accountEmail, cause: decision.after.state.rawValue), caseID: record.id,
                actor: actor, at: now, on: connection)
            updated = updated.with(frozen: false, updatedAt: now, version: updated.version)
        }
        // `messages: false`: the caller queues one message of its own that says more (a rejected document's).
        if messages { try CaseMessages.transitioned(updated, decision, keys: keys, at: now, on: connection) }
        return updated
    }

    // MARK: Unlock checklist

    /// Records one unlock step as done with `unlock_done`: the scheduler's, when its time came. (An agent's
    /// `POST /unlocks`, or `complete` with an `unlock`, schedules it: `checkAndSchedule` in UnlockSchedule.swift.)
    func recordStep(
        _ step: UnlockKind, on record: CaseRecord, reason: String?, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        try RiskSignals.checkFourEyes(caseID: record.id, actor: actor, on: connection)
        guard try CaseStore.recordUnlock(step, id: record.id, expectedVersion: record.version, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(.unlockDone(step: step, reason: reason), caseID: record.id, actor: actor, at: now, on: connection)
        return record.with(unlocksDone: record.unlocksDone + [step], updatedAt: now, version: record.version + 1)
    }

    // MARK: Notes

    /// Adds a note (no version: notes do not change the case) with `note_added`.
    public func addNote(
        _ number: CaseNumber, body: String, visibility: NoteVisibility, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseNote {
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty || text.count > NoteStore.maximumLength {
            throw OperationError.invalid(field: "body", "A note has 1 to \(NoteStore.maximumLength) characters.")
        }
        let note = CaseNote(id: UUID(), body: text, visibility: visibility, author: actor, createdAt: now)
        // The row lock orders this note's event after any concurrent change to the case.
        let id = try lockID(number, on: connection)
        // An internal note is taken in any state, a customer note not on a merged case (`CaseWork.isTaken`).
        let customerCase = visibility == .customer ? try CaseStore.find(id: id, on: connection) : nil
        if let customerCase {
            do { try CaseWork.noteCustomer.check(in: customerCase.snapshot.state) } catch { throw OperationError.refused(error, caseID: nil) }
        }
        try NoteStore.insert(note, caseID: id, on: connection)
        try CaseTimeline.append(.noteAdded(noteID: note.id, visibility: visibility), caseID: id, actor: actor, at: note.createdAt, on: connection)
        // An internal note never leaves the service; a customer note is news for the customer and the partners.
        if let record = customerCase {
            try CaseMessages.mail(.customerNote, for: record, state: record.snapshot.state, keys: keys, at: now, on: connection)
            try CaseMessages.webhook(
                .noteAdded, for: record, state: record.snapshot.state, data: ["note_id": .string(note.id.lowercased)],
                at: now, on: connection)
        }
        return note
    }

    // MARK: Assign and freeze

    /// Hands the case to an active agent whose tier can hold it, with `assigned`.
    public func assign(
        _ number: CaseNumber, expectedVersion: Int?, to agentID: UUID, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        guard let assignee = try AgentStore.find(id: agentID, on: connection), !assignee.disabled else {
            throw OperationError.invalid(field: "agent_id", "no such agent")
        }
        do {
            try Workflow.checkAssignment(actorTier: actorTier, assigneeTier: assignee.tier, on: record.snapshot)
        } catch {
            throw OperationError.refused(error, caseID: record.id)
        }
        guard try CaseStore.assign(id: record.id, expectedVersion: record.version, agentID: assignee.id, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(
            .assigned(agentID: assignee.id, previous: record.assigneeID), caseID: record.id, actor: actor, at: now, on: connection)
        return record.with(
            assigneeID: assignee.id, assigneeName: assignee.name, assigneeTier: assignee.tier, updatedAt: now, version: record.version + 1)
    }

    /// Freezes the account of an open case (tier2+), with `frozen`.
    public func freeze(
        _ number: CaseNumber, expectedVersion: Int?, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        do {
            try Workflow.checkFreeze(actorTier: actorTier, on: record.snapshot)
        } catch {
            throw OperationError.refused(error, caseID: record.id)
        }
        guard !record.frozen else { throw OperationError.alreadyFrozen }
        guard try CaseStore.freeze(id: record.id, expectedVersion: record.version, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(.frozen(accountEmail: record.accountEmail), caseID: record.id, actor: actor, at: now, on: connection)
        return record.with(frozen: true, updatedAt: now, version: record.version + 1)
    }

    /// Lifts the freeze of a case (tier2+), with `unfrozen`; `notFrozen` when there is none, `coolingOff` while an
    /// unlock step is scheduled.
    public func unfreeze(
        _ number: CaseNumber, expectedVersion: Int?, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        guard actorTier.isAtLeast(Workflow.freezeMinimumTier) else {
            throw OperationError.refused(.insufficientTier(required: Workflow.freezeMinimumTier), caseID: record.id)
        }
        guard record.frozen else { throw OperationError.notFrozen }
        // The freeze holds while a step waits for its time (api.md v1.3 "The cooling-off holds").
        guard record.unlocksScheduled.isEmpty else { throw OperationError.coolingOff }
        guard try CaseStore.setFrozen(false, id: record.id, expectedVersion: record.version, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(
            .unfrozen(accountEmail: record.accountEmail, cause: "lifted"), caseID: record.id, actor: actor, at: now, on: connection)
        return record.with(frozen: false, updatedAt: now, version: record.version + 1)
    }

    // MARK: Access code

    /// A re-issued access code: the code, only for a request that asked to read it out to a verified caller; whether it was mailed.
    public struct ReissuedAccessCode: Sendable {
        /// The new code, to read out to the caller; nil when it was only mailed (it then exists in clear nowhere).
        public let code: AccessCode?
        /// The mail to the contact address was queued (false: refused, the contact address is the rescue address).
        public let mailed: Bool
    }

    /// Issues a new access code for a lost one: the old code stops working, the case number's status lock is cleared,
    /// the code is mailed to the contact address, and `access_code_reissued` says who did it. The agent is answered the
    /// code only with `readOut` (tier2+, else `insufficientTier`, recorded as denied) and only while this agent has
    /// verified the caller (`caller-verification`, else `callerNotVerified`): a code read out to whoever calls is a
    /// thief's way in (api.md v1.3 "The call, verified both ways"). Under the case's row lock, a code re-issued within
    /// `AccessCode.reissueInterval` refuses another (`accessCodeJustIssued`), so of concurrent requests exactly one
    /// issues and mails a code.
    public func reissueAccessCode(
        _ number: CaseNumber, readOut: Bool = false, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> ReissuedAccessCode {
        let codeKey = try requireKeys().activeKey(for: .accessCode)
        let id = try lockID(number, on: connection)
        var verifiedBy: CallCodes.Method?
        if readOut {
            if !actorTier.isAtLeast(AccessCode.callerCheckMinimumTier) {
                throw OperationError.refused(.insufficientTier(required: AccessCode.callerCheckMinimumTier), caseID: id)
            }
            guard let record = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
            verifiedBy = try requireVerifiedCaller(record, actorTier: actorTier, by: actor, at: now, on: connection).method
        }
        let last = try CaseEventStore.list(caseID: id, type: CaseEventType.accessCodeReissued.rawValue, on: connection).last?.at
        if let until = AccessCode.reissueRefusedUntil(lastReissuedAt: last, now: now) {
            throw OperationError.accessCodeJustIssued(until: until, now: now)
        }
        let code = AccessCode(entropy: SecureRandom.bytes(10))
        try CaseStore.setAccessCode(id: id, hash: AccessCodeHash.compute(code, key: codeKey.key), keyID: codeKey.id, now: now, on: connection)
        try ThrottleStore.reset(key: ThrottleStore.caseKey(number.digits), on: connection)
        try CaseTimeline.append(.accessCodeReissued(callerCheck: nil, readOutAfter: verifiedBy), caseID: id, actor: actor, at: now, on: connection)
        guard let record = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
        let mailed = try CaseMessages.reissued(record, code: code, keys: keys, at: now, on: connection)
        return ReissuedAccessCode(code: readOut ? code : nil, mailed: mailed)
    }

    // MARK: Merge

    /// Merges the case at `expectedVersion` into `target` (tier2+, both open, same account e-mail, the same customer or
    /// `sameCustomerConfirmed`): it goes to `merged` with `merged_into`; its evidence and notes count on the target; both
    /// timelines record it (the confirmed differences included); a freeze is lifted.
    public func merge(
        _ number: CaseNumber, expectedVersion: Int?, into target: CaseNumber, reason: String?, sameCustomerConfirmed: Bool = false,
        actorTier: Tier, by actor: String, at now: Date, on connection: PostgresConnection
    ) throws -> CaseRecord {
        let reason = try Self.optionalReason(reason)
        // Both rows locked in case-number order, so two opposite merges cannot deadlock.
        for digits in [number.digits, target.digits].sorted() { _ = try CaseStore.id(number: digits, lock: true, on: connection) }
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        guard let into = try CaseStore.find(number: target.digits, on: connection) else {
            throw OperationError.invalid(field: "into", "No case has this number.")
        }
        guard into.erasedAt == nil else { throw OperationError.caseErased }
        do {
            try CaseMerge.check(
                actorTier: actorTier, source: record.snapshot.state, target: into.snapshot.state, sameCase: into.id == record.id,
                sourceAccount: record.accountEmail, targetAccount: into.accountEmail, sourceCustomer: record.mergeCustomer,
                targetCustomer: into.mergeCustomer, sameCustomerConfirmed: sameCustomerConfirmed)
        } catch {
            throw OperationError.refused(error, caseID: record.id)
        }
        guard
            try CaseStore.merge(id: record.id, expectedVersion: record.version, into: into.id, from: record.snapshot.state, now: now, on: connection)
        else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        let differences = CaseMerge.differingFields(record.mergeCustomer, into.mergeCustomer)
        try CaseTimeline.append(
            .merged(into: into.number, from: record.snapshot.state, reason: reason, confirmedDifferences: differences), caseID: record.id,
            actor: actor, at: now, on: connection)
        try CaseTimeline.append(.mergeReceived(from: record.number, reason: reason), caseID: into.id, actor: actor, at: now, on: connection)
        if record.frozen {
            try CaseStore.liftFreeze(id: record.id, on: connection)
            try CaseTimeline.append(
                .unfrozen(accountEmail: record.accountEmail, cause: CaseState.merged.rawValue), caseID: record.id,
                actor: actor, at: now, on: connection)
        }
        let merged = try load(number, on: connection)
        try CaseMessages.merged(merged, into: into, from: record.snapshot.state, keys: keys, at: now, on: connection)
        return merged
    }

    /// Undoes a merge (tier2+, the merged case at `expectedVersion`, the target still open): the case returns to the
    /// state it left, its items leave the target; both timelines record it.
    public func unmerge(
        _ number: CaseNumber, expectedVersion: Int?, reason: String?, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        let reason = try Self.optionalReason(reason)
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        let target = try record.mergedInto.flatMap { try CaseStore.find(number: $0, on: connection) }
        do {
            try CaseMerge.checkUnmerge(actorTier: actorTier, source: record.snapshot.state, target: target?.snapshot.state)
        } catch {
            throw OperationError.refused(error, caseID: record.id)
        }
        guard let target, let restored = record.mergedFromState else { throw OperationError.refused(.caseNotOpen, caseID: nil) }
        for digits in [record.number, target.number].sorted() { _ = try CaseStore.id(number: digits, lock: true, on: connection) }
        var snapshot = record.snapshot
        snapshot.state = restored
        guard
            try CaseStore.unmerge(
                id: record.id, expectedVersion: record.version, to: restored, dueAt: workflow.dueAt(snapshot), now: now,
                on: connection)
        else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(
            .unmerged(from: target.number, to: restored, reason: reason), caseID: record.id, actor: actor, at: now, on: connection)
        try CaseTimeline.append(.unmergeLeft(caseNumber: record.number, reason: reason), caseID: target.id, actor: actor, at: now, on: connection)
        let unmerged = try load(number, on: connection)
        try CaseMessages.stateChanged(unmerged, from: .merged, keys: keys, at: now, on: connection)
        return unmerged
    }

    static func optionalReason(_ reason: String?) throws -> String? {
        let text = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let text, text.count > 2000 { throw OperationError.invalid(field: "reason", "A reason has at most 2000 characters.") }
        return text?.isEmpty == false ? text : nil
    }

    // MARK: API clients' reach

    /// Whether an API client may file into a case: one it opened, or another open one whose access code it sent
    /// (`Reclaim-Access-Code`). A wrong code counts against the case number like a customer's (and is committed:
    /// the verdict is returned, not thrown); a locked number accepts no code.
    public func clientFilingVerdict(
        _ number: CaseNumber, client actor: String, accessCode: String?, at now: Date,
        on connection: PostgresConnection
    ) throws -> ClientFilingScope.Verdict {
        guard let record = try CaseStore.find(number: number.digits, on: connection) else { return .notFound }
        let opened = record.createdBy == actor
        var codeMatches = false
        if !opened, let accessCode {
            let keys = try requireKeys()
            if try ThrottleStore.lockedUntil(keys: [ThrottleStore.caseKey(number.digits)], now: now, on: connection) == nil,
                let symbols = AccessCode.normalize(accessCode), let key = keys.key(id: record.accessCodeKeyID, purpose: .accessCode)
            {
                codeMatches = ConstantTime.equals(AccessCodeHash.compute(symbols: symbols, key: key), record.accessCodeHash)
            }
            if !codeMatches {
                try ThrottleStore.recordFailure(caseNumber: number.digits, address: nil, policy: .default, now: now, on: connection)
            }
        }
        return ClientFilingScope.verdict(openedByCaller: opened, accessCodeMatches: codeMatches, state: record.snapshot.state)
    }

    // MARK: Denials

    /// Records a refused attempt on the case's timeline (in a transaction of its own: the refused one rolls back).
    public func recordDenial(
        caseID: UUID, attempted: String, code: String, evidenceID: UUID? = nil, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws {
        try CaseStore.lock(id: caseID, on: connection)
        try CaseTimeline.append(
            .denied(attempted: attempted, code: code, evidenceID: evidenceID), caseID: caseID, actor: actor, at: now, on: connection)
    }
}

/// The keyed hash stored for an access code (HMAC-SHA256 under the `access_code` key).
public enum AccessCodeHash {
    /// The hash of a code's symbols.
    public static func compute(_ code: AccessCode, key: SymmetricKey) -> [UInt8] { compute(symbols: code.symbols, key: key) }

    /// The hash of typed symbols (after parsing), for a look-up.
    public static func compute(symbols: String, key: SymmetricKey) -> [UInt8] {
        HMACSHA256.authenticate(message: Array(symbols.utf8), key: key)
    }
}

extension CaseRecord {
    /// The record after a change an operation made (saves re-reading the row).
    public func with(
        snapshot: CaseSnapshot? = nil, dueAt: Date?? = nil, assigneeID: UUID? = nil, assigneeName: String? = nil,
        assigneeTier: Tier? = nil, frozen: Bool? = nil, unlocksDone: [UnlockKind]? = nil, risk: Bool? = nil,
        unlocksScheduled: [ScheduledStep]? = nil, updatedAt: Date, version: Int
    ) -> CaseRecord {
        var record = CaseRecord(
            id: id, number: number, accessCodeHash: accessCodeHash, accessCodeKeyID: accessCodeKeyID,
            snapshot: snapshot ?? self.snapshot, dueAt: dueAt ?? self.dueAt, accountEmail: accountEmail,
            customerName: customerName, customerContactEmail: customerContactEmail, devices: devices, summary: summary,
            assigneeID: assigneeID ?? self.assigneeID, assigneeName: assigneeName ?? self.assigneeName,
            assigneeTier: assigneeTier ?? self.assigneeTier, frozen: frozen ?? self.frozen, createdAt: createdAt,
            updatedAt: updatedAt, version: version, rescueEmail: rescueEmail, language: language,
            unlocksDone: unlocksDone ?? self.unlocksDone, unreviewedDocuments: unreviewedDocuments, createdBy: createdBy,
            mergedInto: mergedInto, mergedFromState: mergedFromState, answerProgress: answerProgress, mergedIntoState: mergedIntoState,
            risk: risk ?? self.risk, unlocksScheduled: unlocksScheduled ?? self.unlocksScheduled, awaitingReply: awaitingReply)
        record.erasedAt = erasedAt
        record.formerRescueEmails = formerRescueEmails
        record.customerPhone = customerPhone
        return record
    }

    /// The record without its assignee (the desk it is at now is above theirs).
    func unassigned() -> CaseRecord {
        var record = CaseRecord(
            id: id, number: number, accessCodeHash: accessCodeHash, accessCodeKeyID: accessCodeKeyID, snapshot: snapshot, dueAt: dueAt,
            accountEmail: accountEmail, customerName: customerName, customerContactEmail: customerContactEmail, devices: devices,
            summary: summary, assigneeID: nil, assigneeName: nil, assigneeTier: nil, frozen: frozen, createdAt: createdAt,
            updatedAt: updatedAt, version: version, rescueEmail: rescueEmail, language: language, unlocksDone: unlocksDone,
            unreviewedDocuments: unreviewedDocuments, createdBy: createdBy, mergedInto: mergedInto, mergedFromState: mergedFromState,
            answerProgress: answerProgress, mergedIntoState: mergedIntoState, risk: risk, unlocksScheduled: unlocksScheduled,
            awaitingReply: awaitingReply)
        record.erasedAt = erasedAt
        record.formerRescueEmails = formerRescueEmails
        record.customerPhone = customerPhone
        return record
    }
}

extension CaseRecord {
    /// The customer as merging compares it (name and contact address).
    var mergeCustomer: CaseMerge.Customer { CaseMerge.Customer(name: customerName, contactEmail: customerContactEmail) }
}
