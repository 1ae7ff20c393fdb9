import CPostgres
import Foundation

/// A Swift value that can be a bind parameter ($n) of a query.
public protocol PostgresEncodable {
    /// The type OID announced for this type's parameters (also for NULL); 0 lets the server infer it.
    static var postgresTypeOID: UInt32 { get }
    /// The value as a bind parameter.
    var postgresBind: PostgresBind { get }
}

/// A Swift value that can be read from a result column.
public protocol PostgresDecodable {
    /// Decodes a non-NULL cell; throws `.decoding` when the column's type or text does not fit.
    static func decode(from cell: PostgresCell) throws -> Self
    /// The value of a NULL cell: throws `.decoding`, except for Optional (nil).
    static func decodeNull(from cell: PostgresCell) throws -> Self
}

extension PostgresDecodable {
    public static func decodeNull(from cell: PostgresCell) throws -> Self {
        throw cell.error("is NULL; decode as \(Self.self)? to accept NULL")
    }
}

// MARK: - Optional and RawRepresentable

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { Wrapped.postgresTypeOID }
    public var postgresBind: PostgresBind {
        switch self {
        case .some(let value): value.postgresBind
        case .none: .null(typeOID: Wrapped.postgresTypeOID)
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Self { try Wrapped.decode(from: cell) }
    public static func decodeNull(from cell: PostgresCell) throws -> Self { nil }
}

/// Enums stored as their raw value (text or integer) need only declare the conformance.
extension PostgresEncodable where Self: RawRepresentable, RawValue: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { RawValue.postgresTypeOID }
    public var postgresBind: PostgresBind { rawValue.postgresBind }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Self {
        guard let value = Self(rawValue: try RawValue.decode(from: cell)) else {
            throw cell.error("holds a value that is not a \(Self.self)")
        }
        return value
    }
}

// MARK: - Encoding

extension String: PostgresEncodable {
    /// Untyped, like a quoted literal: the server infers text, an enum, uuid, json... from context.
    /// Where the context is ambiguous (`\(name) IS NULL`), cast: `\(name)::text`.
    public static var postgresTypeOID: UInt32 { OID.unspecified }
    public var postgresBind: PostgresBind { PostgresBind(.text(self), typeOID: OID.unspecified) }
}

extension Int: PostgresEncodable {
    /// bigint; cast (`\(n)::int`) where a function wants integer.
    public static var postgresTypeOID: UInt32 { OID.int8 }
    public var postgresBind: PostgresBind { PostgresBind(.int64(Int64(self)), typeOID: OID.int8) }
}

extension Int64: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { OID.int8 }
    public var postgresBind: PostgresBind { PostgresBind(.int64(self), typeOID: OID.int8) }
}

extension Int32: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { OID.int4 }
    public var postgresBind: PostgresBind { PostgresBind(.int32(self), typeOID: OID.int4) }
}

extension Double: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { OID.float8 }
    public var postgresBind: PostgresBind { PostgresBind(.float8(self), typeOID: OID.float8) }
}

extension Bool: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { OID.bool }
    public var postgresBind: PostgresBind { PostgresBind(.bool(self), typeOID: OID.bool) }
}

extension Array: PostgresEncodable where Element == UInt8 {
    /// bytea, sent in binary.
    public static var postgresTypeOID: UInt32 { OID.bytea }
    public var postgresBind: PostgresBind { PostgresBind(.bytes(self), typeOID: OID.bytea) }
}

extension Data: PostgresEncodable {
    /// bytea, sent in binary.
    public static var postgresTypeOID: UInt32 { OID.bytea }
    public var postgresBind: PostgresBind { PostgresBind(.data(self), typeOID: OID.bytea) }
}

extension UUID: PostgresEncodable {
    public static var postgresTypeOID: UInt32 { OID.uuid }
    public var postgresBind: PostgresBind { PostgresBind(.uuid(self), typeOID: OID.uuid) }
}

extension Date: PostgresEncodable {
    /// timestamptz, microsecond precision (rounded to the nearest microsecond).
    public static var postgresTypeOID: UInt32 { OID.timestamptz }
    public var postgresBind: PostgresBind {
        let micros = (timeIntervalSinceReferenceDate * 1_000_000).rounded()
        // Out-of-range dates (beyond ±290,000 years) clamp to PostgreSQL's ±infinity.
        let clamped: Int64 =
            if micros.isNaN || micros >= 9.2e18 { Int64.max } else if micros <= -9.2e18 { Int64.min } else {
                Int64(micros) + PostgresTime.referenceOffsetMicros
            }
        return PostgresBind(.timestamp(clamped), typeOID: OID.timestamptz)
    }
}

// MARK: - Decoding

extension String: PostgresDecodable {
    /// Any column: text as is; other types in their PostgreSQL text form.
    public static func decode(from cell: PostgresCell) throws -> String {
        if !cell.isBinary { return cell.withBytes { String(decoding: $0, as: UTF8.self) } }
        return try PostgresBinary.renderText(cell)
    }
}

extension Int64: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int64 {
        if cell.isBinary {
            return try cell.withBytes { bytes in
                switch (cell.typeOID, bytes.count) {
                case (OID.int8, 8): return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
                case (OID.int4, 4): return Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self)))
                case (OID.int2, 2): return Int64(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self)))
                case (OID.oid, 4): return Int64(UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))
                default: throw cell.error("is not an integer column")
                }
            }
        }
        guard let value = cell.withBytes(PostgresText.parseInt64) else { throw cell.error("is not an integer") }
        return value
    }
}

extension Int: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int { Int(try Int64.decode(from: cell)) }
}

extension Int32: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int32 {
        guard let value = Int32(exactly: try Int64.decode(from: cell)) else { throw cell.error("is out of range for Int32") }
        return value
    }
}

extension Double: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Double {
        if cell.isBinary {
            return try cell.withBytes { bytes in
                switch (cell.typeOID, bytes.count) {
                case (OID.float8, 8): return Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
                case (OID.float4, 4): return Double(Float(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))))
                case (OID.int8, _), (OID.int4, _), (OID.int2, _): return Double(try Int64.decode(from: cell))
                default: throw cell.error("is not a number column")
                }
            }
        }
        // Swift's parser is locale-independent and accepts PostgreSQL's Infinity / -Infinity / NaN.
        guard let value = Double(cell.withBytes { String(decoding: $0, as: UTF8.self) }) else {
            throw cell.error("is not a number")
        }
        return value
    }
}

extension Bool: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Bool {
        let value: Bool? = cell.withBytes { bytes in
            if cell.isBinary { return cell.typeOID == OID.bool && bytes.count == 1 ? bytes[0] != 0 : nil }
            switch bytes.count == 1 ? bytes[0] : 0 {
            case UInt8(ascii: "t"): return true
            case UInt8(ascii: "f"): return false
            default: return nil
            }
        }
        guard let value else { throw cell.error("is not a boolean") }
        return value
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// bytea (binary or \x hex text); other columns give their bytes as sent.
    public static func decode(from cell: PostgresCell) throws -> [UInt8] {
        try cell.withBytes { bytes in
            if cell.typeOID == OID.bytea && !cell.isBinary {
                guard let decoded = PostgresText.parseHexBytea(bytes) else { throw cell.error("is not \\x hex bytea text") }
                return decoded
            }
            return Array(bytes)
        }
    }
}

extension Data: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Data {
        if cell.typeOID == OID.bytea && !cell.isBinary { return Data(try [UInt8].decode(from: cell)) }
        return cell.withBytes { Data($0) }
    }
}

extension UUID: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> UUID {
        let value: UUID? = cell.withBytes { bytes in
            if cell.isBinary {
                guard cell.typeOID == OID.uuid, bytes.count == 16 else { return nil }
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
                return UUID(uuid: uuid)
            }
            return PostgresText.parseUUID(bytes)
        }
        guard let value else { throw cell.error("is not a UUID") }
        return value
    }
}

extension Date: PostgresDecodable {
    /// timestamptz (also timestamp and date, read as UTC); ±infinity become distantFuture / distantPast.
    public static func decode(from cell: PostgresCell) throws -> Date {
        let micros: Int64? = cell.withBytes { bytes in
            if cell.isBinary {
                switch (cell.typeOID, bytes.count) {
                case (OID.timestamptz, 8), (OID.timestamp, 8): return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
                case (OID.date, 4):
                    let days = Int32(bigEndian: bytes.loadUnaligned(as: Int32.self))
                    if days == Int32.max { return Int64.max }
                    if days == Int32.min { return Int64.min }
                    return Int64(days) * PostgresTime.microsPerDay
                default: return nil
                }
            }
            return PostgresText.parseTimestamp(bytes)
        }
        guard let micros else { throw cell.error("is not a timestamp") }
        if micros == Int64.max { return .distantFuture }
        if micros == Int64.min { return .distantPast }
        return Date(timeIntervalSinceReferenceDate: Double(micros - PostgresTime.referenceOffsetMicros) / 1_000_000)
    }
}
