import InboundMail
import Testing

/// SplitMix64: a fixed seed gives the same mutations on every run and every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Fuzz: mutated fixtures never trap")
struct FuzzTests {
    /// Bytes that matter to a MIME parser, inserted more often than others.
    static let interesting: [[UInt8]] = [
        Array("\r\n".utf8), Array("\n".utf8), Array("\r\n\r\n".utf8), Array("--".utf8), Array("=?".utf8), Array("?=".utf8),
        Array("=?utf-8?B?".utf8), Array("=?gb18030?Q?=".utf8), Array("=".utf8), Array(";".utf8), Array("*0*=".utf8), Array("\"".utf8),
        Array("<".utf8), Array(">".utf8), Array("(".utf8), Array("&#x".utf8), Array("&".utf8), Array("Content-Type: multipart/mixed; boundary=".utf8),
        Array("Content-Type: message/rfc822\r\n\r\n".utf8), Array("Content-Transfer-Encoding: base64\r\n".utf8), [0x00], [0xFF], [0x80], [0xC4],
    ]

    static func mutate(_ input: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.insert(contentsOf: interesting.randomElement(using: &random)!, at: position)
            case 2 where !bytes.isEmpty:
                bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...64, using: &random)))
            case 3 where !bytes.isEmpty:
                // Copy a run elsewhere (duplicated boundaries and headers).
                let run = bytes[position..<min(bytes.count, position + Int.random(in: 1...200, using: &random))]
                bytes.insert(contentsOf: run, at: Int.random(in: 0...bytes.count, using: &random))
            case 4: bytes = Array(bytes.prefix(position))  // truncated mid-transfer
            case 5 where !bytes.isEmpty: bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
            }
        }
        return bytes
    }

    @Test func mutatedFixturesParseOrAreRefused() {
        var random = SeededGenerator(state: 0x5EED_2026_1201)
        let fixtures = Fixture.names.map(Fixture.bytes)
        #expect(fixtures.count == 9)
        var parsed = 0
        var refused = 0
        let parser = MailParser()
        for _ in 0..<3_000 {
            let mutated = Self.mutate(fixtures.randomElement(using: &random)!, &random)
            do {
                let mail = try parser.parse(mutated)
                // Whatever came out is usable text: no control characters but tab and line feed.
                #expect(!mail.text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" })
                #expect(!(mail.subject ?? "").unicodeScalars.contains { $0.value < 0x20 })
                parsed += 1
            } catch {
                #expect(!error.reason.isEmpty)
                refused += 1
            }
            _ = try? parser.parseHeader(mutated)
        }
        #expect(parsed + refused == 3_000)
        #expect(parsed > 2_000)  // most mutations leave a message that reads
    }

    @Test func randomBytesAndPathologicalShapes() {
        var random = SeededGenerator(state: 42)
        let parser = MailParser()
        for _ in 0..<300 {
            let count = Int.random(in: 0..<2_000, using: &random)
            _ = try? parser.parse((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        // Deep comment nesting, endless folds, a boundary on every line, one enormous header line.
        let shapes: [[UInt8]] = [
            bytes("From: " + String(repeating: "(", count: 50_000) + "a@b\r\n\r\n"),
            bytes("Subject: x" + String(repeating: "\r\n ", count: 50_000) + "\r\n\r\n"),
            bytes("Content-Type: multipart/mixed; boundary=a\r\n\r\n" + String(repeating: "--a\r\n", count: 400)),
            bytes("Subject: " + String(repeating: "=?utf-8?q?x?= ", count: 20_000) + "\r\n\r\n"),
            bytes("To: " + String(repeating: "<", count: 20_000) + "\r\n\r\n"),
            bytes("Content-Type: text/html\r\n\r\n" + String(repeating: "<a href=\"", count: 20_000)),
        ]
        for shape in shapes { _ = try? parser.parse(shape) }
    }
}

extension Error {
    /// The parser's reason code, for any error it throws.
    var reason: String { (self as? MailParseError)?.reason ?? "" }
}
