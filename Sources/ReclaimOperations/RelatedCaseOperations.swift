import Foundation
import Postgres
import ReclaimCore
import ReclaimStore

/// Another case related to a case (api.md v1.3 "One account, one story"): what `related` lists, for agents only.
public struct RelatedCase: Sendable, Equatable {
    public let number: String
    public let state: CaseState
    public let tier: Tier
    public let openedAt: Date
    /// Why it is related, in `RelatedCases.Reason` order.
    public let why: [RelatedCases.Reason]
    /// False when the name, contact address or phone differ.
    public let sameCustomer: Bool

    /// `{"number", "state", "tier", "opened_at", "why", "same_customer"}`.
    public var json: JSONValue {
        [
            "number": .string(number), "state": .string(state.rawValue), "tier": .string(tier.rawValue), "opened_at": Timestamp.json(openedAt),
            "why": .array(why.map { .string($0.rawValue) }), "same_customer": .bool(sameCustomer),
        ]
    }

    /// True when this related case and the case it is related to raise `parallel_case`.
    public var isParallel: Bool { RelatedCases.isParallel(reasons: why, sameCustomer: sameCustomer) }
}

extension CaseRecord {
    /// What relatedness compares of the case.
    var relatedParty: RelatedCases.Party {
        RelatedCases.Party(
            accountEmail: accountEmail, customerName: customerName, contactEmail: customerContactEmail, phone: customerPhone,
            deviceIdentifiers: Set(devices.flatMap { [$0.serial, $0.imei].compactMap { $0 } }))
    }
}

extension CaseOperations {
    /// How long a finished case still counts as related (`RECLAIM_RELATED_DAYS`'s default, 90 days).
    public static let defaultRelatedWindow: TimeInterval = 90 * 86_400

    /// Every other case related to `record` (open, or finished within `relatedWindow`; never an erased one): sharing
    /// its account e-mail, a serial or IMEI, its contact address or its phone; by number. Empty for an erased case.
    public func related(to record: CaseRecord, at now: Date, on connection: PostgresConnection) throws -> [RelatedCase] {
        guard record.erasedAt == nil else { return [] }
        var terms = CaseSearch.terms(number: record.number, accountEmail: record.accountEmail, devices: record.devices)
        terms.remove(record.number)
        if let contact = CaseSearch.term(for: record.customerContactEmail) { terms.insert(contact) }
        if let phone = record.customerPhone.flatMap(CaseSearch.term(for:)) { terms.insert(phone) }
        let party = record.relatedParty
        return try CaseStore.neighbours(
            matching: terms.sorted(), except: record.id, finishedSince: now.addingTimeInterval(-relatedWindow), on: connection
        ).compactMap { other in
            let otherParty = RelatedCases.Party(
                accountEmail: other.accountEmail, customerName: other.customerName, contactEmail: other.contactEmail, phone: other.phone,
                deviceIdentifiers: Set(other.devices.flatMap { [$0.serial, $0.imei].compactMap { $0 } }))
            let why = RelatedCases.reasons(party, otherParty)
            guard !why.isEmpty else { return nil }
            return RelatedCase(
                number: other.number, state: other.state, tier: other.tier, openedAt: other.openedAt, why: why,
                sameCustomer: RelatedCases.sameCustomer(party, otherParty))
        }
    }

    /// Raises `parallel_case` on `record` (whose row lock the caller holds) and on each open related case that shares its
    /// account or a device and names another customer. The related cases, as `related` lists them.
    @discardableResult
    func checkParallel(_ record: CaseRecord, at now: Date, on connection: PostgresConnection) throws -> [RelatedCase] {
        let related = try related(to: record, at: now, on: connection)
        let parallel = related.filter(\.isParallel).map(\.number)
        guard !parallel.isEmpty else { return related }
        _ = try RiskSignals.raise(
            .parallelCase, on: record, detail: { FourEyes.detail(.parallelCase, otherCases: $0) }, otherCases: parallel,
            by: RiskSignals.systemActor, at: now, on: connection)
        for number in parallel {
            try RiskSignals.raiseOnOther(.parallelCase, number: number, naming: record.number, at: now, on: connection)
        }
        return related
    }
}
