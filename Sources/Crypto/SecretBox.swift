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
