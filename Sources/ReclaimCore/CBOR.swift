import Foundation

/// A CBOR (RFC 8949) data item, as far as WebAuthn needs: integers, byte and text strings, arrays, maps, booleans
/// and null. Floats, tags, indefinite lengths and other simple values are refused: no authenticator sends them in
/// the attestation object or a COSE key, and every feature left out is one less way to be surprised.
public indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// A negative integer -1 - n, kept as n so the whole range fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Keys in the order sent (a map's keys are compared by value, never re-encoded).
    case map([(CBOR, CBOR)])
    case bool(Bool)
    case null

    /// Why bytes are not a CBOR item this decoder accepts: always an error, never a crash.
    public enum DecodingError: Error, Equatable, Sendable {
        /// The input ended inside an item.
        case truncated
        /// A feature left out on purpose (float, tag, indefinite length, a reserved additional-info value).
        case unsupported(String)
        /// Nested deeper than `maximumDepth`.
        case tooDeep
        /// A length larger than what the input can hold, or than `maximumItems`.
        case tooLarge
        /// A text string that is not UTF-8.
        case invalidText
        /// Bytes left after the item (`decode` only).
        case trailingBytes
    }

    /// Nesting allowed: a COSE key inside authenticator data is two levels deep.
    public static let maximumDepth = 16
    /// Elements allowed in one array or map.
    public static let maximumItems = 1024

    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    /// Decodes exactly one item filling `bytes`.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CBOR {
        let (item, used) = try decodePrefix(bytes)
        guard used == bytes.count else { throw .trailingBytes }
        return item
    }

    /// Decodes the first item of `bytes` and says how many bytes it took (authenticator data may carry more after it).
    public static func decodePrefix(_ bytes: [UInt8]) throws(DecodingError) -> (CBOR, Int) {
        var reader = Reader(bytes: bytes)
        let item = try reader.item(depth: 0)
        return (item, reader.offset)
    }

    /// The value for `key` in a map, nil when absent or when this is not a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// An integer as Int64 (nil when not an integer or out of range).
    public var integer: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard offset < bytes.count else { throw .truncated }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws(DecodingError) -> [UInt8] {
            guard count <= UInt64(bytes.count - offset) else { throw count > UInt64(bytes.count) ? .tooLarge : .truncated }
            let start = offset
            offset += Int(count)
            return Array(bytes[start..<offset])
        }

        mutating func argument(_ info: UInt8) throws(DecodingError) -> UInt64 {
            switch info {
            case 0...23: return UInt64(info)
            case 24...27:
                var value: UInt64 = 0
                for _ in 0..<(1 << (info - 24)) { value = value << 8 | UInt64(try byte()) }
                return value
            case 31: throw .unsupported("indefinite length")
            default: throw .unsupported("reserved additional information \(info)")
            }
        }

        mutating func item(depth: Int) throws(DecodingError) -> CBOR {
            guard depth < CBOR.maximumDepth else { throw .tooDeep }
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            if major == 7 {
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 25, 26, 27: throw .unsupported("floating point")
                default: throw .unsupported("simple value \(info)")
                }
            }
            let argument = try argument(info)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(try take(argument))
            case 3:
                guard let text = String(validating: try take(argument), as: UTF8.self) else { throw .invalidText }
                return .text(text)
            case 4:
                // Each element takes at least one byte: a count beyond what is left cannot be honest.
                guard argument <= UInt64(CBOR.maximumItems), argument <= UInt64(bytes.count - offset) else { throw .tooLarge }
                var items: [CBOR] = []
                for _ in 0..<argument { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                guard argument <= UInt64(CBOR.maximumItems), argument * 2 <= UInt64(bytes.count - offset) else { throw .tooLarge }
                var pairs: [(CBOR, CBOR)] = []
                for _ in 0..<argument { pairs.append((try item(depth: depth + 1), try item(depth: depth + 1))) }
                return .map(pairs)
            default:
                throw .unsupported("tag")
            }
        }
    }
}
