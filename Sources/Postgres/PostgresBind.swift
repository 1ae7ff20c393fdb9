import Foundation

/// PostgreSQL type OIDs this module encodes or decodes.
enum OID {
    static let unspecified: UInt32 = 0
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let json: UInt32 = 114
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let unknown: UInt32 = 705
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let date: UInt32 = 1082
    static let timestamp: UInt32 = 1114
    static let timestamptz: UInt32 = 1184
    static let uuid: UInt32 = 2950
    static let void: UInt32 = 2278
    static let jsonb: UInt32 = 3802
    static let boolArray: UInt32 = 1000
    static let int4Array: UInt32 = 1007
    static let textArray: UInt32 = 1009
    static let int8Array: UInt32 = 1016
    static let float8Array: UInt32 = 1022
    static let uuidArray: UInt32 = 2951
}

/// One bind parameter ($n) of a query: its type and value. Its description never shows the value.
public struct PostgresBind: Sendable, CustomStringConvertible {
    /// How the value travels; kept unserialised until execution so binding allocates nothing.
    enum Value: Sendable {
        case null
        case text(String)
        case bytes([UInt8])
        case data(Data)
        case int64(Int64)
        case int32(Int32)
        case float8(Double)
        case bool(Bool)
        case uuid(UUID)
        /// Microseconds since 2000-01-01 00:00:00 UTC (PostgreSQL's epoch).
        case timestamp(Int64)
        /// A value that cannot be sent (an array holding text with a NUL): execution refuses it.
        case unencodable
    }

    let value: Value
    /// The parameter's type OID; 0 lets the server infer it from context (as for a quoted literal).
    public let typeOID: UInt32

    init(_ value: Value, typeOID: UInt32) {
        self.value = value
        self.typeOID = typeOID
    }

    /// SQL NULL of the given type (0: inferred from context).
    public static func null(typeOID: UInt32 = 0) -> PostgresBind { PostgresBind(.null, typeOID: typeOID) }

    /// A value in PostgreSQL's text format, typed by the server from context unless `typeOID` is given.
    public static func text(_ text: String, typeOID: UInt32 = 0) -> PostgresBind { PostgresBind(.text(text), typeOID: typeOID) }

    /// A one-dimensional array in PostgreSQL's binary array format (`text[]`, `uuid[]`, `bigint[]`...), for `= ANY(...)`.
    /// Its elements travel as they are: no quoting or separator can split or join them.
    public static func array<Element: PostgresArrayElement>(_ elements: [Element]) -> PostgresBind {
        // Header: dimensions, has-nulls flag, element type; then (size, lower bound) of the one dimension.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.count * (4 + Element.postgresElementSize))
        func append(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
        append(elements.isEmpty ? 0 : 1)
        append(0)
        append(Int32(bitPattern: Element.postgresElementTypeOID))
        if !elements.isEmpty {
            append(Int32(elements.count))
            append(1)
        }
        for element in elements {
            let lengthAt = bytes.count
            append(0)
            guard element.appendPostgresBinary(to: &bytes) else { return PostgresBind(.unencodable, typeOID: Element.postgresArrayTypeOID) }
            let length = Int32(bytes.count - lengthAt - 4).bigEndian
            withUnsafeBytes(of: length) { for (i, byte) in $0.enumerated() { bytes[lengthAt + i] = byte } }
        }
        return PostgresBind(.bytes(bytes), typeOID: Element.postgresArrayTypeOID)
    }

    /// True for SQL NULL.
    public var isNull: Bool { if case .null = value { true } else { false } }

    public var description: String { isNull ? "NULL" : "<bind oid \(typeOID)>" }

    /// Bytes on the wire and whether they are binary; text values are followed by a NUL.
    var isBinary: Bool {
        switch value {
        case .null, .text: false
        default: true
        }
    }

    /// Bytes needed to serialise the value (text: plus its NUL terminator).
    var encodedLength: Int {
        switch value {
        case .null: 0
        case .text(let s): s.utf8.count + 1
        case .bytes(let b): b.count
        case .data(let d): d.count
        case .int64, .float8, .timestamp: 8
        case .int32: 4
        case .bool: 1
        case .uuid: 16
        case .unencodable: 0
        }
    }

    /// Writes the value at `out` (which has `encodedLength` bytes); returns the length to declare to
    /// libpq, or nil for text holding a NUL (libpq would cut it there, and PostgreSQL text cannot hold one).
    func encode(into out: UnsafeMutableRawPointer) -> Int32? {
        switch value {
        case .null:
            return 0
        case .unencodable:
            return nil
        case .text(let s):
            var s = s
            let count = s.withUTF8 { utf8 -> Int? in
                guard let base = utf8.baseAddress else { return 0 }
                if memchr(base, 0, utf8.count) != nil { return nil }
                out.copyMemory(from: base, byteCount: utf8.count)
                return utf8.count
            }
            guard let count else { return nil }
            out.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
            return Int32(count)
        case .bytes(let b):
            b.withUnsafeBytes { if let base = $0.baseAddress { out.copyMemory(from: base, byteCount: $0.count) } }
            return Int32(b.count)
        case .data(let d):
            d.withUnsafeBytes { if let base = $0.baseAddress { out.copyMemory(from: base, byteCount: $0.count) } }
            return Int32(d.count)
        case .int64(let v), .timestamp(let v):
            out.storeBytes(of: v.bigEndian, as: Int64.self)
            return 8
        case .int32(let v):
            out.storeBytes(of: v.bigEndian, as: Int32.self)
            return 4
        case .float8(let v):
            out.storeBytes(of: v.bitPattern.bigEndian, as: UInt64.self)
            return 8
        case .bool(let v):
            out.storeBytes(of: v ? 1 : 0, as: UInt8.self)
            return 1
        case .uuid(let u):
            withUnsafeBytes(of: u.uuid) { out.copyMemory(from: $0.baseAddress!, byteCount: 16) }
            return 16
        }
    }
}

/// A type that can be an element of an array bind parameter (`\(ids)` with `ids: [UUID]` binds one `uuid[]`).
public protocol PostgresArrayElement: PostgresEncodable {
    /// The array type's OID (`text[]` is 1009).
    static var postgresArrayTypeOID: UInt32 { get }
    /// The element type's OID written in the array (never 0: binary arrays must name it).
    static var postgresElementTypeOID: UInt32 { get }
    /// Bytes one element usually takes, to size the buffer.
    static var postgresElementSize: Int { get }
    /// Appends the element in PostgreSQL's binary format; false when it cannot be sent (text with a NUL).
    func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool
}

extension PostgresArrayElement {
    public static var postgresElementTypeOID: UInt32 { postgresTypeOID }
}

extension PostgresArrayElement where Self: FixedWidthInteger {
    public static var postgresElementSize: Int { MemoryLayout<Self>.size }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool {
        withUnsafeBytes(of: bigEndian) { bytes.append(contentsOf: $0) }
        return true
    }
}

extension String: PostgresArrayElement {
    /// Elements of a `[String]` are `text` (an untyped array cannot be sent in binary); cast for enums: `ANY(\(tiers)::tier[])`.
    public static var postgresArrayTypeOID: UInt32 { OID.textArray }
    public static var postgresElementTypeOID: UInt32 { OID.text }
    public static var postgresElementSize: Int { 16 }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool {
        // PostgreSQL text cannot hold NUL: refuse rather than let the server cut or reject it.
        if utf8.contains(0) { return false }
        bytes.append(contentsOf: utf8)
        return true
    }
}

extension UUID: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { OID.uuidArray }
    public static var postgresElementSize: Int { 16 }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool {
        withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) }
        return true
    }
}

extension Int: PostgresArrayElement {
    /// `bigint[]`, like a single `Int`.
    public static var postgresArrayTypeOID: UInt32 { OID.int8Array }
    public static var postgresElementSize: Int { 8 }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool { Int64(self).appendPostgresBinary(to: &bytes) }
}

extension Int64: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { OID.int8Array }
}

extension Int32: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { OID.int4Array }
}

extension Bool: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { OID.boolArray }
    public static var postgresElementSize: Int { 1 }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool {
        bytes.append(self ? 1 : 0)
        return true
    }
}

extension Double: PostgresArrayElement {
    public static var postgresArrayTypeOID: UInt32 { OID.float8Array }
    public static var postgresElementSize: Int { 8 }
    public func appendPostgresBinary(to bytes: inout [UInt8]) -> Bool {
        withUnsafeBytes(of: bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
        return true
    }
}
