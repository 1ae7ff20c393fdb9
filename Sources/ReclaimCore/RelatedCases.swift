import Foundation

/// One account, one story (api.md v1.3 "The thief's other doors"): which other cases are related to a case, why, and
/// when two of them are the thief's and the owner's (`parallel_case`). Pure: the operation loads the other cases.
public enum RelatedCases {
    /// Why another case is related, in the contract's words and order.
    public enum Reason: String, Sendable, CaseIterable, Codable {
        /// The same account e-mail.
        case account
        /// A serial or IMEI in common.
        case device
        /// The same contact mailbox.
        case contact
        /// The same phone number.
        case phone
    }

    /// What relatedness compares of a case.
    public struct Party: Sendable, Equatable {
        public var accountEmail: String
        public var customerName: String
        public var contactEmail: String
        public var phone: String?
        /// Serials and IMEIs, as stored (validated: upper-case serials, digit IMEIs).
        public var deviceIdentifiers: Set<String>

        public init(accountEmail: String, customerName: String, contactEmail: String, phone: String? = nil, deviceIdentifiers: Set<String>) {
            self.accountEmail = accountEmail
            self.customerName = customerName
            self.contactEmail = contactEmail
            self.phone = phone
            self.deviceIdentifiers = deviceIdentifiers
        }
    }

    /// Why `other` is related to `this`, in `Reason` order (empty: not related).
    public static func reasons(_ this: Party, _ other: Party) -> [Reason] {
        var reasons: [Reason] = []
        if normalizedEmail(this.accountEmail) == normalizedEmail(other.accountEmail) { reasons.append(.account) }
        if !this.deviceIdentifiers.isDisjoint(with: other.deviceIdentifiers) { reasons.append(.device) }
        if EmailAddress.sameMailbox(this.contactEmail, other.contactEmail) { reasons.append(.contact) }
        if let phone = this.phone, let otherPhone = other.phone, phone == otherPhone { reasons.append(.phone) }
        return reasons
    }

    /// False when the name, the contact address or the phone differ (names compared without case or extra spaces).
    public static func sameCustomer(_ this: Party, _ other: Party) -> Bool {
        normalizedName(this.customerName) == normalizedName(other.customerName) && EmailAddress.sameMailbox(this.contactEmail, other.contactEmail)
            && this.phone == other.phone
    }

    /// True when the two cases raise `parallel_case`: they share the account or a device and name different customers.
    public static func isParallel(reasons: [Reason], sameCustomer: Bool) -> Bool {
        !sameCustomer && (reasons.contains(.account) || reasons.contains(.device))
    }

    static func normalizedEmail(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }

    static func normalizedName(_ text: String) -> String {
        text.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
