import Foundation
import Testing

@testable import ReclaimCore

@Suite struct AccessCodeTests {
    @Test func generatedCodesDisplayInFourGroups() {
        var rng = SeededGenerator(seed: 10)
        var seen = Set<Character>()
        for _ in 0..<1_000 {
            let code = AccessCode.generate(using: &rng)
            #expect(code.symbols.count == 16)
            #expect(code.symbols.allSatisfy(AccessCode.alphabet.contains))
            let groups = code.display.split(separator: "-")
            #expect(groups.count == 4 && groups.allSatisfy { $0.count == 4 })
            #expect(AccessCode(normalizing: code.display) == code)
            seen.formUnion(code.symbols)
        }
        #expect(seen.count == 32)
        #expect(AccessCode.bits >= 60)
    }

    @Test func entropyBytesMapToSymbols() {
        #expect(AccessCode(entropy: [UInt8](repeating: 0, count: 10)).symbols == "0000000000000000")
        #expect(AccessCode(entropy: [UInt8](repeating: 0xFF, count: 10)).symbols == "ZZZZZZZZZZZZZZZZ")
        // 0x08 0x42 … : 00001 00001 00001 … → all "1".
        let ones: [UInt8] = [0x08, 0x42, 0x10, 0x84, 0x21, 0x08, 0x42, 0x10, 0x84, 0x21]
        #expect(AccessCode(entropy: ones).display == "1111-1111-1111-1111")
    }

    @Test func normalizeIsForgiving() {
        #expect(AccessCode.normalize("7KQ2-M9XD-4RTB-WP3H") == "7KQ2M9XD4RTBWP3H")
        #expect(AccessCode.normalize("7kq2 m9xd 4rtb wp3h") == "7KQ2M9XD4RTBWP3H")
        #expect(AccessCode.normalize(" 7kq2m9xd-4rtbwp3h\n") == "7KQ2M9XD4RTBWP3H")
        #expect(AccessCode.normalize("ILO0-iloo-1234-5678") == "1100110012345678")
        #expect(AccessCode.normalize("７ＫＱ２-M9XD-4RTB-WP3H") == "7KQ2M9XD4RTBWP3H")
    }

    @Test(arguments: ["7KQ2-M9XD-4RTB-WP3", "7KQ2-M9XD-4RTB-WP3HX", "7KQ2-M9XD-4RTB-WP3U", "7KQ2_M9XD_4RTB_WP3H", "", "ÀKQ2-M9XD-4RTB-WP3H"])
    func normalizeRefuses(_ typed: String) {
        #expect(AccessCode.normalize(typed) == nil)
    }

    @Test func neverDescribesItself() throws {
        var rng = SeededGenerator(seed: 11)
        let code = AccessCode.generate(using: &rng)
        #expect(!"\(code)".contains(code.symbols.prefix(4)))
        #expect(!String(reflecting: code).contains(code.symbols.prefix(4)))
        let json = try JSONEncoder().encode([code])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(code.display)\"]")
        #expect(try JSONDecoder().decode([AccessCode].self, from: json) == [code])
    }
}
