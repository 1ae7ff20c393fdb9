import Testing

@testable import Crypto

/// ES256 verification through OpenSSL: a known-good signature verifies; any change to it, the message or the key does not.
@Suite struct ES256Tests {
    // Made once with Python's cryptography (P-256, SHA-256, DER signature) and fixed here.
    static let x = Hex.decode("aab5045e8bf205b74dc7dc5a269b3d4743ebba592e1850280e95144ecdf5cf7b")!
    static let y = Hex.decode("4bec2d2d1801712b58984aba5d358518d31340b97f59b0f4f080af998ec5fe32")!
    static let signature = Hex.decode(
        "3046022100ac594b74cc826527644fa92d542a4a66f00fbfdc1ee987e0b7a522eca12a4783022100ae800fdc91bfbcb2673ff2bdcb7c3e683a63b63e7069f5512ceb6aff599c2b3a"
    )!
    static let message = Array("reclaim es256 test vector".utf8)

    @Test func aValidSignatureVerifies() {
        #expect(ES256.verify(signature: Self.signature, message: Self.message, x: Self.x, y: Self.y))
    }

    @Test func anyChangeFails() {
        #expect(!ES256.verify(signature: Self.signature, message: Self.message + [0], x: Self.x, y: Self.y))
        for index in Self.signature.indices {
            var tampered = Self.signature
            tampered[index] ^= 0x01
            #expect(!ES256.verify(signature: tampered, message: Self.message, x: Self.x, y: Self.y))
        }
        var otherY = Self.y
        otherY[31] ^= 0x01  // almost surely not on the curve: refused, not crashed
        #expect(!ES256.verify(signature: Self.signature, message: Self.message, x: Self.x, y: otherY))
        #expect(!ES256.verify(signature: [], message: Self.message, x: Self.x, y: Self.y))
        #expect(!ES256.verify(signature: Self.signature, message: Self.message, x: [1], y: Self.y))
    }
}
