import Crypto
import Testing

@Suite("Random, constant time, keys")
struct KeysTests {
    @Test func randomBytes() {
        #expect(SecureRandom.bytes(0).isEmpty)
        let a = SecureRandom.bytes(32)
        let b = SecureRandom.bytes(32)
        #expect(a.count == 32)
        #expect(a != b)
    }

    @Test func uniformStaysBelowBound() {
        for _ in 0..<1000 { #expect(SecureRandom.uniform(10) < 10) }
        #expect(SecureRandom.uniform(1) == 0)
        #expect(SecureRandom.uniform(0) == 0)
        // All ten values turn up in 1000 draws (failure odds ~1e-44).
        #expect(Set((0..<1000).map { _ in SecureRandom.uniform(10) }).count == 10)
    }

    @Test func tokenIsBase64URL() {
        let token = SecureRandom.token()
        #expect(token.count == 43)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(SecureRandom.token() != token)
        #expect(Base64URL.encode(bytes("\u{fb}\u{ff}")) == "w7vDvw")
        #expect(Base64URL.encode([0xfb, 0xff, 0xfe]) == "-__-")
    }

    @Test func constantTimeEquals() {
        #expect(ConstantTime.equals([], []))
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equals([], [0]))
    }

    @Test func symmetricKeyLengthAndEquality() throws {
        #expect(throws: CryptoError.invalidKeyLength(expected: 32, actual: 31)) { try SymmetricKey(bytes: SecureRandom.bytes(31)) }
        let raw = SecureRandom.bytes(32)
        let a = try SymmetricKey(bytes: raw)
        let b = try SymmetricKey(bytes: raw)
        #expect(a == b)
        #expect(a != SymmetricKey())
        #expect(a.withUnsafeBytes { Array($0) } == raw)
    }

    @Test func symmetricKeyNeverPrintsBytes() throws {
        let raw = SecureRandom.bytes(32)
        let key = try SymmetricKey(bytes: raw)
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped] {
            #expect(!text.contains(Hex.encode(raw)))
            #expect(!text.contains("\(raw)"))
        }
        #expect(key.description == "SymmetricKey(32 bytes, redacted)")
    }

    @Test func purposesHaveSnakeCaseNames() {
        #expect(
            KeyPurpose.allCases.map(\.rawValue)
                == ["totp", "signing", "documents", "card_fingerprint", "access_code", "idempotency", "session", "checkpoint"])
    }
}
