import COpenSSL

/// ECDSA over P-256 with SHA-256 (COSE algorithm -7, "ES256"), verification only: passkeys (WebAuthn) sign
/// with it. OpenSSL's libcrypto through its non-deprecated EVP API; every C handle is freed in `defer`.
public enum ES256 {
    /// The DER prefix of a P-256 SubjectPublicKeyInfo (id-ecPublicKey, prime256v1, 65-byte uncompressed point).
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
        0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// True when `signature` (DER, as WebAuthn sends it) is a valid ES256 signature of `message` under the public key
    /// with affine coordinates `x` and `y` (32 bytes each). A point not on the curve, a malformed signature or a
    /// wrong one are all just false.
    public static func verify(signature: [UInt8], message: [UInt8], x: [UInt8], y: [UInt8]) -> Bool {
        guard x.count == 32, y.count == 32, !signature.isEmpty, signature.count <= 80 else { return false }
        let spki = spkiPrefix + [0x04] + x + y
        // d2i_PUBKEY decodes the point and refuses one that is not on P-256.
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
