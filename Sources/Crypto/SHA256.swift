import CSodium

/// SHA-256 (libsodium's `crypto_hash_sha256`).
public enum SHA256 {
    /// Digest length in bytes.
    public static let byteCount = 32

    /// The 32-byte digest of `data`.
    public static func hash<Bytes: Collection<UInt8>>(_ data: Bytes) -> [UInt8] {
        _ = Sodium.ready
        var out = [UInt8](repeating: 0, count: byteCount)
        let done: Void? = data.withContiguousStorageIfAvailable { input in
            _ = crypto_hash_sha256(&out, input.baseAddress, UInt64(input.count))
        }
        if done == nil {
            let copy = Array(data)
            _ = crypto_hash_sha256(&out, copy, UInt64(copy.count))
        }
        return out
    }

    /// The digest of a string's UTF-8 bytes.
    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }

    /// The lower-case hex digest.
    public static func hexDigest<Bytes: Collection<UInt8>>(_ data: Bytes) -> String { Hex.encode(hash(data)) }

    /// The lower-case hex digest of a string's UTF-8 bytes.
    public static func hexDigest(_ text: String) -> String { Hex.encode(hash(text)) }
}

/// Lower-case hexadecimal.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex text of `bytes`.
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of hex text (either case); nil when the text is not even-length hex.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

extension SHA256 {
    /// A digest of bytes that arrive in pieces (a spooled upload): the same digest as `hash` of their concatenation.
    public struct Hasher {
        private var state = crypto_hash_sha256_state()

        /// An empty digest state.
        public init() {
            _ = Sodium.ready
            _ = crypto_hash_sha256_init(&state)
        }

        /// Adds the next piece.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            _ = crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        /// Adds the next piece.
        public mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The 32-byte digest of everything added.
        public mutating func finalize() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: SHA256.byteCount)
            _ = crypto_hash_sha256_final(&state, &out)
            return out
        }
    }
}
