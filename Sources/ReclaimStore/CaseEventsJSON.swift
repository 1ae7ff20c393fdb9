import Foundation

/// A JSON value as the service emits it: no floating-point numbers, so every value has exactly
/// one RFC 8785 (JCS) form. Used for case events (hashed) and for the case API's bodies.
public indirect enum JSONValue: Sendable, Hashable, Decodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(Int64(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// A string, or null when nil.
    public static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// Decodes any JSON without fractions or exponents (integers must fit Int64).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int64.self) { self = .int(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        if let value = try? container.decode([String: JSONValue].self) { self = .object(value); return }
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "unsupported JSON value (fractional numbers are not used)")
    }

    /// Parses JSON text (as stored in `case_events.data`).
    public static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
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
        keys.sorted { a, b in a.utf16.lexicographicallyPrecedes(b.utf16) }
    }

    /// JCS string escaping: `"` and `\`, the short forms for \b \t \n \f \r, `\u00xx` for other controls; nothing else.
    public static func writeString(_ value: String, to out: inout String) {
        out += "\""
        var needsEscape = false
        for byte in value.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscape = true
            break
        }
        if !needsEscape {
            out += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{08}": out += "\\b"
                case "\t": out += "\\t"
                case "\n": out += "\\n"
                case "\u{0C}": out += "\\f"
                case "\r": out += "\\r"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        out += "\""
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
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(Int64(fraction), 3))Z"
    }

    /// The text, or JSON null.
    public static func json(_ date: Date?) -> JSONValue { date.map { .string(format($0)) } ?? .null }
}
