import Crypto
import Testing

/// The pieces-at-a-time forms give exactly what the one-shot forms give, so streamed uploads are stored as before.
@Suite struct StreamingTests {
    let key = SymmetricKey()

    /// Seals `message` in pieces of `piece` bytes (the last shorter).
    func sealInPieces(_ message: [UInt8], piece: Int, associatedData: [UInt8]) -> [UInt8] {
        let sealer = SecretBox.Sealer(messageLength: message.count, key: key, associatedData: associatedData)
        var out = sealer.prefix
        var offset = 0
        while offset < message.count {
            var chunk = Array(message[offset..<min(message.count, offset + piece)])
            chunk.withUnsafeMutableBytes { sealer.seal($0) }
            out += chunk
            offset += chunk.count
        }
        return out + sealer.finish()
    }

    @Test func aSealedStreamOpensAsASealedBox() throws {
        let associatedData = Array("evidence-id".utf8)
        for count in [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 1000, 65_536, 65_537, 300_001] {
            let message = SecureRandom.bytes(count)
            for piece in [64, 128, 4096, 65_536] {
                let sealed = sealInPieces(message, piece: piece, associatedData: associatedData)
                #expect(sealed.count == count + SecretBox.overhead)
                #expect(try SecretBox.open(sealed, key: key, associatedData: associatedData) == message, "\(count) bytes in pieces of \(piece)")
            }
        }
        // Bound to its associated data and key like any sealed box.
        let sealed = sealInPieces(SecureRandom.bytes(1000), piece: 128, associatedData: associatedData)
        #expect(throws: CryptoError.self) { try SecretBox.open(sealed, key: key, associatedData: Array("other-id".utf8)) }
        #expect(throws: CryptoError.self) { try SecretBox.open(sealed, key: SymmetricKey(), associatedData: associatedData) }
        var tampered = sealed
        tampered[500] ^= 1
        #expect(throws: CryptoError.self) { try SecretBox.open(tampered, key: key, associatedData: associatedData) }
    }

    @Test func digestsInPiecesEqualDigestsOfTheWhole() {
        let message = SecureRandom.bytes(100_003)
        var hasher = SHA256.Hasher()
        let mac = HMACSHA256.Hasher(key: Array("secret".utf8))
        var offset = 0
        for piece in [1, 7, 64, 4096, 50_000, 100_000] where offset < message.count {
            let end = min(message.count, offset + piece)
            message[offset..<end].withUnsafeBytes {
                hasher.update($0)
                mac.update($0)
            }
            offset = end
        }
        Array(message[offset...]).withUnsafeBytes {
            hasher.update($0)
            mac.update($0)
        }
        #expect(hasher.finalize() == SHA256.hash(message))
        #expect(mac.finalize() == HMACSHA256.authenticate(message: message, key: Array("secret".utf8)))
    }

    @Test func aSpoolReadsBackWhateverThePieces() {
        let cipher = SpoolCipher()
        let message = SecureRandom.bytes(10_000)
        // Written in pieces of 4096, read back in pieces of 640: both at multiples of 64.
        var file = message
        var offset = 0
        while offset < file.count {
            let end = min(file.count, offset + 4096)
            file.withUnsafeMutableBytes { cipher.apply(UnsafeMutableRawBufferPointer(rebasing: $0[offset..<end]), at: offset) }
            offset = end
        }
        #expect(file != message)
        offset = 0
        while offset < file.count {
            let end = min(file.count, offset + 640)
            file.withUnsafeMutableBytes { cipher.apply(UnsafeMutableRawBufferPointer(rebasing: $0[offset..<end]), at: offset) }
            offset = end
        }
        #expect(file == message)
        // Another spool's key reads nothing.
        var other = message
        other.withUnsafeMutableBytes { cipher.apply($0, at: 0) }
        other.withUnsafeMutableBytes { SpoolCipher().apply($0, at: 0) }
        #expect(other != message)
    }
}
