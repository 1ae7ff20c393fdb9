import CSodium

/// A 256-bit secret key; its bytes are wiped on release and never appear in `description`, `dump` or errors.
// @unchecked Sendable is safe: the bytes are written once in init and only read afterwards, then wiped in deinit.
public final class SymmetricKey: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Key length in bytes.
    public static let byteCount = 32

    private let storage: UnsafeMutableRawBufferPointer

    /// A fresh random key.
    public init() {
        storage = .allocate(byteCount: Self.byteCount, alignment: 16)
        SecureRandom.fill(storage)
    }

    /// A key from exactly 32 bytes of existing material; throws `invalidKeyLength` otherwise.
    public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws {
        guard bytes.count == Self.byteCount else {
            throw CryptoError.invalidKeyLength(expected: Self.byteCount, actual: bytes.count)
        }
        storage = .allocate(byteCount: Self.byteCount, alignment: 16)
        storage.copyBytes(from: bytes)
    }

    deinit {
        _ = Sodium.ready
        sodium_memzero(storage.baseAddress!, storage.count)
        storage.deallocate()
    }

    /// Lends the raw key bytes to `body`; the pointer must not escape the closure.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Constant-time equality of the key bytes.
    public static func == (a: SymmetricKey, b: SymmetricKey) -> Bool {
        _ = Sodium.ready
        return sodium_memcmp(a.storage.baseAddress!, b.storage.baseAddress!, byteCount) == 0
    }

    /// Redacted: says what it is, never the bytes.
    public var description: String { "SymmetricKey(\(Self.byteCount) bytes, redacted)" }

    /// Redacted, like `description`.
    public var debugDescription: String { description }

    /// No children, so `dump` and mirrors cannot reach the bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// What a key is for; each purpose has its own key so one leak or misuse does not spread.
public enum KeyPurpose: String, CaseIterable, Codable, Sendable {
    /// Encrypting TOTP seeds at rest.
    case totp = "totp"
    /// Encrypting API clients' signing secrets at rest.
    case signing = "signing"
    /// Encrypting documents and transcripts.
    case documents = "documents"
    /// Keyed fingerprints of card numbers (HMAC), so equal cards match without storing them.
    case cardFingerprint = "card_fingerprint"
    /// Keyed hashing of customers' access codes.
    case accessCode = "access_code"
    /// Encrypting stored idempotent responses.
    case idempotency = "idempotency"
    /// Keyed hashing of session tokens.
    case session = "session"
    /// The Ed25519 seed that signs the transparency log's checkpoints (older ones stay to verify older checkpoints).
    case checkpoint = "checkpoint"
}
