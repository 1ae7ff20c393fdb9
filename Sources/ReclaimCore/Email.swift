/// An e-mail address checked pragmatically: one `@`, a plausible local part, a dotted domain (lower-cased).
///
/// Not RFC 5322 (no quoted local parts or comments): what people really use, including
/// internationalised local parts and domains.
public struct EmailAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The address: local part as typed, domain lower-cased.
    public let value: String

    /// The longest address accepted (RFC 5321's path limit).
    public static let maximumLength = 254

    /// The address.
    public var description: String { value }

    /// The whole address lower-cased, for finding an account regardless of how it was typed.
    public var lookupKey: String { value.lowercased() }

    /// The local part (before the `@`).
    public var localPart: String { String(value[..<value.lastIndex(of: "@")!]) }

    /// The domain (after the `@`), lower-case.
    public var domain: String { String(value[value.index(after: value.lastIndex(of: "@")!)...]) }

    /// Validates a typed address; surrounding whitespace is trimmed.
    public static func validate(_ text: String, field: String = "email") -> Result<EmailAddress, ValidationFailure> {
        let refused = Result<EmailAddress, ValidationFailure>.failure(ValidationFailure(field: field, message: "This is not a valid e-mail address."))
        let trimmed = String(String.UnicodeScalarView(text.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()))
        guard trimmed.utf8.count <= maximumLength else {
            return .failure(ValidationFailure(field: field, message: "An e-mail address has at most 254 characters."))
        }
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return refused }
        let local = String(parts[0])
        let domain = String(parts[1]).lowercased()
        guard isValidLocalPart(local), isValidDomain(domain) else { return refused }
        return .success(EmailAddress(value: local + "@" + domain))
    }

    private init(value: String) { self.value = value }

    private static let localSymbols = Set("!#$%&'*+/=?^_`{|}~.-".unicodeScalars)

    private static func isValidLocalPart(_ local: String) -> Bool {
        guard (1...64).contains(local.utf8.count), !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        return local.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII ? (scalar.properties.isAlphabetic || CaseNumber.asciiDigit(scalar) != nil || localSymbols.contains(scalar))
                           : isLetterDigitOrMark(scalar)
        }
    }

    private static func isValidDomain(_ domain: String) -> Bool {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, let tld = labels.last, tld.count >= 2, !tld.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0 == "-" || isLetterDigitOrMark($0) }
        }
    }

    // Letters, digits and combining marks of any script (internationalised addresses, decomposed accents).
    private static func isLetterDigitOrMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber: true
        default: scalar.properties.isAlphabetic
        }
    }

    /// Decodes and validates a JSON string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        switch EmailAddress.validate(try container.decode(String.self)) {
        case let .success(email): self = email
        case .failure: throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid e-mail address")
        }
    }

    /// Encodes the address as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
