import CSodium

/// Authenticated encryption with XChaCha20-Poly1305-IETF; a sealed box is nonce(24) || ciphertext || tag(16).
/// The 192-bit nonce is random per call, so one key can seal practically unlimited messages safely.
public enum SecretBox {
    /// Nonce length in bytes.
    public static let nonceByteCount = 24
    /// Authentication tag length in bytes.
    public static let tagByteCount = 16
    /// Bytes a sealed box adds to its plaintext.
    public static let overhead = nonceByteCount + tagByteCount

    /// Seals `plaintext` under `key`, binding `associatedData` (say, the row id) without storing it.
    public static func seal(_ plaintext: [UInt8], key: SymmetricKey, associatedData: [UInt8] = []) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, associatedData: associatedData) }
    }

    /// Seals bytes in place where they lie (no copy of a 10 MiB document into an array first).
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, associatedData: [UInt8] = []) -> [UInt8] {
        _ = Sodium.ready
        let total = plaintext.count + overhead
        return [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
            let base = out.baseAddress!
            SecureRandom.fill(UnsafeMutableRawBufferPointer(start: base, count: nonceByteCount))
            var written: UInt64 = 0
            key.withUnsafeBytes { k in
                associatedData.withUnsafeBufferPointer { ad in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        base + nonceByteCount, &written,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        ad.baseAddress, UInt64(ad.count), nil,
                        base, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            precondition(Int(written) == plaintext.count + tagByteCount, "XChaCha20-Poly1305 wrote an unexpected length")
            initialized = total
        }
    }

    /// The plaintext of a sealed box; throws `authenticationFailed` on tampering, truncation, wrong key or wrong associated data.
    public static func open(_ sealed: [UInt8], key: SymmetricKey, associatedData: [UInt8] = []) throws -> [UInt8] {
        try sealed.withUnsafeBytes { try open($0, key: key, associatedData: associatedData) }
    }

    /// Opens a sealed box where it lies, without copying it into an array first.
    public static func open(_ sealed: UnsafeRawBufferPointer, key: SymmetricKey, associatedData: [UInt8] = []) throws -> [UInt8] {
        _ = Sodium.ready
        guard sealed.count >= overhead, let input = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw CryptoError.authenticationFailed
        }
        let length = sealed.count - overhead
        return try [UInt8](unsafeUninitializedCapacity: length) { out, initialized in
            var written: UInt64 = 0
            // An empty plaintext still needs a valid output pointer.
            var scratch: UInt8 = 0
            let result = withUnsafeMutablePointer(to: &scratch) { scratchPointer in
                key.withUnsafeBytes { k in
                    associatedData.withUnsafeBufferPointer { ad in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            out.baseAddress ?? scratchPointer, &written, nil,
                            input + nonceByteCount, UInt64(sealed.count - nonceByteCount),
                            ad.baseAddress, UInt64(ad.count),
                            input, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            guard result == 0 else { throw CryptoError.authenticationFailed }
            initialized = Int(written)
        }
    }
}

extension SecretBox {
    /// Seals a message that arrives in pieces, writing exactly what `seal` would for the whole of it: nonce(24) ||
    /// ciphertext || tag(16), in that order, so it can be streamed on (into a COPY, say) as it is produced and no
    /// more than one piece is ever held. `open` opens the result like any sealed box.
    ///
    /// XChaCha20-Poly1305-IETF as libsodium builds it (`crypto_aead_xchacha20poly1305_ietf_encrypt`): a subkey from
    /// HChaCha20 over the key and the nonce's first 16 bytes; ChaCha20-IETF under it with the nonce's last 8 bytes,
    /// block 0 keying Poly1305 and the message encrypted from block 1; Poly1305 over the associated data, the
    /// ciphertext, their zero padding to 16 bytes and their lengths. Every piece but the last must be a multiple of
    /// 64 bytes (one ChaCha20 block), so each continues the keystream where the last ended.
    public final class Sealer {
        /// The length of the whole message, fixed up front: the sealed length is announced before the bytes.
        public let messageLength: Int
        /// Bytes the sealed box will have.
        public var sealedLength: Int { messageLength + SecretBox.overhead }
        private var subkey = [UInt8](repeating: 0, count: 32)
        private var nonce = [UInt8](repeating: 0, count: 12)
        private var header = [UInt8](repeating: 0, count: SecretBox.nonceByteCount)
        private var state = crypto_onetimeauth_poly1305_state()
        private let associatedLength: Int
        private var sealed = 0

        /// A sealer for a message of `messageLength` bytes under `key`, binding `associatedData`; the nonce is random.
        public init(messageLength: Int, key: SymmetricKey, associatedData: [UInt8] = []) {
            _ = Sodium.ready
            self.messageLength = messageLength
            associatedLength = associatedData.count
            header = SecureRandom.bytes(SecretBox.nonceByteCount)
            key.withUnsafeBytes { k in
                _ = crypto_core_hchacha20(&subkey, header, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
            }
            for index in 0..<8 { nonce[4 + index] = header[16 + index] }
            var block0 = [UInt8](repeating: 0, count: 64)
            _ = crypto_stream_chacha20_ietf(&block0, 64, nonce, subkey)
            _ = crypto_onetimeauth_poly1305_init(&state, block0)
            sodium_memzero(&block0, 64)
            _ = crypto_onetimeauth_poly1305_update(&state, associatedData, UInt64(associatedData.count))
            Self.pad(&state, associatedData.count)
        }

        deinit {
            sodium_memzero(&subkey, subkey.count)
            sodium_memzero(&state, MemoryLayout<crypto_onetimeauth_poly1305_state>.size)
        }

        /// The sealed box's first 24 bytes (its nonce): write them before the first piece.
        public var prefix: [UInt8] { header }

        /// Encrypts the next piece of the message in place (plaintext in, ciphertext out).
        public func seal(_ piece: UnsafeMutableRawBufferPointer) {
            precondition(sealed % 64 == 0, "SecretBox.Sealer: only the last piece may be shorter than a multiple of 64 bytes")
            precondition(sealed + piece.count <= messageLength, "SecretBox.Sealer: more bytes than announced")
            guard let base = piece.baseAddress?.assumingMemoryBound(to: UInt8.self), piece.count > 0 else { return }
            _ = crypto_stream_chacha20_ietf_xor_ic(base, base, UInt64(piece.count), nonce, UInt32(1 + sealed / 64), subkey)
            _ = crypto_onetimeauth_poly1305_update(&state, base, UInt64(piece.count))
            sealed += piece.count
        }

        /// The sealed box's last 16 bytes (its tag), once every announced byte went through `seal`.
        public func finish() -> [UInt8] {
            precondition(sealed == messageLength, "SecretBox.Sealer: fewer bytes than announced")
            Self.pad(&state, messageLength)
            var lengths = [UInt8](repeating: 0, count: 16)
            // Both lengths little-endian, as RFC 8439 §2.8 writes them.
            withUnsafeBytes(of: UInt64(associatedLength).littleEndian) { for (i, b) in $0.enumerated() { lengths[i] = b } }
            withUnsafeBytes(of: UInt64(messageLength).littleEndian) { for (i, b) in $0.enumerated() { lengths[8 + i] = b } }
            _ = crypto_onetimeauth_poly1305_update(&state, lengths, 16)
            var tag = [UInt8](repeating: 0, count: SecretBox.tagByteCount)
            _ = crypto_onetimeauth_poly1305_final(&state, &tag)
            return tag
        }

        private static func pad(_ state: inout crypto_onetimeauth_poly1305_state, _ length: Int) {
            let zeros = [UInt8](repeating: 0, count: 16)
            let padding = (16 - length % 16) % 16
            if padding > 0 { _ = crypto_onetimeauth_poly1305_update(&state, zeros, UInt64(padding)) }
        }
    }
}
