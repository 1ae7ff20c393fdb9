import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Raising, clearing and honouring risk signals (api.md v1.2, "The thief on the phone"). `raise` is the one entry point
/// for every operation that notices a fact (opening, device and document evidence, accounts on file, and later received
/// mail and "this wasn't me"): it writes the signal, its `risk_raised` event and the partners' `case.risk_raised` in
/// the caller's transaction.
public enum RiskSignals {
    /// Raises `signal` on the case `record` (whose row lock the caller holds) with `detail` for agents: a `risk_raised`
    /// event and the `case.risk_raised` webhook (the signal's name only). Idempotent while the signal stands uncleared:
    /// then only `otherCases` new to it are added, with no event. True when a new signal was raised.
    @discardableResult
    public static func raise(
        _ signal: RiskSignal, on record: CaseRecord, detail: String, otherCases: [String] = [], by actor: String, at now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        try raise(signal, on: record, detail: { _ in detail }, otherCases: otherCases, by: actor, at: now, on: connection)
    }

    static func raise(
        _ signal: RiskSignal, on record: CaseRecord, detail: (_ otherCases: [String]) -> String, otherCases: [String], by actor: String,
        at now: Date, on connection: PostgresConnection
    ) throws -> Bool {
        let raised = try RiskSignalStore.raise(
            signal, caseID: record.id, detail: detail, otherCases: otherCases, by: actor, at: now, on: connection)
        guard raised else { return false }
        try CaseTimeline.append(
            .riskRaised(signal: signal, detail: detail(otherCases.sorted()), otherCases: otherCases.sorted()), caseID: record.id, actor: actor,
            at: now, on: connection)
        try CaseMessages.webhook(
            .caseRiskRaised, for: record, state: record.snapshot.state, data: ["signal": .string(signal.rawValue)], at: now, on: connection)
        return true
    }

    /// `device_claimed_elsewhere` on `record` when one of `devices` is on another account's case or on file for another
    /// account, and on each such other case that is open (it is at risk too: one of the two claims is the thief's).
    /// The caller holds `record`'s row lock. True when `record` is now at risk.
    @discardableResult
    public static func checkDevices(_ devices: [CaseDevice], of record: CaseRecord, at now: Date, on connection: PostgresConnection)
        throws -> Bool
    {
        let serials = Array(Set(devices.compactMap(\.serial))).sorted()
        let imeis = Array(Set(devices.compactMap(\.imei))).sorted()
        guard !serials.isEmpty || !imeis.isEmpty else { return false }
        let others = try RiskSignalStore.casesClaiming(
            serials: serials, imeis: imeis, otherThan: record.accountEmail, except: record.id, on: connection)
        let onFile = try RiskSignalStore.onFileElsewhere(serials: serials, imeis: imeis, otherThan: record.accountEmail, on: connection)
        guard !others.isEmpty || onFile else { return false }
        _ = try raise(
            .deviceClaimedElsewhere, on: record,
            detail: { FourEyes.detail(.deviceClaimedElsewhere, otherCases: $0, onFileElsewhere: onFile) }, otherCases: others,
            by: systemActor, at: now, on: connection)
        for number in others { try raiseOnOther(.deviceClaimedElsewhere, number: number, naming: record.number, at: now, on: connection) }
        return true
    }

    /// `document_reused` on `record` when a document with `sha256` is on a case of another account, and on each such
    /// open case. The caller holds `record`'s row lock.
    @discardableResult
    public static func checkDocument(sha256: [UInt8], of record: CaseRecord, at now: Date, on connection: PostgresConnection) throws -> Bool {
        let others = try RiskSignalStore.casesWithDocument(sha256: sha256, otherThan: record.accountEmail, except: record.id, on: connection)
        guard !others.isEmpty else { return false }
        _ = try raise(
            .documentReused, on: record, detail: { FourEyes.detail(.documentReused, otherCases: $0) }, otherCases: others, by: systemActor,
            at: now, on: connection)
        for number in others { try raiseOnOther(.documentReused, number: number, naming: record.number, at: now, on: connection) }
        return true
    }

    /// A device put on file for an account: `device_claimed_elsewhere` on every open case of another account holding it.
    static func checkAccountDevices(_ devices: [CaseDevice], accountEmail: String, at now: Date, on connection: PostgresConnection) throws {
        let serials = Array(Set(devices.compactMap(\.serial))).sorted()
        let imeis = Array(Set(devices.compactMap(\.imei))).sorted()
        let cases = try RiskSignalStore.openCasesHolding(serials: serials, imeis: imeis, otherThan: accountEmail, on: connection)
        for (id, _) in cases.sorted(by: { $0.number < $1.number }) {
            try CaseStore.lock(id: id, on: connection)
            guard let record = try CaseStore.find(id: id, on: connection) else { continue }
            _ = try raise(
                .deviceClaimedElsewhere, on: record,
                detail: { FourEyes.detail(.deviceClaimedElsewhere, otherCases: $0, onFileElsewhere: true) }, otherCases: [],
                by: systemActor, at: now, on: connection)
        }
    }

    /// The earlier case named by a new fact: raised there too while it is open (a finished case takes no work).
    static func raiseOnOther(_ signal: RiskSignal, number: String, naming caseNumber: String, at now: Date, on connection: PostgresConnection)
        throws
    {
        guard let id = try CaseStore.id(number: number, lock: true, on: connection), let other = try CaseStore.find(id: id, on: connection),
            other.snapshot.state.isOpen
        else { return }
        _ = try raise(
            signal, on: other, detail: { FourEyes.detail(signal, otherCases: $0) }, otherCases: [caseNumber], by: systemActor, at: now,
            on: connection)
    }

    /// 409 `risk_uncleared` while a signal of the case stands, 409 `four_eyes` when `actor` cleared its signals: asked
    /// before approving the case and before recording an unlock step.
    public static func checkFourEyes(caseID: UUID, actor: String, on connection: PostgresConnection) throws {
        let standing = try RiskSignalStore.standing(caseID: caseID, on: connection)
        switch FourEyes.check(actor: actor, uncleared: standing.uncleared, clearers: standing.clearers) {
        case nil: return
        case .riskUncleared(let signals)?: throw OperationError.riskUncleared(signals)
        case .clearedBySameAgent?: throw OperationError.fourEyes
        }
    }

    static let systemActor = "system"
}

extension CaseOperations {
    /// `POST /api/v1/cases/{n}/flags`: an agent raises `flagged` with their reason (1–2000 characters).
    public func flag(_ number: CaseNumber, reason: String, by actor: String, at now: Date, on connection: PostgresConnection) throws -> CaseRecord {
        let reason = try Self.riskReason(reason)
        let id = try lockID(number, on: connection)
        guard let record = try CaseStore.find(id: id, on: connection) else { throw OperationError.caseNotFound }
        try RiskSignals.raise(.flagged, on: record, detail: reason, by: actor, at: now, on: connection)
        return try load(number, on: connection)
    }

    /// `POST /api/v1/cases/{n}/risk/clear`: clears every uncleared signal with `risk_cleared` naming them (nothing to
    /// clear changes nothing). The caller checked the tier (tier 3 or engineering).
    public func clearRisk(_ number: CaseNumber, reason: String, by actor: String, at now: Date, on connection: PostgresConnection) throws
        -> CaseRecord
    {
        let reason = try Self.riskReason(reason)
        let id = try lockID(number, on: connection)
        let cleared = try RiskSignalStore.clearAll(caseID: id, reason: reason, by: actor, at: now, on: connection)
        if !cleared.isEmpty {
            try CaseTimeline.append(.riskCleared(signals: cleared, reason: reason), caseID: id, actor: actor, at: now, on: connection)
        }
        return try load(number, on: connection)
    }

    /// A flag's or a clearance's reason, trimmed: required, at most 2000 characters.
    static func riskReason(_ text: String) throws(OperationError) -> String {
        let reason = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if reason.isEmpty { throw .invalid(field: "reason", "Say why.") }
        if reason.count > 2000 { throw .invalid(field: "reason", "A reason has at most 2000 characters.") }
        return reason
    }
}
