import CSodium

/// Password hashing with argon2id (libsodium `crypto_pwhash_str_alg`); the stored PHC string carries its parameters.
/// Costs ~tens of ms of CPU and `memLimit` bytes of RAM per call: run it on a small bounded queue, not on HTTP workers.
public struct PasswordHash: Sendable, Equatable {
    /// argon2id passes (t); OWASP's floor with 19 MiB is 2.
    public let opsLimit: UInt64
    /// Memory in bytes (m); the default 19 MiB appears as m=19456 (KiB) in the hash string.
    public let memLimit: Int

    /// The OWASP/ASVS minimum: m = 19 MiB, t = 2, p = 1 (libsodium's argon2id always uses one lane).
    public static let defaultOpsLimit: UInt64 = 2
    /// 19 MiB, in bytes.
    public static let defaultMemLimit = 19 * 1024 * 1024

    /// A hasher with the given costs; `hash` throws `invalidParameter` if libsodium would refuse them.
    public init(opsLimit: UInt64 = PasswordHash.defaultOpsLimit, memLimit: Int = PasswordHash.defaultMemLimit) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// The PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`) of the password's UTF-8 bytes, never truncated.
    public func hash(_ password: String) throws -> String {
        _ = Sodium.ready
        guard opsLimit >= UInt64(crypto_pwhash_argon2id_opslimit_min()), opsLimit <= UInt64(crypto_pwhash_argon2id_opslimit_max()) else {
            throw CryptoError.invalidParameter("argon2id opsLimit \(opsLimit) out of range")
        }
        guard memLimit >= crypto_pwhash_argon2id_memlimit_min(), memLimit <= crypto_pwhash_argon2id_memlimit_max() else {
            throw CryptoError.invalidParameter("argon2id memLimit \(memLimit) out of range")
        }
        var bytes = Array(password.utf8)
        // Our copy of the password bytes is wiped once hashed (the String itself cannot be).
        defer { Self.wipe(&bytes) }
        var out = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let result = Self.withPasswordPointer(bytes) { pointer, length in
            crypto_pwhash_str_alg(&out, pointer, length, opsLimit, memLimit, crypto_pwhash_alg_argon2id13())
        }
        guard result == 0 else { throw CryptoError.hashingFailed }
        let text = out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: text, as: UTF8.self)
    }

    /// True when `password` matches the stored PHC string; false for a wrong password or an unreadable string.
    public func verify(_ password: String, against stored: String) -> Bool {
        _ = Sodium.ready
        var bytes = Array(password.utf8)
        defer { Self.wipe(&bytes) }
        return stored.withCString { storedC in
            Self.withPasswordPointer(bytes) { pointer, length in
                crypto_pwhash_str_verify(storedC, pointer, length) == 0
            }
        }
    }

    /// True when `stored` is not argon2id with exactly this hasher's parameters (so re-hash it after a successful login).
    public func needsRehash(_ stored: String) -> Bool {
        _ = Sodium.ready
        // The argon2id-specific check also flags argon2i strings; the generic one would accept them.
        return stored.withCString { crypto_pwhash_argon2id_str_needs_rehash($0, opsLimit, memLimit) } != 0
    }

    /// A valid hash (default parameters) of a random password, computed once on first use: verify against it
    /// when the user does not exist, so unknown and known users take the same time.
    public static let dummyHash: String = {
        if let hash = try? PasswordHash().hash(SecureRandom.token()) { return hash }
        // Only reached if memory ran out: same parameters, so the same cost; its hash part is random bytes, so
        // no password is known to match it.
        return "$argon2id$v=19$m=19456,t=2,p=1$hiKp0kmCd/SeuAiYShlX5w$bmaRrC5f1pggaOrB05mB/GGx/jvASQIUsjHzZ50T1nU"
    }()

    // libsodium wants a non-NULL pointer even for the empty password.
    private static func withPasswordPointer<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>, UInt64) -> R) -> R {
        var empty: CChar = 0
        return bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return body(&empty, 0) }
            return body(base.assumingMemoryBound(to: CChar.self), UInt64(raw.count))
        }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!, $0.count) }
    }
}
