import Crypto
import Testing

@Suite("HMAC")
struct HMACTests {
    // RFC 4231 §4.2–4.8.
    static let sha256Vectors: [(key: [UInt8], data: [UInt8], mac: String)] = [
        (
            [UInt8](repeating: 0x0b, count: 20), bytes("Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            bytes("Jefe"), bytes("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xcd, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // Case 5: truncated to 128 bits.
        (
            [UInt8](repeating: 0x0c, count: 20), bytes("Test With Truncation"),
            "a3b6167473100ee06e0c796c2955552b"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131), bytes("Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            [UInt8](repeating: 0xaa, count: 131),
            bytes(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
            ),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    @Test("RFC 4231 test cases 1–7", arguments: 0..<7)
    func rfc4231(index: Int) {
        let vector = Self.sha256Vectors[index]
        let mac = HMACSHA256.authenticate(message: vector.data, key: vector.key)
        #expect(mac.count == 32)
        let expected = hex(vector.mac)
        #expect(Array(mac.prefix(expected.count)) == expected)
        if expected.count == 32 {
            #expect(HMACSHA256.verify(mac: expected, message: vector.data, key: vector.key))
        }
    }

    @Test func sha256VerifyRejectsWrongMacKeyAndLength() {
        let key = bytes("Jefe")
        let message = bytes("what do ya want for nothing?")
        var mac = HMACSHA256.authenticate(message: message, key: key)
        #expect(HMACSHA256.verify(mac: mac, message: message, key: key))
        #expect(!HMACSHA256.verify(mac: mac, message: message, key: bytes("Jeff")))
        #expect(!HMACSHA256.verify(mac: Array(mac.prefix(16)), message: message, key: key))
        #expect(!HMACSHA256.verify(mac: [], message: message, key: key))
        mac[31] ^= 1
        #expect(!HMACSHA256.verify(mac: mac, message: message, key: key))
    }

    @Test func sha256PartsEqualTheJoinedMessage() {
        let key = bytes("signing secret")
        let parts: [[UInt8]] = [bytes("1700000000"), bytes(".POST."), bytes("/api/v1/cases?x=1"), bytes("."), bytes("{\"a\":1}")]
        #expect(HMACSHA256.authenticate(parts: parts, key: key) == HMACSHA256.authenticate(message: parts.joined(), key: key))
    }

    @Test func sha256WithSymmetricKeyAndEmptyInputs() throws {
        let raw = SecureRandom.bytes(32)
        let key = try SymmetricKey(bytes: raw)
        let message = bytes("4111111111111111")
        #expect(HMACSHA256.authenticate(message: message, key: key) == HMACSHA256.authenticate(message: message, key: raw))
        #expect(HMACSHA256.verify(mac: HMACSHA256.authenticate(message: message, key: raw), message: message, key: key))
        // Empty key and message: the well-known value.
        #expect(
            Hex.encode(HMACSHA256.authenticate(message: [], key: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    // RFC 2202 §3.
    static let sha1Vectors: [(key: [UInt8], data: [UInt8], mac: String)] = [
        ([UInt8](repeating: 0x0b, count: 20), bytes("Hi There"), "b617318655057264e28bc0b6fb378c8ef146be00"),
        (bytes("Jefe"), bytes("what do ya want for nothing?"), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        (Array(1...25), [UInt8](repeating: 0xcd, count: 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        ([UInt8](repeating: 0x0c, count: 20), bytes("Test With Truncation"), "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        (
            [UInt8](repeating: 0xaa, count: 80), bytes("Test Using Larger Than Block-Size Key - Hash Key First"),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        ),
        (
            [UInt8](repeating: 0xaa, count: 80), bytes("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"),
            "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"
        ),
    ]

    @Test("RFC 2202 HMAC-SHA1 test cases 1–7", arguments: 0..<7)
    func rfc2202(index: Int) {
        let vector = Self.sha1Vectors[index]
        #expect(Hex.encode(HMACSHA1.authenticate(message: vector.data, key: vector.key)) == vector.mac)
    }

    @Test func sha1EmptyKeyAndMessage() {
        #expect(Hex.encode(HMACSHA1.authenticate(message: [], key: [])) == "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d")
    }
}
