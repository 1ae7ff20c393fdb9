/// Why a cryptographic operation failed; descriptions never contain secret bytes.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sealed box failed authentication: tampered, truncated, wrong key or wrong associated data.
    case authenticationFailed
    /// Key material had the wrong length.
    case invalidKeyLength(expected: Int, actual: Int)
    /// Text was not valid in the named encoding (for example "base32").
    case invalidEncoding(String)
    /// A parameter was outside what the primitive accepts; the text names it.
    case invalidParameter(String)
    /// The password hash could not be computed (libsodium reports this when memory runs out).
    case hashingFailed

    /// A one-line explanation without secret material.
    public var description: String {
        switch self {
        case .authenticationFailed: "authentication failed (tampered data, wrong key or wrong associated data)"
        case .invalidKeyLength(let expected, let actual): "invalid key length: expected \(expected) bytes, got \(actual)"
        case .invalidEncoding(let encoding): "invalid \(encoding) text"
        case .invalidParameter(let what): "invalid parameter: \(what)"
        case .hashingFailed: "password hashing failed (out of memory?)"
        }
    }
}
