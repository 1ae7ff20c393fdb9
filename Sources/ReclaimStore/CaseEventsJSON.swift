import Foundation
import Logging
import Postgres

/// A JSON value as the service emits it: no floating-point numbers, so every value has exactly
/// one RFC 8785 (JCS) form. Used for case events (hashed) and for the case API's bodies.
public indirect enum JSONValue: Sendable, Hashable, Decodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    /// JSON null.
    case null
    /// true or false.
    case bool(Bool)
    /// An integer (the service writes no fractions).
    case int(Int64)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object (key order is irrelevant: the canonical form sorts).
    case object([String: JSONValue])

    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self = .int(Int64(value)) }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// null.
    public init(nilLiteral: ()) { self = .null }
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// A string, or null when nil.
    public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// Decodes any JSON without fractions or exponents (integers must fit Int64).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
            return
        }
        if let value = try? container.decode(Int64.self) {
            self = .int(value)
            return
        }
        if let value = try? container.decode(String.self) {
            self = .string(value)
            return
        }
        if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
            return
        }
        if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
            return
        }
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "unsupported JSON value (fractional numbers are not used)")
    }

    /// Parses JSON text (as stored in `case_events.data` and `cases.devices`): a small recursive-descent parser,
    /// since JSONDecoder costs tens of microseconds a call and a queue page parses fifty of these.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { bytes in
            var parser = JSONParser(bytes: bytes)
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == bytes.count else { throw JSONParser.Failure() }
            return value
        }
    }

    /// The RFC 8785 canonical form: keys sorted by UTF-16 code units, no whitespace, minimal escaping.
    public var canonical: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the canonical form to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)  // ES formatting of an integer is its decimal digits
        case .string(let value): JSONValue.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in JSONValue.sortedKeys(members.keys).enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// Keys in JCS order: by their UTF-16 code units.
    static func sortedKeys(_ keys: Dictionary<String, JSONValue>.Keys) -> [String] {
        // For ASCII keys (all the service's) UTF-8 byte order is UTF-16 order, and much cheaper to compare.
        if keys.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 } }) {
            return keys.sorted { a, b in a.utf8.lexicographicallyPrecedes(b.utf8) }
        }
        return keys.sorted { a, b in a.utf16.lexicographicallyPrecedes(b.utf16) }
    }

    /// `writeString` into bytes (the response body), with the same escaping.
    public static func writeString(_ value: String, to out: inout [UInt8]) {
        var needsEscape = false
        for byte in value.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscape = true
            break
        }
        if needsEscape {
            var text = ""
            writeString(value, to: &text)
            out.append(contentsOf: text.utf8)
        } else {
            out.append(0x22)
            out.append(contentsOf: value.utf8)
            out.append(0x22)
        }
    }

    /// JCS string escaping: `"` and `\`, the short forms for \b \t \n \f \r, `\u00xx` for other controls; nothing else.
    public static func writeString(_ value: String, to out: inout String) {
        JSONText.appendString(value, to: &out)
    }
}

/// RFC 3339 UTC timestamps with milliseconds (`2026-03-14T09:26:53.589Z`): the one format of the case API and its events.
public enum Timestamp {
    /// Drops sub-millisecond precision, so a stored and reloaded time formats the same.
    public static func truncated(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// The RFC 3339 text of `date` (UTC, milliseconds).
    public static func format(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = Int(millis - seconds * 1000)
        // Civil date from days since 1970 (H. Hinnant's algorithm): no gmtime_r, which takes glibc's timezone lock.
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = PostgresTime.civilFromDays(days)
        // One allocation: the 24 bytes written in place.
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int64, at offset: Int, width: Int) {
                var rest = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[position] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                    rest /= 10
                }
            }
            put(year, at: 0, width: 4)
            buffer[4] = 0x2D
            put(month, at: 5, width: 2)
            buffer[7] = 0x2D
            put(day, at: 8, width: 2)
            buffer[10] = 0x54
            put(secondOfDay / 3600, at: 11, width: 2)
            buffer[13] = 0x3A
            put(secondOfDay % 3600 / 60, at: 14, width: 2)
            buffer[16] = 0x3A
            put(secondOfDay % 60, at: 17, width: 2)
            buffer[19] = 0x2E
            put(Int64(fraction), at: 20, width: 3)
            buffer[23] = 0x5A
            return 24
        }
    }

    /// The text, or JSON null.
    public static func json(_ date: Date?) -> JSONValue { date.map { .string(format($0)) } ?? .null }

    /// An RFC 3339 time, with or without a fraction, `Z` or an offset (a query parameter's); nil for anything else.
    public static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

/// The parser behind `JSONValue.parse`: RFC 8259 without fractions or exponents (the service never writes them).
struct JSONParser {
    struct Failure: Error {}
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    mutating func expect(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Failure() }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { throw Failure() }
        index += count
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < 64 else { throw Failure() }
        skipWhitespace()
        guard index < bytes.count else { throw Failure() }
        switch bytes[index] {
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw Failure() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                throw Failure()
            }
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Failure() }
                index += 1
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw Failure() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                throw Failure()
            }
        default:
            return .int(try integer())
        }
    }

    mutating func integer() throws -> Int64 {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        guard index > digitsStart else { throw Failure() }
        guard index == digitsStart + 1 || bytes[digitsStart] != 0x30 else { throw Failure() }  // no leading zeros
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            throw Failure()
        }
        guard let value = Int64(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) else { throw Failure() }
        return value
    }

    mutating func string() throws -> String {
        index += 1  // the opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") && bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw Failure() }
            index += 1
        }
        guard index < bytes.count else { throw Failure() }
        if bytes[index] == UInt8(ascii: "\"") {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return text
        }
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            guard byte >= 0x20 else { throw Failure() }
            if byte != UInt8(ascii: "\\") {
                out.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw Failure() }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { throw Failure() }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw Failure() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let value = Unicode.Scalar(scalar) else { throw Failure() }
                out.append(contentsOf: Array(String(Character(value)).utf8))
            default: throw Failure()
            }
        }
        throw Failure()
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw Failure() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw Failure()
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
