import CSodium

/// Ed25519 signatures (RFC 8032) through libsodium. The private key is a 32-byte seed (a `SymmetricKey`, so it lives in
/// the key file like every other key); the expanded signing key exists only for the length of one call, then is wiped.
public enum Ed25519 {
    /// Public key length in bytes.
    public static let publicKeyByteCount = 32
    /// Signature length in bytes.
    public static let signatureByteCount = 64

    /// The public key of `seed`.
    public static func publicKey(seed: SymmetricKey) -> [UInt8] {
        withKeyPair(seed) { publicKey, _ in publicKey }
    }

    /// The detached signature of `message` under `seed`.
    public static func sign(_ message: [UInt8], seed: SymmetricKey) -> [UInt8] {
        withKeyPair(seed) { _, secret in
            var signature = [UInt8](repeating: 0, count: signatureByteCount)
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secret)
            return signature
        }
    }

    /// Whether `signature` is `publicKey`'s signature of `message`; wrong lengths are just false.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        _ = Sodium.ready
        guard signature.count == signatureByteCount, publicKey.count == publicKeyByteCount else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    // The key pair of a seed; the 64-byte secret key is wiped before returning.
    private static func withKeyPair<Result>(_ seed: SymmetricKey, _ body: ([UInt8], UnsafePointer<UInt8>) -> Result) -> Result {
        _ = Sodium.ready
        var publicKey = [UInt8](repeating: 0, count: publicKeyByteCount)
        let secret = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_sign_SECRETKEYBYTES))
        defer {
            sodium_memzero(secret, Int(crypto_sign_SECRETKEYBYTES))
            secret.deallocate()
        }
        seed.withUnsafeBytes { raw in
            _ = crypto_sign_seed_keypair(&publicKey, secret, raw.bindMemory(to: UInt8.self).baseAddress!)
        }
        return body(publicKey, UnsafePointer(secret))
    }
}
