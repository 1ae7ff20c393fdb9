import Foundation

/// Merging duplicate cases (api.md v1.1, v1.2): tier 2 and above, both cases open, about the same account e-mail, and
/// about the same customer unless the agent confirms it.
public enum CaseMerge {
    /// Least tier that may merge or unmerge.
    public static let minimumTier = Tier.tier2

    /// Who a case is for, as merging compares it: the customer's name and contact address.
    public struct Customer: Sendable, Equatable {
        public let name: String
        public let contactEmail: String
        /// The customer named `name`, reached at `contactEmail`.
        public init(name: String, contactEmail: String) {
            self.name = name
            self.contactEmail = contactEmail
        }
    }

    /// Whether `source` may be merged into `target`: `insufficientTier`, `caseNotOpen` (either finished, or the same
    /// case), `notSameAccount` (e-mails compared case-insensitively), then `differentCustomer` when the customers differ
    /// and the agent has not confirmed that they are one person.
    public static func check(
        actorTier: Tier, source: CaseState, target: CaseState, sameCase: Bool,
        sourceAccount: String, targetAccount: String
    ) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(minimumTier) else { throw .insufficientTier(required: minimumTier) }
        guard CaseWork.merge.isTaken(in: source), target.isOpen, !sameCase else { throw .caseNotOpen }
        guard sourceAccount.lowercased() == targetAccount.lowercased() else { throw .notSameAccount }
    }

    /// `check`, then the customers: different ones (`differingFields` not empty) need `sameCustomerConfirmed`.
    public static func check(
        actorTier: Tier, source: CaseState, target: CaseState, sameCase: Bool, sourceAccount: String, targetAccount: String,
        sourceCustomer: Customer, targetCustomer: Customer, sameCustomerConfirmed: Bool
    ) throws(WorkflowRefusal) {
        try check(
            actorTier: actorTier, source: source, target: target, sameCase: sameCase, sourceAccount: sourceAccount, targetAccount: targetAccount)
        let differing = differingFields(sourceCustomer, targetCustomer)
        guard differing.isEmpty || sameCustomerConfirmed else { throw .differentCustomer(differing) }
    }

    /// The customer fields in which two cases differ (`customer.name`, `customer.contact_email`), in that order.
    ///
    /// Errs towards "different": names compare after trimming, collapsing spaces and folding case, width and accents
    /// (a typo of capitals is the same person); addresses compare whole, case-insensitively, with no `+tag` or dot rule
    /// (two mailboxes a provider may join can still be two people, and a false "different" only asks for a confirmation).
    public static func differingFields(_ first: Customer, _ second: Customer) -> [String] {
        var fields: [String] = []
        if normalizedName(first.name) != normalizedName(second.name) { fields.append("customer.name") }
        if normalizedAddress(first.contactEmail) != normalizedAddress(second.contactEmail) { fields.append("customer.contact_email") }
        return fields
    }

    static func normalizedName(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    static func normalizedAddress(_ address: String) -> String {
        address.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// Whether a merged case may be unmerged: tier 2 and above, while the case it went into is open.
    public static func checkUnmerge(actorTier: Tier, source: CaseState, target: CaseState?) throws(WorkflowRefusal) {
        guard actorTier.isAtLeast(minimumTier) else { throw .insufficientTier(required: minimumTier) }
        guard source == .merged, let target, target.isOpen else { throw .caseNotOpen }
    }
}
