import Crypto
import Testing

@Suite("SecretBox (XChaCha20-Poly1305)")
struct SecretBoxTests {
    let key = SymmetricKey()
    let ad = bytes("case:42/evidence:7")

    @Test func roundTrip() throws {
        for count in [0, 1, 15, 16, 17, 1000, 65_537] {
            let plaintext = SecureRandom.bytes(count)
            let sealed = SecretBox.seal(plaintext, key: key, associatedData: ad)
            #expect(sealed.count == count + SecretBox.overhead)
            #expect(try SecretBox.open(sealed, key: key, associatedData: ad) == plaintext)
        }
        // Associated data defaults to empty.
        #expect(try SecretBox.open(SecretBox.seal(bytes("x"), key: key), key: key) == bytes("x"))
    }

    @Test func freshNonceEachCall() {
        let plaintext = bytes("same message")
        let a = SecretBox.seal(plaintext, key: key, associatedData: ad)
        let b = SecretBox.seal(plaintext, key: key, associatedData: ad)
        #expect(a.prefix(SecretBox.nonceByteCount) != b.prefix(SecretBox.nonceByteCount))
        #expect(a != b)
    }

    @Test func tamperingAnywhereIsDetected() {
        let sealed = SecretBox.seal(bytes("pay 100 to alice"), key: key, associatedData: ad)
        // Nonce, ciphertext and tag bytes alike.
        for index in [0, 23, 24, 30, sealed.count - 16, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(tampered, key: key, associatedData: ad) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(Array(sealed.dropLast()), key: key, associatedData: ad) }
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(Array(sealed.prefix(39)), key: key, associatedData: ad) }
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open([], key: key, associatedData: ad) }
    }

    @Test func wrongAssociatedDataOrKeyFails() {
        let sealed = SecretBox.seal(bytes("secret"), key: key, associatedData: ad)
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(sealed, key: key, associatedData: bytes("case:43/evidence:7")) }
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(sealed, key: key, associatedData: []) }
        #expect(throws: CryptoError.authenticationFailed) { try SecretBox.open(sealed, key: SymmetricKey(), associatedData: ad) }
    }

    @Test func bufferVariantsMatchArrayVariants() throws {
        let document = SecureRandom.bytes(1 << 20)
        let sealed = document.withUnsafeBytes { SecretBox.seal($0, key: key, associatedData: ad) }
        #expect(try SecretBox.open(sealed, key: key, associatedData: ad) == document)
        let opened = try sealed.withUnsafeBytes { try SecretBox.open($0, key: key, associatedData: ad) }
        #expect(opened == document)
    }
}
