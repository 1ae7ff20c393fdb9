import Crypto
import Foundation
import HTTPServer

/// The session cookie: name, attributes, token format.
public enum SessionCookie {
    /// `__Host-`: the browser only accepts it with `Secure`, `Path=/` and no `Domain`.
    public static let name = "__Host-reclaim_session"

    /// A fresh 256-bit token, base64url without padding (43 characters).
    public static func newToken() -> String { SecureRandom.token(byteCount: 32) }

    /// What the database keeps instead of the token.
    public static func hash(_ token: String) -> [UInt8] { SHA256.hash(token) }

    /// The `Set-Cookie` value that installs `token`.
    public static func setCookie(_ token: String) -> String {
        "\(name)=\(token); HttpOnly; Secure; SameSite=Strict; Path=/"
    }

    /// The `Set-Cookie` value that removes the cookie.
    public static let clearCookie = "\(name)=; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=0"
}

/// CSRF tokens bound to a session without storing them: HMAC-SHA256 of the session id under the `session` key.
public enum CSRFToken {
    /// The token for `sessionID` (hex, 64 characters).
    public static func token(sessionID: UUID, keys: KeyFile) -> String {
        let (_, key) = keys.activeKey(for: .session)
        return Hex.encode(HMACSHA256.authenticate(message: message(sessionID), key: key))
    }

    /// True when `presented` is the session's token, compared in constant time; tokens made under
    /// an older `session` key still in the key file keep working until their session ends.
    public static func verify(_ presented: String, sessionID: UUID, keys: KeyFile) -> Bool {
        guard let bytes = Hex.decode(presented), bytes.count == HMACSHA256.byteCount else { return false }
        var matched = false
        for entry in keys.entries where entry.purpose == .session {
            if HMACSHA256.verify(mac: bytes, message: message(sessionID), key: entry.key) { matched = true }
        }
        return matched
    }

    private static func message(_ sessionID: UUID) -> [UInt8] {
        Array("reclaim-csrf-v1:".utf8) + Array(sessionID.uuidString.lowercased().utf8)
    }
}

/// API keys: 256 random bits, presented as `Authorization: Bearer <key>`, stored as SHA-256.
public enum APIKey {
    /// A fresh key: "rk_" and 43 base64url characters.
    public static func newKey() -> String { "rk_" + SecureRandom.token(byteCount: 32) }

    /// What the database keeps instead of the key.
    public static func hash(_ key: String) -> [UInt8] { SHA256.hash(key) }

    /// A fresh signing secret: 256 random bits as 64 hex digits. The HMAC key is this text's bytes, exactly as
    /// printed (no decoding step for clients to get wrong).
    public static func newSigningSecret() -> String { Hex.encode(SecureRandom.bytes(32)) }
}

/// `Reclaim-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<METHOD>.<target>.<body>")>`.
public enum RequestSignature {
    /// Why a signature was refused; each maps to its own 401 problem code.
    public enum Failure: Error, Equatable, Sendable {
        /// Missing, malformed, or the MAC does not match (`invalid_signature`).
        case invalid
        /// The MAC matches but `t` is outside the window (`stale_signature`).
        case stale
    }

    /// The MAC over the request.
    public static func mac(secret: [UInt8], timestamp: Int64, method: String, target: String, body: [UInt8]) -> [UInt8] {
        let prefix = Array("\(timestamp).\(method).\(target).".utf8)
        return HMACSHA256.authenticate(parts: [prefix, body], key: secret)
    }

    /// The same MAC over a body wherever it is (a spooled upload is read back in pieces, never whole).
    public static func mac(secret: [UInt8], timestamp: Int64, method: String, target: String, content: BodyContent) throws -> [UInt8] {
        let hasher = HMACSHA256.Hasher(key: secret)
        Array("\(timestamp).\(method).\(target).".utf8).withUnsafeBytes { hasher.update($0) }
        try content.forEachPiece { hasher.update($0) }
        return hasher.finalize()
    }

    /// The header value a client sends (used by tests, benchmarks and example clients).
    public static func header(secret: [UInt8], timestamp: Int64, method: String, target: String, body: [UInt8]) -> String {
        "t=\(timestamp),v1=\(Hex.encode(mac(secret: secret, timestamp: timestamp, method: method, target: target, body: body)))"
    }

    /// Parses `t=…,v1=…[,v1=…]`; nil when malformed.
    public static func parse(_ header: String) -> (timestamp: Int64, macs: [[UInt8]])? {
        var timestamp: Int64?
        var macs: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let item = part.trimmingCharacters(in: .whitespaces)
            if item.hasPrefix("t=") {
                guard timestamp == nil, let value = Int64(item.dropFirst(2)) else { return nil }
                timestamp = value
            } else if item.hasPrefix("v1=") {
                guard let mac = Hex.decode(String(item.dropFirst(3))), mac.count == HMACSHA256.byteCount else { return nil }
                macs.append(mac)
            }
            // Other schemes (v0, future v2) are ignored, as Stripe does.
        }
        guard let timestamp, !macs.isEmpty, macs.count <= 4 else { return nil }
        return (timestamp, macs)
    }

    /// Checks the header against the request; on success returns the matching MAC (the replay store's key).
    /// The MAC is checked first and in constant time, so only a holder of the secret learns about staleness.
    public static func verify(
        header: String?, secret: [UInt8], method: String, target: String, body: [UInt8], now: Date,
        window: TimeInterval
    ) -> Result<(mac: [UInt8], timestamp: Int64), Failure> {
        // In memory, reading the body cannot fail.
        (try? verify(header: header, secret: secret, method: method, target: target, content: BodyContent(body), now: now, window: window))
            ?? .failure(.invalid)
    }

    /// The same check of a body wherever it is; throws only when a spooled body cannot be read back.
    public static func verify(
        header: String?, secret: [UInt8], method: String, target: String, content: BodyContent, now: Date,
        window: TimeInterval
    ) throws -> Result<(mac: [UInt8], timestamp: Int64), Failure> {
        guard let header, let parsed = parse(header) else { return .failure(.invalid) }
        let expected = try mac(secret: secret, timestamp: parsed.timestamp, method: method, target: target, content: content)
        var matched: [UInt8]?
        for candidate in parsed.macs where ConstantTime.equals(candidate, expected) { matched = candidate }
        guard let matched else { return .failure(.invalid) }
        let skew = abs(now.timeIntervalSince1970 - Double(parsed.timestamp))
        guard skew <= window else { return .failure(.stale) }
        return .success((matched, parsed.timestamp))
    }
}

/// Passwords for agents: 12 to 128 characters, never truncated; generated ones are 20 characters (~114 bits).
public enum AgentPassword {
    /// Allowed length in characters.
    public static let lengths = 12...128

    /// Nil when acceptable, else why not (without echoing it).
    public static func problem(with password: String) -> String? {
        lengths.contains(password.count) ? nil : "a password must be \(lengths.lowerBound) to \(lengths.upperBound) characters"
    }

    /// A random password from an alphabet without look-alikes.
    public static func generate() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<20).map { _ in alphabet[Int(SecureRandom.uniform(UInt32(alphabet.count)))] })
    }
}

/// TOTP seeds sealed under the `totp` key, bound to their agent by associated data.
public enum TOTPSeal {
    /// Seals `secret` for `agentID`; returns the ciphertext and the key id.
    public static func seal(_ secret: [UInt8], agentID: UUID, keys: KeyFile) -> (sealed: [UInt8], keyID: String) {
        let (id, key) = keys.activeKey(for: .totp)
        return (SecretBox.seal(secret, key: key, associatedData: associatedData(agentID)), id)
    }

    /// Opens a sealed seed; throws when the key is missing or the ciphertext was moved or altered.
    public static func open(_ sealed: [UInt8], keyID: String, agentID: UUID, keys: KeyFile) throws -> [UInt8] {
        guard let key = keys.key(id: keyID, purpose: .totp) else { throw CryptoError.invalidParameter("no totp key with this id") }
        return try SecretBox.open(sealed, key: key, associatedData: associatedData(agentID))
    }

    private static func associatedData(_ agentID: UUID) -> [UInt8] { Array("agent:\(agentID.uuidString.lowercased())".utf8) }
}

/// API clients' signing secrets sealed under the `signing` key, bound to the client id.
public enum SigningSecretSeal {
    /// Seals `secret` for `clientID`.
    public static func seal(_ secret: [UInt8], clientID: UUID, keys: KeyFile) -> (sealed: [UInt8], keyID: String) {
        let (id, key) = keys.activeKey(for: .signing)
        return (SecretBox.seal(secret, key: key, associatedData: associatedData(clientID)), id)
    }

    /// Opens a sealed signing secret.
    public static func open(_ sealed: [UInt8], keyID: String, clientID: UUID, keys: KeyFile) throws -> [UInt8] {
        guard let key = keys.key(id: keyID, purpose: .signing) else { throw CryptoError.invalidParameter("no signing key with this id") }
        return try SecretBox.open(sealed, key: key, associatedData: associatedData(clientID))
    }

    private static func associatedData(_ clientID: UUID) -> [UInt8] { Array("client:\(clientID.uuidString.lowercased())".utf8) }
}
