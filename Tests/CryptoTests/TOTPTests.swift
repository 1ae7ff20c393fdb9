import Crypto
import Foundation
import Testing

@Suite("TOTP")
struct TOTPTests {
    static let rfcSecret = bytes("12345678901234567890")

    // RFC 6238 Appendix B, SHA-1 column.
    static let vectors: [(seconds: TimeInterval, counter: UInt64, code: String)] = [
        (59, 0x1, "94287082"),
        (1_111_111_109, 0x23523EC, "07081804"),
        (1_111_111_111, 0x23523ED, "14050471"),
        (1_234_567_890, 0x273EF07, "89005924"),
        (2_000_000_000, 0x3F940AA, "69279037"),
        (20_000_000_000, 0x27BC_86AA, "65353130"),
    ]

    @Test("RFC 6238 Appendix B SHA-1 vectors", arguments: vectors)
    func rfc6238(seconds: TimeInterval, counter: UInt64, code: String) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let totp8 = try TOTP(secret: Self.rfcSecret, digits: 8, period: 30)
        #expect(totp8.counter(at: date) == counter)
        #expect(totp8.code(at: date) == code)
        #expect(totp8.matchingCounter(code, at: date) == counter)
        // Six digits are the last six of the eight (10^6 divides 10^8).
        let totp6 = try TOTP(secret: Self.rfcSecret)
        #expect(totp6.code(at: date) == String(code.suffix(6)))
    }

    @Test func windowAcceptsOneStepEitherSideAndRefusesTwo() throws {
        let totp = try TOTP(secret: TOTP.generateSecret())
        let now = Date(timeIntervalSince1970: 1_700_000_015)
        let current = totp.counter(at: now)
        for offset in [-1, 0, 1] {
            let step = UInt64(Int(current) + offset)
            #expect(totp.matchingCounter(totp.code(counter: step), at: now) == step)
        }
        for offset in [-2, 2] {
            let step = UInt64(Int(current) + offset)
            let code = totp.code(counter: step)
            // Skip the 1-in-a-million case where the far code happens to equal a near one.
            let nearCodes = (-1...1).map { totp.code(counter: UInt64(Int(current) + $0)) }
            guard !nearCodes.contains(code) else { continue }
            #expect(totp.matchingCounter(code, at: now) == nil)
            #expect(totp.matchingCounter(code, at: now, window: 2) == step)
        }
        #expect(totp.matchingCounter(totp.code(counter: current + 1), at: now, window: 0) == nil)
    }

    @Test func usedStepIsRefused() throws {
        let totp = try TOTP(secret: TOTP.generateSecret())
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let code = totp.code(at: now)
        let step = try #require(totp.matchingCounter(code, at: now))
        #expect(totp.matchingCounter(code, at: now, lastUsed: step) == nil)
        #expect(totp.matchingCounter(code, at: now, lastUsed: step - 1) == step)
        // An older step's code is refused once a newer step was used.
        #expect(totp.matchingCounter(totp.code(counter: step - 1), at: now, lastUsed: step) == nil)
    }

    @Test func malformedCodesDoNotMatch() throws {
        let totp = try TOTP(secret: Self.rfcSecret)
        let date = Date(timeIntervalSince1970: 59)
        let code = totp.code(at: date)
        #expect(totp.matchingCounter(String(code.prefix(3)) + " " + String(code.suffix(3)), at: date) == 1)
        for bad in ["", String(code.prefix(5)), code + "0", "abcdef", "\(code)\n"] {
            #expect(totp.matchingCounter(bad, at: date) == nil)
        }
    }

    @Test func beforeEpochIsStepZeroAndFarFutureIsClamped() throws {
        let totp = try TOTP(secret: Self.rfcSecret)
        #expect(totp.counter(at: Date(timeIntervalSince1970: -100)) == 0)
        // Absurd dates neither trap nor overflow the window arithmetic.
        let far = Date(timeIntervalSince1970: .infinity)
        #expect(totp.counter(at: far) == 1 << 62)
        #expect(totp.matchingCounter(totp.code(at: far), at: far) == 1 << 62)
        #expect(totp.counter(at: Date(timeIntervalSince1970: .nan)) == 0)
    }

    @Test func invalidParametersThrow() {
        #expect(throws: CryptoError.self) { try TOTP(secret: Self.rfcSecret, digits: 5) }
        #expect(throws: CryptoError.self) { try TOTP(secret: Self.rfcSecret, digits: 9) }
        #expect(throws: CryptoError.self) { try TOTP(secret: Self.rfcSecret, period: 0) }
        #expect(throws: CryptoError.self) { try TOTP(secret: SecureRandom.bytes(10)) }
    }

    @Test func generatedSecretIs160Bits() {
        let a = TOTP.generateSecret()
        let b = TOTP.generateSecret()
        #expect(a.count == 20)
        #expect(a != b)
    }

    @Test func provisioningURI() throws {
        let secret = TOTP.generateSecret()
        let totp = try TOTP(secret: secret)
        let uri = totp.provisioningURI(issuer: "Reclaim", account: "alice@example.com")
        #expect(uri == "otpauth://totp/Reclaim:alice@example.com?secret=\(Base32.encode(secret))&issuer=Reclaim&algorithm=SHA1&digits=6&period=30")
        #expect(!uri.contains("=" + "="))

        let odd = totp.provisioningURI(issuer: "ACME Co: Support", account: "bob+1 ü/x?y&z#")
        #expect(odd.hasPrefix("otpauth://totp/ACME%20Co%3A%20Support:bob%2B1%20%C3%BC%2Fx%3Fy%26z%23?secret="))
        #expect(odd.contains("&issuer=ACME%20Co%3A%20Support&algorithm=SHA1&digits=6&period=30"))

        let components = try #require(URLComponents(string: uri))
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(try Base32.decode(query["secret"] ?? "") == secret)
        #expect(try TOTP(secret: secret, digits: 8).provisioningURI(issuer: "R", account: "a").contains("digits=8"))
    }

    @Test func descriptionHidesSecret() throws {
        let secret = TOTP.generateSecret()
        let totp = try TOTP(secret: secret)
        var dumped = ""
        dump(totp, to: &dumped)
        for text in [String(describing: totp), String(reflecting: totp), "\(totp)", dumped] {
            #expect(!text.contains("\(secret)"))
            #expect(!text.contains(Base32.encode(secret)))
            #expect(!text.contains("secret:") || text.contains("secret: redacted"))
        }
        #expect(!dumped.contains("- secret"))
    }
}
