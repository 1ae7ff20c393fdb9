import Foundation

/// An e-mail address the service can send to: a conservative subset of RFC 5321 mailboxes (domain lower-cased).
///
/// Local part: ASCII letters, digits and `.` `_` `-` `+` `'` (no leading, trailing or doubled dot), at most 64 bytes.
/// Domain: at least two ASCII LDH labels (an IDN as its `xn--` form), a TLD that is not all digits, no address
/// literal. Refused, because they route elsewhere or read as something else: `%` (source routing through a relay)
/// and `!` (UUCP bang paths), RFC 2047 encoded words (`=?utf-8?q?…?=`, forbidden in an address by its §5), quoted
/// local parts and comments, and non-ASCII local parts, which need SMTPUTF8 from every relay on the way.
public struct EmailAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The address: local part as typed, domain lower-cased.
    public let value: String

    /// The rule in words, for `/openapi.json` and refusals' readers.
    public static let rule =
        "A mailbox the service can send to: before the @ ASCII letters, digits and . _ - + ' (no dot at either end, "
        + "none doubled, at most 64); after it an ASCII domain name (an international one in its xn-- form). No %, !, quotes, "
        + "RFC 2047 encoded words or address literals."

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
        func refused(_ message: String) -> Result<EmailAddress, ValidationFailure> { .failure(ValidationFailure(field: field, message: message)) }
        let trimmed = String(
            String.UnicodeScalarView(
                text.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()))
        guard trimmed.utf8.count <= maximumLength else { return refused("An e-mail address has at most 254 characters.") }
        // Bytes, not Characters: "@" followed by a combining mark is one Character and would hide the separator.
        let bytes = Array(trimmed.utf8)
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")), bytes.lastIndex(of: UInt8(ascii: "@")) == at else {
            return refused("This is not a valid e-mail address.")
        }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...].map(lowercasedASCII)
        if local.contains(where: { $0 >= 0x80 }) {
            return refused("Mail cannot be sent to letters outside A to Z before the @: give an address written with A to Z, digits and . _ - + '.")
        }
        if domain.contains(where: { $0 >= 0x80 }) {
            return refused("Write an international domain in its xn-- form (as the mail provider shows it).")
        }
        guard isValidLocalPart(local) else {
            return refused(
                "This is not a valid e-mail address: before the @ only A to Z, digits and . _ - + ' (no dot at either end, no two in a row).")
        }
        guard isValidDomain(domain) else { return refused("This is not a valid e-mail address: the part after the @ is not a domain name.") }
        return .success(EmailAddress(value: String(decoding: local, as: UTF8.self) + "@" + String(decoding: domain, as: UTF8.self)))
    }

    private init(value: String) { self.value = value }

    // Letters, digits and these: what the big providers let people choose, and O'Brien.
    private static let localSymbols = Set(".-_+'".utf8)

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func isValidLocalPart(_ local: ArraySlice<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        guard (1...64).contains(local.count), local.first != dot, local.last != dot else { return false }
        return zip(local, local.dropFirst()).allSatisfy { !($0 == dot && $1 == dot) }
            && local.allSatisfy { isLetterOrDigit($0) || localSymbols.contains($0) }
    }

    private static func isValidDomain(_ domain: [UInt8]) -> Bool {
        let hyphen = UInt8(ascii: "-")
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard domain.count <= 253, labels.count >= 2, let tld = labels.last, tld.count >= 2,
            !tld.allSatisfy({ (0x30...0x39).contains($0) })
        else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && label.first != hyphen && label.last != hyphen
                && label.allSatisfy { isLetterOrDigit($0) || $0 == hyphen }
        }
    }

    /// Decodes and validates a JSON string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        switch EmailAddress.validate(try container.decode(String.self)) {
        case .success(let email): self = email
        case .failure: throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid e-mail address")
        }
    }

    /// Encodes the address as a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

// MARK: Same mailbox

extension EmailAddress {
    /// Providers whose own rules make more addresses reach one mailbox than case and `+tag` do: the domain they share,
    /// and whether dots in the local part count. Every other domain: its own, dots count.
    static let providerRules: [String: (mailboxDomain: String, ignoresDots: Bool)] = [
        "gmail.com": ("gmail.com", true), "googlemail.com": ("gmail.com", true),
        "icloud.com": ("icloud.com", false), "me.com": ("icloud.com", false), "mac.com": ("icloud.com", false),
    ]

    /// The mailbox `address` reaches, as mail providers read it: comments (`thief(x)@example.com`) and blanks dropped,
    /// lower-cased, `+tag` dropped (every domain), the provider's own rules (`providerRules`) applied. Takes any text, so
    /// addresses stored under older rules, and a received `From` as written, compare too.
    public static func mailbox(_ address: String) -> String {
        let text = withoutComments(address).filter { !$0.isWhitespace }.lowercased()
        guard let at = text.lastIndex(of: "@") else { return text }
        var local = Substring(text[..<at])
        var domain = String(text[text.index(after: at)...])
        // A trailing dot is the DNS root: `example.com.` is `example.com`.
        while domain.hasSuffix(".") { domain.removeLast() }
        if let plus = local.firstIndex(of: "+"), plus != local.startIndex { local = local[..<plus] }
        var mailbox = String(local)
        if let rule = providerRules[domain] {
            domain = rule.mailboxDomain
            if rule.ignoresDots { mailbox.removeAll { $0 == "." } }
        }
        return mailbox + "@" + domain
    }

    /// `text` without its RFC 5322 comments: parenthesised, nested, `\` escaping the next character; outside quotes.
    static func withoutComments(_ text: String) -> String {
        guard text.contains("(") else { return text }
        var result = ""
        var depth = 0
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
                if depth == 0 { result.append(character) }
                continue
            }
            switch character {
            case "\\" where quoted || depth > 0:
                escaped = true
                if depth == 0 { result.append(character) }
            case "\"" where depth == 0:
                quoted.toggle()
                result.append(character)
            case "(" where !quoted:
                depth += 1
            case ")" where !quoted && depth > 0:
                depth -= 1
            default:
                if depth == 0 { result.append(character) }
            }
        }
        return result
    }

    /// Whether two addresses reach the same mailbox (the rescue rule: nothing is sent to an address that reaches the
    /// thief's). Errs towards "the same": a false match only holds a mail back, a false miss mails the thief.
    public static func sameMailbox(_ first: String, _ second: String) -> Bool {
        mailbox(first) == mailbox(second)
    }
}

// MARK: Masked

extension EmailAddress {
    /// The address with all but the first letter of the local part and of the domain's first label hidden
    /// (`jane.doe@example.com` → `j***@e***.com`): enough for its owner to recognise it, not for anyone else to write to.
    public static func masked(_ address: String) -> String {
        let text = address.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let at = text.lastIndex(of: "@") else { return text.isEmpty ? text : String(text.prefix(1)) + "***" }
        let local = text[..<at]
        let domain = text[text.index(after: at)...]
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let first = labels.first.map { String($0.prefix(1)) + "***" } ?? "***"
        let rest = labels.dropFirst().last.map { "." + $0 } ?? ""
        return String(local.prefix(1)) + "***@" + first + rest
    }
}
