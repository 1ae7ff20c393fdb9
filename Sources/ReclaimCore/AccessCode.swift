import Foundation

/// The customer's short secret: 16 Crockford base32 symbols (80 bits), read aloud in groups of four.
///
/// Crockford's alphabet drops I, L, O and U, so a code read over the phone cannot be
/// misheard as another; on input I and L are read as 1 and O as 0. The description is
/// redacted so the code never reaches a log by accident.
public struct AccessCode: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The 16 canonical symbols, upper case, no dashes (what is hashed and stored).
    public let symbols: String

    /// Number of symbols (16 × 5 bits = 80 bits).
    public static let length = 16
    /// Random bits carried by a code.
    public static let bits = 80
    /// Crockford base32 symbols in value order.
    public static let alphabet: [Character] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    private static let alphabetBytes = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    private init(canonical: String) { symbols = canonical }

    /// A fresh code drawn from `generator` (which must be cryptographically secure in production).
    public static func generate(using generator: inout some RandomNumberGenerator) -> AccessCode {
        // 12 symbols from the first 60 bits, 4 from the next 20: every symbol uniform.
        let first = generator.next()
        let second = generator.next()
        var values = (0..<12).map { Int((first >> UInt64(5 * $0)) & 31) }
        values += (0..<4).map { Int((second >> UInt64(5 * $0)) & 31) }
        return AccessCode(canonical: String(values.map { alphabet[$0] }))
    }

    /// A code from at least 10 random bytes (e.g. from the OS), the first 80 bits used.
    public init(entropy bytes: some Collection<UInt8>) {
        precondition(bytes.count >= 10, "AccessCode needs 10 random bytes")
        var symbols = [Character]()
        var buffer: UInt32 = 0
        var bitCount = 0
        for byte in bytes.prefix(10) {
            buffer = buffer << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                symbols.append(Self.alphabet[Int(buffer >> UInt32(bitCount) & 31)])
            }
            buffer &= (1 << UInt32(bitCount)) - 1
        }
        self.init(canonical: String(symbols))
    }

    /// Parses a typed code (see `normalize`); nil when it is not 16 valid symbols.
    public init?(normalizing typed: String) {
        guard let canonical = Self.normalize(typed) else { return nil }
        self.init(canonical: canonical)
    }

    /// The 16 canonical symbols of a typed code: any case, whitespace and dashes ignored,
    /// I/L read as 1 and O as 0; nil when the result is not 16 valid symbols.
    public static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 256 else { return nil }
        let folded = typed.utf8.allSatisfy { $0 < 0x80 } ? typed : typed.precomposedStringWithCompatibilityMapping
        var out = [UInt8]()
        out.reserveCapacity(length)
        for scalar in folded.unicodeScalars {
            if scalar.properties.isWhitespace || CaseNumber.isDash(scalar) { continue }
            guard scalar.isASCII else { return nil }
            var byte = UInt8(scalar.value)
            if (0x61...0x7A).contains(byte) { byte -= 0x20 }  // a-z → A-Z
            switch byte {
            case UInt8(ascii: "I"), UInt8(ascii: "L"): byte = UInt8(ascii: "1")
            case UInt8(ascii: "O"): byte = UInt8(ascii: "0")
            default: guard alphabetBytes.contains(byte) else { return nil }
            }
            out.append(byte)
            if out.count > length { return nil }
        }
        return out.count == length ? String(decoding: out, as: UTF8.self) : nil
    }

    /// Four groups of four joined by dashes, e.g. `7KQ2-M9XD-4RTB-WP3H`: what the customer is shown.
    public var display: String {
        let chars = Array(symbols)
        return stride(from: 0, to: chars.count, by: 4).map { String(chars[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// Redacted: the code must not be logged.
    public var description: String { "AccessCode(redacted)" }
    /// Redacted: the code must not be logged.
    public var debugDescription: String { "AccessCode(redacted)" }

    /// Decodes a typed code from a JSON string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let canonical = Self.normalize(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid access code")
        }
        self.init(canonical: canonical)
    }

    /// Encodes as the display form (only ever done in the response that creates the case).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(display)
    }
}

extension AccessCode {
    /// A case's code is re-issued at most once in this long: a second request meanwhile (a double click, two agents at
    /// once) would leave the customer two mails of which one holds a dead code.
    public static let reissueInterval: TimeInterval = 60

    /// Least tier that may be answered a new code, to read out to a caller, with a `caller_check` saying how the caller
    /// was verified: a code read out to whoever calls is how a thief gets in (api.md v1.2); tier 1 only has it mailed.
    public static let callerCheckMinimumTier = Tier.tier2

    /// The longest `caller_check` (a short account of how the caller was verified).
    public static let callerCheckMaximumLength = 500

    /// Until when a new code may not be issued, given the case's last re-issue; nil when it may be now.
    public static func reissueRefusedUntil(lastReissuedAt: Date?, now: Date) -> Date? {
        guard let lastReissuedAt else { return nil }
        let until = lastReissuedAt.addingTimeInterval(reissueInterval)
        return until > now ? until : nil
    }

    /// How long a look-up with a replaced code is told that a new one was mailed (when, and to which masked address)
    /// rather than the generic "no case matches": the owner who missed the mail learns where to look, and after this long
    /// an old code says nothing.
    public static let replacedHintWindow: TimeInterval = 30 * 86_400

    /// Whether a look-up at `now` with the code replaced at `replacedAt` is told of the new code.
    public static func replacedHintApplies(replacedAt: Date, now: Date) -> Bool {
        now >= replacedAt && now.timeIntervalSince(replacedAt) <= replacedHintWindow
    }
}
