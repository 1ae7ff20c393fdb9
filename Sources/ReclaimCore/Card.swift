import Foundation

/// A payment card number as stated by the customer: 13–19 digits. Holds the full number only so a
/// fingerprint can be computed; its description is masked, and it must never be stored or logged.
public struct CardNumber: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The full digits (secret: fingerprint them, never store them).
    public let digits: String

    /// Allowed lengths.
    public static let lengths = 13...19

    /// China UnionPay (prefix 62): exempt from Luhn, since not all its cards satisfy it.
    public var isUnionPay: Bool { digits.hasPrefix("62") }

    /// First six and last four digits, the most that may be kept.
    public var summary: CardSummary { CardSummary(number: digits) }

    /// The masked number.
    public var description: String { CardSummary.masked(digits) }
    /// The masked number.
    public var debugDescription: String { CardSummary.masked(digits) }

    /// Validates a stated number: spaces and dashes ignored, 13–19 digits, Luhn unless UnionPay.
    public static func validate(_ text: String, field: String = "number") -> Result<CardNumber, ValidationFailure> {
        guard let digits = text.digitsIgnoringSeparators(), !digits.isEmpty else {
            return .failure(ValidationFailure(field: field, message: "A card number has only digits."))
        }
        guard lengths.contains(digits.count) else {
            return .failure(ValidationFailure(field: field, message: "A card number has 13 to 19 digits."))
        }
        let card = CardNumber(digits: digits.digitString)
        guard card.isUnionPay || Luhn.isValid(digits) else {
            return .failure(ValidationFailure(field: field, message: "This card number is not valid: please re-read it."))
        }
        return .success(card)
    }

    private init(digits: String) { self.digits = digits }
}

/// What may be kept of a card: its first six and last four digits.
public struct CardSummary: Sendable, Hashable, Codable {
    /// The issuer prefix (first six digits).
    public let firstSix: String
    /// The last four digits.
    public let lastFour: String
    /// Digits in the full number (so the mask has the right width).
    public let length: Int

    /// The summary of a full number.
    public init(number: String) {
        firstSix = String(number.prefix(6))
        lastFour = String(number.suffix(4))
        length = number.count
    }

    /// A summary rebuilt from stored parts.
    public init(firstSix: String, lastFour: String, length: Int) {
        self.firstSix = firstSix
        self.lastFour = lastFour
        self.length = length
    }

    /// The masked form, e.g. `623456******7890`.
    public var masked: String {
        firstSix + String(repeating: "*", count: max(0, length - 10)) + lastFour
    }

    /// First six, `*` for the middle, last four: "6234561234567890" → "623456******7890"; all stars when under 11 digits.
    public static func masked(_ number: String) -> String {
        guard number.count > 10 else { return String(repeating: "*", count: number.count) }
        return CardSummary(number: number).masked
    }

    // JSON field names.
    private enum CodingKeys: String, CodingKey {
        case firstSix = "first_six"
        case lastFour = "last_four"
        case length
    }
}

/// A card's expiry month.
public struct CardExpiry: Sendable, Hashable, Codable {
    /// 1...12.
    public let month: Int
    /// Four-digit year.
    public let year: Int

    /// Validates month (1–12) and four-digit year; refused once the end of that month (UTC) is before `now`.
    public static func validate(month: Int, year: Int, now: Date, monthField: String = "exp_month", yearField: String = "exp_year") -> Result<
        CardExpiry, ValidationFailure
    > {
        var issues = [FieldIssue]()
        if !(1...12).contains(month) { issues.append(FieldIssue(field: monthField, message: "The expiry month is 1 to 12.")) }
        if !(1000...9999).contains(year) { issues.append(FieldIssue(field: yearField, message: "The expiry year has four digits.")) }
        guard issues.isEmpty else { return .failure(ValidationFailure(issues)) }
        let expiry = CardExpiry(month: month, year: year)
        guard now < expiry.endOfMonth else {
            return .failure(ValidationFailure(field: yearField, message: "This card has expired."))
        }
        return .success(expiry)
    }

    private init(month: Int, year: Int) {
        self.month = month
        self.year = year
    }

    /// The first instant after the expiry month (UTC): the card is valid before it.
    public var endOfMonth: Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let next = month == 12 ? DateComponents(year: year + 1, month: 1, day: 1) : DateComponents(year: year, month: month + 1, day: 1)
        return calendar.date(from: next)!
    }

    // JSON field names.
    private enum CodingKeys: String, CodingKey {
        case month = "exp_month"
        case year = "exp_year"
    }
}
