import Foundation
import Testing

@testable import ReclaimCore

/// The minimal CBOR decoder: what WebAuthn sends decodes; anything truncated, oversized, too deep or of a kind left out
/// is a clear error, never a crash (fuzz-style: every prefix, every byte flipped, random inputs).
@Suite struct CBORTests {
    /// A none-attestation object's shape: {"fmt": "none", "attStmt": {}, "authData": h'0102'}.
    static let attestation: [UInt8] = [
        0xA3, 0x63, 0x66, 0x6D, 0x74, 0x64, 0x6E, 0x6F, 0x6E, 0x65, 0x67, 0x61, 0x74, 0x74, 0x53, 0x74, 0x6D, 0x74,
        0xA0, 0x68, 0x61, 0x75, 0x74, 0x68, 0x44, 0x61, 0x74, 0x61, 0x42, 0x01, 0x02,
    ]

    @Test func decodesTheShapesWebAuthnUses() throws {
        let item = try CBOR.decode(Self.attestation)
        #expect(item[.text("fmt")] == .text("none"))
        #expect(item[.text("attStmt")] == .map([]))
        #expect(item[.text("authData")] == .bytes([1, 2]))
        #expect(try CBOR.decode([0x20]) == .negative(0))
        #expect(try CBOR.decode([0x20]).integer == -1)
        #expect(try CBOR.decode([0x26]).integer == -7)
        #expect(try CBOR.decode([0x19, 0x01, 0x00]) == .unsigned(256))
        #expect(try CBOR.decode([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .unsigned(.max))
        #expect(try CBOR.decode([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).integer == nil)
        #expect(try CBOR.decode([0x82, 0xF5, 0xF6]) == .array([.bool(true), .null]))
        let (first, used) = try CBOR.decodePrefix([0x01, 0x02])
        #expect(first == .unsigned(1) && used == 1)
    }

    @Test func truncatedInputIsAnErrorAtEveryLength() {
        for length in 0..<Self.attestation.count {
            #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(Array(Self.attestation.prefix(length))) }
        }
        #expect(throws: CBOR.DecodingError.truncated) { try CBOR.decode([0x19, 0x01]) }
    }

    @Test func oversizedLengthsAreRefusedBeforeAllocating() {
        // A byte string claiming 2^64 - 1 bytes, an array and a map claiming 2^32 elements.
        #expect(throws: CBOR.DecodingError.tooLarge) { try CBOR.decode([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: CBOR.DecodingError.tooLarge) { try CBOR.decode([0x9A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]) }
        #expect(throws: CBOR.DecodingError.tooLarge) { try CBOR.decode([0xBA, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]) }
        #expect(throws: CBOR.DecodingError.tooLarge) { try CBOR.decode([0x99, 0x04, 0x01] + Array(repeating: 0x00, count: 1025)) }
    }

    @Test func nestingIsBounded() throws {
        #expect(throws: CBOR.DecodingError.tooDeep) { try CBOR.decode(Array(repeating: 0x81, count: 100_000) + [0x00]) }
        _ = try CBOR.decode(Array(repeating: 0x81, count: CBOR.maximumDepth - 1) + [0x00])
    }

    @Test func featuresLeftOutAreNamed() {
        #expect(throws: CBOR.DecodingError.unsupported("floating point")) { try CBOR.decode([0xFA, 0x3F, 0x80, 0x00, 0x00]) }
        #expect(throws: CBOR.DecodingError.unsupported("tag")) { try CBOR.decode([0xC0, 0x00]) }
        #expect(throws: CBOR.DecodingError.unsupported("indefinite length")) { try CBOR.decode([0x5F, 0xFF]) }
        #expect(throws: CBOR.DecodingError.invalidText) { try CBOR.decode([0x62, 0xC3, 0x28]) }
        #expect(throws: CBOR.DecodingError.trailingBytes) { try CBOR.decode([0x00, 0x00]) }
        #expect(throws: CBOR.DecodingError.unsupported("reserved additional information 28")) { try CBOR.decode([0x1C]) }
    }

    @Test func randomAndMutatedInputNeverCrashes() {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<20_000 {
            let bytes = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? CBOR.decode(bytes)
        }
        for index in Self.attestation.indices {
            for bit in 0..<8 {
                var mutated = Self.attestation
                mutated[index] ^= 1 << bit
                _ = try? CBOR.decode(mutated)
            }
        }
    }
}

/// A tiny deterministic generator, so a failure replays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
