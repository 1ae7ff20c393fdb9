import Foundation

/// A ZIP archive (PKWARE APPNOTE 6.3) of stored, uncompressed entries, built in memory: what a data-subject export
/// needs (a `case.json` and the documents, which are PDF, JPEG, PNG and HEIC and do not compress). UTF-8 names (flag
/// bit 11), no ZIP64 (each entry and the whole archive under 4 GiB), every entry dated `modified` in UTC.
/// `StoredZipWriter` writes the same archive entry by entry, for a body that is sent while it is made.
public struct StoredZip: Sendable {
    private var writer: StoredZipWriter
    private var body: [UInt8] = []

    /// An empty archive whose entries carry `modified` (MS-DOS time, two-second precision, 1980 or later).
    public init(modified: Date) {
        writer = StoredZipWriter(modified: modified)
    }

    /// Adds a file; `name` uses `/` between folders.
    public mutating func add(_ name: String, _ bytes: [UInt8]) {
        // An archive held in memory whole is far below 4 GiB.
        body += try! writer.header(name, for: bytes)
        body += bytes
    }

    /// The archive's bytes: the entries, the central directory, its end record.
    public var bytes: [UInt8] { body + writer.end() }
}

/// The same archive as `StoredZip`, written as it goes: each entry's local header (its CRC and sizes in it, no data
/// descriptor), then its bytes, which the caller sends itself; at the end, the central directory. Only the central
/// directory is kept (about 100 bytes an entry), so memory does not grow with the documents.
public struct StoredZipWriter: Sendable {
    /// The archive would pass 4 GiB or 65,535 entries (ZIP64 is not written).
    public struct TooLarge: Error {}

    private var central: [UInt8] = []
    private var count = 0
    private var offset: UInt64 = 0
    private let time: UInt16
    private let date: UInt16

    /// A writer whose entries carry `modified` (MS-DOS time, two-second precision, 1980 or later).
    public init(modified: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: modified)
        let year = max(1980, c.year ?? 1980)
        time = UInt16((c.hour ?? 0) << 11 | (c.minute ?? 0) << 5 | (c.second ?? 0) / 2)
        date = UInt16((year - 1980) << 9 | (c.month ?? 1) << 5 | (c.day ?? 1))
    }

    /// The local header of an entry holding `bytes` (its CRC computed here); `bytes` must follow it, unchanged.
    /// `name` uses `/` between folders.
    public mutating func header(_ name: String, for bytes: [UInt8]) throws(TooLarge) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        let entryLength = UInt64(30 + nameBytes.count) + UInt64(bytes.count)
        guard count < 0xFFFF, nameBytes.count <= 0xFFFF, offset + entryLength <= 0xFFFF_FFFF else { throw TooLarge() }
        let crc = CRC32.checksum(bytes)
        let entryOffset = UInt32(offset)
        func header(_ out: inout [UInt8], central: Bool) {
            out.le32(central ? 0x0201_4B50 : 0x0403_4B50)
            if central { out.le16(20) }  // made by: MS-DOS attributes, version 2.0
            out.le16(20)  // needed to extract
            out.le16(0x0800)  // names in UTF-8
            out.le16(0)  // stored
            out.le16(time)
            out.le16(date)
            out.le32(crc)
            out.le32(UInt32(bytes.count))
            out.le32(UInt32(bytes.count))
            out.le16(UInt16(nameBytes.count))
            out.le16(0)  // extra field
            if central {
                out.le16(0)  // comment
                out.le16(0)  // disk
                out.le16(0)  // internal attributes
                out.le32(0)  // external attributes
                out.le32(entryOffset)
            }
            out += nameBytes
        }
        var local: [UInt8] = []
        header(&local, central: false)
        header(&central, central: true)
        count += 1
        offset += entryLength
        return local
    }

    /// The archive's end: the central directory and its end record.
    public func end() -> [UInt8] {
        var out = central
        out.le32(0x0605_4B50)
        out.le16(0)
        out.le16(0)
        out.le16(UInt16(count))
        out.le16(UInt16(count))
        out.le32(UInt32(central.count))
        out.le32(UInt32(offset))
        out.le16(0)
        return out
    }
}

/// CRC-32 (ISO 3309, polynomial 0xEDB88320 reflected), as ZIP and gzip use it.
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The checksum of `bytes` ("123456789" → 0xCBF43926).
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

extension [UInt8] {
    fileprivate mutating func le16(_ value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    fileprivate mutating func le32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
