import Foundation
import ReclaimCore
import Testing

/// The export's ZIP writer: CRC-32's check value, and the archive's layout byte by byte for one entry.
struct StoredZipTests {
    @Test func crc32MatchesItsCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func oneStoredEntryIsLaidOutAsAPPNOTESays() {
        // 2026-12-02 06:00:10 UTC.
        var zip = StoredZip(modified: Date(timeIntervalSince1970: 1_796_191_210))
        zip.add("a.txt", Array("hi".utf8))
        let bytes = zip.bytes
        func le32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        func le16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        #expect(le32(0) == 0x0403_4B50)
        #expect(le16(8) == 0)  // stored
        #expect(le32(14) == CRC32.checksum(Array("hi".utf8)) && le32(18) == 2 && le32(22) == 2)
        #expect(String(decoding: bytes[30..<35], as: UTF8.self) == "a.txt" && String(decoding: bytes[35..<37], as: UTF8.self) == "hi")
        #expect(le32(37) == 0x0201_4B50 && le32(37 + 42) == 0)  // central entry, pointing at offset 0
        let end = bytes.count - 22
        #expect(le32(end) == 0x0605_4B50 && le16(end + 10) == 1 && le32(end + 16) == 37)
        #expect(le16(10) == (6 << 11 | 0 << 5 | 5) && le16(12) == ((2026 - 1980) << 9 | 12 << 5 | 2))
    }

    @Test func theWriterWritesTheSameArchiveEntryByEntry() throws {
        let modified = Date(timeIntervalSince1970: 1_796_191_210)
        let entries: [(String, [UInt8])] = [("case.json", Array("{}".utf8)), ("documents/a.png", [UInt8](repeating: 7, count: 1000))]
        var zip = StoredZip(modified: modified)
        var writer = StoredZipWriter(modified: modified)
        var streamed: [UInt8] = []
        for (name, bytes) in entries {
            zip.add(name, bytes)
            streamed += try writer.header(name, for: bytes) + bytes
        }
        #expect(streamed + writer.end() == zip.bytes)
    }
}
