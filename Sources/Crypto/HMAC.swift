import COpenSSL
import CSodium

/// HMAC-SHA-256 (RFC 2104) with a key of any length, via libsodium's init/update/final API.
public enum HMACSHA256 {
    /// MAC length in bytes.
    public static let byteCount = 32

    /// The 32-byte MAC of `message` under `key`.
    public static func authenticate<Message: Collection<UInt8>>(message: Message, key: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { authenticate(parts: [message], key: $0) }
    }

    /// The 32-byte MAC of `message` under a symmetric key from the key file.
    public static func authenticate<Message: Collection<UInt8>>(message: Message, key: SymmetricKey) -> [UInt8] {
        key.withUnsafeBytes { authenticate(parts: [message], key: $0) }
    }

    /// The MAC of the concatenation of `parts`, without joining them first (for "<t>.<METHOD>.<target>.<body>").
    public static func authenticate<Message: Collection<UInt8>>(parts: [Message], key: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { authenticate(parts: parts, key: $0) }
    }

    /// True when `mac` is the MAC of `message` under `key`; compared in constant time.
    public static func verify<Message: Collection<UInt8>>(mac: [UInt8], message: Message, key: [UInt8]) -> Bool {
        ConstantTime.equals(authenticate(message: message, key: key), mac)
    }

    /// True when `mac` is the MAC of `message` under a symmetric key; compared in constant time.
    public static func verify<Message: Collection<UInt8>>(mac: [UInt8], message: Message, key: SymmetricKey) -> Bool {
        ConstantTime.equals(authenticate(message: message, key: key), mac)
    }

    private static func authenticate<Message: Collection<UInt8>>(parts: [Message], key: UnsafeRawBufferPointer) -> [UInt8] {
        let mac = Hasher(key: key)
        for part in parts {
            let done: Void? = part.withContiguousStorageIfAvailable { mac.update(UnsafeRawBufferPointer($0)) }
            if done == nil { Array(part).withUnsafeBytes { mac.update($0) } }
        }
        return mac.finalize()
    }

    /// A MAC of bytes that arrive in pieces (a request body read back from its spool): the same MAC as `authenticate`
    /// over their concatenation.
    public final class Hasher {
        private var state = crypto_auth_hmacsha256_state()

        /// A MAC state keyed with `key` (any length).
        public init(key: [UInt8]) {
            key.withUnsafeBytes { Self.start(&state, key: $0) }
        }

        init(key: UnsafeRawBufferPointer) {
            Self.start(&state, key: key)
        }

        private static func start(_ state: inout crypto_auth_hmacsha256_state, key: UnsafeRawBufferPointer) {
            _ = Sodium.ready
            // libsodium wants a non-NULL key pointer even for an empty key.
            var empty: UInt8 = 0
            if let base = key.baseAddress, key.count > 0 {
                _ = crypto_auth_hmacsha256_init(&state, base.assumingMemoryBound(to: UInt8.self), key.count)
            } else {
                _ = crypto_auth_hmacsha256_init(&state, &empty, 0)
            }
        }

        // The state holds key-derived pads.
        deinit { sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size) }

        /// Adds the next piece.
        public func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            _ = crypto_auth_hmacsha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        /// The 32-byte MAC of everything added.
        public func finalize() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: byteCount)
            _ = crypto_auth_hmacsha256_final(&state, &out)
            return out
        }
    }
}

/// HMAC-SHA-1 (RFC 2104) through OpenSSL, which libsodium lacks; used only by TOTP (RFC 6238).
public enum HMACSHA1 {
    /// MAC length in bytes.
    public static let byteCount = 20

    /// The 20-byte MAC of `message` under `key`.
    public static func authenticate<Message: Collection<UInt8>>(message: Message, key: [UInt8]) -> [UInt8] {
        let input = Array(message)
        var out = [UInt8](repeating: 0, count: 64)  // EVP_MAX_MD_SIZE
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { k in
            input.withUnsafeBufferPointer { m in
                // A 1-byte dummy stands in for an empty key so OpenSSL never sees a NULL key pointer.
                withUnsafeBytes(of: UInt8(0)) { dummy in
                    HMAC(
                        EVP_sha1(), k.count > 0 ? k.baseAddress : dummy.baseAddress, Int32(k.count),
                        m.baseAddress ?? dummy.baseAddress!.assumingMemoryBound(to: UInt8.self), m.count,
                        &out, &length)
                }
            }
        }
        // HMAC only fails when OpenSSL cannot allocate or SHA-1 is unavailable: nothing a caller could handle.
        precondition(result != nil && length == UInt32(byteCount), "OpenSSL HMAC-SHA1 failed")
        return Array(out.prefix(byteCount))
    }
}
