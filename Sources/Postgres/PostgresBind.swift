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
        }
    }

    /// Writes the value at `out` (which has `encodedLength` bytes); returns the length to declare to
    /// libpq, or nil for text holding a NUL (libpq would cut it there, and PostgreSQL text cannot hold one).
    func encode(into out: UnsafeMutableRawPointer) -> Int32? {
        switch value {
        case .null:
            return 0
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
