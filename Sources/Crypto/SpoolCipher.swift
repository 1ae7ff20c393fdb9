import CSodium

/// Encryption for bytes kept on disk only while this process handles them (a request body spooled to a temporary
/// file): the XChaCha20 keystream under a key and nonce made for one file and never written anywhere, XORed at
/// each byte's offset, so the file can be written and read back in any order of 64-byte-aligned pieces.
///
/// No authentication: the file is unlinked, opened only by this process, and read back by it; what it protects
/// against is the bytes outliving the request on the disk (a crash, a later reader of the blocks), which they do
/// only as ciphertext under a key that died with the process. The key is wiped when the cipher is released.
public final class SpoolCipher: @unchecked Sendable {
    // @unchecked Sendable is safe: key and nonce are written once in init, only read afterwards, wiped in deinit.
    private let key: UnsafeMutableRawBufferPointer
    private let nonce = SecureRandom.bytes(24)

    /// Pieces must start at a multiple of this offset (one keystream block).
    public static let alignment = 64

    /// A fresh random key and nonce.
    public init() {
        _ = Sodium.ready
        key = .allocate(byteCount: 32, alignment: 16)
        SecureRandom.fill(key)
    }

    deinit {
        sodium_memzero(key.baseAddress!, key.count)
        key.deallocate()
    }

    /// Encrypts or decrypts (the same operation) `bytes` in place as the piece at `offset`, a multiple of `alignment`.
    public func apply(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        precondition(offset % Self.alignment == 0, "SpoolCipher: pieces start at multiples of 64 bytes")
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else { return }
        _ = crypto_stream_xchacha20_xor_ic(
            base, base, UInt64(bytes.count), nonce, UInt64(offset / Self.alignment),
            key.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
}
