import CSodium

/// Cryptographically secure random numbers from the operating system (libsodium's `randombytes`).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SecureRandom.bytes: negative count")
        _ = Sodium.ready
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { randombytes_buf(buffer.baseAddress!, count) }
            initialized = count
        }
    }

    /// Fills `buffer` with random bytes in place.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        _ = Sodium.ready
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    /// A uniformly distributed number in `0..<upperBound` without modulo bias; 0 when `upperBound` < 2.
    public static func uniform(_ upperBound: UInt32) -> UInt32 {
        _ = Sodium.ready
        return randombytes_uniform(upperBound)
    }

    /// `byteCount` random bytes as unpadded base64url text, for session ids, CSRF tokens and API keys.
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(byteCount))
    }
}

/// Unpadded base64url (RFC 4648 §5): safe in URLs, cookies and headers.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Unpadded base64url text of `bytes`.
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = input.count - i
        if rest == 1 {
            let n = UInt32(input[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
        } else if rest == 2 {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
