import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

// Correcting a case (api.md v1.2 "A case can be corrected"), and the checks it shares with opening one.

extension CaseOperations {
    /// The field names refusals use for the customer's contact address and the rescue address.
    static let contactField = "customer.contact_email", rescueField = "facts.rescue_email"
    /// The field name refusals use for the customer's phone.
    static let phoneField = "customer.phone"

    /// A customer's name, trimmed: 1 to 200 characters.
    static func validatedName(_ text: String, field: String = "customer.name", issues: inout IssueCollector) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > 200 { issues.add(field: field, message: "A name has 1 to 200 characters.") }
        return name
    }

    /// The devices, each with a valid serial or IMEI; at most 10.
    static func validatedDevices(_ devices: [Opening.Device], issues: inout IssueCollector) -> [CaseDevice] {
        var valid: [CaseDevice] = []
        for (index, device) in devices.enumerated() {
            if let device = ValidatedAccount.validateDevice(
                serial: device.serial, imei: device.imei, model: device.model,
                field: "devices[\(index)]", issues: &issues)
            {
                valid.append(device)
            }
        }
        if devices.count > 10 { issues.add(field: "devices", message: "At most 10 devices.") }
        return valid
    }

    /// What happened, trimmed: at most 5000 characters.
    static func validatedSummary(_ text: String, issues: inout IssueCollector) -> String {
        let summary = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if summary.count > 5000 { issues.add(field: "summary", message: "A summary has at most 5000 characters.") }
        return summary
    }

    /// The rescue rule at the door: a contact address that reaches the rescue address's mailbox (as mail providers read
    /// them: `EmailAddress.sameMailbox`) is refused, naming `field`: every mail to the customer would go to the thief
    /// (and the opening mail's access code with it).
    static func checkContact(_ contact: String, rescue: String?, field: String, issues: inout IssueCollector) {
        guard let rescue, EmailAddress.sameMailbox(contact, rescue) else { return }
        issues.add(
            field: field,
            message: field == contactField
                ? "This reaches the same mailbox as the rescue address the thief added: mail to it would go to the thief. Give the customer's own address."
                : "This reaches the same mailbox as the customer's contact address: the rescue address is the one the thief added, never the customer's."
        )
    }

    /// The reason recorded on steps a correction cancelled.
    public static let correctionReason = "correction"

    /// The rescue rule across the account: a new contact address that reaches the mailbox of any rescue address the
    /// account's cases recorded, current or former, is refused.
    static func checkContact(_ contact: String, formerRescue: [String], issues: inout IssueCollector) {
        guard formerRescue.contains(where: { EmailAddress.sameMailbox(contact, $0) }) else { return }
        issues.add(
            field: contactField,
            message:
                "This reaches the mailbox of a rescue address the thief added on this account: mail to it would go to the thief. Give the customer's own address."
        )
    }

    /// A correction as the caller asked for it: nil leaves a field as it is; `language` and `rescueEmail` may be set to
    /// nil (not known). `devices` replaces the whole list; `facts` names only the facts that are given.
    public struct Correction: Sendable {
        /// The customer's name.
        public var customerName: String?
        /// The customer's contact address.
        public var contactEmail: String?
        /// The customer's phone (E.164); `.some(nil)`: none on file any more.
        public var phone: String??
        /// The customer's language; `.some(nil)`: not known.
        public var language: CustomerLanguage??
        /// The rescue address the thief added; `.some(nil)`: not known (a rescue address may still have been added).
        public var rescueEmail: String??
        /// The facts given, each its new value.
        public var facts: [CaseFact: Bool] = [:]
        /// Every device, replacing the list.
        public var devices: [Opening.Device]?
        /// What happened, in the agent's words.
        public var summary: String?

        /// A correction that changes nothing until fields are set.
        public init() {}

        /// True when it names what the thief changed: a fact, or the rescue address.
        public var touchesThiefFacts: Bool { !facts.isEmpty || rescueEmail != nil }

        /// True when no field is given (the API refuses that: 422).
        public var isEmpty: Bool {
            customerName == nil && contactEmail == nil && phone == nil && language == nil && rescueEmail == nil && facts.isEmpty && devices == nil
                && summary == nil
        }
    }

    /// Corrects an open case at `expectedVersion` (any agent): validates every field given (all issues at once, the
    /// rescue rule included), recomputes the path, due date and unlock checklist when the facts change
    /// (`CaseCorrectionRule`), stores it with one `case_corrected` event naming the fields, and tells the previous
    /// contact address when it changed. A correction that changes nothing is answered with the case as it is (no event,
    /// no new version). A finished case is `caseNotOpen`; a change of path after engineering took over, `pathDecided`.
    public func correct(
        _ number: CaseNumber, expectedVersion: Int?, _ correction: Correction, actorTier: Tier, by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> CaseRecord {
        guard !correction.isEmpty else { throw OperationError.invalid(field: "", "Give at least one field to change.") }
        let record = try loadForChange(number, expectedVersion: expectedVersion, on: connection)
        guard record.snapshot.state.isOpen else { throw OperationError.refused(.caseNotOpen, caseID: nil) }
        // What the thief changed is corrected by tier 2 and above once the case left tier 1 (api.md v1.3 "What the thief
        // added is never forgotten"): a tier-1 agent on the phone cannot empty the checklist.
        if correction.touchesThiefFacts, let required = CaseCorrectionRule.thiefFactsMinimumTier(on: record.snapshot),
            !actorTier.isAtLeast(required)
        {
            throw OperationError.refused(.insufficientTier(required: required), caseID: record.id)
        }
        // Every rescue address the account's cases ever recorded is the thief's (api.md v1.3).
        let accountRescue = try CaseStore.accountRescueAddresses(email: record.accountEmail, on: connection)

        var issues = IssueCollector()
        var name = record.customerName
        var contact = record.customerContactEmail
        var phone = record.customerPhone
        var rescue = record.rescueEmail
        var devices = record.devices
        var summary = record.summary
        if let given = correction.customerName { name = Self.validatedName(given, issues: &issues) }
        if let given = correction.contactEmail, let valid = issues.take(EmailAddress.validate(given, field: Self.contactField)) {
            contact = valid.value
        }
        if let given = correction.phone { phone = given.flatMap { issues.take(PhoneNumber.validate($0, field: Self.phoneField))?.value } }
        if let given = correction.rescueEmail {
            rescue = given.flatMap { issues.take(EmailAddress.validate($0, field: Self.rescueField))?.value }
        }
        if let given = correction.devices { devices = Self.validatedDevices(given, issues: &issues) }
        if let given = correction.summary { summary = Self.validatedSummary(given, issues: &issues) }
        var facts = record.snapshot.facts
        for (fact, value) in correction.facts { facts[fact] = value }
        // A known rescue address means one was added (as at opening); saying none was added while one is known is a contradiction.
        if correction.rescueEmail != nil, rescue != nil, correction.facts[.rescueEmailAdded] == nil { facts.rescueEmailAdded = true }
        if rescue != nil, !facts.rescueEmailAdded {
            issues.add(
                field: "facts.rescue_email_added",
                message: "The case knows the rescue address the thief added: remove it (rescue_email null) to say none was added.")
        }
        Self.checkContact(contact, rescue: rescue, field: correction.contactEmail != nil ? Self.contactField : Self.rescueField, issues: &issues)
        // (Once: the case's own rescue address, checked just above, is among the account's.)
        if contact != record.customerContactEmail, !(rescue.map { EmailAddress.sameMailbox(contact, $0) } ?? false) {
            Self.checkContact(contact, formerRescue: accountRescue + record.formerRescueEmails, issues: &issues)
        }
        do { try issues.check() } catch { throw OperationError.invalid(error) }
        // Who is told goes through a verified call (api.md v1.3 "The call, verified both ways"): a caller who knows only
        // the case number cannot move the case's mail, or the number the desk calls back, to their own.
        let changesWhoIsTold = contact != record.customerContactEmail || phone != record.customerPhone
        if changesWhoIsTold { _ = try requireVerifiedCaller(record, actorTier: actorTier, by: actor, at: now, on: connection) }
        // A rescue address removed or replaced stays the thief's: kept among the former ones.
        var former = record.formerRescueEmails
        if let old = record.rescueEmail, rescue.map({ !EmailAddress.sameMailbox($0, old) }) ?? true,
            !former.contains(where: { EmailAddress.sameMailbox($0, old) })
        {
            former.append(old)
        }

        var snapshot = record.snapshot
        snapshot.facts = facts
        switch CaseCorrectionRule.path(after: facts, on: record.snapshot) {
        case .success(let path): snapshot.path = path
        case .failure(let refusal): throw OperationError.refused(refusal, caseID: nil)
        }
        let language = correction.language ?? record.language
        var event = CaseCorrectionEvent(fields: [])
        func changed(_ field: String, _ differs: Bool) { if differs { event.fields.append(field) } }
        changed("customer.name", name != record.customerName)
        changed(Self.contactField, contact != record.customerContactEmail)
        changed(Self.phoneField, phone != record.customerPhone)
        changed("language", language != record.language)
        changed(Self.rescueField, rescue != record.rescueEmail)
        event.facts = record.snapshot.facts.changes(to: facts)
        event.fields += event.facts.map { "facts." + $0.fact.rawValue }
        changed("devices", devices != record.devices)
        changed("summary", summary != record.summary)
        guard !event.fields.isEmpty else { return record }

        if rescue != record.rescueEmail { event.rescueEmail = record.rescueEmail == nil ? "added" : rescue == nil ? "removed" : "changed" }
        if devices != record.devices {
            event.devices = (devices.filter { !record.devices.contains($0) }.count, record.devices.filter { !devices.contains($0) }.count)
        }
        if language != record.language { event.language = .some(language) }
        if snapshot.path != record.snapshot.path { event.path = (record.snapshot.path, snapshot.path) }
        let unlocks = UnlockChecklist.required(kind: snapshot.kind, facts: facts)
        if unlocks != UnlockChecklist.required(kind: record.snapshot.kind, facts: record.snapshot.facts) { event.unlocksRequired = unlocks }

        var corrected = CorrectedCase(
            customerName: name, customerContactEmail: contact, language: language, rescueEmail: rescue, snapshot: snapshot,
            dueAt: workflow.dueAt(snapshot), devices: devices, summary: summary)
        corrected.formerRescueEmails = former
        corrected.customerPhone = phone
        // The cooling-off holds (api.md v1.3): a correction of who is told (or called back), of the rescue facts or of the devices while a
        // step waits cancels every waiting step (the step rows first: the scheduler's lock order); a second person
        // schedules again, with a new notice to every address.
        let waitingSteps = record.unlocksScheduled.map(\.step)
        let touchesNotice =
            contact != record.customerContactEmail || phone != record.customerPhone || rescue != record.rescueEmail
            || facts.rescueEmailAdded != record.snapshot.facts.rescueEmailAdded
            || devices != record.devices
        var cancelled: [UnlockKind] = []
        if touchesNotice, !waitingSteps.isEmpty {
            cancelled = try ScheduledUnlockStore.cancel(
                caseID: record.id, steps: nil, reason: Self.correctionReason, by: actor, at: now, on: connection
            ).map(\.step)
        }
        guard try CaseStore.correct(id: record.id, expectedVersion: record.version, to: corrected, now: now, on: connection) else {
            throw try staleNow(record.id, expected: record.version, on: connection)
        }
        try CaseTimeline.append(.caseCorrected(event), caseID: record.id, actor: actor, at: now, on: connection)
        for step in cancelled {
            try CaseTimeline.append(
                .unlockCancelled(step: step, reason: Self.correctionReason), caseID: record.id, actor: actor, at: now, on: connection)
            try CaseMessages.webhook(
                .caseUnlockCancelled, for: record, state: record.snapshot.state, data: ["step": .string(step.rawValue), "by": "agent"], at: now,
                on: connection)
        }
        if !cancelled.isEmpty {
            try RiskSignals.raise(
                .contactChanged, on: record,
                detail: "Corrected (\(event.fields.joined(separator: ", "))) while unlock steps waited: they were cancelled; schedule them again.",
                by: actor, at: now, on: connection)
        }
        var updated = try load(number, on: connection)
        // A device added by the correction may be another account's claim (the row is locked by the update).
        let addedDevices = devices.filter { !record.devices.contains($0) }
        if !addedDevices.isEmpty, try RiskSignals.checkDevices(addedDevices, of: updated, at: now, on: connection) {
            updated = try load(number, on: connection)
        }
        // A new name, contact address, phone or device may make another case of the account or device a parallel one.
        if name != record.customerName || contact != record.customerContactEmail || phone != record.customerPhone || devices != record.devices,
            try checkParallel(updated, at: now, on: connection).contains(where: \.isParallel), !updated.risk
        {
            updated = try load(number, on: connection)
        }
        if contact != record.customerContactEmail {
            try CaseMessages.contactChanged(
                updated, previous: record.customerContactEmail, previousRescue: record.rescueEmail, keys: keys, at: now,
                on: connection)
        }
        // A path with fewer document requirements may be met by what already arrived: the case moves itself, as on arrival.
        if snapshot.path != record.snapshot.path, updated.snapshot.state == .awaitingDocuments {
            let documents = try EvidenceStore.list(caseID: updated.id, on: connection).filter(\.kind.isDocument).map {
                (kind: $0.countsAs, status: $0.status)
            }
            if let decision = workflow.documentsArrived(on: updated.snapshot, documents: documents, now: now) {
                updated = try apply(decision, to: updated, by: Self.systemActor, at: now, on: connection)
            }
        }
        return updated
    }
}
